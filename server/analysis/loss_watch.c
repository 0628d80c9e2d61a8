/*
 * loss_watch.c - the spike detector and blow-up scan of one loss series,
 * fed as it loads (loss_watch.h).
 */
#include <math.h>
#include <string.h>

#include "base/vec.h"
#include "analysis/loss_watch.h"
#include "store/store.h"
#include "tfboard.h"

void tfb_loss_watch_init(tfb_loss_watch *w)
{
    tfb_spike_detector_init(&w->det, NULL);
    w->first = w->min = w->last = NAN;
    w->last_step = 0;
}

void tfb_loss_watch_free(tfb_loss_watch *w)
{
    tfb_spike_detector_free(&w->det);
}

int tfb_loss_watch_copy(tfb_loss_watch *dst, const tfb_loss_watch *src)
{
    *dst = *src;
    memset(&dst->det.spikes, 0, sizeof dst->det.spikes);
    if (src->det.spikes.n &&
        tfb_vec_need(&dst->det.spikes, src->det.spikes.n) < 0) {
        tfb_loss_watch_init(dst);
        return TFB_ENOMEM;
    }
    if (src->det.spikes.n)
        memcpy(dst->det.spikes.v, src->det.spikes.v,
               src->det.spikes.n * sizeof *src->det.spikes.v);
    dst->det.spikes.n = src->det.spikes.n;
    return 0;
}

int tfb_loss_watch_push(tfb_loss_watch *w, const int64_t *step,
                        const double *value, size_t n)
{
    enum { BATCH = 256 };
    float x[BATCH];
    int rc = 0;
    for (size_t at = 0; at < n; at += BATCH) {
        size_t k = n - at < BATCH ? n - at : BATCH;
        /* The blow-up scan: the smallest positive finite value in the
         * same pass that rounds the values, in four running minimums (no
         * branch, and no chain of compares through one variable: NaN and
         * +inf never compare below), then the first and last finite
         * values looked up from the ends (one look each, as a rule). */
        float m4[4] = {HUGE_VALF, HUGE_VALF, HUGE_VALF, HUGE_VALF};
        size_t i = 0;
        for (; i + 4 <= k; i += 4)
            for (size_t j = 0; j < 4; j++) {
                float f = (float)value[at + i + j];
                x[i + j] = f;
                m4[j] = f > 0 && f < m4[j] ? f : m4[j];
            }
        for (; i < k; i++) {
            float f = (float)value[at + i];
            x[i] = f;
            m4[0] = f > 0 && f < m4[0] ? f : m4[0];
        }
        float mn = m4[0];
        for (size_t j = 1; j < 4; j++)
            mn = m4[j] < mn ? m4[j] : mn;
        if (mn < HUGE_VALF && !(mn >= w->min))
            w->min = mn;
        for (i = 0; isnan(w->first) && i < k; i++)
            if (isfinite(x[i]))
                w->first = x[i];
        for (i = k; i-- > 0;)
            if (isfinite(x[i])) {
                w->last = x[i];
                break;
            }
        if (tfb_spike_detector_push_n(&w->det, step + at, x, k) < 0)
            rc = TFB_ENOMEM;
    }
    if (n)
        w->last_step = step[n - 1];
    return rc;
}

int tfb_loss_watch_blew_up(const tfb_loss_watch *w, int64_t *step)
{
    int up = w->first > 0 && w->min > 0 && w->last > 10 * w->first &&
             w->last > 100 * w->min;
    if (up)
        *step = w->last_step;
    return up;
}

static int copy_watch(void *out, const void *w)
{
    return tfb_loss_watch_copy(out, w);
}

int tfb_series_loss_watch(tfb_series *s, tfb_loss_watch *out)
{
    int64_t step[TFB_SERIES_TAIL_MAX];
    double value[TFB_SERIES_TAIL_MAX];
    size_t tail = 0;
    int rc = tfb_series_observed(s, copy_watch, out, step, value, &tail);
    /* the points not sealed yet, into the copy only */
    if (rc == 0 && (rc = tfb_loss_watch_push(out, step, value, tail)) < 0)
        tfb_loss_watch_free(out);
    return rc;
}
