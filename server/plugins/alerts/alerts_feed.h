/*
 * alerts_feed.h - the alerts: conditions of each run (built-in ones and
 * the user's rules), each firing once when it starts to hold and
 * clearing when it stops; the feed is the log of those fire/clear events
 * that the page, `tfboard watch`, the webhook and --on_alert read.
 *
 * Built-in conditions (rule names as in the feed):
 *   nonfinite    some series held NaN/Inf (the run status's rule)
 *   diverged     the run status is diverged by a loss blow-up, or a loss
 *                spike diverged
 *   loss_spike   one per spike (tag and step in the key): fires once
 *   stalled, crashed   the run status (analysis/run_status.h)
 *   straggler    a rank that the ranks analysis names a straggler
 *                (analysis/ranks_analysis.h: own time per step more than
 *                5 % above the median rank in at least 75 % of the
 *                steps; the rule and the sentence of the Ranks dashboard
 *                and the report), for each job of the store
 *                (analysis/ranks_jobs.h) with 2 ranks or more
 *   input_bound  median pipeline/input_ms / pipeline/step_ms over the last
 *                200 steps >= 0.20 (the pipeline tab's "highly")
 *   gpu_idle     a device's gpu/<dev>/sm_util (or utilization) median over
 *                its last 20 samples below 100 - --gpu_idle (default 50) %
 *   gpu_memory   a device's latest mem_used_bytes above 95 % of
 *                mem_total_bytes
 * plus one per --alert rule (alerts_rules.h) and tag.
 *
 * Evaluation is incremental and costs O(runs + series + new points) per
 * pass, never a rescan of history or a pin of a whole series:
 *  - per run (kept by run name): the status (analysis/run_status.h, no pin);
 *    the conditions that come from the data alone (spikes, input-bound,
 *    GPU, user rules) are worked out again only when the run's scalar
 *    series grew; the spikes are read from the store's loss watches
 *    (fed as the loader sealed each block: nothing decoded here), the
 *    rule states are fed only the new points (read by ranges of the
 *    store's blocks), the medians above come from a bounded tail;
 *  - per job: each run is looked at once for a rank record (when it
 *    first has points); the jobs are found again only when another run
 *    turned out to be a rank (or every 10 s while data arrives), never
 *    while no run is one, and a job is analysed again only when its
 *    ranks logged new steps; no comparison of every run with every
 *    other.
 * tests/bench/bench_alerts measures it on 1,000 runs.
 *
 * Thread-safety: every function may be called from any thread (one lock).
 */
#ifndef TFB_ALERTS_FEED_H
#define TFB_ALERTS_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/alerts/alerts_rules.h"
#include "store/store.h"

/* The most events of one evaluation whose step_wall is looked up (each
 * lookup reads the steps of the event's series: a hostile series of
 * thousands of spikes must not make one pass read it thousands of times;
 * the events past it have no step_wall). */
#define TFB_ALERTS_STEP_WALL_LOOKUPS 64

typedef struct tfb_alert_event {
    uint64_t seq;          /* 1, 2, ... in the order they happened */
    double wall;           /* when it was seen (seconds since the epoch) */
    int fired;             /* 1 fired, 0 cleared */
    char run[256];
    char rule[256];        /* a built-in name or the user's rule text */
    char key[320];         /* rule + what it is about (tag, step, device) */
    int64_t step;          /* where it happened (-1: not step-bound) */
    double step_wall;      /* the wall time the run logged with `step`
                            * (seconds since the epoch); NaN: unknown, not
                            * step-bound, or past the lookups of a pass
                            * (TFB_ALERTS_STEP_WALL_LOOKUPS) */
    char message[512];     /* one line for people */
} tfb_alert_event;

/* Sets the user rules (parsed) and the GPU idle threshold (percent);
 * called once before any evaluation. The rules are copied. */
int tfb_alerts_configure(const tfb_alert_rule *rules, size_t n,
                         double gpu_idle_pct);

/* Evaluates every run of s at wall time now and appends fire/clear
 * events to the feed. The kept state is for one store at a time: call
 * tfb_alerts_reset before evaluating another. With out != NULL, *out gets
 * a malloc'd copy of the events of this pass (free() it). Returns 0 or
 * TFB_ENOMEM. */
int tfb_alerts_poll(tfb_store *s, double now, tfb_alert_event **out,
                    size_t *n);

/* The feed's events with seq > since (the last 4,096 are kept), oldest
 * first; malloc'd copy. *active gets how many conditions hold now. */
int tfb_alerts_feed(uint64_t since, tfb_alert_event **out, size_t *n,
                    size_t *active);

/* Forgets everything evaluated (conditions, feed, per-run state, jobs,
 * the kept precursors): benchmarks and tests that evaluate a fresh store
 * from scratch. The rules set by tfb_alerts_configure stay. */
void tfb_alerts_reset(void);

#endif
