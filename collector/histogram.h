/*
 * histogram.h - TensorBoard's default histogram (internal).
 *
 * Bucket limits are TensorFlow's defaults: -DBL_MAX, then -1e20 .. -1e-12
 * growing by 1.1, 0, 1e-12 .. 1e20, DBL_MAX. A value goes to the first
 * bucket whose limit is greater than it (TensorFlow's upper_bound rule).
 */
#ifndef TFB_HISTOGRAM_H
#define TFB_HISTOGRAM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_histo {
    double min, max, num, sum, sum_squares;
    /* Non-empty buckets as TensorFlow encodes them (runs of empty buckets
     * collapsed into one entry with count 0). Owned by the histo. */
    size_t n;
    double *limits;
    double *counts;
    tfb_nonfinite_counts nonfinite; /* not in any bucket */
} tfb_histo;

/* Builds the histogram of values. Returns 0 or TFB_ENOMEM. On success the
 * caller owns h's arrays: release with tfb_histo_free(). Thread-safe. */
int tfb_histo_build_f32(tfb_histo *h, const float *values, size_t n);
int tfb_histo_build_f64(tfb_histo *h, const double *values, size_t n);
void tfb_histo_free(tfb_histo *h);

/* Counts the non-finite v (NaN, +Inf or -Inf) in c: what a histogram
 * keeps out of its buckets and a scalar reports. */
static inline void tfb_nonfinite_add(tfb_nonfinite_counts *c, double v)
{
    if (isnan(v))
        c->nan++;
    else if (v > 0)
        c->pos_inf++;
    else
        c->neg_inf++;
}

/* The default bucket limits (read-only, built once). */
const double *tfb_histo_default_limits(size_t *n);

#endif
