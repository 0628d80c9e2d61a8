/*
 * gpu_timeline.c - the zoomable timeline (spans in a window, merged per
 * lane so an answer stays small at any zoom) and the Chrome trace JSON
 * export that Perfetto opens.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/gpu/gpu_analysis.h"
#include "base/vec.h"

static const char *kind_name(int k)
{
    switch (k) {
    case TFB_TRACE_KERNEL: return "kernel";
    case TFB_TRACE_MEMCPY: return "memcpy";
    case TFB_TRACE_MEMSET: return "memset";
    case TFB_TRACE_HOST_STEP: return "step";
    case TFB_TRACE_HOST_INPUT: return "input";
    default: return "other";
    }
}

/* ------------------------------------------------------------------------
 * Lane windows. A lane's spans are sorted by (start, end), with a tree of
 * maximum ends (trace.h). The spans of a lane that overlap [w0, w1)
 * are those that start in [w0, w1) - one contiguous range, found by binary
 * search - and the "straddlers" that start before w0 and end after it,
 * found by walking down the tree only where a maximum end passes w0.
 * (An instant, end == start, counts when it lies in [w0, w1], as before:
 * with w1 == w0 the range is the instants at w0.)
 * ---------------------------------------------------------------------- */
typedef struct lane_win {
    size_t lane;
    TFB_VEC(size_t) strad; /* lane-relative indexes, ascending */
    size_t a, b;   /* the range [a, b), lane-relative */
} lane_win;

typedef struct wins {
    lane_win *v;
    size_t n;
    size_t total;
} wins;

static const tfb_trace_span *sp(const tfb_trace *t, const tfb_trace_lane *l,
                                size_t k)
{
    return &t->spans[l->off + k];
}

/* First k in [lo, hi) with start >= x (or (start, end) >= (x, e) when
 * by_end). */
static size_t lower(const tfb_trace *t, const tfb_trace_lane *l, size_t lo,
                    size_t hi, int64_t x, int by_end, int64_t e)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const tfb_trace_span *s = sp(t, l, mid);
        int less = s->start < x || (by_end && s->start == x && s->end < e);
        if (less)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t pow_fanout(size_t lv)
{
    size_t p = 1;
    for (size_t i = 0; i < lv; i++)
        p *= TFB_TRACE_TREE_FANOUT;
    return p;
}

/* Maximum end over lane-relative [i, j) (INT64_MIN when empty). */
static int64_t rmax(const tfb_trace *t, const tfb_trace_lane *l, size_t i,
                    size_t j)
{
    const size_t F = TFB_TRACE_TREE_FANOUT;
    int64_t m = INT64_MIN;
    size_t lv = 0; /* 0 = the spans, k = tree level k - 1 */
    while (i < j) {
        int top = lv == l->levels;
#define VAL(k) (lv ? l->tree[l->tree_off[lv - 1] + (k)] : sp(t, l, (k))->end)
        if (top || j - i < 2 * F) {
            for (size_t k = i; k < j; k++)
                if (VAL(k) > m)
                    m = VAL(k);
            break;
        }
        while (i % F) {
            if (VAL(i) > m)
                m = VAL(i);
            i++;
        }
        while (j % F) {
            j--;
            if (VAL(j) > m)
                m = VAL(j);
        }
#undef VAL
        i /= F;
        j /= F;
        lv++;
    }
    return m;
}

static int strad_push(lane_win *w, size_t k)
{
    return tfb_vec_push(&w->strad, k) < 0 ? TFB_ENOMEM : 0;
}

/* Node k of level lv (lv 0 = a span) covers spans [k F^lv, (k+1) F^lv). */
static int collect(const tfb_trace *t, const tfb_trace_lane *l, size_t lv,
                   size_t k, size_t a, int64_t w0, lane_win *w)
{
    size_t first = k * pow_fanout(lv);
    if (first >= a)
        return 0;
    if (lv == 0)
        return sp(t, l, k)->end > w0 ? strad_push(w, k) : 0;
    if (l->tree[l->tree_off[lv - 1] + k] <= w0)
        return 0;
    size_t below = lv > 1 ? l->tree_n[lv - 2] : l->n;
    for (size_t c = k * TFB_TRACE_TREE_FANOUT;
         c < (k + 1) * TFB_TRACE_TREE_FANOUT && c < below; c++) {
        int err = collect(t, l, lv - 1, c, a, w0, w);
        if (err)
            return err;
    }
    return 0;
}

static int straddlers(const tfb_trace *t, const tfb_trace_lane *l,
                      size_t a, int64_t w0, lane_win *w)
{
    size_t top = l->levels;
    size_t n = top ? l->tree_n[top - 1] : l->n;
    for (size_t k = 0; k < n; k++) {
        int err = collect(t, l, top, k, a, w0, w);
        if (err)
            return err;
    }
    return 0;
}

static void wins_free(wins *W)
{
    for (size_t i = 0; i < W->n; i++)
        tfb_vec_free(&W->v[i].strad);
    free(W->v);
    memset(W, 0, sizeof *W);
}

/* The lanes' windows. unbounded_lo / unbounded_hi: no bound on that side
 * (every span from the lane's first / to its last). */
static int find_windows(const tfb_trace *t, int64_t w0, int64_t w1,
                        int unbounded_lo, int unbounded_hi, wins *W)
{
    memset(W, 0, sizeof *W);
    W->v = calloc(t->nlanes ? t->nlanes : 1, sizeof *W->v);
    if (!W->v)
        return TFB_ENOMEM;
    for (size_t li = 0; li < t->nlanes; li++) {
        const tfb_trace_lane *l = &t->lanes[li];
        lane_win *w = &W->v[W->n];
        memset(w, 0, sizeof *w);
        w->lane = li;
        w->a = unbounded_lo ? 0 : lower(t, l, 0, l->n, w0, 0, 0);
        if (unbounded_hi)
            w->b = l->n;
        else if (w1 > w0 || unbounded_lo)
            w->b = lower(t, l, w->a, l->n, w1, 0, 0);
        else /* w1 == w0: the instants at w0 */
            w->b = lower(t, l, w->a, l->n, w0, 1, w0 + 1);
        if (!unbounded_lo && w->a > 0) {
            int err = straddlers(t, l, w->a, w0, w);
            if (err) {
                W->n++;
                wins_free(W);
                return err;
            }
        }
        size_t cnt = w->strad.n + (w->b - w->a);
        if (cnt) {
            W->total += cnt;
            W->n++;
        } else {
            tfb_vec_free(&w->strad);
        }
    }
    return 0;
}

/* The i-th span of a lane window: straddlers first, then the range. */
static const tfb_trace_span *win_span(const tfb_trace *t, const lane_win *w,
                                      size_t i)
{
    const tfb_trace_lane *l = &t->lanes[w->lane];
    return i < w->strad.n ? sp(t, l, w->strad.v[i])
                          : sp(t, l, w->a + (i - w->strad.n));
}

static size_t win_len(const lane_win *w)
{
    return w->strad.n + (w->b - w->a);
}

/* ------------------------------------------------------------------------
 * Merging: spans of a lane are grouped when they start in the same time
 * bin of width bw (bins aligned at the window start; spans that began
 * before the window count in bin 0), or when one starts before the
 * previous ones ended. bw = 0: no merging.
 * ---------------------------------------------------------------------- */
static int64_t bin_of(int64_t start, int64_t w0, int64_t bw)
{
    return start <= w0 ? 0 : (start - w0) / bw;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* The group that begins at window position p: returns its end position.
 * Jumps by binary search: every span that starts before
 * max(end of the group's bin, the group's latest end) joins. */
static size_t group_end(const tfb_trace *t, const lane_win *w, size_t p,
                        int64_t w0, int64_t bw)
{
    size_t len = win_len(w);
    if (bw == 0)
        return p + 1;
    const tfb_trace_lane *l = &t->lanes[w->lane];
    const tfb_trace_span *f = win_span(t, w, p);
    int64_t b = bin_of(f->start, w0, bw);
    int64_t bin_end = sat_add(w0, sat_mul(b + 1, bw));
    int64_t cur_end = f->end;
    size_t q = p + 1;
    /* The straddlers all start before w0: bin 0, one group with the
     * first of them. */
    if (p < w->strad.n) {
        for (size_t i = p + 1; i < w->strad.n; i++) {
            const tfb_trace_span *s = win_span(t, w, i);
            if (s->end > cur_end)
                cur_end = s->end;
        }
        q = w->strad.n;
    }
    /* Now q is in the range: lane-relative index w->a + (q - nstrad). */
    size_t k = w->a + (q - w->strad.n);
    int64_t limit = bin_end > cur_end ? bin_end : cur_end;
    for (;;) {
        size_t k2 = lower(t, l, k, w->b, limit, 0, 0);
        if (k2 > k) {
            int64_t m = rmax(t, l, k, k2);
            if (m > cur_end)
                cur_end = m;
            k = k2;
        }
        int64_t nl = bin_end > cur_end ? bin_end : cur_end;
        if (nl == limit || k >= w->b)
            break;
        limit = nl;
    }
    q = w->strad.n + (k - w->a);
    return q > len ? len : q;
}

/* Groups over all lanes at width bw; stops counting past cap. */
static size_t merged_count(const tfb_trace *t, const wins *W, int64_t w0,
                           int64_t bw, size_t cap)
{
    if (bw == 0)
        return W->total;
    size_t total = 0;
    for (size_t li = 0; li < W->n && total <= cap; li++) {
        const lane_win *w = &W->v[li];
        size_t len = win_len(w);
        for (size_t p = 0; p < len && total <= cap;) {
            p = group_end(t, w, p, w0, bw);
            total++;
        }
    }
    return total;
}

static const char *span_name(const tfb_trace *t, const tfb_trace_span *s)
{
    const tfb_trace_kinfo *k = tfb_trace_span_kinfo(t, s);
    return k ? tfb_trace_str(t, k->name, NULL) : NULL;
}

static int32_t span_name_id(const tfb_trace *t, const tfb_trace_span *s)
{
    const tfb_trace_kinfo *k = tfb_trace_span_kinfo(t, s);
    return k ? k->name : -1;
}

static void write_group(const tfb_trace *t, tfb_json *j, size_t lane_id,
                        const lane_win *w, size_t a, size_t b)
{
    /* Window positions [a, b) form one answer span. */
    const tfb_trace_span *f = win_span(t, w, a);
    int64_t start = f->start, end = f->end, busy = 0, cur = INT64_MIN;
    int64_t bytes = 0;
    int32_t fname = span_name_id(t, f);
    int same_kind = 1, same_name = 1;
    for (size_t k = a; k < b; k++) {
        const tfb_trace_span *s = win_span(t, w, k);
        if (s->end > end)
            end = s->end;
        int64_t from = s->start > cur ? s->start : cur;
        if (s->end > from)
            busy += s->end - from;
        if (s->end > cur)
            cur = s->end;
        bytes += tfb_trace_span_bytes(t, s);
        same_kind &= s->kind == f->kind;
        same_name &= span_name_id(t, s) == fname;
    }
    size_t count = b - a;
    tfb_json_object_begin(j);
    tfb_json_key(j, "lane");
    tfb_json_u64(j, lane_id);
    tfb_json_key(j, "kind");
    tfb_json_str(j, same_kind ? kind_name(f->kind) : "mixed");
    tfb_json_key(j, "name");
    if (same_kind && same_name && fname >= 0)
        tfb_json_str(j, tfb_trace_str(t, fname, ""));
    else if (count == 1 && f->kind == TFB_TRACE_MEMCPY)
        tfb_json_str(j, tfb_trace_copy_kind_label(f->copy_kind));
    else
        tfb_json_null(j);
    tfb_json_key(j, "start_ns");
    tfb_json_i64(j, start);
    tfb_json_key(j, "end_ns");
    tfb_json_i64(j, end);
    tfb_json_key(j, "count");
    tfb_json_u64(j, count);
    tfb_json_key(j, "busy_ns");
    tfb_json_i64(j, busy);
    if (f->kind == TFB_TRACE_MEMCPY || f->kind == TFB_TRACE_MEMSET) {
        tfb_json_key(j, "bytes");
        tfb_json_i64(j, bytes);
    }
    int64_t step = tfb_trace_span_step(t, f);
    if (count == 1 && step >= 0) {
        tfb_json_key(j, "step");
        tfb_json_i64(j, step);
    }
    if (count == 1 && f->correlation >= 0) {
        tfb_json_key(j, "correlation");
        tfb_json_i64(j, f->correlation);
        /* When its runtime call started on the host: the tail of the
         * page's launch -> kernel arrow. */
        const tfb_trace_call *c = tfb_trace_call_of(t, f->correlation);
        if (c) {
            tfb_json_key(j, "launch_ns");
            tfb_json_i64(j, c->start);
        }
    }
    tfb_json_object_end(j);
}

int tfb_gpu_timeline_json(const tfb_trace *t, int64_t w0, int64_t w1,
                          size_t max, tfb_json *j)
{
    if (!t || !j || max == 0 || w1 < w0)
        return TFB_EINVAL;
    if (w0 == INT64_MIN)
        w0 = t->nspans ? t->start_ns : 0;
    if (w1 == INT64_MAX)
        w1 = t->nspans ? t->end_ns : 0;
    if (w1 < w0)
        w1 = w0;
    wins W;
    int err = find_windows(t, w0, w1, 0, 0, &W);
    if (err)
        return err;
    /* The smallest bin width that leaves at most max spans (binary
     * search; a width past the window leaves one span per lane). */
    int64_t r = 0;
    size_t count = W.total;
    if (count > max) {
        int64_t lo = 1, hi = sat_add(w1 - w0, 1);
        if (hi < 1)
            hi = 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (merged_count(t, &W, w0, mid, max) <= max)
                hi = mid;
            else
                lo = mid + 1;
        }
        r = hi;
        count = merged_count(t, &W, w0, r, max);
    }
    int truncated = count > max; /* more lanes than max */
    tfb_json_object_begin(j);
    tfb_json_key(j, "start_ns");
    tfb_json_i64(j, w0);
    tfb_json_key(j, "end_ns");
    tfb_json_i64(j, w1);
    tfb_json_key(j, "total");
    tfb_json_u64(j, W.total);
    tfb_json_key(j, "merged");
    tfb_json_bool(j, r > 0);
    tfb_json_key(j, "resolution_ns");
    tfb_json_i64(j, r);
    tfb_json_key(j, "truncated");
    tfb_json_bool(j, truncated);
    tfb_json_key(j, "lanes");
    tfb_json_array_begin(j);
    for (size_t li = 0; li < W.n; li++) {
        const tfb_trace_lane *l = &t->lanes[W.v[li].lane];
        tfb_json_object_begin(j);
        tfb_json_key(j, "id");
        tfb_json_u64(j, li);
        tfb_json_key(j, "kind");
        tfb_json_str(j, l->host ? "host" : "gpu");
        tfb_json_key(j, "device");
        if (l->host)
            tfb_json_null(j);
        else
            tfb_json_i64(j, l->device);
        tfb_json_key(j, "stream");
        if (l->host)
            tfb_json_null(j);
        else
            tfb_json_i64(j, l->stream);
        char label[64];
        if (l->host)
            snprintf(label, sizeof label, "host %s", kind_name(l->host));
        else
            snprintf(label, sizeof label, "GPU %d stream %d", (int)l->device,
                     (int)l->stream);
        tfb_json_key(j, "label");
        tfb_json_str(j, label);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "spans");
    tfb_json_array_begin(j);
    size_t written = 0;
    for (size_t li = 0; li < W.n && written < max; li++) {
        const lane_win *w = &W.v[li];
        size_t len = win_len(w);
        for (size_t p = 0; p < len && written < max;) {
            size_t q = group_end(t, w, p, w0, r);
            write_group(t, j, li, w, p, q);
            written++;
            p = q;
        }
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
    wins_free(&W);
    return 0;
}

/* ------------------------------------------------------------------------
 * Chrome trace
 * ---------------------------------------------------------------------- */
#define HOST_PID 1000000 /* GPU pids are device ids, as Kineto writes */

/* µs with exactly three decimals: ns / 1000, no rounding error. */
static void us_value(tfb_json *j, int64_t ns)
{
    char buf[48];
    int neg = ns < 0;
    uint64_t a = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    int n = snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                     (unsigned long long)(a / 1000),
                     (unsigned long long)(a % 1000));
    tfb_json_raw(j, buf, (size_t)n);
}

static void meta(tfb_json *j, const char *what, int64_t pid, int64_t tid,
                 const char *name)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "ph");
    tfb_json_str(j, "M");
    tfb_json_key(j, "name");
    tfb_json_str(j, what);
    tfb_json_key(j, "pid");
    tfb_json_i64(j, pid);
    tfb_json_key(j, "tid");
    tfb_json_i64(j, tid);
    tfb_json_key(j, "args");
    tfb_json_object_begin(j);
    tfb_json_key(j, "name");
    tfb_json_str(j, name);
    tfb_json_object_end(j);
    tfb_json_object_end(j);
}

static void x_event(tfb_json *j, const char *cat, const char *name,
                    int64_t pid, int64_t tid, int64_t ts, int64_t dur)
{
    tfb_json_key(j, "ph");
    tfb_json_str(j, "X");
    tfb_json_key(j, "cat");
    tfb_json_str(j, cat);
    tfb_json_key(j, "name");
    tfb_json_str(j, name);
    tfb_json_key(j, "pid");
    tfb_json_i64(j, pid);
    tfb_json_key(j, "tid");
    tfb_json_i64(j, tid);
    tfb_json_key(j, "ts");
    us_value(j, ts);
    tfb_json_key(j, "dur");
    us_value(j, dur);
}

/* Events of the window that start before T: straddlers, range spans that
 * start before T, calls in [c0, T). */
static size_t events_before(const tfb_trace *t, const wins *W, size_t c0,
                            size_t c1, int64_t T)
{
    size_t n = 0;
    for (size_t i = 0; i < W->n; i++) {
        const lane_win *w = &W->v[i];
        const tfb_trace_lane *l = &t->lanes[w->lane];
        n += w->strad.n + (lower(t, l, w->a, w->b, T, 0, 0) - w->a);
    }
    size_t ce = tfb_trace_calls_from(t, T);
    if (ce > c1)
        ce = c1;
    return n + (ce > c0 ? ce - c0 : 0);
}

/* A kernel's launch in its event's args (zeros when the trace has none). */
static const tfb_json_field kinfo_fields[] = {
    TFB_JSON_FIELD(tfb_trace_kinfo, grid, INT3),
    TFB_JSON_FIELD(tfb_trace_kinfo, block, INT3),
    TFB_JSON_FIELD_AS("registers per thread", tfb_trace_kinfo, registers, INT),
    TFB_JSON_FIELD_AS("shared memory", tfb_trace_kinfo, shared_mem, INT),
};

static void span_event(const tfb_trace *t, tfb_json *j,
                       const tfb_trace_span *s, int64_t base)
{
    char nm[64];
    int32_t device = tfb_trace_span_device(t, s);
    int32_t stream = tfb_trace_span_stream(t, s);
    const tfb_trace_kinfo *ki = tfb_trace_span_kinfo(t, s);
    tfb_json_object_begin(j);
    switch (s->kind) {
    case TFB_TRACE_KERNEL: {
        const char *name = span_name(t, s);
        x_event(j, "kernel", name ? name : "<unknown>", device, stream,
                s->start - base, s->end - s->start);
        break;
    }
    case TFB_TRACE_MEMCPY:
        snprintf(nm, sizeof nm, "Memcpy %s",
                 tfb_trace_copy_kind_label(s->copy_kind));
        x_event(j, "gpu_memcpy", nm, device, stream, s->start - base,
                s->end - s->start);
        break;
    case TFB_TRACE_MEMSET:
        x_event(j, "gpu_memset", "Memset", device, stream, s->start - base,
                s->end - s->start);
        break;
    default:
        snprintf(nm, sizeof nm, "%s %lld", kind_name(s->kind),
                 (long long)tfb_trace_span_step(t, s));
        x_event(j, "user_annotation", nm, HOST_PID,
                s->kind == TFB_TRACE_HOST_STEP ? 0 : 1, s->start - base,
                s->end - s->start);
        break;
    }
    tfb_json_key(j, "args");
    tfb_json_object_begin(j);
    if (s->kind <= TFB_TRACE_MEMSET) {
        tfb_json_key(j, "device");
        tfb_json_i64(j, device);
        tfb_json_key(j, "stream");
        tfb_json_i64(j, stream);
        if (s->correlation >= 0) {
            tfb_json_key(j, "correlation");
            tfb_json_i64(j, s->correlation);
        }
    }
    if (s->kind == TFB_TRACE_KERNEL) {
        static const tfb_trace_kinfo none;
        TFB_JSON_FIELDS(j, ki ? ki : &none, kinfo_fields);
    } else if (s->kind == TFB_TRACE_MEMCPY || s->kind == TFB_TRACE_MEMSET) {
        tfb_json_key(j, "bytes");
        tfb_json_i64(j, tfb_trace_span_bytes(t, s));
    } else {
        tfb_json_key(j, "step");
        tfb_json_i64(j, tfb_trace_span_step(t, s));
    }
    tfb_json_object_end(j);
    tfb_json_object_end(j);
    /* Flow arrow from the launch call to its kernel (Kineto's ac2g). */
    const tfb_trace_call *c = s->kind == TFB_TRACE_KERNEL
                                  ? tfb_trace_call_of(t, s->correlation)
                                  : NULL;
    if (!c)
        return;
    for (int end = 0; end < 2; end++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "ph");
        tfb_json_str(j, end ? "f" : "s");
        if (end) {
            tfb_json_key(j, "bp");
            tfb_json_str(j, "e");
        }
        tfb_json_key(j, "cat");
        tfb_json_str(j, "ac2g");
        tfb_json_key(j, "name");
        tfb_json_str(j, "ac2g");
        tfb_json_key(j, "id");
        tfb_json_i64(j, s->correlation);
        tfb_json_key(j, "pid");
        tfb_json_i64(j, end ? device : HOST_PID);
        tfb_json_key(j, "tid");
        tfb_json_i64(j, end ? stream : 2);
        tfb_json_key(j, "ts");
        us_value(j, (end ? s->start : c->start) - base);
        tfb_json_object_end(j);
    }
}

int tfb_gpu_chrome_trace_json(const tfb_trace *t, int64_t w0, int64_t w1,
                              size_t max_events, tfb_json *j)
{
    if (!t || !j || w1 < w0 || max_events == 0)
        return TFB_EINVAL;
    int lo_open = w0 == INT64_MIN, hi_open = w1 == INT64_MAX;
    wins W;
    int err = find_windows(t, w0, w1, lo_open, hi_open, &W);
    if (err)
        return err;
    size_t c0 = lo_open ? 0 : tfb_trace_calls_from(t, w0);
    size_t c1 = hi_open ? t->ncalls : tfb_trace_calls_from(t, w1);
    if (c1 < c0)
        c1 = c0;
    size_t total = W.total + (c1 - c0);
    /* Past the budget: the latest cut time T that keeps the events
     * starting before it within max_events. */
    int truncated = total > max_events;
    int64_t cut = INT64_MAX;
    if (truncated) {
        int64_t lo = lo_open ? t->first_ns : w0;
        int64_t hi = hi_open ? (t->end_ns > lo ? t->end_ns : lo) : w1;
        if (t->ncalls && hi_open && t->calls[t->ncalls - 1].start >= hi)
            hi = t->calls[t->ncalls - 1].start + 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2 + 1;
            if (events_before(t, &W, c0, c1, mid) <= max_events)
                lo = mid;
            else
                hi = mid - 1;
        }
        cut = lo;
    }
    int64_t base = t->first_ns;
    tfb_json_object_begin(j);
    tfb_json_key(j, "displayTimeUnit");
    tfb_json_str(j, "ns");
    tfb_json_key(j, "traceEvents");
    tfb_json_array_begin(j);
    meta(j, "process_name", HOST_PID, 0, "Host");
    meta(j, "thread_name", HOST_PID, 0, "steps");
    meta(j, "thread_name", HOST_PID, 1, "input waits");
    meta(j, "thread_name", HOST_PID, 2, "CUDA API");
    for (size_t i = 0; i < t->ndevices; i++) {
        char nm[256];
        snprintf(nm, sizeof nm, "GPU %d %s", (int)t->devices[i].id,
                 tfb_trace_str(t, t->devices[i].name, ""));
        meta(j, "process_name", t->devices[i].id, 0, nm);
    }
    /* Spans lane by lane (straddlers, then the range up to the cut), then
     * the calls; a hard stop at max_events whatever the ties at the cut. */
    size_t written = 0;
    for (size_t li = 0; li < W.n && written < max_events; li++) {
        const lane_win *w = &W.v[li];
        size_t len = win_len(w);
        for (size_t p = 0; p < len && written < max_events; p++) {
            const tfb_trace_span *s = win_span(t, w, p);
            if (p >= w->strad.n && s->start >= cut)
                break;
            span_event(t, j, s, base);
            written++;
        }
    }
    for (size_t i = c0; i < c1 && written < max_events; i++) {
        const tfb_trace_call *c = &t->calls[i];
        if (c->start >= cut)
            break;
        tfb_json_object_begin(j);
        x_event(j, "cuda_runtime", tfb_trace_str(t, c->name, "<api>"), HOST_PID,
                2, c->start - base, c->end - c->start);
        tfb_json_key(j, "args");
        tfb_json_object_begin(j);
        tfb_json_key(j, "correlation");
        tfb_json_i64(j, c->correlation);
        tfb_json_object_end(j);
        tfb_json_object_end(j);
        written++;
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "otherData");
    tfb_json_object_begin(j);
    tfb_json_key(j, "base_time_ns");
    tfb_json_i64(j, base);
    tfb_json_key(j, "generator");
    tfb_json_str(j, "tfboard");
    tfb_json_key(j, "truncated");
    tfb_json_bool(j, written < total);
    tfb_json_key(j, "events_total");
    tfb_json_u64(j, total);
    tfb_json_key(j, "events");
    tfb_json_u64(j, written);
    if (written < total) {
        tfb_json_key(j, "cut_at_ns");
        tfb_json_i64(j, cut);
    }
    tfb_json_object_end(j);
    tfb_json_object_end(j);
    wins_free(&W);
    return 0;
}
