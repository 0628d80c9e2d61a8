/*
 * histogram.c - TensorFlow's default-bucket histogram, built fast.
 *
 * There are ~1550 default limits. A binary search per value costs ~11
 * dependent compares; instead the top 13 bits of the value's float
 * representation (sign, exponent, 4 mantissa bits) index a table holding
 * the bucket of the cell's smallest value. A cell spans at most 0.09 in
 * log2 units and a bucket 0.1375, so a cell holds at most one limit and
 * one compare finishes the job.
 */
#include "collector/histogram.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CELL_SHIFT 19                     /* 32 - 1 sign - 8 exp - 4 mant */
#define N_CELLS (1u << (32 - CELL_SHIFT)) /* 8192 */

static double *g_limits;
static size_t g_nlimits;
static uint16_t g_cell_bucket[N_CELLS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* First index whose limit is > v (std::upper_bound). */
static size_t upper_bound(double v)
{
    size_t lo = 0, hi = g_nlimits;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_limits[mid] > v)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void init_limits(void)
{
    /* 1e-12 * 1.1^k < 1e20: count first, so one allocation suffices. */
    size_t npos = 0;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1)
        npos++;
    g_nlimits = 2 * npos + 3;
    g_limits = malloc(g_nlimits * sizeof *g_limits);
    if (!g_limits) {
        g_nlimits = 0;
        return;
    }
    double v = 1.0e-12;
    double *pos = g_limits + npos + 2;
    for (size_t k = 0; k < npos; k++, v *= 1.1) {
        pos[k] = v;
        g_limits[npos - k] = -v;
    }
    g_limits[0] = -DBL_MAX;
    g_limits[npos + 1] = 0.0;
    g_limits[g_nlimits - 1] = DBL_MAX;
    for (uint32_t c = 0; c < N_CELLS; c++) {
        uint32_t bits = c << CELL_SHIFT;
        if (c & (N_CELLS >> 1))
            bits |= (1u << CELL_SHIFT) - 1; /* negative: most negative value */
        float f;
        memcpy(&f, &bits, 4);
        if (!isfinite(f))
            f = (c & (N_CELLS >> 1)) ? -FLT_MAX : FLT_MAX;
        size_t b = upper_bound((double)f);
        g_cell_bucket[c] = (uint16_t)(b < g_nlimits ? b : g_nlimits - 1);
    }
}

const double *tfb_histo_default_limits(size_t *n)
{
    pthread_once(&g_once, init_limits);
    *n = g_nlimits;
    return g_limits;
}

static int finish(tfb_histo *h, const uint32_t *counts)
{
    /* TensorFlow's encoding: each non-empty bucket, and each run of empty
     * buckets collapsed into one entry of count 0 ending at the run's last
     * limit. */
    size_t n = 0;
    for (size_t i = 0; i < g_nlimits;) {
        uint32_t c = counts[i++];
        if (c == 0)
            while (i < g_nlimits && counts[i] == 0)
                i++;
        n++;
    }
    h->limits = malloc(2 * n * sizeof(double));
    if (!h->limits)
        return TFB_ENOMEM;
    h->counts = h->limits + n;
    n = 0;
    for (size_t i = 0; i < g_nlimits;) {
        double end = g_limits[i];
        uint32_t c = counts[i++];
        if (c == 0)
            while (i < g_nlimits && counts[i] == 0)
                end = g_limits[i++];
        h->limits[n] = end;
        h->counts[n] = (double)c;
        n++;
    }
    h->n = n;
    return 0;
}

/* Sums, extremes and non-finite counts. Four independent accumulators
 * each, so the adds are not one long dependency chain. */
typedef struct acc4 {
    double mn[4], mx[4], sum[4], sq[4];
} acc4;

static void acc_init(acc4 *a)
{
    for (int k = 0; k < 4; k++) {
        a->mn[k] = INFINITY;
        a->mx[k] = -INFINITY;
        a->sum[k] = a->sq[k] = 0;
    }
}

static inline void acc_add(acc4 *a, int k, double d)
{
    a->mn[k] = d < a->mn[k] ? d : a->mn[k];
    a->mx[k] = d > a->mx[k] ? d : a->mx[k];
    a->sum[k] += d;
    a->sq[k] += d * d;
}

/* Every build starts here: the limits (once), h emptied, and the four
 * interleaved copies of the counts, zeroed (NULL without memory). */
static void *histo_start(tfb_histo *h)
{
    pthread_once(&g_once, init_limits);
    memset(h, 0, sizeof *h);
    return g_nlimits ? calloc(g_nlimits, 4 * sizeof(uint32_t)) : NULL;
}

/* Every build ends here: h from the accumulators and the counts, which
 * are freed. */
static int histo_finish(tfb_histo *h, acc4 *a, uint32_t (*counts)[4],
                        uint64_t num)
{
    double mn = a->mn[0], mx = a->mx[0], sum = 0, sq = 0;
    for (int k = 0; k < 4; k++) {
        mn = a->mn[k] < mn ? a->mn[k] : mn;
        mx = a->mx[k] > mx ? a->mx[k] : mx;
        sum += a->sum[k];
        sq += a->sq[k];
    }
    if (num == 0)
        mn = mx = 0;
    h->min = mn;
    h->max = mx;
    h->num = (double)num;
    h->sum = sum;
    h->sum_squares = sq;
    uint32_t *total = malloc(g_nlimits * sizeof *total);
    for (size_t i = 0; total && i < g_nlimits; i++)
        total[i] = counts[i][0] + counts[i][1] + counts[i][2] + counts[i][3];
    int rc = total ? finish(h, total) : TFB_ENOMEM;
    free(total);
    free(counts);
    return rc;
}

/* Counts go to four interleaved copies: neighbouring values often hit the
 * same bucket, and increments of one counter would serialize. The loop is
 * unrolled by four with the accumulators in locals, so the four chains of
 * min/max/sum/sum-of-squares stay in registers. */
#define F32_STEP(J, MN, MX, SUM, SQ)                                          \
    do {                                                                      \
        float x_ = values[i + (J)];                                           \
        uint32_t bits_;                                                       \
        memcpy(&bits_, &x_, 4);                                               \
        if ((bits_ & 0x7f800000u) == 0x7f800000u) {                           \
            tfb_nonfinite_add(&h->nonfinite, x_);                             \
            bad++;                                                            \
        } else {                                                              \
            double d_ = x_;                                                   \
            uint32_t b_ = g_cell_bucket[bits_ >> CELL_SHIFT];                 \
            b_ += g_limits[b_] <= d_;                                         \
            counts[b_][(J)]++;                                                \
            MN = d_ < MN ? d_ : MN;                                           \
            MX = d_ > MX ? d_ : MX;                                           \
            SUM += d_;                                                        \
            SQ += d_ * d_;                                                    \
        }                                                                     \
    } while (0)

int tfb_histo_build_f32(tfb_histo *h, const float *values, size_t n)
{
    uint32_t (*counts)[4] = histo_start(h);
    if (!counts)
        return TFB_ENOMEM;
    double mn0 = INFINITY, mn1 = INFINITY, mn2 = INFINITY, mn3 = INFINITY;
    double mx0 = -INFINITY, mx1 = -INFINITY, mx2 = -INFINITY, mx3 = -INFINITY;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, q0 = 0, q1 = 0, q2 = 0, q3 = 0;
    uint64_t bad = 0;
    size_t i = 0;
    /* A cell holds at most one limit (see the top of the file), so one
     * compare finishes each lookup. */
    for (; i + 4 <= n; i += 4) {
        F32_STEP(0, mn0, mx0, s0, q0);
        F32_STEP(1, mn1, mx1, s1, q1);
        F32_STEP(2, mn2, mx2, s2, q2);
        F32_STEP(3, mn3, mx3, s3, q3);
    }
    for (; i < n; i++)
        F32_STEP(0, mn0, mx0, s0, q0);
    acc4 a = {{mn0, mn1, mn2, mn3}, {mx0, mx1, mx2, mx3}, {s0, s1, s2, s3},
              {q0, q1, q2, q3}};
    return histo_finish(h, &a, counts, n - bad);
}

int tfb_histo_build_f64(tfb_histo *h, const double *values, size_t n)
{
    uint32_t (*counts)[4] = histo_start(h);
    if (!counts)
        return TFB_ENOMEM;
    acc4 a;
    acc_init(&a);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double d = values[i];
        if (!isfinite(d)) {
            tfb_nonfinite_add(&h->nonfinite, d);
            bad++;
            continue;
        }
        /* Rounding to float may cross a limit: walk to the exact bucket. */
        float f = d > FLT_MAX ? FLT_MAX : d < -FLT_MAX ? -FLT_MAX : (float)d;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        size_t b = g_cell_bucket[bits >> CELL_SHIFT];
        while (b > 0 && g_limits[b - 1] > d)
            b--;
        while (g_limits[b] <= d && b + 1 < g_nlimits)
            b++; /* DBL_MAX itself stays in the last bucket */
        counts[b][i & 3]++;
        acc_add(&a, (int)(i & 3), d);
    }
    return histo_finish(h, &a, counts, n - bad);
}

void tfb_histo_free(tfb_histo *h)
{
    if (!h)
        return;
    free(h->limits); /* counts share the allocation */
    h->limits = h->counts = NULL;
    h->n = 0;
}
