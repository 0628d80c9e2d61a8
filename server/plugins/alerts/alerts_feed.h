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
 *   stalled, crashed   the run status (core/run_status.h)
 *   straggler    a rank (a run with a tfboard_rank record) whose own time
 *                per step (median pipeline/step_ms - median comm/ms over
 *                its last 200 points) is above 1.10 x the median of its
 *                sibling ranks' (same parent directory, >= 2 ranks)
 *   input_bound  median pipeline/input_ms / pipeline/step_ms over the last
 *                200 steps >= 0.20 (the pipeline tab's "highly")
 *   gpu_idle     a device's gpu/<dev>/sm_util (or utilization) median over
 *                its last 20 samples below 100 - --gpu_idle (default 50) %
 *   gpu_memory   a device's latest mem_used_bytes above 95 % of
 *                mem_total_bytes
 * plus one per --alert rule (alerts_rules.h) and tag.
 *
 * Evaluation is incremental: detectors and rule states keep what they
 * saw, and each pass reads only new points (status and the medians above
 * read a bounded tail).
 *
 * Thread-safety: every function may be called from any thread (one lock).
 */
#ifndef TFB_ALERTS_FEED_H
#define TFB_ALERTS_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/alerts/alerts_rules.h"
#include "core/store.h"

typedef struct tfb_alert_event {
    uint64_t seq;          /* 1, 2, ... in the order they happened */
    double wall;           /* when it was seen (seconds since the epoch) */
    int fired;             /* 1 fired, 0 cleared */
    char run[256];
    char rule[256];        /* a built-in name or the user's rule text */
    char key[320];         /* rule + what it is about (tag, step, device) */
    int64_t step;          /* where it happened (-1: not step-bound) */
    char message[512];     /* one line for people */
} tfb_alert_event;

/* Sets the user rules (parsed) and the GPU idle threshold (percent);
 * called once before any evaluation. The rules are copied. */
int tfb_alerts_configure(const tfb_alert_rule *rules, size_t n,
                         double gpu_idle_pct);

/* Evaluates every run of s at wall time now; appends fire/clear events to
 * the feed. With out != NULL, *out gets a malloc'd copy of the events of
 * this pass (free() it). Returns 0 or TFB_ENOMEM. */
int tfb_alerts_poll(tfb_store *s, double now, tfb_alert_event **out,
                    size_t *n);

/* The feed's events with seq > since (the last 4,096 are kept), oldest
 * first; malloc'd copy. *active gets how many conditions hold now. */
int tfb_alerts_feed(uint64_t since, tfb_alert_event **out, size_t *n,
                    size_t *active);

/* Forgets everything evaluated (conditions, feed, per-run state, jobs,
 * the spike detectors): benchmarks and tests that evaluate a fresh store
 * from scratch. The rules set by tfb_alerts_configure stay. */
void tfb_alerts_reset(void);

#endif
