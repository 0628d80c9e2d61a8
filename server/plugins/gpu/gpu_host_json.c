/*
 * gpu_host_json.c - the JSON of /data/plugin/gpu/host: the trace layer's
 * host model (trace/trace.h) in a time window, for the timeline's
 * CPU-thread and NVTX lanes, with each runtime call's correlation in the
 * GPU trace's id space (the page pairs a call with its kernels by it).
 */
#include <stdlib.h>

#include "plugins/gpu/gpu_analysis.h"

#define TOP_OPS 30

/* Longer first; ties by start, then lane: the same order whatever the
 * order the spans came in. */
static int longer(const tfb_trace_host_event *x, const tfb_trace_host_event *y)
{
    int64_t dx = x->end - x->start, dy = y->end - y->start;
    if (dx != dy)
        return dx > dy;
    if (x->start != y->start)
        return x->start < y->start;
    return x->lane < y->lane;
}

static int cmp_longer(const void *a, const void *b)
{
    const tfb_trace_host_event *x = *(tfb_trace_host_event *const *)a,
                               *y = *(tfb_trace_host_event *const *)b;
    return longer(x, y) ? -1 : longer(y, x) ? 1 : 0;
}

/* Sift-down in a heap whose root is the shortest of the kept spans. */
static void sift(const tfb_trace_host_event **v, size_t n, size_t i)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && longer(v[m], v[l]))
            m = l;
        if (r < n && longer(v[m], v[r]))
            m = r;
        if (m == i)
            return;
        const tfb_trace_host_event *t = v[i];
        v[i] = v[m];
        v[m] = t;
        i = m;
    }
}

/* The max longest of v[0, n) into v[0, max), longest first: a heap of
 * max (O(n log max), no sort of the whole window). */
static void keep_longest(const tfb_trace_host_event **v, size_t n, size_t max)
{
    for (size_t i = max / 2; i-- > 0;)
        sift(v, max, i);
    for (size_t i = max; i < n; i++)
        if (longer(v[i], v[0])) {
            v[0] = v[i];
            sift(v, max, 0);
        }
    qsort(v, max, sizeof *v, cmp_longer);
}

static const char *kind_str(int k)
{
    switch (k) {
    case TFB_TRACE_HOST_RUNTIME: return "runtime";
    case TFB_TRACE_HOST_RANGE: return "range";
    case TFB_TRACE_HOST_MARK: return "mark";
    default: return "op";
    }
}

static void lanes_json(const tfb_trace_host *h, tfb_json *j)
{
    tfb_json_key(j, "lanes");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < h->nlanes; i++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "id");
        tfb_json_u64(j, i);
        tfb_json_key(j, "kind");
        tfb_json_str(j, h->lanes[i].is_range ? "nvtx" : "thread");
        tfb_json_key(j, "label");
        tfb_json_str(j, h->lanes[i].label);
        tfb_json_key(j, "depth");
        tfb_json_i64(j, h->lanes[i].depth);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
}

static void span_json(const tfb_trace_host *h, const tfb_trace_host_event *s,
                      const int64_t *bases, tfb_json *j)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "lane");
    tfb_json_u64(j, s->lane);
    tfb_json_key(j, "kind");
    tfb_json_str(j, kind_str(s->kind));
    tfb_json_key(j, "name");
    tfb_json_str(j, h->strings[s->name]);
    tfb_json_key(j, "start_ns");
    tfb_json_i64(j, s->start);
    tfb_json_key(j, "end_ns");
    tfb_json_i64(j, s->end);
    tfb_json_key(j, "depth");
    tfb_json_i64(j, s->depth);
    int64_t corr = tfb_trace_host_correlation(s, bases);
    if (corr >= 0) {
        tfb_json_key(j, "correlation");
        tfb_json_i64(j, corr);
    }
    tfb_json_object_end(j);
}

/* Most self time first, then by name: the trace layer's order of h->ops. */
static int cmp_op_self(const void *a, const void *b)
{
    const tfb_trace_host_op_stat *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns < y->self_ns ? 1 : -1;
    return (x->name > y->name) - (x->name < y->name);
}

/* h's op totals and busy time over the ops and calls (not ranges or
 * marks) that start in [w0, w1): *ops malloc'd (NULL when none). */
static int window_ops(const tfb_trace_host *h, int64_t w0, int64_t w1,
                      tfb_trace_host_op_stat **ops, size_t *nops,
                      int64_t *busy)
{
    *ops = NULL;
    *nops = 0;
    *busy = 0;
    if (!h->nstrings)
        return 0;
    tfb_trace_host_op_stat *o = calloc(h->nstrings, sizeof *o);
    if (!o)
        return TFB_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const tfb_trace_host_event *s = &h->spans[i];
        if (s->kind == TFB_TRACE_HOST_RANGE ||
            s->kind == TFB_TRACE_HOST_MARK || s->start < w0 ||
            s->start >= w1 || s->name >= h->nstrings)
            continue;
        tfb_trace_host_op_stat *x = &o[s->name];
        x->name = s->name;
        x->count++;
        x->total_ns += s->end - s->start;
        x->self_ns += s->self_ns;
        if (s->depth == 0)
            *busy += s->end - s->start;
    }
    size_t n = 0;
    for (size_t i = 0; i < h->nstrings; i++)
        if (o[i].count)
            o[n++] = o[i];
    if (n > 1)
        qsort(o, n, sizeof *o, cmp_op_self);
    *ops = o;
    *nops = n;
    return 0;
}

static void ops_json(const tfb_trace_host *h,
                     const tfb_trace_host_op_stat *ops, size_t nops,
                     tfb_json *j)
{
    tfb_json_key(j, "top_ops");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < nops && i < TOP_OPS; i++) {
        const tfb_trace_host_op_stat *o = &ops[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "name");
        tfb_json_str(j, h->strings[o->name]);
        tfb_json_key(j, "count");
        tfb_json_u64(j, o->count);
        tfb_json_key(j, "total_ns");
        tfb_json_i64(j, o->total_ns);
        tfb_json_key(j, "self_ns");
        tfb_json_i64(j, o->self_ns);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
}

int tfb_gpu_host_json(const tfb_trace_host *h, const tfb_trace *t,
                      int64_t w0, int64_t w1, size_t max,
                      const tfb_trace_window *win, tfb_json *j)
{
    static const tfb_trace_host none = {0};
    if (!h)
        h = &none;
    /* The ops of the step window, else the whole trace's. */
    tfb_trace_host_op_stat *wops = NULL;
    const tfb_trace_host_op_stat *ops = h->ops;
    size_t nops = h->nops;
    int64_t busy = h->busy_ns;
    if (win && win->applies) {
        int rc = window_ops(h, win->start_ns, win->end_ns, &wops, &nops,
                            &busy);
        if (rc < 0)
            return rc;
        ops = wops;
    }
    if (w0 == INT64_MIN)
        w0 = h->start_ns;
    if (w1 == INT64_MAX)
        w1 = h->end_ns;
    /* The spans in the window; past max, the longest. */
    const tfb_trace_host_event **vis = h->n ? malloc(h->n * sizeof *vis) : NULL;
    int64_t *bases = h->nfiles ? malloc(h->nfiles * sizeof *bases) : NULL;
    if ((h->n && !vis) || (h->nfiles && !bases)) {
        free(vis);
        free(bases);
        free(wops);
        return TFB_ENOMEM;
    }
    tfb_trace_host_link(h, t, bases);
    size_t nv = 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->spans[i].end >= w0 && h->spans[i].start <= w1)
            vis[nv++] = &h->spans[i];
    int truncated = nv > max;
    if (truncated) {
        keep_longest(vis, nv, max);
        nv = max;
    }
    tfb_json_object_begin(j);
    tfb_json_key(j, "start_ns");
    tfb_json_i64(j, w0);
    tfb_json_key(j, "end_ns");
    tfb_json_i64(j, w1);
    tfb_json_key(j, "trace_start_ns");
    tfb_json_i64(j, h->start_ns);
    tfb_json_key(j, "trace_end_ns");
    tfb_json_i64(j, h->end_ns);
    tfb_json_key(j, "total");
    tfb_json_u64(j, h->n);
    tfb_json_key(j, "truncated");
    tfb_json_bool(j, truncated);
    lanes_json(h, j);
    tfb_json_key(j, "spans");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < nv; i++)
        span_json(h, vis[i], bases, j);
    tfb_json_array_end(j);
    ops_json(h, ops, nops, j);
    tfb_json_key(j, "busy_ns");
    tfb_json_i64(j, busy);
    tfb_json_key(j, "span_ns");
    tfb_json_i64(j, win && win->applies ? win->duration_ns
                                        : h->end_ns - h->start_ns);
    tfb_json_object_end(j);
    free(vis);
    free(bases);
    free(wops);
    return 0;
}
