/*
 * trace_aggregate.c - a trace's aggregates: device summary, kernel
 * statistics, utilization over time, busy/idle intervals (definitions in
 * trace.h). Reads the trace only (trace.c), never the builder
 * that calls tfb_trace_aggregate. The timeline and the Chrome export are the
 * GPU dashboard's (plugins/gpu/gpu_timeline.c).
 */
#include "trace/trace_internal.h"
#include "base/vec.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Intervals
 * ---------------------------------------------------------------------- */
typedef tfb_trace_interval ival; /* short, for the code below */

static int cmp_ival(const void *a, const void *b)
{
    const ival *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

size_t tfb_trace_intervals_normalize(ival *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_ival);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].end <= v[i].start)
            continue;
        if (o && v[i].start <= v[o - 1].end) {
            if (v[i].end > v[o - 1].end)
                v[o - 1].end = v[i].end;
        } else {
            v[o++] = v[i];
        }
    }
    return o;
}

/* The device's (or every device's, device < 0) kernel intervals, merged:
 * a copy of the aggregate (all devices: the devices' lists merged). */
static int busy_of(const tfb_trace *t, int32_t device, ival **out,
                   size_t *n)
{
    const tfb_trace_aggregates *a = t->agg;
    size_t cnt = 0;
    for (size_t d = 0; a && d < t->ndevices; d++)
        if (device < 0 || t->devices[d].id == device)
            cnt += a->nbusy[d];
    ival *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v)
        return TFB_ENOMEM;
    size_t k = 0, ndev = 0;
    for (size_t d = 0; a && d < t->ndevices; d++) {
        if (device >= 0 && t->devices[d].id != device)
            continue;
        ndev++;
        for (size_t i = 0; i < a->nbusy[d]; i++) {
            v[k].start = a->busy[d][2 * i];
            v[k].end = a->busy[d][2 * i + 1];
            k++;
        }
    }
    /* One device's list is sorted and disjoint already. */
    *n = ndev > 1 ? tfb_trace_intervals_normalize(v, k) : k;
    *out = v;
    return 0;
}

int tfb_trace_busy_intervals(const tfb_trace *t, int32_t device, int64_t **out,
                             size_t *n)
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
        p[2 * i] = v[i].start;
        p[2 * i + 1] = v[i].end;
    }
    free(v);
    *out = p;
    *n = m;
    return 0;
}

int tfb_trace_idle_within(const tfb_trace *t, int32_t device, int64_t w0,
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
        in[i].start = pairs[2 * i] > w0 ? pairs[2 * i] : w0;
        in[i].end = pairs[2 * i + 1] < w1 ? pairs[2 * i + 1] : w1;
    }
    size_t ni = tfb_trace_intervals_normalize(in, npairs);
    /* Idle = window minus busy; walk the idle gaps. */
    int64_t total = 0, inside = 0, cur = w0;
    size_t bi = 0, ii = 0;
    for (;;) {
        while (bi < nb && busy[bi].end <= cur)
            bi++;
        int64_t gap_end = w1;
        if (bi < nb && busy[bi].start < w1)
            gap_end = busy[bi].start > cur ? busy[bi].start : cur;
        if (gap_end > cur) {
            total += gap_end - cur;
            while (ii < ni && in[ii].end <= cur)
                ii++;
            for (size_t k = ii; k < ni && in[k].start < gap_end; k++) {
                int64_t s = in[k].start > cur ? in[k].start : cur;
                int64_t e = in[k].end < gap_end ? in[k].end : gap_end;
                if (e > s)
                    inside += e - s;
            }
        }
        if (bi >= nb || busy[bi].start >= w1)
            break;
        cur = busy[bi].end;
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
 * Aggregates: one pass over the GPU lanes' spans merged in (start, end)
 * order (a heap over the lanes), as the old whole-trace walks saw them.
 * ---------------------------------------------------------------------- */

/* tfb_trace_call_rank(t, corr), searched from `from` onwards when the
 * call there has a smaller id: a stream's launches are every few
 * correlation ids apart (one stream of four: every 4th), so the next one
 * is a few places past the last; a gallop (1, 2, 4, ... places) then a
 * bisection of the last step finds it in a few reads where a bisection
 * of the whole table (10 M calls: 23 reads, cache misses) cost 6 % of a
 * first load's CPU. The same rank as tfb_trace_call_rank: the first
 * call of that id in correlation order. */
static size_t call_rank_after(const tfb_trace *t, int64_t corr, size_t from)
{
    const tfb_trace_call *c = t->calls;
    const uint32_t *by = t->calls_by_corr;
    if (from >= t->ncalls || c[by[from]].correlation >= corr)
        return tfb_trace_call_rank(t, corr);
    /* c[by[lo]] < corr; find hi with c[by[hi]] >= corr (or the end). */
    size_t lo = from, step = 1, hi = t->ncalls;
    for (;;) {
        size_t k = lo + step;
        if (k >= t->ncalls)
            break;
        if (c[by[k]].correlation >= corr) {
            hi = k;
            break;
        }
        lo = k;
        step *= 2;
    }
    lo++; /* the first place that may hold corr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[by[mid]].correlation < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->ncalls && c[by[lo]].correlation == corr)
        return lo;
    return t->ncalls;
}

/* The call with that correlation id; *hint remembers where the last one
 * was: launches are found in correlation order most of the time. */
static const tfb_trace_call *find_call(const tfb_trace *t, int64_t corr,
                                       size_t *hint)
{
    if (corr < 0 || !t->ncalls)
        return NULL;
    for (size_t k = *hint; k < *hint + 2 && k < t->ncalls; k++) {
        const tfb_trace_call *c = &t->calls[t->calls_by_corr[k]];
        if (c->correlation == corr) {
            *hint = k + 1;
            return c;
        }
    }
    size_t k = call_rank_after(t, corr, *hint);
    if (k == t->ncalls)
        return NULL;
    *hint = k + 1;
    return &t->calls[t->calls_by_corr[k]];
}

typedef struct dev_acc {
    int64_t cur_s, cur_e; /* the busy stretch being grown */
    TFB_VEC(int64_t) busy; /* merged intervals, (start, end) pairs; moved
                              into the aggregates at the end */
    size_t prefaulted;     /* bytes of busy (trace_prefault.c) */
} dev_acc;

typedef struct kstat {
    int32_t name;
    int64_t count, total, min, max;
    double mean, m2; /* Welford */
    const tfb_trace_span *first;
} kstat;

/* qsort_r comparator (glibc argument order): total descending, then
 * name. */
static int cmp_kstat(const void *a, const void *b, void *arg)
{
    const tfb_trace *t = arg;
    const kstat *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(tfb_trace_str(t, x->name, ""), tfb_trace_str(t, y->name, ""));
}

/* A lane's place in the merge; its head span's start and end are kept in
 * the cursor, so that comparing two lanes reads no span. */
typedef struct cursor {
    int64_t start, end;
    size_t pos, end_pos, lane;
} cursor;

static int cur_less(const cursor *a, const cursor *b)
{
    if (a->start != b->start)
        return a->start < b->start;
    if (a->end != b->end)
        return a->end < b->end;
    return a->lane < b->lane;
}

static void sift_down(cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cur_less(&h[l], &h[m]))
            m = l;
        if (r < n && cur_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        cursor tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

static int push_busy(dev_acc *acc, int64_t s, int64_t e)
{
    if (tfb_vec_need(&acc->busy, acc->busy.n + 2) < 0)
        return TFB_ENOMEM;
    acc->busy.v[acc->busy.n++] = s;
    acc->busy.v[acc->busy.n++] = e;
    size_t used = acc->busy.n * sizeof *acc->busy.v;
    if (used + TFB_TRACE_PREFAULT_CHUNK / 2 > acc->prefaulted)
        tfb_trace_prefault_ahead(acc->busy.v, used,
                                 acc->busy.cap * sizeof *acc->busy.v,
                                 &acc->prefaulted);
    return 0;
}

/* Device index (into t->devices) of each lane; SIZE_MAX for host lanes. */
static size_t *lane_devices(const tfb_trace *t)
{
    size_t *m = malloc((t->nlanes ? t->nlanes : 1) * sizeof *m);
    if (!m)
        return NULL;
    for (size_t i = 0; i < t->nlanes; i++) {
        m[i] = SIZE_MAX;
        if (t->lanes[i].host)
            continue;
        for (size_t d = 0; d < t->ndevices; d++)
            if (t->devices[d].id == t->lanes[i].device)
                m[i] = d;
    }
    return m;
}

/* A device event (kernel, memcpy, memset) into its device's busy union
 * and extent: one definition of busy time (trace.h). */
static int device_event(tfb_trace_device_summary *o, dev_acc *acc,
                        const tfb_trace_span *s)
{
    if (!o->has_events) {
        o->has_events = 1;
        o->start_ns = s->start;
        o->end_ns = s->end;
        acc->cur_s = s->start;
        acc->cur_e = s->end;
        return 0;
    }
    if (s->end > o->end_ns)
        o->end_ns = s->end;
    /* Sorted by start: the union grows left to right. */
    if (s->start > acc->cur_e) {
        o->busy_ns += acc->cur_e - acc->cur_s;
        int err = push_busy(acc, acc->cur_s, acc->cur_e);
        if (err)
            return err;
        acc->cur_s = s->start;
        acc->cur_e = s->end;
    } else if (s->end > acc->cur_e) {
        acc->cur_e = s->end;
    }
    return 0;
}

/* HTA's idle breakdown of one stream (trace.h): its events in start
 * order, each gap g > 0 after the previous event's end classed by the
 * next event's launch call. HTA also sums gaps <= 0 (events that overlap
 * on one stream, which CUDA does not run); they are no idle time here.
 * Fed span by span from the aggregates' merge, which hands each lane's
 * spans in the lane's order (no pass of its own over the spans). */
typedef struct stream_acc {
    int64_t prev_end;
    size_t hint; /* find_call's */
} stream_acc;

static void stream_idle_step(const tfb_trace *t, const tfb_trace_span *s,
                             tfb_trace_stream_idle *o, stream_acc *st)
{
    if (s->kind != TFB_TRACE_KERNEL && s->kind != TFB_TRACE_MEMCPY &&
        s->kind != TFB_TRACE_MEMSET)
        return;
    if (o->events++ > 0) {
        int64_t gap = s->start - st->prev_end;
        if (gap > 0) {
            const tfb_trace_call *c =
                find_call(t, s->correlation, &st->hint);
            if (c && c->start > st->prev_end)
                o->host_wait_ns += gap;
            else if (gap < TFB_TRACE_KERNEL_WAIT_NS)
                o->kernel_wait_ns += gap;
            else
                o->other_ns += gap;
        }
    }
    st->prev_end = s->end;
}

static void kernel_stat_add(kstat *acc, size_t nstrings,
                            const tfb_trace *t, const tfb_trace_span *s,
                            int64_t *grand)
{
    const tfb_trace_kinfo *ki = tfb_trace_span_kinfo(t, s);
    int32_t name = ki ? ki->name : -1;
    size_t slot =
        name >= 0 && (size_t)name < nstrings ? (size_t)name : nstrings;
    kstat *k = &acc[slot];
    int64_t d = s->end - s->start;
    if (!k->count) {
        k->name = slot == nstrings ? -1 : name;
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
    *grand += d;
}

static int kernel_stats_final(const tfb_trace *t, kstat *acc,
                              size_t ns, int64_t grand,
                              tfb_trace_aggregates *a)
{
    size_t m = 0;
    for (size_t i = 0; i < ns; i++)
        if (acc[i].count)
            acc[m++] = acc[i];
    qsort_r(acc, m, sizeof *acc, cmp_kstat, (void *)t);
    a->kstats = m ? calloc(m, sizeof *a->kstats) : NULL;
    if (m && !a->kstats)
        return TFB_ENOMEM;
    for (size_t i = 0; i < m; i++) {
        const kstat *k = &acc[i];
        tfb_trace_kernel_stat *o = &a->kstats[i];
        o->name = tfb_trace_str(t, k->name, "<unknown>");
        o->count = k->count;
        o->total_ns = k->total;
        o->mean_ns = (double)k->total / (double)k->count;
        o->min_ns = k->min;
        o->max_ns = k->max;
        o->std_ns = sqrt(k->m2 / (double)k->count);
        o->share = grand > 0 ? (double)k->total / (double)grand : 0.0;
        const tfb_trace_kinfo *ki = tfb_trace_span_kinfo(t, k->first);
        if (ki) {
            memcpy(o->grid, ki->grid, sizeof o->grid);
            memcpy(o->block, ki->block, sizeof o->block);
            o->registers = ki->registers;
            o->shared_mem = ki->shared_mem;
        }
    }
    a->nkstats = m;
    a->ktotal = grand;
    return 0;
}

void tfb_trace_aggregate_link_streams(tfb_trace_aggregates *a)
{
    size_t k = 0;
    for (size_t d = 0; d < a->ndev; d++) {
        while (k < a->nstreams && a->streams[k].device < a->dev[d].id)
            k++;
        size_t first = k;
        while (k < a->nstreams && a->streams[k].device == a->dev[d].id)
            k++;
        a->dev[d].streams = k > first ? &a->streams[first] : NULL;
        a->dev[d].nstreams = k - first;
    }
}

void tfb_trace_aggregates_free(tfb_trace_aggregates *a)
{
    if (!a)
        return;
    if (a->busy)
        for (size_t i = 0; i < a->ndev; i++)
            free(a->busy[i]);
    free(a->busy);
    free(a->nbusy);
    free(a->dev);
    free(a->kstats);
    free(a->streams);
    free(a);
}

int tfb_trace_aggregate(tfb_trace *t)
{
    tfb_trace_aggregates *a = calloc(1, sizeof *a);
    if (!a)
        return TFB_ENOMEM;
    size_t nd = t->ndevices ? t->ndevices : 1;
    a->ndev = t->ndevices;
    a->dev = calloc(nd, sizeof *a->dev);
    a->busy = calloc(nd, sizeof *a->busy);
    a->nbusy = calloc(nd, sizeof *a->nbusy);
    dev_acc *acc = calloc(nd, sizeof *acc);
    size_t ns = t->nstrings + 1;
    kstat *ks = calloc(ns, sizeof *ks);
    size_t *ldev = lane_devices(t);
    cursor *heap = malloc((t->nlanes ? t->nlanes : 1) * sizeof *heap);
    /* HTA's breakdown, one entry a GPU stream (lanes of known devices, in
     * lane order), and each lane's entry (SIZE_MAX: none) and state. */
    size_t nstreams = 0;
    for (size_t i = 0; ldev && i < t->nlanes; i++)
        nstreams += !t->lanes[i].host && ldev[i] != SIZE_MAX;
    a->streams = calloc(nstreams ? nstreams : 1, sizeof *a->streams);
    size_t *lstream = malloc((t->nlanes ? t->nlanes : 1) * sizeof *lstream);
    stream_acc *sacc = calloc(t->nlanes ? t->nlanes : 1, sizeof *sacc);
    int err = 0;
    if (!a->dev || !a->busy || !a->nbusy || !acc || !ks || !ldev || !heap ||
        !a->streams || !lstream || !sacc) {
        err = TFB_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < t->nlanes; i++) {
        lstream[i] = SIZE_MAX;
        if (t->lanes[i].host || ldev[i] == SIZE_MAX)
            continue;
        tfb_trace_stream_idle *si = &a->streams[a->nstreams];
        si->device = t->lanes[i].device;
        si->stream = t->lanes[i].stream;
        lstream[i] = a->nstreams++;
    }
    for (size_t d = 0; d < t->ndevices; d++) {
        a->dev[d].id = t->devices[d].id;
        a->dev[d].name = tfb_trace_str(t, t->devices[d].name, NULL);
        a->dev[d].sm_count = t->devices[d].sm_count;
        a->dev[d].cc_major = t->devices[d].cc_major;
        a->dev[d].cc_minor = t->devices[d].cc_minor;
        a->dev[d].total_mem = t->devices[d].total_mem;
    }
    size_t hn = 0;
    for (size_t i = 0; i < t->nlanes; i++) {
        const tfb_trace_lane *l = &t->lanes[i];
        if (!l->host && l->n)
            heap[hn++] = (cursor){t->spans[l->off].start,
                                  t->spans[l->off].end, l->off,
                                  l->off + l->n, i};
    }
    for (size_t i = hn; i-- > 0;)
        sift_down(heap, hn, i);
    int64_t grand = 0;
    while (hn && !err) {
        const tfb_trace_span *s = &t->spans[heap[0].pos];
        size_t lane = heap[0].lane;
        size_t d = ldev[lane];
        if (++heap[0].pos == heap[0].end_pos) {
            heap[0] = heap[--hn];
        } else {
            heap[0].start = t->spans[heap[0].pos].start;
            heap[0].end = t->spans[heap[0].pos].end;
        }
        sift_down(heap, hn, 0);
        if (s->kind == TFB_TRACE_KERNEL)
            kernel_stat_add(ks, t->nstrings, t, s, &grand);
        if (d == SIZE_MAX)
            continue;
        stream_idle_step(t, s, &a->streams[lstream[lane]], &sacc[lane]);
        int64_t dur = s->end - s->start;
        tfb_trace_device_summary *o = &a->dev[d];
        if (s->kind == TFB_TRACE_KERNEL || s->kind == TFB_TRACE_MEMCPY ||
            s->kind == TFB_TRACE_MEMSET)
            err = device_event(o, &acc[d], s);
        if (s->kind == TFB_TRACE_KERNEL) {
            o->kernels++;
            o->kernel_ns += dur;
        } else if (s->kind == TFB_TRACE_MEMCPY) {
            o->memcpy[s->copy_kind].count++;
            o->memcpy[s->copy_kind].bytes += tfb_trace_span_bytes(t, s);
            o->memcpy[s->copy_kind].ns += dur;
        } else if (s->kind == TFB_TRACE_MEMSET) {
            o->memset.count++;
            o->memset.bytes += tfb_trace_span_bytes(t, s);
            o->memset.ns += dur;
        }
    }
    for (size_t d = 0; d < t->ndevices && !err; d++) {
        tfb_trace_device_summary *o = &a->dev[d];
        if (o->has_events) {
            o->busy_ns += acc[d].cur_e - acc[d].cur_s;
            err = push_busy(&acc[d], acc[d].cur_s, acc[d].cur_e);
            /* The growth doubled: give back the tail. */
            tfb_vec_trim(&acc[d].busy);
            a->busy[d] = acc[d].busy.v;
            a->nbusy[d] = acc[d].busy.n / 2;
            memset(&acc[d].busy, 0, sizeof acc[d].busy);
        }
        o->span_ns = o->has_events ? o->end_ns - o->start_ns : 0;
        o->idle_ns = o->span_ns - o->busy_ns;
        o->busy_fraction =
            o->span_ns > 0 ? (double)o->busy_ns / (double)o->span_ns : 0.0;
    }
    /* HTA's idle breakdown, stream by stream (made in the merge); a
     * device's is the sum of its streams'. */
    for (size_t i = 0; i < t->nlanes && !err; i++) {
        if (lstream[i] == SIZE_MAX)
            continue;
        const tfb_trace_stream_idle *si = &a->streams[lstream[i]];
        tfb_trace_device_summary *o = &a->dev[ldev[i]];
        o->idle_host_wait_ns += si->host_wait_ns;
        o->idle_kernel_wait_ns += si->kernel_wait_ns;
        o->idle_other_ns += si->other_ns;
    }
    if (!err)
        tfb_trace_aggregate_link_streams(a);
    if (!err)
        err = kernel_stats_final(t, ks, ns, grand, a);
out:
    for (size_t d = 0; acc && d < nd; d++)
        tfb_vec_free(&acc[d].busy);
    free(acc);
    free(ks);
    free(ldev);
    free(heap);
    free(lstream);
    free(sacc);
    if (err) {
        tfb_trace_aggregates_free(a);
        return err;
    }
    t->agg = a;
    return 0;
}

/* ------------------------------------------------------------------------
 * Summary and kernels: copies of the aggregates
 * ---------------------------------------------------------------------- */
int tfb_trace_summarize(const tfb_trace *t, tfb_trace_summary *out)
{
    if (!t || !out)
        return TFB_EINVAL;
    memset(out, 0, sizeof *out);
    out->files = t->files_read;
    if (t->ndevices == 0 || !t->agg)
        return 0;
    out->devices = malloc(t->ndevices * sizeof *out->devices);
    if (!out->devices)
        return TFB_ENOMEM;
    memcpy(out->devices, t->agg->dev, t->ndevices * sizeof *out->devices);
    out->n_devices = t->ndevices;
    return 0;
}

void tfb_trace_summary_free(tfb_trace_summary *s)
{
    if (!s)
        return;
    free(s->devices);
    memset(s, 0, sizeof *s);
}

int tfb_trace_kernel_stats(const tfb_trace *t, size_t limit,
                           tfb_trace_kernels *out)
{
    if (!t || !out)
        return TFB_EINVAL;
    memset(out, 0, sizeof *out);
    if (!t->agg)
        return 0;
    size_t m = t->agg->nkstats;
    size_t shown = limit && limit < m ? limit : m;
    out->v = shown ? malloc(shown * sizeof *out->v) : NULL;
    if (shown && !out->v)
        return TFB_ENOMEM;
    if (shown)
        memcpy(out->v, t->agg->kstats, shown * sizeof *out->v);
    out->n = shown;
    out->distinct = m;
    out->total_ns = t->agg->ktotal;
    return 0;
}

void tfb_trace_kernels_free(tfb_trace_kernels *k)
{
    if (!k)
        return;
    free(k->v);
    memset(k, 0, sizeof *k);
}

/* ------------------------------------------------------------------------
 * Utilization
 * ---------------------------------------------------------------------- */
int tfb_trace_utilization(const tfb_trace *t, int32_t device, size_t buckets,
                          tfb_trace_utilization_buckets *out)
{
    if (!t || !out || buckets == 0)
        return TFB_EINVAL;
    /* One device: its aggregate, read in place; all devices: merged. */
    int64_t *pairs = NULL, *owned = NULL;
    size_t n = 0;
    if (device >= 0) {
        for (size_t d = 0; t->agg && d < t->ndevices; d++)
            if (t->devices[d].id == device) {
                pairs = t->agg->busy[d];
                n = t->agg->nbusy[d];
            }
    } else {
        int err = tfb_trace_busy_intervals(t, -1, &owned, &n);
        if (err)
            return err;
        pairs = owned;
    }
    if (!n) {
        free(owned);
        return TFB_ENOENT;
    }
    int64_t start = pairs[0], span = pairs[2 * n - 1] - start;
    int64_t bucket = (span + (int64_t)buckets - 1) / (int64_t)buckets;
    if (bucket < 1)
        bucket = 1;
    int64_t *busy = calloc(buckets, sizeof *busy);
    double *frac = calloc(buckets, sizeof *frac);
    if (!busy || !frac) {
        free(busy);
        free(frac);
        free(owned);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = pairs[2 * i], e = pairs[2 * i + 1];
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
    free(owned);
    out->device = device;
    out->start_ns = start;
    out->bucket_ns = bucket;
    out->busy = frac;
    out->n = buckets;
    return 0;
}

void tfb_trace_utilization_free(tfb_trace_utilization_buckets *u)
{
    if (!u)
        return;
    free(u->busy);
    memset(u, 0, sizeof *u);
}
