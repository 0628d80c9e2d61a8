/*
 * ranks_stats.c - the sorting and order statistics the ranks analysis
 * needs at 256 ranks x 20 k steps and 8 ranks x 1 M kernels: a radix sort
 * for int64 keys (times, step numbers) and quickselect quantiles (a full
 * sort per rank and per series would dominate the cost).
 */
#include "ranks_internal.h"

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

/* Puts the k-th smallest at a[k], smaller ones before, larger after
 * (Hoare-style quickselect, median-of-three pivot). */
static void select_k(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo])
            swapd(&a[mid], &a[lo]);
        if (a[hi] < a[lo])
            swapd(&a[hi], &a[lo]);
        if (a[hi] < a[mid])
            swapd(&a[hi], &a[mid]);
        double pivot = a[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                swapd(&a[i], &a[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

double tfb_ranks_quantile(double *a, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    double h = q * (double)(n - 1);
    size_t k = (size_t)h;
    if (k >= n)
        k = n - 1;
    select_k(a, n, k);
    double x = a[k];
    double frac = h - (double)k;
    if (frac <= 0 || k + 1 >= n)
        return x;
    double y = a[k + 1];
    for (size_t i = k + 2; i < n; i++)
        if (a[i] < y)
            y = a[i];
    return x + frac * (y - x);
}
