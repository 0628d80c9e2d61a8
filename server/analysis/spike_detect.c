/*
 * spike_detect.c - the online loss-spike detector (spike_detect.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/select.h"
#include "base/vec.h"
#include "analysis/spike_detect.h"
#include "tfboard.h"

void tfb_spike_params_default(tfb_spike_params *p)
{
    p->z_threshold = 6;
    p->min_rise = 0.05;
    p->warmup = 20;
    p->recover_within = 200;
    p->eager = 0;
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
 * both lie in [lo, hi]: 1 and *a, *b set; else 0 when the k-th lies
 * below lo, 2 when one of them lies above hi. One branch-free pass
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
    if (k < below)
        return 0;
    if (k + 1 >= below + m)
        return 2;
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
        int got = bracket_pair(v, n, k, guess - width, guess + width, &a, &b);
        if (got == 1)
            return n % 2 ? a : (a + b) / 2;
        /* Missed (the statistics moved more than the width): once more,
         * the bracket moved 1.5 widths the way the pass said the answer
         * lies (overlapping the first, so an answer on its edge is
         * inside), before the selection, which costs several times a
         * bracket. */
        guess += got ? 1.5 * width : -1.5 * width;
        if (bracket_pair(v, n, k, guess - width, guess + width, &a, &b) == 1)
            return n % 2 ? a : (a + b) / 2;
    }
    memcpy(t, v, n * sizeof *t);
    return tfb_median(t, n);
}

/* Works the baseline of the changes out from v[0..n) (the window as it
 * was when the work-out fell due). The level is worked out only when a
 * change is large enough to matter (rare), so a work-out is two medians,
 * each looked for first near the last ones. */
static void work_out(tfb_spike_detector *d, const double *v, size_t n)
{
    double t[TFB_SPIKE_WINDOW], dev[TFB_SPIKE_WINDOW];
    /* last time's figures are the guesses (kept when a spike ends) */
    double mad_prev = d->mad_scale > 0 ? d->mad_scale / 1.4826 : 0;
    double m = median_near(v, t, n, d->m, 0.35 * mad_prev);
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(v[i] - m);
    double mad = median_near(dev, t, n, mad_prev, 0.35 * mad_prev);
    d->m = m;
    d->mad_scale = 1.4826 * mad;
    d->thr = d->m + d->p.z_threshold * d->mad_scale;
    d->lazy = 0;
}

/* The counts threshold_bound needs, in one pass with no branch and no
 * chain between values: below lo, in [lo, hi], and within t1, t2, t3 of
 * [lo, hi]. Inlined with a constant n for a full window, so that the
 * compiler can do several values at a time. */
static inline void count_near(const double *v, size_t n, double lo,
                              double hi, double t1, double t2, double t3,
                              int64_t *c)
{
    int64_t below = 0, inside = 0, c1 = 0, c2 = 0, c3 = 0;
    for (size_t i = 0; i < n; i++) {
        double x = v[i], a = lo - x, b = x - hi, out = a > b ? a : b;
        below += x < lo;
        inside += out <= 0;
        c1 += out <= t1;
        c2 += out <= t2;
        c3 += out <= t3;
    }
    c[0] = below;
    c[1] = inside;
    c[2] = c1;
    c[3] = c2;
    c[4] = c3;
}

/* A lower bound of the threshold m + z x 1.4826 x MAD of v[0..n) from
 * two counting passes, without the medians: near the last figures
 * (m_prev, mad_prev > 0), when both middle values lie in [lo, hi] = m_prev
 * -+ 0.35 mad_prev, then m >= lo; and when at most k = (n - 1) / 2 values
 * lie within t (0.5, 0.4 or 0.3 mad_prev: the largest that holds) of
 * [lo, hi], at most k lie closer than t to m, so MAD >= t. The rounding
 * cannot break it: every operation is monotone, a distance is counted as
 * close when its rounded value is at most t (which counts at least those
 * really closer than t, and the deviations the medians see round the
 * same way), and the bound is put together with the threshold's own
 * operations in the same order; so thr >= the bound holds exactly. 1 and
 * *lb set, or 0 (no bound: the caller works the figures out). */
static int threshold_bound(const tfb_spike_detector *d, const double *v,
                           size_t n, double *lb)
{
    double mad_prev = d->mad_scale / 1.4826;
    if (n < 2 || !(mad_prev > 0) || !isfinite(mad_prev) || !isfinite(d->m))
        return 0;
    double lo = d->m - 0.35 * mad_prev, hi = d->m + 0.35 * mad_prev;
    /* three distances at once: the largest that bounds the MAD wins */
    double t1 = 0.5 * mad_prev, t2 = 0.4 * mad_prev, t3 = 0.3 * mad_prev;
    size_t k = (n - 1) / 2;
    int64_t c[5];
    if (n == TFB_SPIKE_WINDOW) /* a full window: a fixed count */
        count_near(v, TFB_SPIKE_WINDOW, lo, hi, t1, t2, t3, c);
    else
        count_near(v, n, lo, hi, t1, t2, t3, c);
    size_t below = (size_t)c[0], inside = (size_t)c[1], c1 = (size_t)c[2],
           c2 = (size_t)c[3], c3 = (size_t)c[4];
    if (k < below || k + 1 >= below + inside)
        return 0; /* the middle values are not in [lo, hi] */
    double t = c1 <= k ? t1 : c2 <= k ? t2 : c3 <= k ? t3 : 0;
    if (!(t > 0))
        return 0; /* too many close: no bound of the MAD */
    *lb = lo + d->p.z_threshold * (1.4826 * t);
    return 1;
}

/* A work-out falls due. Most are never needed: a change is compared with
 * the threshold, and while every change stays below a lower bound of it
 * the figures themselves do not matter. So the bound is worked out (two
 * counting passes) and the window kept; the medians only when a change
 * reaches the bound (resolve), from the window as it was here, so the
 * figures are exactly those an immediate work-out gives. */
static void restat(tfb_spike_detector *d)
{
    size_t n = d->n_diffs;
    d->stale = 0;
    d->have_stats = 1;
    double lb;
    if (!d->p.eager && threshold_bound(d, d->diffs, n, &lb)) {
        memcpy(d->due, d->diffs, n * sizeof *d->due);
        d->n_due = n;
        d->thr = lb;
        d->lazy = 1;
        return;
    }
    work_out(d, d->diffs, n);
}

/* The figures of the work-out that fell due, now that they are needed. */
static void resolve(tfb_spike_detector *d)
{
    if (d->lazy)
        work_out(d, d->due, d->n_due);
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
        if (dx >= d->thr)
            resolve(d); /* the bound was reached: the real threshold */
        /* scale >= 1.4826 MAD: a change below m + z 1.4826 MAD is never a
         * spike, whatever the level; only a larger one needs the level. */
        if (dx >= d->thr) {
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

int tfb_spike_detector_push_n(tfb_spike_detector *d, const int64_t *step,
                              const float *x, size_t n)
{
    int rc = 0;
    size_t i = 0;
    while (i < n) {
        /* The common case in a stretch: a healthy point below the
         * threshold, the windows full and the statistics fresh. It does
         * what tfb_spike_detector_push does for such a point (two ring
         * writes), with the state in registers; any other point, and the
         * one due for a work-out, goes through tfb_spike_detector_push. */
        if (!d->dead && !d->open && d->have_stats &&
            d->n_diffs == TFB_SPIKE_WINDOW && d->n_vals == TFB_SPIKE_WINDOW &&
            d->p.warmup <= TFB_SPIKE_WINDOW && d->stale < TFB_SPIKE_RESTAT) {
            double thr = d->thr; /* or a lower bound of it: exact below */
            double last = d->last;
            size_t di = d->di, vi = d->vi, j = i;
            int stale = d->stale;
            for (; j < n && stale < TFB_SPIKE_RESTAT; j++) {
                double v = x[j], dx = v - last;
                if (!(dx < thr) || !isfinite(v))
                    break;
                d->diffs[di] = dx;
                di = (di + 1) % TFB_SPIKE_WINDOW;
                d->vals[vi] = v;
                vi = (vi + 1) % TFB_SPIKE_WINDOW;
                last = v;
                stale++;
            }
            d->points += j - i;
            d->last = last;
            d->di = di;
            d->vi = vi;
            d->stale = stale;
            i = j;
            if (i == n)
                break;
        }
        if (tfb_spike_detector_push(d, step[i], x[i]) < 0)
            rc = TFB_ENOMEM;
        i++;
    }
    return rc;
}
