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

/* Rows shorter than this are solved by selection alone: the sample would
 * cost about what it saves. */
#define SAMPLED_MIN 2048
/* The sample's size: at most this, and at most n / 16. */
#define SAMPLE_MAX 4096
/* Each target's bracket reaches this many standard deviations of its
 * sample rank either side (a miss, which falls back to plain selection,
 * then comes about once in 10^4 rows). */
#define BRACKET_SIGMAS 4

/* One bracket of values [lo, hi] around one or more target ranks. */
typedef struct bracket {
    float lo, hi;
    size_t below;   /* values < lo */
    size_t upto;    /* values <= hi */
    size_t start;   /* where its values lie in x after the gathering */
} bracket;

static size_t isqrt_up(double v)
{
    return (size_t)ceil(sqrt(v));
}

/* The quantiles of a long row from a sample (Floyd and Rivest's idea,
 * for several ranks at once): the sample's order statistics bracket each
 * target rank's value; one pass counts the values below and within each
 * bracket and a second gathers those within to the front of x, where
 * plain selection finds the targets among a few percent of the values.
 * Quickselect took several branchy passes over 100,000 values per bucket
 * (a third of a 100,000-run band answer). Returns 0 when a bracket missed
 * its ranks (x is then still a permutation of the row); *work gets the
 * values the selection ran over. */
static int sampled(float *x, size_t n, const qrank *r, size_t m, double *out,
                   size_t *work)
{
    float smp[SAMPLE_MAX];
    size_t s = n / 16 < SAMPLE_MAX ? n / 16 : SAMPLE_MAX;
    size_t stride = n / s;
    /* One value from each of s equal strides, at a pseudo-random place
     * in it (fixed seed: the same row gives the same answer): sorted or
     * periodic rows are sampled as well as shuffled ones. */
    uint32_t h = 0x9e3779b9u;
    for (size_t i = 0; i < s; i++) {
        h = h * 1664525u + 1013904223u;
        smp[i] = x[i * stride + (size_t)(h >> 8) % stride];
    }
    /* Each target's bracket in sample ranks: both ranks it reads (k and,
     * to interpolate, k + 1) +- BRACKET_SIGMAS standard deviations. */
    qrank sr[32];
    size_t lo_rank[16], hi_rank[16];
    for (size_t i = 0; i < m; i++) {
        double p = (double)r[i].k / (double)n;
        size_t d = BRACKET_SIGMAS * isqrt_up((double)s * p * (1 - p)) + 2;
        size_t a = (size_t)((double)r[i].k * (double)s / (double)n);
        size_t b = (size_t)((double)(r[i].k + 1) * (double)s / (double)n) + 1;
        lo_rank[i] = a > d ? a - d : 0;
        hi_rank[i] = b + d < s ? b + d : s - 1;
    }
    /* The sample's values at those ranks, by selection over the sample
     * (solve wants its ranks increasing: the lows and highs interleave). */
    size_t ns = 0;
    for (size_t i = 0; i < m; i++) {
        sr[ns++] = (qrank){lo_rank[i], 0, 2 * i};
        sr[ns++] = (qrank){hi_rank[i], 0, 2 * i + 1};
    }
    for (size_t i = 1; i < ns; i++)
        for (size_t j = i; j > 0 && sr[j - 1].k > sr[j].k; j--) {
            qrank t = sr[j];
            sr[j] = sr[j - 1];
            sr[j - 1] = t;
        }
    double edge[32];
    solve(smp, s, 0, s, sr, 0, ns, edge);
    /* Brackets of targets whose intervals meet are merged (and merged
     * again backwards while a widened one meets the one before): each
     * value belongs to one bracket at most, and the brackets are in value
     * order as the targets are in rank order. */
    bracket br[16];
    size_t of[16]; /* target -> its bracket */
    size_t nb = 0;
    for (size_t i = 0; i < m; i++) {
        float lo = (float)edge[2 * i], hi = (float)edge[2 * i + 1];
        br[nb] = (bracket){lo, hi, 0, 0, 0};
        of[i] = nb++;
        while (nb > 1 && br[nb - 1].lo <= br[nb - 2].hi) {
            bracket *a = &br[nb - 2], *b = &br[nb - 1];
            if (b->lo < a->lo)
                a->lo = b->lo;
            if (b->hi > a->hi)
                a->hi = b->hi;
            for (size_t t = 0; t <= i; t++)
                if (of[t] == nb - 1)
                    of[t] = nb - 2;
            nb--;
        }
    }
    /* One branch-free pass: each value's slot among the bounds (2b + 1:
     * within bracket b; even: between brackets), counted, and the values
     * within a bracket swapped to the front (an unconditional swap: when
     * the value stays out, x[w] is out too, or w == i). */
    size_t hist[33] = {0};
    size_t w = 0;
    if (nb <= 8) {
        /* The bounds in a fixed-size array padded with +inf (counting
         * nothing): a loop of constant length the compiler unrolls. */
        float lo[8], hi[8];
        for (size_t b = 0; b < 8; b++) {
            lo[b] = b < nb ? br[b].lo : INFINITY;
            hi[b] = b < nb ? br[b].hi : INFINITY;
        }
        for (size_t i = 0; i < n; i++) {
            float v = x[i];
            unsigned slot = 0;
            for (size_t b = 0; b < 8; b++)
                slot += (unsigned)(v >= lo[b]) + (unsigned)(v > hi[b]);
            hist[slot]++;
            x[i] = x[w];
            x[w] = v;
            w += slot & 1;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            float v = x[i];
            size_t slot = 0;
            for (size_t b = 0; b < nb; b++)
                slot += (size_t)(v >= br[b].lo) + (size_t)(v > br[b].hi);
            hist[slot]++;
            x[i] = x[w];
            x[w] = v;
            w += slot & 1;
        }
    }
    size_t acc = 0;
    for (size_t b = 0; b < nb; b++) {
        acc += hist[2 * b];
        br[b].below = acc;
        acc += hist[2 * b + 1];
        br[b].upto = acc;
    }
    for (size_t i = 0; i < m; i++) {
        const bracket *b = &br[of[i]];
        size_t need = r[i].frac > 0 ? r[i].k + 1 : r[i].k;
        if (r[i].k < b->below || need >= b->upto)
            return 0; /* the sample misled us: the caller selects */
    }
    /* The gathered values (a few percent of the row), bracket by
     * bracket. */
    size_t at = 0;
    for (size_t b = 0; b < nb; b++) {
        br[b].start = at;
        float hi = br[b].hi;
        for (size_t i = at; i < w; i++)
            if (x[i] <= hi) {
                swapf(&x[at], &x[i]);
                at++;
            }
    }
    /* Each target within its bracket: ranks shifted by the values below
     * it; the bracket holds rank k + 1 when the target interpolates. */
    for (size_t i = 0; i < m;) {
        size_t b = of[i], j = i;
        qrank loc[16];
        size_t nl = 0;
        while (j < m && of[j] == b) {
            loc[nl] = r[j];
            loc[nl].k -= br[b].below;
            nl++;
            j++;
        }
        size_t len = br[b].upto - br[b].below;
        *work += len;
        solve(x + br[b].start, len, 0, len, loc, 0, nl, out);
        i = j;
    }
    return 1;
}

size_t tfb_sweep_quantiles(float *x, size_t n, const double *q, size_t nq,
                           double *out)
{
    qrank r[16];
    size_t work = 0;
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
        size_t part = 0;
        if (n < SAMPLED_MIN || !sampled(x, n, r, m, out, &part)) {
            solve(x, n, 0, n, r, 0, m, out);
            part = n;
        }
        work += part;
        q += m;
        out += m;
        nq -= m;
    }
    return work;
}
