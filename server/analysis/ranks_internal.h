/*
 * ranks_internal.h - helpers shared by the ranks analysis files (not for
 * other areas).
 */
#ifndef TFB_SERVER_RANKS_INTERNAL_H
#define TFB_SERVER_RANKS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Sorts a[0..n) ascending (LSD radix, 11-bit digits; passes whose digit is
 * the same for every element are skipped, so a narrow range of times costs
 * few passes). tmp holds n elements. */
void tfb_ranks_sort_i64(int64_t *a, int64_t *tmp, size_t n);

/* The q-quantile (0 <= q <= 1) of a[0..n), linear interpolation between
 * order statistics (h = q (n - 1)). Reorders a, which must hold no NaN.
 * NaN when n == 0. */
double tfb_ranks_quantile(double *a, size_t n, double q);

/* Several quantiles at once, q[] ascending: each selection runs on the
 * part above the previous one, so p50 + p90 cost about 1.5 selections.
 * Reorders a. a must hold no NaN. */
void tfb_ranks_quantiles(double *a, size_t n, const double *q, double *out,
                         size_t m);

#endif
