/*
 * bench_alerts.c - what alerts cost on top of loading (issue 23: 1,000
 * runs with alerts on add at most 10 % to load time). Writes a logdir of
 * N runs (TFB_BENCH_RUNS, default 1000; each 2,000 steps of loss, lr and
 * three gradient norms, one planted spike) with libtfboard, then in a
 * fresh store each time:
 *   load        one full loader pass;
 *   load+alerts the same pass, then one alert evaluation (status, spike
 *               detection from scratch, rules, feed) of every run;
 *   append      + 200 steps to every run, one more pass and evaluation:
 *               the evaluation reads only the new points.
 * Prints the times and the overhead in percent; asserts nothing on time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugins/alerts/alerts_feed.h"
#include "plugins/alerts/alerts_rules.h"
#include "plugins/alerts/alerts_spikes.h"
#include "core/loader.h"
#include "core/run_status.h"
#include "core/store.h"
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

static double pass_time(tfb_store *st, tfb_loader *l)
{
    double t0 = now_s();
    tfb_loader_pass(l);
    (void)st;
    return now_s() - t0;
}

int main(void)
{
    const char *env = getenv("TFB_BENCH_RUNS");
    int n = env ? atoi(env) : 1000;
    char root[] = "/tmp/tfb_bench_alertsXXXXXX";
    if (!mkdtemp(root))
        return 1;
    char dir[512];
    for (int i = 0; i < n; i++) {
        snprintf(dir, sizeof dir, "%s/run%04d", root, i);
        write_run(dir, 0, 2000, (unsigned)i);
    }
    tfb_run_status_configure(TFB_STALL_AFTER_DEFAULT, NULL);
    tfb_alert_rule rule;
    char err[256];
    tfb_alert_rule_parse("loss>5 for 100 steps", &rule, err, sizeof err);
    tfb_alerts_configure(&rule, 1, 50);

    double best_load = HUGE_VAL, best_with = HUGE_VAL, best_eval = HUGE_VAL;
    size_t events = 0;
    for (int rep = 0; rep < 3; rep++) {
        tfb_store *st;
        tfb_loader *l;
        tfb_loader_opts o = {0, 2, NULL};
        tfb_store_create(&st, root);
        tfb_loader_create(&l, st, &o);
        double load = pass_time(st, l);
        tfb_loader_stop(l);
        tfb_store_destroy(st);
        if (load < best_load)
            best_load = load;
    }
    /* With alerts: the store (and the detectors keyed by its series) is
     * fresh each time only for the first; then the incremental step. */
    tfb_store *st;
    tfb_loader *l;
    tfb_loader_opts o = {0, 2, NULL};
    tfb_store_create(&st, root);
    tfb_loader_create(&l, st, &o);
    double t0 = now_s();
    tfb_loader_pass(l);
    double t1 = now_s();
    tfb_alert_event *ev;
    tfb_alerts_poll(st, wall_now(), &ev, &events);
    free(ev);
    double t2 = now_s();
    best_with = t2 - t0;
    best_eval = t2 - t1;
    /* Where the evaluation's time goes: a fresh store, then status and
     * spikes alone. */
    {
        tfb_store *s2;
        tfb_loader *l2;
        tfb_store_create(&s2, root);
        tfb_loader_create(&l2, s2, &o);
        tfb_loader_pass(l2);
        tfb_run **runs;
        size_t nr;
        tfb_store_runs(s2, &runs, &nr);
        double a0 = now_s();
        for (size_t i = 0; i < nr; i++) {
            tfb_run_status rs;
            tfb_run_status_get(runs[i], wall_now(), &rs);
        }
        double a1 = now_s();
        for (size_t i = 0; i < nr; i++) {
            tfb_alert_spike *sp;
            size_t k;
            tfb_alert_spikes(runs[i], &sp, &k);
            free(sp);
        }
        double a2 = now_s();
        for (size_t i = 0; i < nr; i++) {
            tfb_alert_spike *sp;
            size_t k;
            tfb_alert_spikes(runs[i], &sp, &k);
            free(sp);
        }
        double a3 = now_s();
        printf("  parts: status %.3f s, spikes (detection + precursors) "
               "%.3f s, spikes again (precursors only) %.3f s\n", a1 - a0,
               a2 - a1, a3 - a2);
        free(runs);
        tfb_loader_stop(l2);
        tfb_store_destroy(s2);
    }
    /* append 200 steps to every run (a second file each) */
    for (int i = 0; i < n; i++) {
        snprintf(dir, sizeof dir, "%s/run%04d", root, i);
        write_run(dir, 2000, 2200, (unsigned)i + 7);
    }
    double t3 = now_s();
    tfb_loader_pass(l);
    double t4 = now_s();
    size_t ev2 = 0;
    tfb_alerts_poll(st, wall_now(), &ev, &ev2);
    free(ev);
    double t5 = now_s();
    double t6 = now_s();
    size_t ev3 = 0;
    tfb_alerts_poll(st, wall_now(), &ev, &ev3);
    free(ev);
    double t7 = now_s();
    tfb_loader_stop(l);
    tfb_store_destroy(st);

    printf("bench_alerts: %d runs x 2,000 steps x 5 tags (one planted "
           "spike each)\n", n);
    printf("  load (best of 3)               %8.3f s\n", best_load);
    printf("  load + alerts (first pass)     %8.3f s  (evaluation %.3f s = "
           "%+.1f %% of load; %zu events)\n", best_with, best_eval,
           100 * best_eval / best_load, events);
    printf("  append 200 steps: reload       %8.3f s, evaluation %.3f s "
           "(%+.1f %% of that reload; %zu events)\n", t4 - t3, t5 - t4,
           100 * (t5 - t4) / (t4 - t3), ev2);
    printf("  evaluation with no new data    %8.3f s (%zu events)\n",
           t7 - t6, ev3);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
