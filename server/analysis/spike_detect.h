/*
 * spike_detect.h - an online loss-spike detector (issue 23): fed one point
 * at a time, it keeps O(window) state, so a growing series costs O(new
 * points) per reload, never a rescan.
 *
 * The rule (also in server/API.md, "Loss spikes"):
 *  - d_i = x_i - x_(i-1), the change from the previous finite point;
 *  - the baseline is the last `window` (64) changes of healthy points:
 *    their median m and MAD (median absolute deviation);
 *  - scale = max(1.4826 x MAD, 1e-3 x |median of the last window values|,
 *    1e-12); robust z = (d_i - m) / scale; m and the MAD are worked out
 *    again every 64 healthy points (and when a spike ends), the level
 *    when a change is large enough to need it;
 *  - a spike starts at point i when at least `warmup` (20) changes are in
 *    the baseline, z >= z_threshold (6) and the rise is at least
 *    min_rise (5 %) of the level before it (the median of the last window
 *    values). Only rises: a loss that falls faster (an lr decay) never
 *    fires;
 *  - while a spike is open its points do not enter the baseline; it
 *    recovers at the first point back at or below
 *    level + 0.2 x (peak - level); it diverges at a non-finite value or
 *    when it has not recovered after `recover_within` (200) points; it is
 *    "open" while neither happened yet.
 *
 * Thread-safety: one detector is used by one thread at a time.
 */
#ifndef TFB_SERVER_SPIKE_DETECT_H
#define TFB_SERVER_SPIKE_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

#define TFB_SPIKE_WINDOW 64
#define TFB_SPIKE_RESTAT 64

typedef struct tfb_spike_params {
    double z_threshold;     /* default 6 */
    double min_rise;        /* default 0.05 (of the level) */
    int warmup;             /* default 20 changes */
    int recover_within;     /* default 200 points */
    int eager;              /* 1: every work-out computes the medians at
                               once (tests compare with it); default 0 */
} tfb_spike_params;

typedef enum tfb_spike_state {
    TFB_SPIKE_OPEN = 0,     /* not recovered yet, not diverged yet */
    TFB_SPIKE_RECOVERED,
    TFB_SPIKE_DIVERGED,
} tfb_spike_state;

typedef struct tfb_spike {
    int64_t step;           /* first point of the spike */
    double value, level;    /* its value; the level before it */
    double z;               /* its robust z-score */
    int64_t peak_step;
    double peak;            /* the largest value while open (NaN if a
                               non-finite value came) */
    tfb_spike_state state;
    int64_t end_step;       /* recovered or diverged at; else last seen */
} tfb_spike;

typedef struct tfb_spike_detector {
    tfb_spike_params p;
    /* The windows, as rings (arrival order). */
    double diffs[TFB_SPIKE_WINDOW], vals[TFB_SPIKE_WINDOW];
    size_t n_diffs, n_vals, di, vi;  /* counts and ring positions */
    /* The baseline of the changes, worked out again every
     * TFB_SPIKE_RESTAT healthy points: the statistics of a 64-point
     * window barely move in a few points, and a point then costs two ring
     * writes and one comparison. A work-out looks for each median first
     * between +-0.35 x the last MAD of the last one (a pass that counts
     * and a sort of the few inside: exact, and about 3x cheaper than a
     * selection), then 1.5 widths over on the side the pass pointed to,
     * else selects. */
    double m, mad_scale;    /* median of the changes, 1.4826 x MAD */
    /* A change below thr is healthy: thr is m + z x mad_scale, or, while
     * a work-out is pending (lazy; its window kept in due[]), a lower
     * bound of it from two counting passes. Most work-outs are never
     * computed: their medians are needed only when a change reaches the
     * bound. */
    double thr;
    int lazy;
    double due[TFB_SPIKE_WINDOW];
    size_t n_due;
    int stale;              /* healthy points since the last work-out */
    int have_stats;
    double last;            /* last finite value (NaN before any) */
    int open;               /* 1 while spikes.v[spikes.n - 1] is open */
    int open_points;
    int dead;               /* diverged: nothing more is detected */
    TFB_VEC(tfb_spike) spikes; /* in step order */
    uint64_t points;        /* points fed so far */
} tfb_spike_detector;

void tfb_spike_params_default(tfb_spike_params *p);
/* p NULL: the defaults. */
void tfb_spike_detector_init(tfb_spike_detector *d, const tfb_spike_params *p);
void tfb_spike_detector_free(tfb_spike_detector *d);
/* Feeds one point (in step order). Returns 0 or TFB_ENOMEM. */
int tfb_spike_detector_push(tfb_spike_detector *d, int64_t step, double x);
/* Feeds n points, exactly as n calls of tfb_spike_detector_push would
 * (the same spikes and state), about twice as fast: the healthy points
 * between two work-outs of the statistics take a loop of two ring writes.
 * The store's loss watches feed each sealed block this way. A spike that
 * cannot be kept (no memory) is lost, the points still count; returns 0
 * or TFB_ENOMEM. */
int tfb_spike_detector_push_n(tfb_spike_detector *d, const int64_t *step,
                              const float *x, size_t n);

const char *tfb_spike_state_name(tfb_spike_state s);

#endif
