/*
 * ranks_stats.c - the sorting and order statistics the ranks analysis
 * needs at 256 ranks x 20 k steps and 8 ranks x 1 M kernels: a radix sort
 * for int64 keys (times, step numbers) and quickselect quantiles (a full
 * sort per rank and per series would dominate the cost).
 */
#include "analysis/ranks_internal.h"
#include "base/select.h"

#include <math.h>
#include <string.h>

void tfb_ranks_sort_i64(int64_t *a, int64_t *tmp, size_t n)
{
    if (n < 2)
        return;
    /* Keys as unsigned with the sign bit flipped keep their order. */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)a[i] ^ (UINT64_C(1) << 63);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    uint64_t range = hi - lo;
    int64_t *src = a, *dst = tmp;
    /* 11-bit digits: a 16 KB count table (fine on any thread's stack); a
     * span of 100 s in ns takes 4 passes. */
    enum { radix = 11, buckets = 1u << 11 };
    size_t count[buckets];
    for (unsigned shift = 0; shift < 64 && (range >> shift) != 0;
         shift += radix) {
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++) {
            uint64_t k = ((uint64_t)src[i] ^ (UINT64_C(1) << 63)) - lo;
            count[(k >> shift) & (buckets - 1)]++;
        }
        size_t sum = 0;
        for (unsigned b = 0; b < buckets; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = ((uint64_t)src[i] ^ (UINT64_C(1) << 63)) - lo;
            dst[count[(k >> shift) & (buckets - 1)]++] = src[i];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

static void swapd(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* The value of order statistic k (0-based) of a[0..n), given that
 * a[0..from) already holds the `from` smallest values. */
static double order_stat(double *a, size_t n, size_t from, size_t k)
{
    (void)tfb_select_kth(a + from, n - from, k - from);
    return a[k];
}

/* Large arrays: a bucket pass finds which value range holds the k-th
 * value, and only that bucket's values (about n / NB of them) are
 * selected. Every pass is a plain, well-predicted scan, where quickselect
 * on random data mispredicts half of its comparisons; p50 and p90 of
 * 20 k values cost about a third as much. Returns 0, or -1 when the
 * value range is unusable (the caller falls back to quickselect). */
#define NB 2048
#define BUCKET_MIN_N 1024

static inline size_t bucket_of(double x, double lo, double scale)
{
    double f = (x - lo) * scale;
    if (!(f > 0))
        return 0;
    return f >= NB ? NB - 1 : (size_t)f;
}

/* Moves the values of bucket b to the front; returns how many. */
static size_t gather(double *a, size_t n, double lo, double scale, size_t b)
{
    size_t f = 0;
    for (size_t j = 0; j < n; j++)
        if (bucket_of(a[j], lo, scale) == b)
            swapd(&a[f++], &a[j]);
    return f;
}

static int bucket_quantiles(double *a, size_t n, const double *q,
                            double *out, size_t m)
{
    double lo = a[0], hi = a[0];
    for (size_t i = 1; i < n; i++) {
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
    }
    if (!(hi > lo)) {
        for (size_t i = 0; i < m; i++)
            out[i] = lo;
        return isfinite(lo) ? 0 : -1;
    }
    double scale = (double)NB / (hi - lo);
    if (!isfinite(scale) || !isfinite(lo) || !isfinite(hi))
        return -1;
    size_t count[NB] = {0}, cum[NB];
    for (size_t i = 0; i < n; i++)
        count[bucket_of(a[i], lo, scale)]++;
    size_t c = 0;
    for (size_t b = 0; b < NB; b++) {
        cum[b] = c;
        c += count[b];
    }
    for (size_t i = 0; i < m; i++) {
        double qi = q[i] < 0 ? 0 : q[i] > 1 ? 1 : q[i];
        double h = qi * (double)(n - 1);
        size_t k = (size_t)h;
        if (k >= n)
            k = n - 1;
        size_t b = 0;
        while (b + 1 < NB && cum[b + 1] <= k)
            b++;
        size_t f = gather(a, n, lo, scale, b);
        size_t kb = k - cum[b];
        (void)tfb_select_kth(a, f, kb);
        double x = a[kb];
        double frac = h - (double)k;
        if (frac > 0 && k + 1 < n) {
            double y = INFINITY;
            if (kb + 1 < f) {
                for (size_t j = kb + 1; j < f; j++)
                    y = a[j] < y ? a[j] : y;
            } else {
                /* The next value is the least of the next non-empty
                 * bucket. */
                size_t b2 = b + 1;
                while (b2 < NB && count[b2] == 0)
                    b2++;
                for (size_t j = 0; j < n; j++)
                    if (bucket_of(a[j], lo, scale) == b2 && a[j] < y)
                        y = a[j];
            }
            x += frac * (y - x);
        }
        out[i] = x;
    }
    return 0;
}

void tfb_ranks_quantiles(double *a, size_t n, const double *q, double *out,
                         size_t m)
{
    if (n >= BUCKET_MIN_N && bucket_quantiles(a, n, q, out, m) == 0)
        return;
    size_t from = 0;
    for (size_t i = 0; i < m; i++) {
        if (n == 0) {
            out[i] = NAN;
            continue;
        }
        double qi = q[i] < 0 ? 0 : q[i] > 1 ? 1 : q[i];
        double h = qi * (double)(n - 1);
        size_t k = (size_t)h;
        if (k >= n)
            k = n - 1;
        if (k < from)
            from = 0; /* q[] not ascending: select in the whole array */
        double x = order_stat(a, n, from, k);
        double frac = h - (double)k;
        if (frac > 0 && k + 1 < n) {
            /* The next order statistic is the least value above k. */
            double y = a[k + 1];
            for (size_t j = k + 2; j < n; j++)
                if (a[j] < y)
                    y = a[j];
            x += frac * (y - x);
        }
        out[i] = x;
        from = k + 1; /* a[0..k] are the k + 1 smallest */
    }
}

double tfb_ranks_quantile(double *a, size_t n, double q)
{
    double out;
    tfb_ranks_quantiles(a, n, &q, &out, 1);
    return out;
}
