/*
 * spike_detect.c - the online loss-spike detector (spike_detect.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spike_detect.h"
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
    free(d->spikes);
    d->spikes = NULL;
    d->n_spikes = d->cap = 0;
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

/* Median of a sorted window. */
static double sorted_median(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median of |v[i] - m| over a sorted v, m its median: the deviations left
 * and right of the middle are two ascending runs; walk their merge to
 * the middle one(s). O(n). */
static double sorted_mad(const double *v, size_t n, double m)
{
    size_t r = n / 2;               /* first index of the right run */
    size_t l = r;                   /* the left run is v[l-1], v[l-2], ... */
    size_t want = n / 2;            /* 0-based rank of the upper median */
    double prev = 0, cur = 0;
    for (size_t k = 0; k <= want; k++) {
        prev = cur;
        int take_left = l > 0 && (r >= n || m - v[l - 1] <= v[r] - m);
        cur = take_left ? m - v[--l] : v[r++] - m;
    }
    return n % 2 ? cur : (prev + cur) / 2;
}

/* Puts x in the window (ring + sorted copy), dropping the oldest value
 * when full. */
static void window_put(double *ring, double *sorted, size_t *n, size_t *pos,
                       double x)
{
    if (*n == TFB_SPIKE_WINDOW) {
        double old = ring[*pos];
        size_t lo = 0, hi = *n;     /* binary search for old */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sorted[mid] < old)
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(sorted + lo, sorted + lo + 1, (*n - lo - 1) * sizeof *sorted);
        (*n)--;
    }
    size_t lo = 0, hi = *n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sorted[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(sorted + lo + 1, sorted + lo, (*n - lo) * sizeof *sorted);
    sorted[lo] = x;
    (*n)++;
    ring[*pos] = x;
    *pos = (*pos + 1) % TFB_SPIKE_WINDOW;
}

static int add_spike(tfb_spike_detector *d, const tfb_spike *s)
{
    if (d->n_spikes == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        tfb_spike *v = realloc(d->spikes, cap * sizeof *v);
        if (!v)
            return TFB_ENOMEM;
        d->spikes = v;
        d->cap = cap;
    }
    d->spikes[d->n_spikes++] = *s;
    return 0;
}

int tfb_spike_detector_push(tfb_spike_detector *d, int64_t step, double x)
{
    d->points++;
    if (d->dead)
        return 0;
    tfb_spike *cur = d->open ? &d->spikes[d->n_spikes - 1] : NULL;
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
            d->last = x;
            window_put(d->vals, d->svals, &d->n_vals, &d->vi, x);
        } else if (++d->open_points >= d->p.recover_within) {
            cur->state = TFB_SPIKE_DIVERGED;
            d->open = 0;
            d->dead = 1;
        }
        return 0;
    }
    if (isnan(d->last)) {
        d->last = x;
        window_put(d->vals, d->svals, &d->n_vals, &d->vi, x);
        return 0;
    }
    double dx = x - d->last;
    if (d->n_diffs >= (size_t)d->p.warmup) {
        double m = sorted_median(d->sdiffs, d->n_diffs);
        double mad = sorted_mad(d->sdiffs, d->n_diffs, m);
        double level = sorted_median(d->svals, d->n_vals);
        double scale = 1.4826 * mad;
        if (scale < 1e-3 * fabs(level))
            scale = 1e-3 * fabs(level);
        if (scale < 1e-12)
            scale = 1e-12;
        double z = (dx - m) / scale;
        if (z >= d->p.z_threshold && x - level >= d->p.min_rise * fabs(level)) {
            tfb_spike s = {.step = step, .value = x, .level = level, .z = z,
                           .peak_step = step, .peak = x,
                           .state = TFB_SPIKE_OPEN, .end_step = step};
            if (add_spike(d, &s) < 0)
                return TFB_ENOMEM;
            d->open = 1;
            d->open_points = 0;
            return 0;
        }
    }
    window_put(d->diffs, d->sdiffs, &d->n_diffs, &d->di, dx);
    window_put(d->vals, d->svals, &d->n_vals, &d->vi, x);
    d->last = x;
    return 0;
}
