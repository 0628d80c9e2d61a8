/*
 * sweep_stats.h - statistics across the runs of a sweep for one scalar
 * tag: the step buckets, each run's value at a step, quantiles across
 * runs and a density grid. Used by the batched scalars routes
 * (scalars_multirun.c) to draw thousands of runs as bands.
 *
 * Pure functions over caller-owned arrays; thread-safe. The work is
 * bounded by the number of buckets times the number of runs (plus each
 * run's points once), whatever the length of the series.
 */
#ifndef TFB_SERVER_SWEEP_STATS_H
#define TFB_SERVER_SWEEP_STATS_H

#include <stddef.h>
#include <stdint.h>

/* One run's series, in file order (steps taken as non-decreasing, as a
 * training loop writes them). */
typedef struct tfb_sweep_series {
    const int64_t *step;
    const float *value;
    size_t count;
} tfb_sweep_series;

/* Writes n (<= max, >= 1) distinct steps evenly spaced over [step0, step1]
 * (step0 <= step1), both ends included, to out; returns n. */
size_t tfb_sweep_bucket_steps(int64_t step0, int64_t step1, size_t max,
                              int64_t *out);

/* A walk over one series at increasing steps: the value of its last point
 * at or before each step, or nothing outside the series' own span
 * [step of the first point, step of the last point]. */
typedef struct tfb_sweep_cursor {
    size_t next; /* first point not yet passed */
} tfb_sweep_cursor;

/* Moves c to step (each call with a step >= the last call's). Returns 1
 * and sets *value (possibly non-finite) and *at (the point's index) when
 * step is within the span, 0 otherwise. */
int tfb_sweep_value_at(const tfb_sweep_series *s, tfb_sweep_cursor *c,
                       int64_t step, float *value, size_t *at);

/* The quantiles q[0..nq) (increasing, in [0,1]) of x[0..n) (n >= 1, all
 * finite), with linear interpolation between the closest ranks (numpy's
 * default "linear" method), into out. Reorders x (a permutation of it is
 * left). O(n) expected for the five quantiles of a band: past 2,048
 * values a fixed-seed sample brackets each quantile's value, one pass
 * gathers the values within the brackets and selection runs on those
 * only (plain selection when a bracket misses); the answer is the exact
 * order statistics either way. Returns the number of values selection
 * ran over (n without a sample; a few tenths of n with one): the work,
 * which tests and benches check. */
size_t tfb_sweep_quantiles(float *x, size_t n, const double *q, size_t nq,
                           double *out);

#endif
