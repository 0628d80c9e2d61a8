/*
 * trace_launch.c - HTA's launch statistics (definitions and bounds in
 * trace_launch.h): one pass over the GPU ops, each paired with its runtime
 * call by correlation id (tfb_trace_call_of: a binary search), then the
 * percentiles by selection and the outliers kept in a bounded list.
 */
#include "analysis/trace_launch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"
#include "base/select.h"

/* The q-quantile of v (reordered), linear between order statistics. */
static double quantile(double *v, size_t n, double q)
{
    double h = q * (double)(n - 1);
    size_t lo = (size_t)floor(h);
    double a = tfb_select_kth(v, n, lo);
    if (lo + 1 >= n || h == (double)lo)
        return a;
    /* After the selection, v[lo+1..n) holds no value below a: the next
     * order statistic is their minimum. */
    double b = v[lo + 1];
    for (size_t i = lo + 2; i < n; i++)
        if (v[i] < b)
            b = v[i];
    return a + (h - (double)lo) * (b - a);
}

void tfb_launch_dist_of(double *v, size_t n, tfb_launch_dist *out)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return;
    double sum = 0, lo = v[0], hi = v[0];
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    out->min_ns = lo;
    out->max_ns = hi;
    out->mean_ns = sum / (double)n;
    out->p50_ns = quantile(v, n, 0.50);
    out->p90_ns = quantile(v, n, 0.90);
    out->p99_ns = quantile(v, n, 0.99);
}

/* Outlier order: larger delay first, then larger CPU duration, then
 * earlier start (a total order, so the kept list does not depend on the
 * spans' order). */
static int outlier_before(const tfb_launch_outlier *a,
                          const tfb_launch_outlier *b)
{
    if (a->delay_ns != b->delay_ns)
        return a->delay_ns > b->delay_ns;
    if (a->cpu_ns != b->cpu_ns)
        return a->cpu_ns > b->cpu_ns;
    return a->start_ns < b->start_ns;
}

static int cmp_outlier(const void *x, const void *y)
{
    const tfb_launch_outlier *a = x, *b = y;
    return outlier_before(a, b) ? -1 : outlier_before(b, a) ? 1 : 0;
}

/* Keeps the TFB_LAUNCH_OUTLIERS_MAX first outliers in the order above: a
 * full list replaces its last entry (found by a scan: the list is small
 * and outliers are few next to the launches). */
static void keep_outlier(tfb_launch_stats *s, const tfb_launch_outlier *o)
{
    if (s->n_outliers < TFB_LAUNCH_OUTLIERS_MAX) {
        s->outliers[s->n_outliers++] = *o;
        return;
    }
    size_t worst = 0;
    for (size_t i = 1; i < s->n_outliers; i++)
        if (outlier_before(&s->outliers[worst], &s->outliers[i]))
            worst = i;
    if (outlier_before(o, &s->outliers[worst]))
        s->outliers[worst] = *o;
}

int tfb_launch_stats_compute(const tfb_trace *t, tfb_launch_stats *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    for (size_t i = 0; i < t->nspans; i++)
        if (t->spans[i].kind <= TFB_TRACE_MEMSET)
            cap++;
    double *cpu = malloc((cap ? cap : 1) * sizeof *cpu);
    double *gpu = malloc((cap ? cap : 1) * sizeof *gpu);
    double *delay = malloc((cap ? cap : 1) * sizeof *delay);
    out->outliers = malloc(TFB_LAUNCH_OUTLIERS_MAX * sizeof *out->outliers);
    if (!cpu || !gpu || !delay || !out->outliers) {
        free(cpu);
        free(gpu);
        free(delay);
        free(out->outliers);
        out->outliers = NULL;
        return TFB_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_trace_span *s = &t->spans[i];
        if (s->kind > TFB_TRACE_MEMSET)
            continue;
        const tfb_trace_call *c = tfb_trace_call_of(t, s->correlation);
        if (!c) {
            out->unmatched++;
            continue;
        }
        tfb_launch_outlier o = {
            .correlation = s->correlation,
            .device = tfb_trace_span_device(t, s),
            .stream = tfb_trace_span_stream(t, s),
            .kind = s->kind == TFB_TRACE_KERNEL   ? "kernel"
                    : s->kind == TFB_TRACE_MEMCPY ? "memcpy"
                                                  : "memset",
            .start_ns = s->start,
            .cpu_ns = c->end - c->start,
            .gpu_ns = s->end - s->start,
            .delay_ns = s->start > c->end ? s->start - c->end : 0,
        };
        o.runtime_outlier = o.cpu_ns > TFB_LAUNCH_RUNTIME_CUTOFF_NS;
        o.delay_outlier = o.delay_ns > TFB_LAUNCH_DELAY_CUTOFF_NS;
        o.short_kernel = !o.runtime_outlier && o.gpu_ns < o.cpu_ns;
        cpu[n] = (double)o.cpu_ns;
        gpu[n] = (double)o.gpu_ns;
        delay[n] = (double)o.delay_ns;
        n++;
        out->runtime_outliers += o.runtime_outlier;
        out->delay_outliers += o.delay_outlier;
        out->short_kernels += o.short_kernel;
        if (o.runtime_outlier || o.delay_outlier) {
            const tfb_trace_kinfo *ki = tfb_trace_span_kinfo(t, s);
            o.name = ki ? tfb_trace_str(t, ki->name, NULL) : NULL;
            o.call = tfb_trace_str(t, c->name, NULL);
            keep_outlier(out, &o);
        }
    }
    out->launches = (int64_t)n;
    tfb_launch_dist_of(cpu, n, &out->cpu);
    tfb_launch_dist_of(gpu, n, &out->gpu);
    tfb_launch_dist_of(delay, n, &out->delay);
    qsort(out->outliers, out->n_outliers, sizeof *out->outliers,
          cmp_outlier);
    free(cpu);
    free(gpu);
    free(delay);
    return 0;
}

void tfb_launch_stats_free(tfb_launch_stats *s)
{
    if (!s)
        return;
    free(s->outliers);
    memset(s, 0, sizeof *s);
}
