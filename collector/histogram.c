/*
 * histogram.c - TensorFlow's default-bucket histogram, built fast.
 *
 * There are ~1550 default limits. A binary search per value costs ~11
 * dependent compares; instead the top 13 bits of the value's float
 * representation (sign, exponent, 4 mantissa bits) index a table holding
 * the bucket of the cell's smallest value. A cell spans at most 0.09 in
 * log2 units and a bucket 0.1375, so one or two compares finish the job.
 */
#include "histogram.h"

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

static inline size_t bucket_of(double v, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    size_t b = g_cell_bucket[bits >> CELL_SHIFT];
    while (b > 0 && g_limits[b - 1] > v)
        b--;
    while (g_limits[b] <= v && b + 1 < g_nlimits)
        b++; /* DBL_MAX itself stays in the last bucket */
    return b;
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

/* One routine for both element types: the loop body is what matters for
 * speed, and the compiler specializes it per type. */
#define HISTO_BUILD(NAME, T, TO_FLOAT)                                        \
    int NAME(tfb_histo *h, const T *values, size_t n)                         \
    {                                                                         \
        pthread_once(&g_once, init_limits);                                   \
        memset(h, 0, sizeof *h);                                              \
        if (!g_nlimits)                                                       \
            return TFB_ENOMEM;                                                \
        uint32_t *counts = calloc(g_nlimits, sizeof *counts);                 \
        if (!counts)                                                          \
            return TFB_ENOMEM;                                                \
        double mn = INFINITY, mx = -INFINITY, sum = 0, sq = 0;                \
        uint64_t num = 0;                                                     \
        for (size_t i = 0; i < n; i++) {                                      \
            double v = (double)values[i];                                     \
            if (!isfinite(v)) {                                               \
                if (isnan(v))                                                 \
                    h->nonfinite.nan++;                                       \
                else if (v > 0)                                               \
                    h->nonfinite.pos_inf++;                                   \
                else                                                          \
                    h->nonfinite.neg_inf++;                                   \
                continue;                                                     \
            }                                                                 \
            counts[bucket_of(v, TO_FLOAT(values[i]))]++;                      \
            mn = v < mn ? v : mn;                                             \
            mx = v > mx ? v : mx;                                             \
            sum += v;                                                         \
            sq += v * v;                                                      \
            num++;                                                            \
        }                                                                     \
        if (num == 0)                                                         \
            mn = mx = 0;                                                      \
        h->min = mn;                                                          \
        h->max = mx;                                                          \
        h->num = (double)num;                                                 \
        h->sum = sum;                                                         \
        h->sum_squares = sq;                                                  \
        int rc = finish(h, counts);                                           \
        free(counts);                                                         \
        return rc;                                                            \
    }

#define AS_FLOAT_F32(x) (x)
/* Doubles beyond float range land in the outermost cells; the compare
 * loops in bucket_of() then walk the few remaining buckets. */
static inline float clamp_to_float(double d)
{
    if (d > FLT_MAX)
        return FLT_MAX;
    if (d < -FLT_MAX)
        return -FLT_MAX;
    return (float)d;
}

HISTO_BUILD(tfb_histo_build_f32, float, AS_FLOAT_F32)
HISTO_BUILD(tfb_histo_build_f64, double, clamp_to_float)

void tfb_histo_free(tfb_histo *h)
{
    if (!h)
        return;
    free(h->limits); /* counts share the allocation */
    h->limits = h->counts = NULL;
    h->n = 0;
}
