/*
 * spike_detect.c - the online loss-spike detector (spike_detect.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/select.h"
#include "base/vec.h"
#include "core/spike_detect.h"
#include "tfboard.h"

void tfb_spike_params_default(tfb_spike_params *p)
{
    p->z_threshold = 6;
    p->min_rise = 0.05;
    p->warmup = 20;
    p->recover_within = 200;
}

void tfb_spike_detector_init(tfb_spike_detector *d, const tfb_spike_params *p)
{
    memset(d, 0, sizeof *d);
    if (p)
        d->p = *p;
    else
        tfb_spike_params_default(&d->p);
    d->last = NAN;
}

void tfb_spike_detector_free(tfb_spike_detector *d)
{
    tfb_vec_free(&d->spikes);
}

const char *tfb_spike_state_name(tfb_spike_state s)
{
    switch (s) {
    case TFB_SPIKE_RECOVERED:
        return "recovered";
    case TFB_SPIKE_DIVERGED:
        return "diverged";
    default:
        return "open";
    }
}

static void ring_put(double *ring, size_t *n, size_t *pos, double x)
{
    ring[*pos] = x;
    *pos = (*pos + 1) % TFB_SPIKE_WINDOW;
    if (*n < TFB_SPIKE_WINDOW)
        (*n)++;
}

/* Median of the values window: the level. */
static double level_of(const tfb_spike_detector *d)
{
    double t[TFB_SPIKE_WINDOW];
    memcpy(t, d->vals, d->n_vals * sizeof *t);
    return tfb_median(t, d->n_vals);
}

/* The k-th and (k+1)-th smallest (0-based; k + 1 < n) of v[0..n) when
 * both lie in [lo, hi]: 1 and *a, *b set; else 0. One branch-free pass
 * counts what lies below lo and gathers what lies inside; only those few
 * are sorted. With a bracket around last time's answer (the statistics
 * of a loss's changes move slowly) this is several times cheaper than a
 * selection, whose comparisons the CPU cannot predict; it is exact
 * either way, and the caller falls back to the selection on 0. */
static int bracket_pair(const double *v, size_t n, size_t k, double lo,
                        double hi, double *a, double *b)
{
    double in[TFB_SPIKE_WINDOW];
    size_t below = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        int inside = (x >= lo) & (x <= hi);
        below += x < lo;
        in[m] = x;
        m += (size_t)inside;
    }
    if (k < below || k + 1 >= below + m)
        return 0;
    for (size_t i = 1; i < m; i++) { /* insertion sort: m is small */
        double x = in[i];
        size_t j = i;
        for (; j > 0 && in[j - 1] > x; j--)
            in[j] = in[j - 1];
        in[j] = x;
    }
    *a = in[k - below];
    *b = in[k + 1 - below];
    return 1;
}

/* The median of v[0..n) (n >= 1), tried first in [guess - width, guess +
 * width] when width > 0; else (or when it is not there) by selection on
 * the copy t (reordered). */
static double median_near(const double *v, double *t, size_t n, double guess,
                          double width)
{
    double a, b;
    if (n >= 2 && width > 0 && isfinite(guess) && isfinite(width)) {
        size_t k = (n - 1) / 2;
        if (bracket_pair(v, n, k, guess - width, guess + width, &a, &b))
            return n % 2 ? a : (a + b) / 2;
    }
    memcpy(t, v, n * sizeof *t);
    return tfb_median(t, n);
}

/* Works the baseline of the changes out from their window. The level is
 * worked out only when a change is large enough to matter (rare), so a
 * work-out is two medians, each looked for first near the last ones. */
static void restat(tfb_spike_detector *d)
{
    double t[TFB_SPIKE_WINDOW], dev[TFB_SPIKE_WINDOW];
    size_t n = d->n_diffs;
    /* last time's figures are the guesses (kept when a spike ends) */
    double mad_prev = d->mad_scale > 0 ? d->mad_scale / 1.4826 : 0;
    double m = median_near(d->diffs, t, n, d->m, 0.35 * mad_prev);
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(d->diffs[i] - m);
    double mad = median_near(dev, t, n, mad_prev, 0.35 * mad_prev);
    double scale = 1.4826 * mad;
    d->m = m;
    d->mad_scale = scale;
    d->stale = 0;
    d->have_stats = 1;
}

static int add_spike(tfb_spike_detector *d, const tfb_spike *s)
{
    if (tfb_vec_push(&d->spikes, *s) < 0)
        return TFB_ENOMEM;
    return 0;
}

int tfb_spike_detector_push(tfb_spike_detector *d, int64_t step, double x)
{
    d->points++;
    if (d->dead)
        return 0;
    tfb_spike *cur = d->open ? &d->spikes.v[d->spikes.n - 1] : NULL;
    if (!isfinite(x)) {
        if (cur) {
            cur->state = TFB_SPIKE_DIVERGED;
            cur->peak = NAN;
            cur->peak_step = cur->end_step = step;
            d->open = 0;
            d->dead = 1;
        }
        return 0; /* a lone non-finite value is the non-finite rule's */
    }
    if (cur) {
        cur->end_step = step;
        if (x > cur->peak) {
            cur->peak = x;
            cur->peak_step = step;
        }
        if (x <= cur->level + 0.2 * (cur->peak - cur->level)) {
            cur->state = TFB_SPIKE_RECOVERED;
            d->open = 0;
            d->have_stats = 0;
            d->last = x;
            ring_put(d->vals, &d->n_vals, &d->vi, x);
        } else if (++d->open_points >= d->p.recover_within) {
            cur->state = TFB_SPIKE_DIVERGED;
            d->open = 0;
            d->dead = 1;
        }
        return 0;
    }
    if (isnan(d->last)) {
        d->last = x;
        ring_put(d->vals, &d->n_vals, &d->vi, x);
        return 0;
    }
    double dx = x - d->last;
    if (d->n_diffs >= (size_t)d->p.warmup) {
        if (!d->have_stats || d->stale >= TFB_SPIKE_RESTAT)
            restat(d);
        /* scale >= 1.4826 MAD: a change below m + z 1.4826 MAD is never a
         * spike, whatever the level; only a larger one needs the level. */
        if (dx >= d->m + d->p.z_threshold * d->mad_scale) {
            double level = level_of(d);
            double scale = d->mad_scale;
            if (scale < 1e-3 * fabs(level))
                scale = 1e-3 * fabs(level);
            if (scale < 1e-12)
                scale = 1e-12;
            double z = (dx - d->m) / scale;
            if (z >= d->p.z_threshold &&
                x - level >= d->p.min_rise * fabs(level)) {
                tfb_spike s = {.step = step, .value = x, .level = level,
                               .z = z, .peak_step = step, .peak = x,
                               .state = TFB_SPIKE_OPEN, .end_step = step};
                if (add_spike(d, &s) < 0)
                    return TFB_ENOMEM;
                d->open = 1;
                d->open_points = 0;
                return 0;
            }
        }
    }
    ring_put(d->diffs, &d->n_diffs, &d->di, dx);
    d->stale++;
    ring_put(d->vals, &d->n_vals, &d->vi, x);
    d->last = x;
    return 0;
}
