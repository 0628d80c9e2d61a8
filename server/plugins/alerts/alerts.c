/*
 * alerts.c - the alerts dashboard's descriptor: its command-line options
 * (the stall threshold and the loss regex that the run status uses),
 * its routes (the loss spikes with their precursors), its report
 * section (each run's status line, spikes and skip list) and its
 * service (evaluation and delivery beside the server; the feed that
 * `tfboard watch` prints).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugins/alerts/alerts_feed.h"
#include "plugins/alerts/alerts_notify.h"
#include "plugins/alerts/alerts_spikes.h"
#include "core/plugin.h"
#include "core/report_fmt.h"
#include "analysis/run_status.h"
#include "base/regex_bound.h"

/* Set before any thread starts, read-only after (plugin.h). */
static double opt_stall_after = TFB_STALL_AFTER_DEFAULT;
static const char *opt_loss_tags = TFB_LOSS_REGEX_DEFAULT;
static const char *opt_alert[TFB_OPT_STRINGS_MAX];
static double opt_gpu_idle = 50;
static const char *opt_webhook;
static const char *opt_webhook_file;
static const char *opt_on_alert;
/* The URL read from --alert_webhook_file or the environment. */
static char webhook_buf[TFB_ALERT_WEBHOOK_MAX + 1];

static const tfb_option options[] = {
    {.name = "stall_after", .arg = "S", .type = TFB_OPT_DOUBLE,
     .help = "a run without new events for max(S, 20 x its median step "
             "interval) seconds is stalled",
     .def = "300", .min = 0.01, .max = 1e9, .dest = &opt_stall_after},
    {.name = "loss_tags", .arg = "REGEX", .type = TFB_OPT_STRING,
     .help = "scalar tags that are losses (POSIX extended, "
             "case-insensitive): blow-up and spike detection",
     .def = "loss", .dest = &opt_loss_tags},
    {.name = "alert", .arg = "RULE", .type = TFB_OPT_STRINGS,
     .help = "alert when RULE holds, e.g. 'loss>5 for 100 steps', "
             "'accuracy<0.5 after 2000 steps' (repeatable)",
     .def = "none", .dest = opt_alert},
    {.name = "gpu_idle", .arg = "PCT", .type = TFB_OPT_DOUBLE,
     .help = "alert when a GPU is idle more than PCT % of the time",
     .def = "50", .min = 0, .max = 100, .dest = &opt_gpu_idle},
    {.name = "alert_webhook", .arg = "URL", .type = TFB_OPT_STRING,
     .help = "POST each alert as JSON (Slack-compatible \"text\") to URL "
             "(tfboard and tfboard watch). The URL is a credential and ps "
             "shows the command line: better set "
             TFB_ALERT_WEBHOOK_ENV "=URL or give --alert_webhook_file",
     .def = "$" TFB_ALERT_WEBHOOK_ENV ", else none", .dest = &opt_webhook},
    {.name = "alert_webhook_file", .arg = "FILE", .type = TFB_OPT_STRING,
     .help = "read the webhook's URL from FILE (one line; keep it "
             "readable by you alone)",
     .def = "none", .dest = &opt_webhook_file},
    {.name = "on_alert", .arg = "CMD", .type = TFB_OPT_STRING,
     .help = "run CMD (split at blanks, no shell) for each alert, with "
             "TFB_ALERT_RUN, TFB_ALERT_RULE, ... in its environment",
     .def = "none", .dest = &opt_on_alert},
};

/* A webhook URL as read from a file or the environment: one line of at
 * most TFB_ALERT_WEBHOOK_MAX bytes, no blanks or control characters
 * inside, blanks and line ends around it dropped. Copied into
 * webhook_buf. Messages name where it came from, never the URL. */
static int take_webhook(const char *v, size_t len, const char *from,
                        char *err, size_t err_len)
{
    while (len && (v[len - 1] == '\n' || v[len - 1] == '\r' ||
                   v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    while (len && (*v == ' ' || *v == '\t')) {
        v++;
        len--;
    }
    if (!len) {
        snprintf(err, err_len, "%s holds no webhook URL", from);
        return TFB_EINVAL;
    }
    if (len > TFB_ALERT_WEBHOOK_MAX) {
        snprintf(err, err_len, "%s: the webhook URL is longer than %d "
                 "bytes", from, TFB_ALERT_WEBHOOK_MAX);
        return TFB_EINVAL;
    }
    if (!(len > 7 && strncasecmp(v, "http://", 7) == 0) &&
        !(len > 8 && strncasecmp(v, "https://", 8) == 0)) {
        snprintf(err, err_len, "%s: the webhook URL must start with "
                 "http:// or https://", from);
        return TFB_EINVAL;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)v[i] <= ' ' || v[i] == 0x7f) {
            snprintf(err, err_len, "%s: the webhook URL must be one line "
                     "without blanks or control characters", from);
            return TFB_EINVAL;
        }
    memcpy(webhook_buf, v, len);
    webhook_buf[len] = 0;
    opt_webhook = webhook_buf;
    return 0;
}

/* Where the webhook's URL comes from: --alert_webhook (shown by ps),
 * --alert_webhook_file, else $TFBOARD_ALERT_WEBHOOK; two of the first
 * contradict each other. */
static int webhook_source(char *err, size_t err_len)
{
    if (opt_webhook == webhook_buf)
        opt_webhook = NULL; /* ours from an earlier parse, not argv's */
    if (opt_webhook && opt_webhook_file) {
        snprintf(err, err_len, "--alert_webhook and --alert_webhook_file "
                 "contradict each other; choose one");
        return TFB_EINVAL;
    }
    if (opt_webhook)
        return 0;
    if (!opt_webhook_file) {
        const char *env = getenv(TFB_ALERT_WEBHOOK_ENV);
        if (!env || !*env)
            return 0;
        return take_webhook(env, strlen(env), TFB_ALERT_WEBHOOK_ENV, err,
                            err_len);
    }
    char from[300];
    snprintf(from, sizeof from, "--alert_webhook_file %.200s",
             opt_webhook_file);
    FILE *f = fopen(opt_webhook_file, "re");
    if (!f) {
        snprintf(err, err_len, "%s: %s", from, strerror(errno));
        return TFB_EINVAL;
    }
    /* One more byte than a URL may have, and its line end: a longer
     * file is refused, not read whole. */
    char buf[TFB_ALERT_WEBHOOK_MAX + 3];
    size_t n = fread(buf, 1, sizeof buf, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, err_len, "%s: cannot be read", from);
        return TFB_EINVAL;
    }
    if (n == sizeof buf) {
        snprintf(err, err_len, "%s: the webhook URL is longer than %d "
                 "bytes", from, TFB_ALERT_WEBHOOK_MAX);
        return TFB_EINVAL;
    }
    return take_webhook(buf, n, from, err, err_len);
}

static int check_options(char *err, size_t err_len)
{
    if (webhook_source(err, err_len) < 0)
        return TFB_EINVAL;
    if (tfb_run_status_configure(opt_stall_after, opt_loss_tags) < 0) {
        /* The pattern's own reason: a refused cost reads as such, not as
         * bad syntax. */
        char why[256] = "not a regular expression";
        regex_t re;
        if (opt_loss_tags && tfb_regex_compile(&re, opt_loss_tags,
                                               REG_EXTENDED | REG_NOSUB, why,
                                               sizeof why) == 0)
            regfree(&re);
        snprintf(err, err_len, "--loss_tags: %s: %s", why, opt_loss_tags);
        return TFB_EINVAL;
    }
    tfb_alert_rule rules[TFB_OPT_STRINGS_MAX];
    size_t n = 0;
    for (; n < TFB_OPT_STRINGS_MAX && opt_alert[n]; n++) {
        char why[400];
        if (tfb_alert_rule_parse(opt_alert[n], &rules[n], why, sizeof why) <
            0) {
            snprintf(err, err_len, "--alert: %s", why);
            return TFB_EINVAL;
        }
    }
    return tfb_alerts_configure(rules, n, opt_gpu_idle);
}

static double now_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void status_text(FILE *f, const tfb_run_status *st, int md)
{
    fputs(md ? "\n### Status\n\n**" : "  status: ", f);
    fputs(tfb_run_state_name(st->state), f);
    if (md)
        fputs("**", f);
    if (st->state == TFB_RUN_DIVERGED) {
        fprintf(f, " at step %lld (%s in ", (long long)st->diverged_step,
                st->diverged_why);
        tfb_report_put_str(f, st->diverged_tag, md);
        fputc(')', f);
    }
    if (st->ended) {
        fputs(st->state == TFB_RUN_FINISHED ? "" : "; closed", f);
        if (st->reason[0]) {
            fputs(st->state == TFB_RUN_FINISHED ? ": " : ": ", f);
            tfb_report_put_str(f, st->reason, md);
        }
    } else if (st->state == TFB_RUN_CRASHED) {
        fprintf(f, " (no end record; process %ld is gone)", st->pid);
    } else if (st->state == TFB_RUN_STALLED) {
        fprintf(f, " (no new event for %.0f s; threshold %.0f s)",
                st->idle_s, st->stall_after);
    }
    fputc('\n', f);
}

/* One spike as JSON (the shape API.md documents under "Loss spikes"). */
static const tfb_json_field spike_fields[] = {
    TFB_JSON_FIELD(tfb_alert_spike, run, STR),
    TFB_JSON_FIELD(tfb_alert_spike, tag, STR),
    TFB_JSON_FIELD_AS("step", tfb_alert_spike, spike.step, I64),
    TFB_JSON_FIELD_AS("value", tfb_alert_spike, spike.value, DOUBLE),
    TFB_JSON_FIELD_AS("level", tfb_alert_spike, spike.level, DOUBLE),
    TFB_JSON_FIELD_AS("z", tfb_alert_spike, spike.z, DOUBLE),
    TFB_JSON_FIELD_AS("peak_step", tfb_alert_spike, spike.peak_step, I64),
    TFB_JSON_FIELD_AS("peak", tfb_alert_spike, spike.peak, DOUBLE),
};
/* Each null unless its precursor was found (grad_first: also a name). */
static const tfb_json_field precursor_fields[] = {
    TFB_JSON_FIELD_IF("grad_from", tfb_precursors, grad_from, I64, grad),
    TFB_JSON_FIELD_IF("grad_factor", tfb_precursors, grad_factor, DOUBLE,
                      grad),
    TFB_JSON_FIELD_IF("grad_first", tfb_precursors, grad_first, STR, grad),
    TFB_JSON_FIELD_IF("lr_step", tfb_precursors, lr_step, I64, lr),
    TFB_JSON_FIELD_IF("nonfinite_step", tfb_precursors, nonfinite_step, I64,
                      nonfinite),
    TFB_JSON_FIELD_IF("stall_step", tfb_precursors, stall_step, I64, stall),
};

static void spike_json(tfb_json *j, const tfb_alert_spike *a)
{
    const tfb_precursors *p = &a->pre;
    tfb_json_object_begin(j);
    TFB_JSON_FIELDS(j, a, spike_fields);
    tfb_json_key(j, "state");
    tfb_json_str(j, tfb_spike_state_name(a->spike.state));
    tfb_json_key(j, "end_step");
    tfb_json_i64(j, a->spike.end_step);
    tfb_json_key(j, "precursors");
    TFB_JSON_STRUCT(j, p, precursor_fields);
    tfb_json_key(j, "batch_ids");
    tfb_json_array_begin(j);
    for (size_t b = 0; b < p->n_batches; b++)
        tfb_json_str(j, p->batch_id[b]);
    tfb_json_array_end(j);
    char why[512];
    tfb_precursors_text(p, why, sizeof why);
    tfb_json_key(j, "explain");
    tfb_json_str(j, why);
    tfb_json_object_end(j);
}

/* GET spikes?run=R (optional: every run) -> {"spikes": [...]}. */
static int route_spikes(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *only = NULL;
    int rc;
    if (tfb_http_query(req, "run") != NULL &&
        (rc = tfb_http_param_run(req, resp, &only)) < 0)
        return rc;
    tfb_run **runs = &only;
    size_t nr = 1;
    if (!only && tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "spikes");
    tfb_json_array_begin(&j);
    rc = 0;
    for (size_t i = 0; i < nr && rc == 0; i++) {
        tfb_alert_spike *v;
        size_t n;
        if ((rc = tfb_alert_spikes(runs[i], &v, &n)) < 0)
            break;
        for (size_t q = 0; q < n; q++)
            spike_json(&j, &v[q]);
        free(v);
    }
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    if (!only)
        free(runs);
    if (rc < 0) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 500, "out of memory");
    }
    return tfb_http_json(resp, &j);
}

static const tfb_json_field event_fields[] = {
    TFB_JSON_FIELD(tfb_alert_event, run, CHARS),
    TFB_JSON_FIELD(tfb_alert_event, rule, CHARS),
    TFB_JSON_FIELD(tfb_alert_event, key, CHARS),
    TFB_JSON_FIELD(tfb_alert_event, step, STEP),
    TFB_JSON_FIELD(tfb_alert_event, step_wall, NUM),
    TFB_JSON_FIELD(tfb_alert_event, message, CHARS),
};

static void event_json(tfb_json *j, const tfb_alert_event *e)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "seq");
    tfb_json_u64(j, e->seq);
    tfb_json_key(j, "wall_time");
    tfb_json_double(j, e->wall);
    tfb_json_key(j, "event");
    tfb_json_str(j, e->fired ? "fired" : "cleared");
    TFB_JSON_FIELDS(j, e, event_fields);
    tfb_json_object_end(j);
}

/* GET feed?since=SEQ -> {"events": [...], "active", "last_seq"}: runs an
 * evaluation pass first (incremental), so the page sees alerts as data
 * arrives. */
static int route_feed(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t since;
    int rc = tfb_http_param_i64(req, resp, "since", 0, 0, 0, INT64_MAX,
                                &since);
    if (rc < 0)
        return rc;
    if (tfb_alerts_poll(tfb_server_store(req), now_wall(), NULL, NULL) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_alert_event *v;
    size_t n, active;
    if (tfb_alerts_feed((uint64_t)since, &v, &n, &active) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "events");
    tfb_json_array_begin(&j);
    uint64_t last = (uint64_t)since;
    for (size_t i = 0; i < n; i++) {
        event_json(&j, &v[i]);
        last = v[i].seq;
    }
    tfb_json_array_end(&j);
    tfb_json_key(&j, "active");
    tfb_json_u64(&j, active);
    tfb_json_key(&j, "last_seq");
    tfb_json_u64(&j, last);
    tfb_json_object_end(&j);
    free(v);
    return tfb_http_json(resp, &j);
}

static void spikes_text(FILE *f, const tfb_alert_spike *v, size_t n, int md)
{
    if (n == 0)
        return;
    if (md)
        fputs("\n### Loss spikes\n\n| tag | step | value | level | z | "
              "state | until | before it |\n| --- | --- | --- | --- | --- | "
              "--- | --- | --- |\n", f);
    else
        fprintf(f, "  loss spikes: %zu\n    %-20s %8s %10s %10s %6s %-9s "
                   "%8s  %s\n", n, "tag", "step", "value", "level", "z",
                "state", "until", "before it");
    size_t n_batches = 0;
    for (size_t i = 0; i < n; i++) {
        const tfb_alert_spike *a = &v[i];
        char why[512];
        tfb_precursors_text(&a->pre, why, sizeof why);
        n_batches += a->pre.n_batches;
        fputs(md ? "| " : "    ", f);
        tfb_report_put_str(f, a->tag, md);
        if (!md)
            tfb_report_pad(f, strlen(a->tag), 20);
        fprintf(f, md ? " | %lld | %.4g | %.4g | %.1f | %s | %lld | "
                      : " %8lld %10.4g %10.4g %6.1f %-9s %8lld  ",
                (long long)a->spike.step, a->spike.value, a->spike.level,
                a->spike.z, tfb_spike_state_name(a->spike.state),
                (long long)a->spike.end_step);
        tfb_report_put_str(f, why[0] ? why : "-", md);
        fputs(md ? " |\n" : "\n", f);
    }
    if (!n_batches)
        return;
    /* The batches of the steps around each spike, one id a line: a file
     * a data loader can skip. */
    fputs(md ? "\nSkip list (batch ids around the spikes):\n\n```\n"
             : "  skip list (batch ids around the spikes):\n", f);
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < v[i].pre.n_batches; b++) {
            fputs(md ? "" : "    ", f);
            tfb_report_put_str(f, v[i].pre.batch_id[b], 0);
            fputc('\n', f);
        }
    if (md)
        fputs("```\n", f);
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)s;
    (void)o;
    tfb_run_status st;
    int rc = tfb_run_status_get(r, now_wall(), &st);
    if (rc == TFB_ENOENT)
        return 0; /* trace files only: no status, no scalars to spike */
    if (rc < 0)
        return rc;
    status_text(f, &st, markdown);
    tfb_alert_spike *v;
    size_t n;
    if ((rc = tfb_alert_spikes(r, &v, &n)) < 0)
        return rc;
    spikes_text(f, v, n, markdown);
    free(v);
    return 0;
}

static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    (void)s;
    (void)o;
    tfb_run_status st;
    int rc = tfb_run_status_get(r, now_wall(), &st);
    if (rc == TFB_ENOENT)
        return 0; /* trace files only: no status, no scalars to spike */
    if (rc < 0)
        return rc;
    tfb_json_key(j, "status");
    tfb_json_str(j, tfb_run_state_name(st.state));
    tfb_json_key(j, "end_reason");
    if (st.ended)
        tfb_json_str(j, st.reason);
    else
        tfb_json_null(j);
    tfb_alert_spike *v;
    size_t n;
    if ((rc = tfb_alert_spikes(r, &v, &n)) < 0)
        return rc;
    tfb_json_key(j, "spikes");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        spike_json(j, &v[i]);
    tfb_json_array_end(j);
    free(v);
    return 0;
}

/* The report's first screen: a run whose loss spiked and came back (or
 * is still up) says so; a spike that ended in divergence is the health
 * plugin's "diverged" finding already. Recovered spikes weigh 40, below an
 * input-bound run; an open one 70. */
static int report_findings(tfb_store *s, tfb_run *r, const tfb_report_opts *o,
                           void (*emit)(void *, double, const char *),
                           void *user)
{
    (void)s;
    (void)o;
    tfb_alert_spike *v;
    size_t n;
    int rc = tfb_alert_spikes(r, &v, &n);
    if (rc < 0)
        return rc;
    size_t open = 0, diverged = 0;
    for (size_t i = 0; i < n; i++) {
        open += v[i].spike.state == TFB_SPIKE_OPEN;
        diverged += v[i].spike.state == TFB_SPIKE_DIVERGED;
    }
    if (n && !diverged) {
        char steps[96] = "";
        size_t used = 0;
        for (size_t i = 0; i < n && i < 3 && used < sizeof steps; i++)
            used += (size_t)snprintf(steps + used, sizeof steps - used,
                                     "%s%lld", i ? ", " : "",
                                     (long long)v[i].spike.step);
        char line[320];
        snprintf(line, sizeof line,
                 "loss spikes: %zu on %.100s (step%s %s%s), %s", n, v[0].tag,
                 n > 1 ? "s" : "", steps, n > 3 ? ", ..." : "",
                 open ? (open == n ? "not recovered yet" : "some not "
                                                           "recovered yet")
                      : (n > 1 ? "all recovered" : "recovered"));
        emit(user, open ? 70.0 : 40.0, line);
    }
    free(v);
    return 0;
}

/* ---- the service ---- */

/* Serve: alerts reach a webhook or a command even with no page open, so
 * the server evaluates them itself, on threads of their own, when one is
 * set. Watch: `tfboard watch` evaluates (poll); delivery only. */
static int service_start(tfb_store *s, tfb_service_mode mode,
                         double interval, FILE *log)
{
    int notifying = opt_webhook || opt_on_alert;
    if (mode == TFB_SERVICE_WATCH)
        return tfb_alerts_notify_start(opt_webhook, opt_on_alert, log);
    if (!notifying)
        return 0;
    if (tfb_alerts_notify_start(opt_webhook, opt_on_alert, log) < 0 ||
        tfb_alerts_watcher_start(s, interval > 0 ? interval : 5) < 0)
        fprintf(log, "tfboard: cannot start alert delivery\n");
    return 0;
}

static void service_stop(tfb_service_mode mode)
{
    if (mode == TFB_SERVICE_WATCH) {
        tfb_alerts_notify_stop(TFB_ALERT_FLUSH_WATCH_S);
    } else if (opt_webhook || opt_on_alert) {
        tfb_alerts_watcher_stop();
        tfb_alerts_notify_stop(TFB_ALERT_FLUSH_SERVE_S);
    }
}

static int service_poll(tfb_store *s, double now,
                        void (*emit)(void *, const tfb_service_event *),
                        void *user)
{
    tfb_alert_event *ev;
    size_t n;
    int rc = tfb_alerts_poll(s, now, &ev, &n);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        tfb_service_event e = {ev[i].wall, ev[i].fired,    ev[i].run,
                               ev[i].rule, ev[i].message, ev[i].step};
        emit(user, &e);
    }
    tfb_alerts_notify(ev, n);
    free(ev);
    return 0;
}

static const tfb_plugin_service service = {
    .start = service_start,
    .stop = service_stop,
    .poll = service_poll,
    .watch_help =
        "Prints each alert of each run as one line when it fires or\n"
        "clears (built-in: nonfinite, diverged, loss_spike, spike_open,\n"
        "stalled, crashed, straggler, input_bound, gpu_idle, gpu_memory;\n"
        "and each --alert rule, e.g. 'loss>5 for 100 steps').\n",
};

static const tfb_plugin_route routes[] = {
    {"spikes", route_spikes},
    {"feed", route_feed},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_alerts_assets[];

const tfb_plugin tfb_plugin_alerts = {
    TFB_PLUGIN_ABI,
    .name = "alerts",
    .title = "Alerts",
    .module = "js/pages/alerts.js",
    .assets = tfb_alerts_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .report_text = report_text,
    .report_json = report_json,
    .report_findings = report_findings,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
    .check_options = check_options,
    .service = &service,
};
