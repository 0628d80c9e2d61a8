/*
 * downsample.c - display downsampling that keeps extremes and non-finite
 * points, with full-series smoothing (see downsample.h).
 */
#include "core/downsample.h"

#include <math.h>
#include <stdlib.h>

#include "tfboard.h"

void tfb_smooth_ema(const float *values, size_t count, double w, double *out)
{
    double last = 0, wn = 1; /* wn = w^n */
    for (size_t i = 0; i < count; i++) {
        double x = values[i];
        if (!isfinite(x)) {
            out[i] = x;
            continue;
        }
        last = last * w + (1 - w) * x;
        wn *= w;
        out[i] = w > 0 ? last / (1 - wn) : x;
    }
}

static int cmp_point(const void *a, const void *b)
{
    size_t x = ((const tfb_ds_point *)a)->index;
    size_t y = ((const tfb_ds_point *)b)->index;
    return x < y ? -1 : x > y;
}

/* Appends a bucket's min and max points in series order. */
static size_t emit_pair(tfb_ds_point *res, size_t n, size_t min_i,
                        double min_v, size_t max_i, double max_v)
{
    if (max_i < min_i) {
        res[n].index = max_i, res[n++].value = max_v;
        res[n].index = min_i, res[n++].value = min_v;
    } else {
        res[n].index = min_i, res[n++].value = min_v;
        if (max_i != min_i)
            res[n].index = max_i, res[n++].value = max_v;
    }
    return n;
}

static int in_range(const tfb_ds_opts *o, int64_t step)
{
    return !o->has_range || (step >= o->min_step && step <= o->max_step);
}

int tfb_downsample(const int64_t *steps, const float *values, size_t count,
                   const tfb_ds_opts *o, tfb_ds_point **out, size_t *n_out)
{
    if (!o || !out || !n_out || (count && (!steps || !values)) ||
        !(o->smoothing >= 0 && o->smoothing < 1))
        return TFB_EINVAL;
    /* Points in the step range, and the first and last of them. */
    size_t m = 0, first = 0, last = 0;
    for (size_t i = 0; i < count; i++)
        if (in_range(o, steps[i])) {
            if (!m)
                first = i;
            last = i;
            m++;
        }
    int all = o->samples == 0 || m <= o->samples;
    size_t buckets = all ? 0 : (o->samples > 3 ? (o->samples - 2) / 2 : 1);
    /* Non-finite points are unbounded in number: count them to size the
     * output exactly. */
    size_t cap = all ? m : 2 + 2 * buckets;
    if (!all)
        for (size_t i = 0; i < count; i++)
            if (!isfinite(values[i]) && in_range(o, steps[i]))
                cap++;
    tfb_ds_point *res = malloc((cap ? cap : 1) * sizeof *res);
    if (!res)
        return TFB_ENOMEM;
    size_t n = 0;
    double w = o->smoothing, ema = 0, wn = 1;
    size_t interior = m >= 2 ? m - 2 : 0, rank = 0;
    size_t cur_bucket = (size_t)-1, min_i = 0, max_i = 0;
    double min_v = 0, max_v = 0;
    int have = 0, unordered = 0;
    for (size_t i = 0; i < count; i++) {
        double x = values[i], v = x;
        if (w > 0 && isfinite(x)) {
            ema = ema * w + (1 - w) * x;
            wn *= w;
            v = ema / (1 - wn);
        }
        if (!in_range(o, steps[i]))
            continue;
        if (i == last && have && !all) {
            /* the final bucket comes before the last point */
            n = emit_pair(res, n, min_i, min_v, max_i, max_v);
            have = 0;
        }
        if (all || i == first || i == last || !isfinite(v)) {
            res[n].index = i;
            res[n].value = v;
            n++;
            if (!all && i != first && i != last) {
                rank++;
                unordered = 1; /* may precede its bucket's min/max */
            }
            continue;
        }
        size_t b = interior ? (size_t)((double)rank * (double)buckets /
                                       (double)interior)
                            : 0;
        rank++;
        if (b != cur_bucket) {
            if (have)
                n = emit_pair(res, n, min_i, min_v, max_i, max_v);
            cur_bucket = b;
            have = 0;
        }
        if (!have || v < min_v)
            min_v = v, min_i = i;
        if (!have || v > max_v)
            max_v = v, max_i = i;
        have = 1;
    }
    if (have)
        n = emit_pair(res, n, min_i, min_v, max_i, max_v);
    /* Buckets come out in order; only non-finite points, emitted as they
     * are met, can land before their bucket's min/max. */
    if (unordered)
        qsort(res, n, sizeof *res, cmp_point);
    *out = res;
    *n_out = n;
    return 0;
}

size_t tfb_ds_pick_even(size_t count, size_t samples, size_t *idx)
{
    if (samples == 0 || count <= samples) {
        for (size_t i = 0; i < count; i++)
            idx[i] = i;
        return count;
    }
    if (samples == 1) {
        idx[0] = count - 1;
        return 1;
    }
    size_t n = 0;
    for (size_t k = 0; k < samples; k++) {
        size_t i = (size_t)((double)k * (double)(count - 1) /
                            (double)(samples - 1) + 0.5);
        if (n == 0 || i > idx[n - 1])
            idx[n++] = i;
    }
    return n;
}

