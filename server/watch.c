/*
 * watch.c - `tfboard watch` (watch.h): the loader's passes on this thread,
 * then one poll of the dashboards' services after each (the alerts'
 * evaluation: incremental, only new points are read, and what fired or
 * cleared is handed to the webhook / --on_alert notifier), each event
 * printed as a line.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store/loader.h"
#include "core/options.h"
#include "core/plugin.h"
#include "store/store.h"
#include "report/report_where.h"
#include "tfboard.h"
#include "watch.h"

static volatile sig_atomic_t g_stop;

/* What --fail_on accepts: the alerts' built-in rules (alerts API.md),
 * "user" (every --alert rule), "all" (any alert: the exit status before
 * --fail_on), or one --alert rule's own text (it holds '<' or '>'). */
static const char *const RULES[] = {
    "nonfinite", "diverged", "loss_spike", "spike_open", "stalled",
    "crashed", "straggler", "input_bound", "gpu_idle", "gpu_memory",
    "user", "all"};

/* The rules whose alerts fail --once and --fail_fast, as a comma list. */
typedef struct fail_on {
    const char *names[TFB_WATCH_FAIL_ON_MAX];
    size_t n;
    char buf[512]; /* the names, cut at the commas */
} fail_on;

static int is_user_rule(const char *r)
{
    return strpbrk(r, "<>") != NULL;
}

static int parse_fail_on(void *user, const char *const *v, char *why,
                         size_t why_len)
{
    fail_on *fo = user;
    if (strlen(v[0]) >= sizeof fo->buf) {
        snprintf(why, why_len, "too long (at most %zu bytes)",
                 sizeof fo->buf - 1);
        return TFB_EINVAL;
    }
    memcpy(fo->buf, v[0], strlen(v[0]) + 1);
    fo->n = 0;
    for (char *save = NULL, *t = strtok_r(fo->buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        int known = is_user_rule(t);
        for (size_t i = 0; i < sizeof RULES / sizeof *RULES && !known; i++)
            known = !strcmp(t, RULES[i]);
        if (!known) {
            snprintf(why, why_len, "unknown rule '%.100s' (known: "
                     "nonfinite, diverged, loss_spike, spike_open, stalled, "
                     "crashed, straggler, input_bound, gpu_idle, "
                     "gpu_memory, user, all, or an --alert rule)", t);
            return TFB_EINVAL;
        }
        if (fo->n == TFB_WATCH_FAIL_ON_MAX) {
            snprintf(why, why_len, "at most %d rules",
                     TFB_WATCH_FAIL_ON_MAX);
            return TFB_EINVAL;
        }
        fo->names[fo->n++] = t;
    }
    if (fo->n == 0) {
        snprintf(why, why_len, "needs at least one rule");
        return TFB_EINVAL;
    }
    return 0;
}

/* Whether an alert of `rule` fails the run. */
static int fails(const fail_on *fo, const char *rule)
{
    for (size_t i = 0; i < fo->n; i++)
        if (!strcmp(fo->names[i], "all") || !strcmp(fo->names[i], rule) ||
            (!strcmp(fo->names[i], "user") && is_user_rule(rule)))
            return 1;
    return 0;
}

/* print_event's user: the rules that fail, and whether one fired. */
typedef struct watch_ctx {
    const fail_on *fail;
    int fired;
    const tfb_where_set *where; /* --where: only these runs; NULL: all */
} watch_ctx;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* The dashboards' services' part of --help: what each one reports. */
static void services_help(FILE *f)
{
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    for (size_t i = 0; i < np; i++)
        if (pl[i]->service && pl[i]->service->watch_help)
            fputs(pl[i]->service->watch_help, f);
}

/* The line: "2026-12-02T04:12:00Z FIRED run=<run> rule=<rule>
 * step=<step>: <message>". Control characters from file-derived strings
 * are shown as '?' so a run name cannot drive the terminal. */
static void put_clean(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* One event (tfb_plugin_services_poll's emit); user: a watch_ctx. Every
 * event is printed; only those of the --fail_on rules set the status. */
static void print_event(void *user, const tfb_service_event *e)
{
    watch_ctx *w = user;
    if (w->where && !tfb_where_has(w->where, e->run))
        return;
    time_t t = (time_t)e->wall;
    struct tm tm;
    char when[32];
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("%s %s run=", when, e->fired ? "FIRED" : "CLEARED");
    put_clean(stdout, e->run);
    fputs(" rule=", stdout);
    put_clean(stdout, e->rule);
    if (e->step >= 0)
        printf(" step=%lld", (long long)e->step);
    fputs(": ", stdout);
    put_clean(stdout, e->message);
    fputc('\n', stdout);
    fflush(stdout);
    if (e->fired && fails(w->fail, e->rule))
        w->fired = 1;
}

/* Returns 0 to go on, 1 after --help, -1 on bad usage (printed). */
static int parse(int argc, char **argv, const char **logdir, int *once,
                 int *fail_fast, double *interval, fail_on *fo,
                 const char **where)
{
    const tfb_option opts[] = {
        {"logdir", "DIR", "the runs to watch", TFB_OPT_STRING,
         .dest = logdir},
        {"once", NULL, "one pass over the logdir: print what holds, exit",
         TFB_OPT_FLAG, .dest = once},
        {"fail_fast", NULL, "exit 1 at the first alert of a --fail_on rule",
         TFB_OPT_FLAG, .dest = fail_fast},
        {"fail_on", "RULES", "the rules whose alerts fail the run (exit 1 "
         "with\n--once or --fail_fast), a comma list: nonfinite,\n"
         "diverged, loss_spike, spike_open, stalled, crashed,\nstraggler, "
         "input_bound, gpu_idle, gpu_memory; user\n(every --alert rule), "
         "an --alert rule's text, or all.\nOther alerts are printed, not "
         "failed; the default\nis the rules of a broken run",
         TFB_OPT_CALL, TFB_WATCH_FAIL_ON_DEFAULT,
         .dest = &(tfb_opt_call){parse_fail_on, fo, 1}},
        {"interval", "S", "seconds between passes", TFB_OPT_DOUBLE, "5",
         0.05, HUGE_VAL, interval},
        {"where", "EXPR", "only runs where EXPR holds after each pass: SQL\n"
         "over runs_wide, e.g. \"lr > 0.01 AND status = 'running'\"",
         TFB_OPT_STRING, .dest = where},
    };
    const tfb_command cmd = {
        .prog = "tfboard watch",
        .synopsis = "usage: tfboard watch --logdir DIR [--once] "
                    "[--fail_fast] [--fail_on RULES]\n"
                    "         [--interval S] [--where EXPR] [--alert RULE "
                    "...]\n         [dashboard options]\n\n",
        .more_help = services_help,
        .opts = opts, .n_opts = sizeof opts / sizeof *opts,
        .epilogue = "Exit status: 0 (--once: no alert of a --fail_on rule; "
                    "or stopped by\na signal), 1 (--once: such alerts "
                    "hold; --fail_fast: one fired),\n2 (usage error; "
                    "--once: no runs found under DIR), 3 (the logdir\n"
                    "cannot be read). A loss spike the run recovered from "
                    "(loss_spike\nonly) does not fail by default.\n"};
    int rc = tfb_options_parse(&cmd, argc, argv, stdout, stderr);
    if (rc != 0)
        return rc < 0 ? -1 : 1;
    if (!*logdir) {
        fprintf(stderr, "tfboard watch: --logdir is required (see tfboard "
                        "watch --help)\n");
        return -1;
    }
    return 0;
}

/* Whether the store holds no run (nor could list them). */
static int no_runs(tfb_store *s)
{
    tfb_run **runs;
    size_t n = 0;
    if (tfb_store_runs(s, &runs, &n) < 0)
        return 0;
    free(runs);
    return n == 0;
}

int tfb_watch_main(int argc, char **argv)
{
    const char *logdir = NULL;
    int once = 0, fail_fast = 0;
    double interval = 5;
    fail_on fo;
    char why[300];
    memset(&fo, 0, sizeof fo);
    const char *dflt[] = {TFB_WATCH_FAIL_ON_DEFAULT, NULL};
    if (parse_fail_on(&fo, dflt, why, sizeof why) < 0)
        return 2; /* the default is known good: never */
    const char *where = NULL;
    int rc = parse(argc, argv, &logdir, &once, &fail_fast, &interval, &fo,
                   &where);
    if (rc)
        return rc > 0 ? 0 : 2;
    struct stat st;
    if (stat(logdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tfboard watch: logdir %s: %s\n", logdir,
                errno ? strerror(errno) : "not a directory");
        return 3;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    tfb_store *store;
    if (tfb_store_create(&store, logdir) < 0) {
        fprintf(stderr, "tfboard watch: out of memory\n");
        return 3;
    }
    tfb_loader_opts lo = {0, 0, stderr};
    tfb_loader *loader;
    if (tfb_loader_create(&loader, store, &lo) < 0) {
        tfb_store_destroy(store);
        fprintf(stderr, "tfboard watch: cannot start the loader\n");
        return 3;
    }
    rc = tfb_plugin_services_start(store, TFB_SERVICE_WATCH, interval,
                                   stderr);
    if (rc < 0) {
        fprintf(stderr, "tfboard watch: cannot start: %s\n",
                tfb_strerror(rc));
        tfb_plugin_services_stop();
        tfb_loader_stop(loader);
        tfb_store_destroy(store);
        return 2;
    }
    int status = 0;
    while (!g_stop) {
        tfb_loader_pass(loader);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        /* A pass that found no run: a typo in the path would otherwise
         * pass a CI check as "no alert". */
        if (once && no_runs(store)) {
            fprintf(stderr, "tfboard watch: no runs found under %s\n",
                    logdir);
            status = 2;
            break;
        }
        /* --where again after each pass: new runs, new values. A bad
         * expression is a usage error (its columns exist once runs do). */
        tfb_where_set ws = {0};
        if (where) {
            char werr[600];
            if (tfb_where_eval(store, where, &ws, werr, sizeof werr) < 0) {
                fprintf(stderr, "tfboard watch: %s\n", werr);
                status = 2;
                break;
            }
        }
        watch_ctx w = {&fo, 0, where ? &ws : NULL};
        (void)tfb_plugin_services_poll(store, now.tv_sec + now.tv_nsec * 1e-9,
                                       print_event, &w);
        tfb_where_set_free(&ws);
        if (w.fired && (fail_fast || once))
            status = 1;
        if (once || (fail_fast && status))
            break;
        for (double t = 0; t < interval && !g_stop; t += 0.05) {
            struct timespec d = {0, 50000000L};
            nanosleep(&d, NULL);
        }
    }
    tfb_plugin_services_stop();
    tfb_loader_stop(loader);
    tfb_store_destroy(store);
    return status;
}
