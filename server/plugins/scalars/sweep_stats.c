/*
 * sweep_stats.c - step buckets, values at a step and quantiles across the
 * runs of a sweep (sweep_stats.h).
 */
#include <math.h>

#include "plugins/scalars/sweep_stats.h"

size_t tfb_sweep_bucket_steps(int64_t step0, int64_t step1, size_t max,
                              int64_t *out)
{
    if (max < 1)
        max = 1;
    /* The span in unsigned arithmetic: step1 - step0 may not fit int64. */
    uint64_t span = (uint64_t)step1 - (uint64_t)step0;
    if (span < (uint64_t)max - 1)
        max = (size_t)span + 1;
    if (max == 1) {
        out[0] = step1;
        return 1;
    }
    long double d = (long double)span / (long double)(max - 1);
    for (size_t i = 0; i < max; i++) {
        uint64_t off = (uint64_t)(d * (long double)i + 0.5L);
        if (off > span)
            off = span;
        out[i] = (int64_t)((uint64_t)step0 + off);
    }
    out[max - 1] = step1;
    return max;
}

int tfb_sweep_value_at(const tfb_sweep_series *s, tfb_sweep_cursor *c,
                       int64_t step, float *value, size_t *at)
{
    if (!s->count || step < s->step[0] || step > s->step[s->count - 1])
        return 0;
    while (c->next < s->count && s->step[c->next] <= step)
        c->next++;
    if (!c->next)
        return 0;
    *at = c->next - 1;
    *value = s->value[*at];
    return 1;
}

static void swapf(float *a, float *b)
{
    float t = *a;
    *a = *b;
    *b = t;
}

/* Puts the element of rank k of x[lo..hi) at x[k], smaller ones before and
 * larger ones after it (Hoare partitioning, median-of-three pivot). */
static void select_rank(float *x, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, last = hi - 1;
        if (x[mid] < x[lo])
            swapf(&x[mid], &x[lo]);
        if (x[last] < x[lo])
            swapf(&x[last], &x[lo]);
        if (x[last] < x[mid])
            swapf(&x[last], &x[mid]);
        if (hi - lo <= 3)
            return; /* the three are sorted: that is all of them */
        float p = x[mid];
        size_t i = lo, j = last;
        for (;;) {
            while (x[i] < p)
                i++;
            while (p < x[j])
                j--;
            if (i >= j)
                break;
            swapf(&x[i], &x[j]);
            i++;
            j--;
        }
        /* x[lo..j] <= p <= x[j+1..hi) */
        if (k <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
}

typedef struct qrank {
    size_t k;    /* rank below the quantile */
    double frac; /* weight of rank k + 1 */
    size_t out;  /* index in the caller's out */
} qrank;

/* numpy's lerp: exact at both ends. */
static double lerp(double a, double b, double t)
{
    double d = b - a;
    return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

/* Quantiles r[a..b) (ranks increasing), all of whose ranks lie in
 * [lo, hi); everything left of lo is <= and right of hi is >= the range,
 * and x[hi] (hi < n) already holds its rank. */
static void solve(float *x, size_t n, size_t lo, size_t hi, const qrank *r,
                  size_t a, size_t b, double *out)
{
    if (a >= b)
        return;
    size_t m = a + (b - a) / 2, k = r[m].k;
    select_rank(x, lo, hi, k);
    size_t a2 = m, b2 = m + 1;
    while (a2 > a && r[a2 - 1].k == k)
        a2--;
    while (b2 < b && r[b2].k == k)
        b2++;
    double next = x[k];
    if (k + 1 < n) {
        if (k + 1 < hi) {
            float mn = x[k + 1];
            for (size_t i = k + 2; i < hi; i++)
                if (x[i] < mn)
                    mn = x[i];
            next = mn;
        } else {
            next = x[hi];
        }
    }
    for (size_t i = a2; i < b2; i++)
        out[r[i].out] = r[i].frac > 0 ? lerp(x[k], next, r[i].frac) : x[k];
    solve(x, n, lo, k, r, a, a2, out);
    solve(x, n, k + 1, hi, r, b2, b, out);
}

void tfb_sweep_quantiles(float *x, size_t n, const double *q, size_t nq,
                         double *out)
{
    qrank r[16];
    while (nq > 0) {
        size_t m = nq < 16 ? nq : 16;
        for (size_t i = 0; i < m; i++) {
            double h = (double)(n - 1) * q[i];
            double fl = floor(h);
            r[i].k = (size_t)fl;
            if (r[i].k >= n)
                r[i].k = n - 1;
            r[i].frac = r[i].k + 1 < n ? h - fl : 0;
            r[i].out = i;
        }
        solve(x, n, 0, n, r, 0, m, out);
        q += m;
        out += m;
        nq -= m;
    }
}
