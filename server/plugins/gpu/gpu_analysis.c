/*
 * gpu_analysis.c - device summary, kernel statistics, utilization over
 * time, busy/idle intervals and the report section (definitions in
 * gpu_analysis.h). The timeline and the Chrome export are in
 * gpu_timeline.c.
 */
#include "gpu_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Intervals
 * ---------------------------------------------------------------------- */
typedef struct ival {
    int64_t s, e;
} ival;

static int cmp_ival(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

/* Sorts and merges in place; returns the new count. */
static size_t normalize(ival *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_ival);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].e <= v[i].s)
            continue;
        if (o && v[i].s <= v[o - 1].e) {
            if (v[i].e > v[o - 1].e)
                v[o - 1].e = v[i].e;
        } else {
            v[o++] = v[i];
        }
    }
    return o;
}

/* The device's (or every device's, device < 0) kernel intervals, merged. */
static int busy_of(const tfb_gpu_trace *t, int32_t device, ival **out,
                   size_t *n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < t->nspans; i++)
        if (t->spans[i].kind == TFB_GPU_KERNEL &&
            (device < 0 || t->spans[i].device == device))
            cnt++;
    ival *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v)
        return TFB_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_gpu_span *s = &t->spans[i];
        if (s->kind == TFB_GPU_KERNEL && (device < 0 || s->device == device)) {
            v[k].s = s->start;
            v[k].e = s->end;
            k++;
        }
    }
    *n = normalize(v, k);
    *out = v;
    return 0;
}

int tfb_gpu_busy_intervals(const tfb_gpu_trace *t, int32_t device,
                           int64_t **out, size_t *n)
{
    if (!t || !out || !n)
        return TFB_EINVAL;
    ival *v;
    size_t m;
    int err = busy_of(t, device, &v, &m);
    if (err)
        return err;
    if (!m) {
        free(v);
        *out = NULL;
        *n = 0;
        return 0;
    }
    /* ival is two int64_t: the same layout as the pairs. */
    int64_t *p = malloc(m * 2 * sizeof *p);
    if (!p) {
        free(v);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < m; i++) {
        p[2 * i] = v[i].s;
        p[2 * i + 1] = v[i].e;
    }
    free(v);
    *out = p;
    *n = m;
    return 0;
}

int tfb_gpu_idle_within(const tfb_gpu_trace *t, int32_t device, int64_t w0,
                        int64_t w1, const int64_t *pairs, size_t npairs,
                        int64_t *idle_inside, int64_t *idle_total)
{
    if (!t || !idle_inside || !idle_total || (npairs && !pairs) || w1 < w0)
        return TFB_EINVAL;
    ival *busy;
    size_t nb;
    int err = busy_of(t, device, &busy, &nb);
    if (err)
        return err;
    ival *in = malloc((npairs ? npairs : 1) * sizeof *in);
    if (!in) {
        free(busy);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < npairs; i++) {
        in[i].s = pairs[2 * i] > w0 ? pairs[2 * i] : w0;
        in[i].e = pairs[2 * i + 1] < w1 ? pairs[2 * i + 1] : w1;
    }
    size_t ni = normalize(in, npairs);
    /* Idle = window minus busy; walk the idle gaps. */
    int64_t total = 0, inside = 0, cur = w0;
    size_t bi = 0, ii = 0;
    for (;;) {
        while (bi < nb && busy[bi].e <= cur)
            bi++;
        int64_t gap_end = w1;
        if (bi < nb && busy[bi].s < w1)
            gap_end = busy[bi].s > cur ? busy[bi].s : cur;
        if (gap_end > cur) {
            total += gap_end - cur;
            while (ii < ni && in[ii].e <= cur)
                ii++;
            for (size_t k = ii; k < ni && in[k].s < gap_end; k++) {
                int64_t s = in[k].s > cur ? in[k].s : cur;
                int64_t e = in[k].e < gap_end ? in[k].e : gap_end;
                if (e > s)
                    inside += e - s;
            }
        }
        if (bi >= nb || busy[bi].s >= w1)
            break;
        cur = busy[bi].e;
        bi++;
        if (cur >= w1)
            break;
    }
    free(busy);
    free(in);
    *idle_inside = inside;
    *idle_total = total;
    return 0;
}

/* ------------------------------------------------------------------------
 * Summary
 * ---------------------------------------------------------------------- */
static const tfb_gpu_call *find_call(const tfb_gpu_trace *t, int64_t corr)
{
    if (corr < 0)
        return NULL;
    size_t lo = 0, hi = t->ncalls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->calls[mid].correlation < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->ncalls && t->calls[lo].correlation == corr ? &t->calls[lo]
                                                              : NULL;
}

typedef struct idle_acc {
    int64_t host_wait, kernel_wait, other;
} idle_acc;

static int cmp_start(const void *a, const void *b)
{
    const tfb_gpu_span *x = *(const tfb_gpu_span *const *)a;
    const tfb_gpu_span *y = *(const tfb_gpu_span *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* HTA's classification of idle gaps, applied to the device's timeline:
 * a gap is a stretch in which no kernel runs on any stream of the device,
 * so the three parts add up to span_ns - busy_ns. The kernel that ends the
 * gap decides its kind: "host wait" when its launch call began after the
 * GPU fell idle, "kernel wait" when the gap is shorter than
 * TFB_GPU_KERNEL_WAIT_NS, "other" otherwise. (HTA sums per stream; on a
 * multi-stream device those sums exceed the device's idle time.) */
static int idle_breakdown(const tfb_gpu_trace *t, int32_t device,
                          idle_acc *acc)
{
    memset(acc, 0, sizeof *acc);
    size_t cnt = 0;
    for (size_t i = 0; i < t->nspans; i++)
        if (t->spans[i].kind == TFB_GPU_KERNEL && t->spans[i].device == device)
            cnt++;
    if (!cnt)
        return 0;
    const tfb_gpu_span **v = malloc(cnt * sizeof *v);
    if (!v)
        return TFB_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < t->nspans; i++)
        if (t->spans[i].kind == TFB_GPU_KERNEL && t->spans[i].device == device)
            v[k++] = &t->spans[i];
    qsort(v, cnt, sizeof *v, cmp_start);
    int64_t busy_end = v[0]->end;
    for (size_t i = 1; i < cnt; i++) {
        int64_t gap = v[i]->start - busy_end;
        if (gap > 0) {
            const tfb_gpu_call *c = find_call(t, v[i]->correlation);
            if (c && c->start > busy_end)
                acc->host_wait += gap;
            else if (gap < TFB_GPU_KERNEL_WAIT_NS)
                acc->kernel_wait += gap;
            else
                acc->other += gap;
        }
        if (v[i]->end > busy_end)
            busy_end = v[i]->end;
    }
    free(v);
    return 0;
}

typedef struct copy_acc {
    int64_t count, bytes, ns;
} copy_acc;

static int device_summary(const tfb_gpu_trace *t, const tfb_gpu_device *d,
                          tfb_gpu_device_summary *o)
{
    int64_t cur_s = 0, cur_e = 0;
    memset(o, 0, sizeof *o);
    o->id = d->id;
    o->name = tfb_gpu_str(t, d->name, NULL);
    o->sm_count = d->sm_count;
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_gpu_span *s = &t->spans[i];
        if (s->device != d->id)
            continue;
        int64_t dur = s->end - s->start;
        if (s->kind == TFB_GPU_KERNEL) {
            o->kernels++;
            o->kernel_ns += dur;
            /* Spans are sorted by start: the union grows left to right. */
            if (!o->has_kernels) {
                o->start_ns = s->start;
                o->end_ns = s->end;
                cur_s = s->start;
                cur_e = s->end;
                o->has_kernels = 1;
            } else {
                if (s->start > cur_e) {
                    o->busy_ns += cur_e - cur_s;
                    cur_s = s->start;
                    cur_e = s->end;
                } else if (s->end > cur_e) {
                    cur_e = s->end;
                }
                if (s->end > o->end_ns)
                    o->end_ns = s->end;
            }
        } else if (s->kind == TFB_GPU_MEMCPY) {
            o->memcpy[s->copy_kind].count++;
            o->memcpy[s->copy_kind].bytes += s->bytes;
            o->memcpy[s->copy_kind].ns += dur;
        } else if (s->kind == TFB_GPU_MEMSET) {
            o->memset.count++;
            o->memset.bytes += s->bytes;
            o->memset.ns += dur;
        }
    }
    if (o->has_kernels)
        o->busy_ns += cur_e - cur_s;
    idle_acc idle;
    int err = idle_breakdown(t, d->id, &idle);
    if (err)
        return err;
    o->idle_host_wait_ns = idle.host_wait;
    o->idle_kernel_wait_ns = idle.kernel_wait;
    o->idle_other_ns = idle.other;
    o->span_ns = o->has_kernels ? o->end_ns - o->start_ns : 0;
    o->busy_fraction =
        o->span_ns > 0 ? (double)o->busy_ns / (double)o->span_ns : 0.0;
    return 0;
}

int tfb_gpu_summarize(const tfb_gpu_trace *t, tfb_gpu_summary *out)
{
    if (!t || !out)
        return TFB_EINVAL;
    memset(out, 0, sizeof *out);
    out->files = t->files_read;
    if (t->ndevices == 0)
        return 0;
    out->devices = calloc(t->ndevices, sizeof *out->devices);
    if (!out->devices)
        return TFB_ENOMEM;
    for (size_t i = 0; i < t->ndevices; i++) {
        int err = device_summary(t, &t->devices[i], &out->devices[i]);
        if (err) {
            tfb_gpu_summary_free(out);
            return err;
        }
    }
    out->n_devices = t->ndevices;
    return 0;
}

void tfb_gpu_summary_free(tfb_gpu_summary *s)
{
    if (!s)
        return;
    free(s->devices);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------
 * Kernels
 * ---------------------------------------------------------------------- */
typedef struct kstat {
    int32_t name;
    int64_t count, total, min, max;
    double mean, m2; /* Welford */
    const tfb_gpu_span *first;
} kstat;

/* qsort_r comparator (glibc argument order): total descending, then
 * name. */
static int cmp_kstat(const void *a, const void *b, void *arg)
{
    const tfb_gpu_trace *t = arg;
    const kstat *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(tfb_gpu_str(t, x->name, ""), tfb_gpu_str(t, y->name, ""));
}

int tfb_gpu_kernel_stats(const tfb_gpu_trace *t, size_t limit,
                         tfb_gpu_kernels *out)
{
    if (!t || !out)
        return TFB_EINVAL;
    memset(out, 0, sizeof *out);
    /* One slot per string index, plus one for unnamed kernels. */
    size_t ns = t->nstrings + 1;
    kstat *acc = calloc(ns, sizeof *acc);
    if (!acc)
        return TFB_ENOMEM;
    int64_t grand = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_gpu_span *s = &t->spans[i];
        if (s->kind != TFB_GPU_KERNEL)
            continue;
        size_t slot = s->name >= 0 && (size_t)s->name < t->nstrings
                          ? (size_t)s->name
                          : t->nstrings;
        kstat *k = &acc[slot];
        int64_t d = s->end - s->start;
        if (!k->count) {
            k->name = slot == t->nstrings ? -1 : s->name;
            k->min = k->max = d;
            k->first = s;
        }
        k->count++;
        k->total += d;
        if (d < k->min)
            k->min = d;
        if (d > k->max)
            k->max = d;
        double delta = (double)d - k->mean;
        k->mean += delta / (double)k->count;
        k->m2 += delta * ((double)d - k->mean);
        grand += d;
    }
    size_t m = 0;
    for (size_t i = 0; i < ns; i++)
        if (acc[i].count)
            acc[m++] = acc[i];
    qsort_r(acc, m, sizeof *acc, cmp_kstat, (void *)t);
    size_t shown = limit && limit < m ? limit : m;
    out->v = shown ? calloc(shown, sizeof *out->v) : NULL;
    if (shown && !out->v) {
        free(acc);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < shown; i++) {
        const kstat *k = &acc[i];
        tfb_gpu_kernel_stat *o = &out->v[i];
        o->name = tfb_gpu_str(t, k->name, "<unknown>");
        o->count = k->count;
        o->total_ns = k->total;
        o->mean_ns = (double)k->total / (double)k->count;
        o->min_ns = k->min;
        o->max_ns = k->max;
        o->std_ns = sqrt(k->m2 / (double)k->count);
        o->share = grand > 0 ? (double)k->total / (double)grand : 0.0;
        memcpy(o->grid, k->first->grid, sizeof o->grid);
        memcpy(o->block, k->first->block, sizeof o->block);
        o->registers = k->first->registers;
        o->shared_mem = k->first->shared_mem;
    }
    free(acc);
    out->n = shown;
    out->distinct = m;
    out->total_ns = grand;
    return 0;
}

void tfb_gpu_kernels_free(tfb_gpu_kernels *k)
{
    if (!k)
        return;
    free(k->v);
    memset(k, 0, sizeof *k);
}

/* ------------------------------------------------------------------------
 * Utilization
 * ---------------------------------------------------------------------- */
int tfb_gpu_utilization(const tfb_gpu_trace *t, int32_t device,
                        size_t buckets, tfb_gpu_util *out)
{
    if (!t || !out || buckets == 0)
        return TFB_EINVAL;
    ival *v;
    size_t n;
    int err = busy_of(t, device, &v, &n);
    if (err)
        return err;
    if (!n) {
        free(v);
        return TFB_ENOENT;
    }
    int64_t start = v[0].s, span = v[n - 1].e - start;
    int64_t bucket = (span + (int64_t)buckets - 1) / (int64_t)buckets;
    if (bucket < 1)
        bucket = 1;
    int64_t *busy = calloc(buckets, sizeof *busy);
    double *frac = calloc(buckets, sizeof *frac);
    if (!busy || !frac) {
        free(busy);
        free(frac);
        free(v);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = v[i].s, e = v[i].e;
        while (s < e) {
            int64_t b = (s - start) / bucket;
            if (b >= (int64_t)buckets)
                break;
            int64_t be = start + (b + 1) * bucket;
            int64_t ce = e < be ? e : be;
            busy[b] += ce - s;
            s = ce;
        }
    }
    for (size_t b = 0; b < buckets; b++)
        frac[b] = (double)busy[b] / (double)bucket;
    free(busy);
    free(v);
    out->device = device;
    out->start_ns = start;
    out->bucket_ns = bucket;
    out->busy = frac;
    out->n = buckets;
    return 0;
}

void tfb_gpu_util_free(tfb_gpu_util *u)
{
    if (!u)
        return;
    free(u->busy);
    memset(u, 0, sizeof *u);
}
