/*
 * bench_alerts.c - what alerts cost on top of loading (issue 23: 1,000
 * runs with alerts on add at most 10 % to load time). Writes a logdir of
 * N runs (TFB_BENCH_RUNS, default 1000; each 2,000 steps of loss, lr and
 * three gradient norms, one planted spike) with libtfboard, then in a
 * fresh store each time (wall and CPU seconds, the best of 9 pairs):
 *   load, alerts off  one full loader pass with no tag taken for a loss
 *               (--loss_tags ''): nothing watched, loading alone;
 *   load, alerts on   the same with the default loss regex: the store's
 *               loss watches (spike detector, blow-up scan) take each
 *               block as the loader seals it;
 *   evaluation  one alert evaluation (status, spikes, precursors, rules,
 *               jobs, feed) of every run of the freshly loaded store,
 *               every kept state forgotten;
 *   append      + 200 steps to every run, one more pass and evaluation:
 *               the evaluation reads only the new points; then one with
 *               nothing new.
 * Prints the times and what alerts add to loading: per pair, the load
 * with alerts on plus its first evaluation over the load with alerts off,
 * the median over 9 pairs (and their range); asserts nothing on time.
 * TFB_BENCH_RUNS sets the number of runs; TFB_BENCH_LOGDIR keeps the
 * logdir there (written once) for profiling, and appends nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugins/alerts/alerts_feed.h"
#include "plugins/alerts/alerts_rules.h"
#include "plugins/alerts/alerts_spikes.h"
#include "store/loader.h"
#include "analysis/run_status.h"
#include "store/store.h"
#include "tfboard.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void write_run(const char *dir, int from, int to, unsigned seed)
{
    tfb_writer *w;
    if (tfb_writer_open(&w, dir, NULL) < 0) {
        perror(dir);
        exit(1);
    }
    srand(seed);
    for (int s = from; s < to; s++) {
        double noise = (rand() / (double)RAND_MAX - 0.5) * 0.04;
        double loss = (2 * exp(-s / 500.0) + 0.3) * (1 + noise);
        if (s == 1000)
            loss *= 3;
        tfb_scalar(w, "loss", loss, s);
        tfb_scalar(w, "lr", s < 1500 ? 0.1 : 0.01, s);
        tfb_scalar(w, "grad_norm/fc1", 0.5 + noise, s);
        tfb_scalar(w, "grad_norm/fc2", 0.8 + noise, s);
        tfb_scalar(w, "grad_norm/global", 1.0 + noise, s);
    }
    tfb_writer_close(w);
}

typedef struct tm2 {
    double wall, cpu; /* seconds; cpu: every thread of the process */
} tm2;

static tm2 now2(void)
{
    struct timespec c;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    return (tm2){now_s(), (double)c.tv_sec + (double)c.tv_nsec * 1e-9};
}

static tm2 since(tm2 a)
{
    tm2 b = now2();
    return (tm2){b.wall - a.wall, b.cpu - a.cpu};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void keep_min(tm2 *best, tm2 t)
{
    if (t.wall < best->wall)
        best->wall = t.wall;
    if (t.cpu < best->cpu)
        best->cpu = t.cpu;
}

/* A fresh store with the logdir loaded by one pass; the load's times. */
static tm2 fresh(const char *root, tfb_store **st, tfb_loader **l)
{
    tfb_loader_opts o = {0, 2, NULL};
    tfb_store_create(st, root);
    tfb_loader_create(l, *st, &o);
    tm2 t0 = now2();
    tfb_loader_pass(*l);
    return since(t0);
}

static void done(tfb_store *st, tfb_loader *l)
{
    tfb_loader_stop(l);
    tfb_store_destroy(st);
}

int main(void)
{
    const char *env = getenv("TFB_BENCH_RUNS");
    int n = env ? atoi(env) : 1000;
    /* TFB_BENCH_LOGDIR: write there once and keep it (profiling runs). */
    const char *keep = getenv("TFB_BENCH_LOGDIR");
    char root[512] = "/tmp/tfb_bench_alertsXXXXXX";
    char dir[600];
    int written = 0;
    if (keep) {
        snprintf(root, sizeof root, "%s", keep);
        snprintf(dir, sizeof dir, "%s/run%04d", root, n - 1);
        written = access(dir, F_OK) == 0;
    } else if (!mkdtemp(root)) {
        return 1;
    }
    for (int i = 0; i < n && !written; i++) {
        snprintf(dir, sizeof dir, "%s/run%04d", root, i);
        write_run(dir, 0, 2000, (unsigned)i);
    }
    tfb_alert_rule rule;
    char err[256];
    tfb_alert_rule_parse("loss>5 for 100 steps", &rule, err, sizeof err);
    tfb_alerts_configure(&rule, 1, 50);

    const tm2 inf = {HUGE_VAL, HUGE_VAL};
    tm2 load_off = inf, load = inf, eval = inf, status = inf, spikes = inf,
        again = inf;
    size_t events = 0;
    /* In pairs, so that a slower phase of the machine hits both halves
     * of a pair: a load with alerts off, then a load with alerts on and
     * its first evaluation (every kept state forgotten). What alerts add
     * is each pair's (on + evaluation) / off - 1; the median over the
     * pairs is the figure (the best of each alone differs from run to
     * run by about as much as the difference). */
    enum { PAIRS = 9 };
    double add_wall[PAIRS], add_cpu[PAIRS];
    for (int rep = 0; rep < PAIRS; rep++) {
        tm2 t_off = {0, 0}, t_on = {0, 0}, t_ev = {0, 0};
        for (int on = 0; on < 2; on++) {
            tfb_run_status_configure(TFB_STALL_AFTER_DEFAULT,
                                     on ? NULL : "");
            tfb_store *st;
            tfb_loader *l;
            tm2 t = fresh(root, &st, &l);
            keep_min(on ? &load : &load_off, t);
            *(on ? &t_on : &t_off) = t;
            if (on) {
                tfb_alerts_reset();
                tfb_alert_event *ev;
                tm2 t0 = now2();
                tfb_alerts_poll(st, wall_now(), &ev, &events);
                t_ev = since(t0);
                keep_min(&eval, t_ev);
                free(ev);
            }
            done(st, l);
        }
        add_wall[rep] = (t_on.wall + t_ev.wall) / t_off.wall - 1;
        add_cpu[rep] = (t_on.cpu + t_ev.cpu) / t_off.cpu - 1;
    }
    qsort(add_wall, PAIRS, sizeof *add_wall, cmp_double);
    qsort(add_cpu, PAIRS, sizeof *add_cpu, cmp_double);
    /* Where the first evaluation's time goes: status, then spikes
     * (detection and precursors), then spikes again (nothing new). */
    for (int rep = 0; rep < 3; rep++) {
        tfb_store *st;
        tfb_loader *l;
        fresh(root, &st, &l);
        tfb_alerts_reset();
        tfb_run **runs;
        size_t nr;
        tfb_store_runs(st, &runs, &nr);
        tm2 t0 = now2();
        for (size_t i = 0; i < nr; i++) {
            tfb_run_status rs;
            tfb_run_status_get(runs[i], wall_now(), &rs);
        }
        keep_min(&status, since(t0));
        for (int pass = 0; pass < 2; pass++) {
            t0 = now2();
            for (size_t i = 0; i < nr; i++) {
                tfb_alert_spike *sp;
                size_t k;
                tfb_alert_spikes(runs[i], &sp, &k);
                free(sp);
            }
            keep_min(pass ? &again : &spikes, since(t0));
        }
        free(runs);
        done(st, l);
    }
    /* Live: append 200 steps to every run (a second file each), one more
     * pass and evaluation, then an evaluation with nothing new. */
    tfb_store *st;
    tfb_loader *l;
    fresh(root, &st, &l);
    tfb_alerts_reset();
    tfb_alert_event *ev;
    size_t e0;
    tfb_alerts_poll(st, wall_now(), &ev, &e0);
    free(ev);
    for (int i = 0; i < n && !keep; i++) {
        snprintf(dir, sizeof dir, "%s/run%04d", root, i);
        write_run(dir, 2000, 2200, (unsigned)i + 7);
    }
    tm2 t0 = now2();
    tfb_loader_pass(l);
    tm2 reload = since(t0);
    size_t ev2 = 0;
    t0 = now2();
    tfb_alerts_poll(st, wall_now(), &ev, &ev2);
    tm2 eval2 = since(t0);
    free(ev);
    size_t ev3 = 0;
    t0 = now2();
    tfb_alerts_poll(st, wall_now(), &ev, &ev3);
    tm2 eval3 = since(t0);
    free(ev);
    done(st, l);

    printf("bench_alerts: %d runs x 2,000 steps x 5 tags (one planted "
           "spike each); seconds, wall / CPU (all threads), best of %d\n", n,
           PAIRS);
    printf("  load, alerts off               %7.3f / %7.3f\n", load_off.wall,
           load_off.cpu);
    printf("  load, alerts on (loss watched) %7.3f / %7.3f\n", load.wall,
           load.cpu);
    printf("  first evaluation               %7.3f / %7.3f  (%zu events)\n",
           eval.wall, eval.cpu, events);
    printf("  alerts add ((load on + first evaluation) / load off - 1, "
           "median of %d pairs): %+.1f %% wall (pairs %+.1f .. %+.1f) / "
           "%+.1f %% CPU (target: at most +10 %%)\n", PAIRS,
           100 * add_wall[PAIRS / 2], 100 * add_wall[0],
           100 * add_wall[PAIRS - 1], 100 * add_cpu[PAIRS / 2]);
    printf("    parts: status %.3f / %.3f, spikes (their precursors: the "
           "detection ran while loading) "
           "%.3f / %.3f, spikes again %.3f / %.3f\n", status.wall,
           status.cpu, spikes.wall, spikes.cpu, again.wall, again.cpu);
    if (keep)
        printf("  append 200 steps: not with TFB_BENCH_LOGDIR\n");
    else
        printf("  append 200 steps: reload       %7.3f / %7.3f, evaluation "
               "%.3f / %.3f (%+.1f %% / %+.1f %% of that reload; %zu "
               "events)\n", reload.wall, reload.cpu, eval2.wall, eval2.cpu,
               100 * eval2.wall / reload.wall, 100 * eval2.cpu / reload.cpu,
               ev2);
    printf("  evaluation with no new data    %7.3f / %7.3f (%zu events)\n",
           eval3.wall, eval3.cpu, ev3);
    tfb_alerts_reset();
    if (keep)
        return 0;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
