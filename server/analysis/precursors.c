/*
 * precursors.c - what came before a spike or a NaN (precursors.h).
 */
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/select.h"
#include "analysis/precursors.h"
#include "tfboard.h"

#define BASELINE_STEPS 50
#define GROWTH 10.0

typedef struct growth {
    int found;
    int64_t from;
    double factor;
} growth;

/* The points of one series around an event: step in [lo - BASELINE_STEPS,
 * at], in file order (tfb_series_scalar_in_steps: no pin, and the blocks
 * far from the event are never decoded). */
#define WINDOW_MAX 1024
typedef struct window {
    size_t n;
    int64_t step[WINDOW_MAX];
    float value[WINDOW_MAX];
    size_t index[WINDOW_MAX];
} window;

static void read_window(tfb_series *s, int64_t lo, int64_t at, window *w)
{
    w->n = tfb_series_scalar_in_steps(s, lo - BASELINE_STEPS, at, w->step,
                                      w->value, w->index, WINDOW_MAX, NULL);
}

/* The median of the finite values of w with step in [lo, hi) (the last
 * 256 of them); NaN when none. */
static double baseline(const window *w, int64_t lo, int64_t hi)
{
    double buf[256];
    size_t n = 0;
    for (size_t i = w->n; i-- > 0 && n < 256;) {
        if (w->step[i] < lo || w->step[i] >= hi || !isfinite(w->value[i]))
            continue;
        buf[n++] = w->value[i];
    }
    return n ? tfb_median(buf, n) : NAN;
}

/* Growth of a series above GROWTH x its baseline up to step at (see the
 * header). */
static growth grew(tfb_series *s, int64_t lo, int64_t at, window *w)
{
    growth g = {0, 0, 0};
    read_window(s, lo, at, w);
    double base = baseline(w, lo - BASELINE_STEPS, lo);
    if (base > 0) {
        /* Points of the window, last first: the growth runs back from at
         * while values stay above the line. */
        int broken = 0;
        double mx = 0;
        for (size_t i = w->n; i-- > 0;) {
            int64_t st = w->step[i];
            if (st > at || st < lo)
                continue;
            double x = w->value[i];
            if (!isfinite(x))
                continue;
            if (x > mx)
                mx = x;
            if (broken)
                continue;
            if (x > GROWTH * base) {
                g.found = 1;
                g.from = st;
            } else {
                broken = 1;
            }
        }
        g.factor = mx / base;
        if (g.factor < GROWTH)
            g.found = 0;
    }
    return g;
}

static void find_grad(tfb_series **ser, size_t n, int64_t lo, int64_t at,
                      tfb_precursors *p, window *w)
{
    const size_t pre = sizeof TFB_TAG_GRAD_NORM_PREFIX - 1;
    growth global = {0, 0, 0}, any = {0, 0, 0};
    const char *first = NULL;
    growth first_g = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const char *tag = tfb_series_tag(ser[i]);
        if (strncmp(tag, TFB_TAG_GRAD_NORM_PREFIX, pre) != 0)
            continue;
        growth g = grew(ser[i], lo, at, w);
        if (!g.found)
            continue;
        if (!strcmp(tag, TFB_TAG_GRAD_NORM_GLOBAL)) {
            global = g;
            continue;
        }
        if (!any.found || g.from < any.from ||
            (g.from == any.from && g.factor > any.factor))
            any = g;
        if (!first || g.from < first_g.from ||
            (g.from == first_g.from && g.factor > first_g.factor)) {
            first = tag + pre;
            first_g = g;
        }
    }
    growth use = global.found ? global : any;
    if (!use.found)
        return;
    p->grad = 1;
    p->grad_from = use.from;
    p->grad_factor = use.factor;
    p->grad_first = first;
}

static int is_lr(const char *tag)
{
    static const char *const names[] = {"lr", "learning_rate"};
    const char *base = strrchr(tag, '/');
    base = base ? base + 1 : tag;
    for (size_t i = 0; i < 2; i++)
        if (!strcasecmp(base, names[i]))
            return 1;
    return 0;
}

/* The first value with step in [lo, at] that differs by > 1 % from the
 * point before it (in file order, whatever its step). */
static void find_lr(tfb_series *s, int64_t lo, int64_t at, tfb_precursors *p,
                    window *w)
{
    read_window(s, lo, at, w);
    for (size_t i = 0; i < w->n && !p->lr; i++) {
        if (w->step[i] < lo || w->index[i] == 0)
            continue;
        double prev;
        if (i > 0 && w->index[i - 1] == w->index[i] - 1) {
            prev = w->value[i - 1];
        } else {
            float f;
            if (tfb_series_scalar_range(s, w->index[i] - 1, 1, NULL, NULL, &f,
                                        NULL) != 1)
                continue;
            prev = f;
        }
        double x = w->value[i];
        if (isfinite(prev) && isfinite(x) &&
            fabs(x - prev) > 0.01 * fabs(prev)) {
            p->lr = 1;
            p->lr_step = w->step[i];
            p->lr_before = prev;
            p->lr_after = x;
        }
    }
}

static void find_stall(tfb_series *s, int64_t lo, int64_t at,
                       tfb_precursors *p, window *w)
{
    read_window(s, lo, at, w);
    double base = baseline(w, lo - BASELINE_STEPS, lo);
    for (size_t i = 0; i < w->n && base > 0; i++) {
        double x = w->value[i];
        if (w->step[i] < lo || w->step[i] > at || !(x > GROWTH * base) ||
            !(x > 10))
            continue;
        if (!p->stall || x > p->stall_ms) {
            p->stall = 1;
            p->stall_step = w->step[i];
            p->stall_ms = x;
            p->stall_baseline_ms = base;
        }
    }
}

static void find_batches(tfb_series *s, int64_t from, int64_t at,
                         tfb_precursors *p)
{
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    for (size_t i = 0; i < v.count; i++) {
        if (v.step[i] < from || v.step[i] > at)
            continue;
        if (p->n_batches == TFB_PRECURSOR_MAX_BATCHES)
            break;
        size_t n = v.text_len[i] < 63 ? v.text_len[i] : 63;
        memcpy(p->batch_id[p->n_batches], v.text_data + v.text_off[i], n);
        p->batch_id[p->n_batches][n] = 0;
        p->batch_step[p->n_batches++] = v.step[i];
    }
    tfb_series_read_end(s);
}

int tfb_precursors_find(tfb_run *r, int64_t from, int64_t at, int k,
                        tfb_precursors *p)
{
    memset(p, 0, sizeof *p);
    int64_t lo = from - k;
    tfb_series **ser;
    size_t n;
    /* 20 KiB on the stack: a heap block this size per call cost more
     * than the search itself when many threads evaluate alerts (each
     * thread's malloc arena grew and shrank around it). */
    window wbuf, *w = &wbuf;
    if (tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &n) < 0)
        return TFB_ENOMEM;
    find_grad(ser, n, lo, at, p, w);
    for (size_t i = 0; i < n; i++) {
        const char *tag = tfb_series_tag(ser[i]);
        if (is_lr(tag))
            find_lr(ser[i], lo, at, p, w);
        else if (!strcmp(tag, TFB_TAG_INPUT_MS))
            find_stall(ser[i], lo, at, p, w);
    }
    free(ser);
    for (int kind = 0; kind < TFB_SERIES_KIND_COUNT; kind++) {
        if (tfb_run_series(r, (tfb_series_kind)kind, &ser, &n) < 0)
            return TFB_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            if (kind == TFB_SERIES_TEXT) {
                if (!strcmp(tfb_series_tag(ser[i]), TFB_TAG_BATCH_ID))
                    find_batches(ser[i], from, at, p);
                continue;
            }
            tfb_nonfinite_stats nf;
            tfb_series_nonfinite(ser[i], &nf);
            if (nf.has_first && nf.first_step >= lo && nf.first_step <= at &&
                (!p->nonfinite || nf.first_step < p->nonfinite_step)) {
                p->nonfinite = 1;
                p->nonfinite_step = nf.first_step;
                p->nonfinite_tag = tfb_series_tag(ser[i]);
            }
        }
        free(ser);
    }
    return 0;
}

static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n < len - *at ? (size_t)n : len - *at - 1;
}

void tfb_precursors_text(const tfb_precursors *p, char *buf, size_t len)
{
    size_t at = 0;
    if (!len)
        return;
    buf[0] = 0;
    const char *sep = "";
    if (p->grad) {
        double e = floor(log10(p->grad_factor));
        if (p->grad_factor >= 1000)
            put(buf, len, &at, "gradient norms grew 10^%.0fx from step %lld",
                e, (long long)p->grad_from);
        else
            put(buf, len, &at, "gradient norms grew %.0fx from step %lld",
                p->grad_factor, (long long)p->grad_from);
        if (p->grad_first)
            put(buf, len, &at, " (%s first)", p->grad_first);
        sep = "; ";
    }
    if (p->lr) {
        put(buf, len, &at, "%slr %g -> %g at step %lld", sep, p->lr_before,
            p->lr_after, (long long)p->lr_step);
        sep = "; ";
    }
    if (p->stall) {
        put(buf, len, &at, "%sinput stall at step %lld (%.0f ms, median "
            "%.0f ms)", sep, (long long)p->stall_step, p->stall_ms,
            p->stall_baseline_ms);
        sep = "; ";
    }
    if (p->nonfinite)
        put(buf, len, &at, "%sNaN/Inf in %s at step %lld", sep,
            p->nonfinite_tag, (long long)p->nonfinite_step);
}
