/*
 * downsample.h - picks the points of a scalar series to send for display,
 * with optional smoothing computed over the full series first.
 *
 * Pure functions; thread-safe.
 *
 * Smoothing (TensorBoard's debiased EMA): last = last*w + (1-w)*x over
 * finite x from last = 0; shown value last / (1 - w^n), n = finite points
 * so far; non-finite points pass through unchanged and do not move the
 * average. It runs over every point of the series (not only the ones
 * sent), so the curve does not change with zoom or samples.
 *
 * Downsampling to `samples`: the first and last point (of the step range)
 * are kept, the interior is cut into (samples-2)/2 buckets of equal point
 * count, and each bucket's minimum and maximum (of the value sent: the
 * smoothed one when smoothing) are kept, as is every non-finite point. So
 * spikes and the latest point always survive. The result can exceed
 * `samples` only by the number of non-finite points.
 */
#ifndef TFB_SERVER_DOWNSAMPLE_H
#define TFB_SERVER_DOWNSAMPLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tfb_ds_point {
    size_t index;  /* index in the series */
    double value;  /* the value to send (smoothed or raw) */
} tfb_ds_point;

typedef struct tfb_ds_opts {
    size_t samples;   /* 0 = every point */
    double smoothing; /* 0 <= w < 1; 0 = raw */
    int has_range;    /* 1: only points with min_step <= step <= max_step */
    int64_t min_step, max_step;
} tfb_ds_opts;

/* Selects points of (steps, values)[0..count). *out is malloc'd (free());
 * points are in series order. Returns 0 or TFB_ENOMEM / TFB_EINVAL. */
int tfb_downsample(const int64_t *steps, const float *values, size_t count,
                   const tfb_ds_opts *opts, tfb_ds_point **out,
                   size_t *n_out);

/* The debiased EMA of values into out (count doubles); exposed for tests
 * and analyses. */
void tfb_smooth_ema(const float *values, size_t count, double w, double *out);

/* Which points to send: all (samples 0 or count <= samples), or `samples`
 * evenly spaced indices that always include the first and the last. idx
 * has room for min(count, samples) entries; returns how many it wrote. */
size_t tfb_ds_pick_even(size_t count, size_t samples, size_t *idx);

#endif
