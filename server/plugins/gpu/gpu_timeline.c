/*
 * gpu_timeline.c - the zoomable timeline (spans in a window, merged per
 * lane so an answer stays small at any zoom) and the Chrome trace JSON
 * export that Perfetto opens.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_analysis.h"

static const char *kind_name(int k)
{
    switch (k) {
    case TFB_GPU_KERNEL: return "kernel";
    case TFB_GPU_MEMCPY: return "memcpy";
    case TFB_GPU_MEMSET: return "memset";
    case TFB_GPU_HOST_STEP: return "step";
    case TFB_GPU_HOST_INPUT: return "input";
    default: return "other";
    }
}

/* ------------------------------------------------------------------------
 * Lanes: one per (device, stream); host steps and host input waits get a
 * lane each.
 * ---------------------------------------------------------------------- */
typedef struct lane {
    int host;       /* 0 = GPU stream, else the host span kind */
    int32_t device, stream;
    size_t *idx;    /* spans in the window, by start */
    size_t n, cap;
} lane;

typedef struct lanes {
    lane *v;
    size_t n, cap;
} lanes;

static lane *lane_of(lanes *L, const tfb_gpu_span *s)
{
    int host = s->kind == TFB_GPU_HOST_STEP || s->kind == TFB_GPU_HOST_INPUT
                   ? s->kind
                   : 0;
    for (size_t i = 0; i < L->n; i++) {
        lane *l = &L->v[i];
        if (l->host == host &&
            (host || (l->device == s->device && l->stream == s->stream)))
            return l;
    }
    if (L->n == L->cap) {
        size_t nc = L->cap ? L->cap * 2 : 16;
        lane *nv = realloc(L->v, nc * sizeof *nv);
        if (!nv)
            return NULL;
        L->v = nv;
        L->cap = nc;
    }
    lane *l = &L->v[L->n++];
    memset(l, 0, sizeof *l);
    l->host = host;
    l->device = host ? -1 : s->device;
    l->stream = host ? -1 : s->stream;
    return l;
}

static int lane_push(lane *l, size_t i)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        size_t *nv = realloc(l->idx, nc * sizeof *nv);
        if (!nv)
            return TFB_ENOMEM;
        l->idx = nv;
        l->cap = nc;
    }
    l->idx[l->n++] = i;
    return 0;
}

static int cmp_lane(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return (x->stream > y->stream) - (x->stream < y->stream);
}

static void lanes_free(lanes *L)
{
    for (size_t i = 0; i < L->n; i++)
        free(L->v[i].idx);
    free(L->v);
}

/* Merging: spans of a lane are grouped when they start in the same time
 * bin of width bw (bins aligned at the window start; spans that began
 * before the window count in bin 0), or when one starts before the
 * previous ones ended. bw = 0: no merging. */
static int64_t bin_of(int64_t start, int64_t w0, int64_t bw)
{
    return start <= w0 ? 0 : (start - w0) / bw;
}

static size_t merged_count(const tfb_gpu_trace *t, const lanes *L, int64_t w0,
                           int64_t bw)
{
    size_t total = 0;
    for (size_t li = 0; li < L->n; li++) {
        const lane *l = &L->v[li];
        if (!l->n)
            continue;
        if (bw == 0) {
            total += l->n;
            continue;
        }
        total++;
        const tfb_gpu_span *f = &t->spans[l->idx[0]];
        int64_t gb = bin_of(f->start, w0, bw), cur_end = f->end;
        for (size_t k = 1; k < l->n; k++) {
            const tfb_gpu_span *s = &t->spans[l->idx[k]];
            int64_t b = bin_of(s->start, w0, bw);
            if (b != gb && s->start >= cur_end) {
                total++;
                gb = b;
                cur_end = s->end;
            } else if (s->end > cur_end) {
                cur_end = s->end;
            }
        }
    }
    return total;
}

static void write_group(const tfb_gpu_trace *t, tfb_json *j, size_t lane_id,
                        const lane *l, size_t a, size_t b)
{
    /* Spans l->idx[a..b) form one answer span. */
    const tfb_gpu_span *f = &t->spans[l->idx[a]];
    int64_t start = f->start, end = f->end, busy = 0, cur = INT64_MIN;
    int64_t bytes = 0;
    int same_kind = 1, same_name = 1;
    for (size_t k = a; k < b; k++) {
        const tfb_gpu_span *s = &t->spans[l->idx[k]];
        if (s->end > end)
            end = s->end;
        int64_t from = s->start > cur ? s->start : cur;
        if (s->end > from)
            busy += s->end - from;
        if (s->end > cur)
            cur = s->end;
        bytes += s->bytes;
        same_kind &= s->kind == f->kind;
        same_name &= s->name == f->name;
    }
    size_t count = b - a;
    tfb_json_object_begin(j);
    tfb_json_key(j, "lane");
    tfb_json_u64(j, lane_id);
    tfb_json_key(j, "kind");
    tfb_json_str(j, same_kind ? kind_name(f->kind) : "mixed");
    tfb_json_key(j, "name");
    if (same_kind && same_name && f->name >= 0)
        tfb_json_str(j, tfb_gpu_str(t, f->name, ""));
    else if (count == 1 && f->kind == TFB_GPU_MEMCPY)
        tfb_json_str(j, tfb_gpu_copy_kind_label(f->copy_kind));
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
    if (f->kind == TFB_GPU_MEMCPY || f->kind == TFB_GPU_MEMSET) {
        tfb_json_key(j, "bytes");
        tfb_json_i64(j, bytes);
    }
    if (count == 1 && f->step >= 0 &&
        (f->kind == TFB_GPU_HOST_STEP || f->kind == TFB_GPU_HOST_INPUT)) {
        tfb_json_key(j, "step");
        tfb_json_i64(j, f->step);
    }
    if (count == 1 && f->correlation >= 0) {
        tfb_json_key(j, "correlation");
        tfb_json_i64(j, f->correlation);
    }
    tfb_json_object_end(j);
}

int tfb_gpu_timeline_json(const tfb_gpu_trace *t, int64_t w0, int64_t w1,
                          size_t max, tfb_json *j)
{
    if (!t || !j || max == 0 || w1 < w0)
        return TFB_EINVAL;
    if (w0 == INT64_MIN || w1 == INT64_MAX) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = 0; i < t->nspans; i++) {
            if (t->spans[i].start < lo)
                lo = t->spans[i].start;
            if (t->spans[i].end > hi)
                hi = t->spans[i].end;
        }
        if (t->nspans == 0)
            lo = hi = 0;
        if (w0 == INT64_MIN)
            w0 = lo;
        if (w1 == INT64_MAX)
            w1 = hi;
        if (w1 < w0)
            w1 = w0;
    }
    lanes L = {0};
    int err = 0;
    size_t total = 0;
    for (size_t i = 0; i < t->nspans && !err; i++) {
        const tfb_gpu_span *s = &t->spans[i];
        if (s->start >= w1 && w1 > w0)
            break; /* sorted by start */
        /* Overlaps the window; an instant counts when it lies inside. */
        int in = s->end > s->start ? s->start < w1 && s->end > w0
                                   : s->start >= w0 && s->start <= w1;
        if (!in)
            continue;
        lane *l = lane_of(&L, s);
        err = l ? lane_push(l, i) : TFB_ENOMEM;
        total++;
    }
    if (err) {
        lanes_free(&L);
        return err;
    }
    if (L.n)
        qsort(L.v, L.n, sizeof *L.v, cmp_lane);
    /* The smallest bin width that leaves at most max spans (binary
     * search; a width past the window leaves one span per lane). */
    int64_t r = 0;
    size_t count = merged_count(t, &L, w0, 0);
    if (count > max) {
        int64_t lo = 1, hi = (w1 - w0) + 1;
        if (hi < 1)
            hi = 1;
        count = merged_count(t, &L, w0, hi);
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            size_t c = merged_count(t, &L, w0, mid);
            if (c <= max) {
                hi = mid;
                count = c;
            } else {
                lo = mid + 1;
            }
        }
        r = hi;
        count = merged_count(t, &L, w0, r);
    }
    int truncated = count > max; /* more lanes than max */
    tfb_json_object_begin(j);
    tfb_json_key(j, "start_ns");
    tfb_json_i64(j, w0);
    tfb_json_key(j, "end_ns");
    tfb_json_i64(j, w1);
    tfb_json_key(j, "total");
    tfb_json_u64(j, total);
    tfb_json_key(j, "merged");
    tfb_json_bool(j, r > 0);
    tfb_json_key(j, "resolution_ns");
    tfb_json_i64(j, r);
    tfb_json_key(j, "truncated");
    tfb_json_bool(j, truncated);
    tfb_json_key(j, "lanes");
    tfb_json_array_begin(j);
    for (size_t li = 0; li < L.n; li++) {
        const lane *l = &L.v[li];
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
    for (size_t li = 0; li < L.n && written < max; li++) {
        const lane *l = &L.v[li];
        if (!l->n)
            continue;
        size_t a = 0;
        const tfb_gpu_span *f = &t->spans[l->idx[0]];
        int64_t cur_end = f->end;
        int64_t gb = r ? bin_of(f->start, w0, r) : 0;
        for (size_t k = 1; k <= l->n && written < max; k++) {
            const tfb_gpu_span *s = k < l->n ? &t->spans[l->idx[k]] : NULL;
            int64_t b = s && r ? bin_of(s->start, w0, r) : 0;
            if (!s || r == 0 || (b != gb && s->start >= cur_end)) {
                write_group(t, j, li, l, a, k);
                written++;
                a = k;
                if (s) {
                    cur_end = s->end;
                    gb = b;
                }
            } else if (s->end > cur_end) {
                cur_end = s->end;
            }
        }
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
    lanes_free(&L);
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

static const tfb_gpu_call *call_of(const tfb_gpu_trace *t, int64_t corr)
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

int tfb_gpu_chrome_trace_json(const tfb_gpu_trace *t, tfb_json *j)
{
    if (!t || !j)
        return TFB_EINVAL;
    int64_t base = INT64_MAX;
    for (size_t i = 0; i < t->nspans; i++)
        if (t->spans[i].start < base)
            base = t->spans[i].start;
    for (size_t i = 0; i < t->ncalls; i++)
        if (t->calls[i].start < base)
            base = t->calls[i].start;
    if (base == INT64_MAX)
        base = 0;
    tfb_json_object_begin(j);
    tfb_json_key(j, "displayTimeUnit");
    tfb_json_str(j, "ns");
    tfb_json_key(j, "otherData");
    tfb_json_object_begin(j);
    tfb_json_key(j, "base_time_ns");
    tfb_json_i64(j, base);
    tfb_json_key(j, "generator");
    tfb_json_str(j, "tfboard");
    tfb_json_object_end(j);
    tfb_json_key(j, "traceEvents");
    tfb_json_array_begin(j);
    meta(j, "process_name", HOST_PID, 0, "Host");
    meta(j, "thread_name", HOST_PID, 0, "steps");
    meta(j, "thread_name", HOST_PID, 1, "input waits");
    meta(j, "thread_name", HOST_PID, 2, "CUDA API");
    for (size_t i = 0; i < t->ndevices; i++) {
        char nm[256];
        snprintf(nm, sizeof nm, "GPU %d %s", (int)t->devices[i].id,
                 tfb_gpu_str(t, t->devices[i].name, ""));
        meta(j, "process_name", t->devices[i].id, 0, nm);
    }
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_gpu_span *s = &t->spans[i];
        char nm[64];
        tfb_json_object_begin(j);
        switch (s->kind) {
        case TFB_GPU_KERNEL:
            x_event(j, "kernel", tfb_gpu_str(t, s->name, "<unknown>"),
                    s->device, s->stream, s->start - base, s->end - s->start);
            break;
        case TFB_GPU_MEMCPY:
            snprintf(nm, sizeof nm, "Memcpy %s",
                     tfb_gpu_copy_kind_label(s->copy_kind));
            x_event(j, "gpu_memcpy", nm, s->device, s->stream, s->start - base,
                    s->end - s->start);
            break;
        case TFB_GPU_MEMSET:
            x_event(j, "gpu_memset", "Memset", s->device, s->stream,
                    s->start - base, s->end - s->start);
            break;
        default:
            snprintf(nm, sizeof nm, "%s %lld", kind_name(s->kind),
                     (long long)s->step);
            x_event(j, "user_annotation", nm, HOST_PID,
                    s->kind == TFB_GPU_HOST_STEP ? 0 : 1, s->start - base,
                    s->end - s->start);
            break;
        }
        tfb_json_key(j, "args");
        tfb_json_object_begin(j);
        if (s->kind <= TFB_GPU_MEMSET) {
            tfb_json_key(j, "device");
            tfb_json_i64(j, s->device);
            tfb_json_key(j, "stream");
            tfb_json_i64(j, s->stream);
            if (s->correlation >= 0) {
                tfb_json_key(j, "correlation");
                tfb_json_i64(j, s->correlation);
            }
        }
        if (s->kind == TFB_GPU_KERNEL) {
            tfb_json_key(j, "grid");
            tfb_json_array_begin(j);
            for (int k = 0; k < 3; k++)
                tfb_json_i64(j, s->grid[k]);
            tfb_json_array_end(j);
            tfb_json_key(j, "block");
            tfb_json_array_begin(j);
            for (int k = 0; k < 3; k++)
                tfb_json_i64(j, s->block[k]);
            tfb_json_array_end(j);
            tfb_json_key(j, "registers per thread");
            tfb_json_i64(j, s->registers);
            tfb_json_key(j, "shared memory");
            tfb_json_i64(j, s->shared_mem);
        } else if (s->kind == TFB_GPU_MEMCPY || s->kind == TFB_GPU_MEMSET) {
            tfb_json_key(j, "bytes");
            tfb_json_i64(j, s->bytes);
        } else {
            tfb_json_key(j, "step");
            tfb_json_i64(j, s->step);
        }
        tfb_json_object_end(j);
        tfb_json_object_end(j);
        /* Flow arrow from the launch call to its kernel (Kineto's ac2g). */
        const tfb_gpu_call *c =
            s->kind == TFB_GPU_KERNEL ? call_of(t, s->correlation) : NULL;
        if (c) {
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
                tfb_json_i64(j, end ? s->device : HOST_PID);
                tfb_json_key(j, "tid");
                tfb_json_i64(j, end ? s->stream : 2);
                tfb_json_key(j, "ts");
                us_value(j, (end ? s->start : c->start) - base);
                tfb_json_object_end(j);
            }
        }
    }
    for (size_t i = 0; i < t->ncalls; i++) {
        const tfb_gpu_call *c = &t->calls[i];
        tfb_json_object_begin(j);
        x_event(j, "cuda_runtime", tfb_gpu_str(t, c->name, "<api>"), HOST_PID,
                2, c->start - base, c->end - c->start);
        tfb_json_key(j, "args");
        tfb_json_object_begin(j);
        tfb_json_key(j, "correlation");
        tfb_json_i64(j, c->correlation);
        tfb_json_object_end(j);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
    return 0;
}
