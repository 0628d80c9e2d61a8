/*
 * alerts.c - the alerts dashboard's descriptor: its command-line options
 * (the stall threshold and the loss regex that core's run status uses),
 * and its report section (each run's status line).
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "plugin.h"
#include "report_fmt.h"
#include "run_status.h"

/* Set before any thread starts, read-only after (plugin.h). */
static double opt_stall_after = TFB_STALL_AFTER_DEFAULT;
static const char *opt_loss_tags = TFB_LOSS_REGEX_DEFAULT;

static const tfb_plugin_option options[] = {
    {.name = "stall_after", .arg = "S", .type = TFB_OPT_DOUBLE,
     .help = "a run without new events for max(S, 20 x its median step "
             "interval) seconds is stalled",
     .def = "300", .min = 0.01, .max = 1e9, .dest = &opt_stall_after},
    {.name = "loss_tags", .arg = "REGEX", .type = TFB_OPT_STRING,
     .help = "scalar tags that are losses (POSIX extended, "
             "case-insensitive): blow-up and spike detection",
     .def = "loss", .dest = &opt_loss_tags},
};

static int check_options(char *err, size_t err_len)
{
    if (tfb_run_status_configure(opt_stall_after, opt_loss_tags) == 0)
        return 0;
    snprintf(err, err_len, "--loss_tags: not a regular expression: %s",
             opt_loss_tags);
    return TFB_EINVAL;
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

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)s;
    (void)o;
    tfb_run_status st;
    int rc = tfb_run_status_get(r, now_wall(), &st);
    if (rc < 0)
        return rc;
    status_text(f, &st, markdown);
    return 0;
}

static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    (void)s;
    (void)o;
    tfb_run_status st;
    int rc = tfb_run_status_get(r, now_wall(), &st);
    if (rc < 0)
        return rc;
    tfb_json_key(j, "status");
    tfb_json_str(j, tfb_run_state_name(st.state));
    tfb_json_key(j, "end_reason");
    if (st.ended)
        tfb_json_str(j, st.reason);
    else
        tfb_json_null(j);
    return 0;
}

const tfb_plugin tfb_plugin_alerts = {
    TFB_PLUGIN_ABI,
    .name = "alerts",
    .title = "Alerts",
    .module = "js/pages/alerts.js",
    .report_text = report_text,
    .report_json = report_json,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
    .check_options = check_options,
};
