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
#include "tfboard.h"
#include "watch.h"

static volatile sig_atomic_t g_stop;

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

/* One event (tfb_plugin_services_poll's emit); user: the exit status. */
static void print_event(void *user, const tfb_service_event *e)
{
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
    if (e->fired)
        *(int *)user = 1;
}

/* Returns 0 to go on, 1 after --help, -1 on bad usage (printed). */
static int parse(int argc, char **argv, const char **logdir, int *once,
                 int *fail_fast, double *interval)
{
    const tfb_option opts[] = {
        {"logdir", "DIR", "the runs to watch", TFB_OPT_STRING,
         .dest = logdir},
        {"once", NULL, "one pass over the logdir: print what holds, exit",
         TFB_OPT_FLAG, .dest = once},
        {"fail_fast", NULL, "exit 1 at the first alert that fires",
         TFB_OPT_FLAG, .dest = fail_fast},
        {"interval", "S", "seconds between passes", TFB_OPT_DOUBLE, "5",
         0.05, HUGE_VAL, interval},
    };
    const tfb_command cmd = {
        .prog = "tfboard watch",
        .synopsis = "usage: tfboard watch --logdir DIR [--once] "
                    "[--fail_fast]\n"
                    "         [--interval S] [--alert RULE ...] [dashboard "
                    "options]\n\n",
        .more_help = services_help,
        .opts = opts, .n_opts = sizeof opts / sizeof *opts,
        .epilogue = "Exit status: 0 (--once: no alert; or stopped by a "
                    "signal), 1\n(--once: alerts hold; --fail_fast: an "
                    "alert fired), 2 (usage\nerror), 3 (the logdir cannot "
                    "be read).\n"};
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

int tfb_watch_main(int argc, char **argv)
{
    const char *logdir = NULL;
    int once = 0, fail_fast = 0;
    double interval = 5;
    int rc = parse(argc, argv, &logdir, &once, &fail_fast, &interval);
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
        int fired = 0;
        (void)tfb_plugin_services_poll(store, now.tv_sec + now.tv_nsec * 1e-9,
                                       print_event, &fired);
        if (fired && (fail_fast || once))
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
