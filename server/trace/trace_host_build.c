/*
 * trace_host_build.c - the builder of the host model (trace.h): the
 * loaders add spans per (pid, tid) thread; finishing makes each thread's
 * lanes (its NVTX ranges and marks; its ops and runtime calls), nests each
 * lane's spans into rows by a stack walk, computes self times, the op
 * totals and the extent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace/trace_internal.h"
#include "base/strtab.h"
#include "base/vec.h"

/* Nesting past this depth is drawn on the last row. */
#define MAX_DEPTH 255
/* Two lanes a thread; lane numbers are 16 bits. */
#define MAX_THREADS 16384
#define KEY_CHUNK 256

typedef struct thread_rec {
    int64_t pid, tid;
    int32_t name; /* string index, -1 when unnamed */
    int lane_ops, lane_ranges;
} thread_rec;

struct tfb_trace_host_builder {
    tfb_trace_load_ctl *ctl;
    TFB_VEC(tfb_trace_host_event) spans;
    TFB_VEC(thread_rec) threads;
    tfb_trace_strings strings;
    tfb_strtab tids;
    /* the tids table's keys ((pid, tid) pairs), in chunks that never
     * move */
    int64_t *tid_keys[MAX_THREADS / KEY_CHUNK];
    TFB_VEC(tfb_trace_host_probes) probes; /* per file */
    size_t file;
    size_t dropped; /* spans on threads past MAX_THREADS */
};

int tfb_trace_host_builder_new(tfb_trace_host_builder **out,
                               tfb_trace_load_ctl *ctl)
{
    tfb_trace_host_builder *b = calloc(1, sizeof *b);
    if (!b)
        return TFB_ENOMEM;
    b->ctl = ctl;
    *out = b;
    return 0;
}

tfb_trace_load_ctl *tfb_trace_host_builder_ctl(tfb_trace_host_builder *b)
{
    return b->ctl;
}

void tfb_trace_host_builder_free(tfb_trace_host_builder *b)
{
    if (!b)
        return;
    tfb_trace_strings_free(&b->strings);
    tfb_vec_free(&b->spans);
    tfb_vec_free(&b->threads);
    tfb_vec_free(&b->probes);
    tfb_strtab_free(&b->tids);
    for (size_t i = 0; i < MAX_THREADS / KEY_CHUNK; i++)
        free(b->tid_keys[i]);
    free(b);
}

void tfb_trace_host_builder_begin_file(tfb_trace_host_builder *b, size_t file)
{
    b->file = file;
}

int32_t tfb_trace_host_builder_str(tfb_trace_host_builder *b, const char *s,
                                   size_t len)
{
    return tfb_trace_strings_put(&b->strings, s, len);
}

/* The thread record of (pid, tid): its index, -1 on ENOMEM, -2 past
 * MAX_THREADS. */
static int thread_of(tfb_trace_host_builder *b, int64_t pid, int64_t tid)
{
    int64_t key[2] = {pid, tid};
    void *v = tfb_strtab_get(&b->tids, (const char *)key, sizeof key);
    if (v)
        return (int)((uintptr_t)v - 1);
    if (b->threads.n >= MAX_THREADS)
        return -2;
    size_t n = b->threads.n, c = n / KEY_CHUNK;
    if (!b->tid_keys[c] &&
        !(b->tid_keys[c] = malloc(KEY_CHUNK * sizeof key)))
        return -1;
    int64_t *k = b->tid_keys[c] + (n % KEY_CHUNK) * 2;
    k[0] = pid;
    k[1] = tid;
    thread_rec t = {pid, tid, -1, -1, -1};
    if (tfb_vec_push(&b->threads, t) < 0)
        return -1;
    if (tfb_strtab_put(&b->tids, (const char *)k, sizeof key,
                       (void *)(uintptr_t)b->threads.n) < 0) {
        b->threads.n--;
        return -1;
    }
    return (int)b->threads.n - 1;
}

int tfb_trace_host_builder_thread_name(tfb_trace_host_builder *b, int64_t pid,
                                       int64_t tid, int32_t name)
{
    int t = thread_of(b, pid, tid);
    if (t == -1)
        return TFB_ENOMEM;
    if (t >= 0)
        b->threads.v[t].name = name;
    return 0;
}

static int count_row(tfb_trace_host_builder *b)
{
    tfb_trace_load_ctl *c = b->ctl;
    if (!c)
        return 0;
    c->rows++;
    if (c->max_rows && c->rows > c->max_rows)
        return tfb_trace_load_ctl_fail(c, TFB_ETOOBIG,
                                       "the host events exceed the load "
                                       "budget (%llu rows)",
                                       (unsigned long long)c->max_rows);
    if ((c->rows & 0xffff) == 0 && tfb_trace_load_ctl_late(c))
        return tfb_trace_load_ctl_fail(c, TFB_ETOOBIG,
                                       "reading the host events took longer "
                                       "than the load budget");
    return 0;
}

/* Keeps the first TFB_TRACE_HOST_PROBES runtime calls of each file. */
static int add_probe(tfb_trace_host_builder *b, int64_t start, int64_t end,
                     int64_t corr)
{
    size_t f = b->file;
    while (b->probes.n <= f) {
        if (tfb_vec_need(&b->probes, b->probes.n + 1) < 0)
            return TFB_ENOMEM;
        b->probes.v[b->probes.n++].n = 0;
    }
    tfb_trace_host_probes *p = &b->probes.v[f];
    if (p->n < TFB_TRACE_HOST_PROBES)
        p->v[p->n++] = (tfb_trace_host_probe){start, end, corr};
    return 0;
}

int tfb_trace_host_builder_span(tfb_trace_host_builder *b, int64_t pid,
                                int64_t tid, int kind, int32_t name,
                                int64_t start, int64_t end,
                                int64_t correlation)
{
    int err = count_row(b);
    if (err)
        return err;
    if (end < start || name < 0 || b->file > UINT16_MAX)
        return 0;
    int t = thread_of(b, pid, tid);
    if (t == -1)
        return TFB_ENOMEM;
    if (t == -2) {
        b->dropped++;
        return 0;
    }
    if (kind == TFB_TRACE_HOST_RUNTIME && correlation >= 0 &&
        add_probe(b, start, end, correlation) < 0)
        return TFB_ENOMEM;
    /* lane holds the thread index until the lanes are made. */
    tfb_trace_host_event s = {
        .start = start,
        .end = end,
        .correlation = kind == TFB_TRACE_HOST_RUNTIME ? correlation : -1,
        .name = (uint32_t)name,
        .lane = (uint16_t)t,
        .file = (uint16_t)b->file,
        .kind = (uint8_t)kind};
    return tfb_vec_push(&b->spans, s) < 0 ? TFB_ENOMEM : 0;
}

/* ------------------------------------------------------------------------
 * Finishing
 * ---------------------------------------------------------------------- */
static int is_range(int kind)
{
    return kind == TFB_TRACE_HOST_RANGE || kind == TFB_TRACE_HOST_MARK;
}

static int cmp_span(const void *a, const void *b)
{
    const tfb_trace_host_event *x = a, *y = b;
    if (x->lane != y->lane)
        return x->lane < y->lane ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* the parent first */
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static int cmp_thread(const void *a, const void *b)
{
    const thread_rec *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_op_self(const void *a, const void *b)
{
    const tfb_trace_host_op_stat *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns < y->self_ns ? 1 : -1;
    return (x->name > y->name) - (x->name < y->name);
}

void tfb_trace_host_free(tfb_trace_host *h)
{
    if (!h)
        return;
    tfb_strv_free(h->strings, h->nstrings);
    free(h->spans);
    free(h->lanes);
    free(h->ops);
    free(h->probes);
    free(h);
}

/* Lanes: threads in (pid, tid) order, each its NVTX lane, then its CPU
 * lane, only where it has spans. Labels name the pid too when the trace
 * holds several processes. */
static int make_lanes(tfb_trace_host_builder *b, tfb_trace_host *h)
{
    size_t nt = b->threads.n;
    uint8_t *has = calloc(nt ? nt : 1, 2);
    thread_rec *sorted = malloc((nt ? nt : 1) * sizeof *sorted);
    int err = !has || !sorted ? TFB_ENOMEM : 0;
    for (size_t i = 0; !err && i < b->spans.n; i++)
        has[b->spans.v[i].lane * 2 + is_range(b->spans.v[i].kind)] = 1;
    size_t nl = 0;
    if (!err) {
        memcpy(sorted, b->threads.v, nt * sizeof *sorted);
        for (size_t i = 0; i < nt; i++)
            sorted[i].lane_ops = (int)i; /* the original index */
        qsort(sorted, nt, sizeof *sorted, cmp_thread);
        for (size_t i = 0; i < nt; i++)
            nl += has[sorted[i].lane_ops * 2] + has[sorted[i].lane_ops * 2 + 1];
        h->lanes = calloc(nl ? nl : 1, sizeof *h->lanes);
        if (!h->lanes)
            err = TFB_ENOMEM;
    }
    int several = 0;
    for (size_t i = 1; !err && i < nt; i++)
        several |= sorted[i].pid != sorted[0].pid;
    size_t li = 0;
    for (size_t i = 0; !err && i < nt; i++) {
        size_t orig = (size_t)sorted[i].lane_ops;
        thread_rec *t = &b->threads.v[orig];
        char who[88];
        int n = t->name >= 0
                    ? snprintf(who, sizeof who, "%.70s", b->strings.v[t->name])
                    : snprintf(who, sizeof who, "thread %lld",
                               (long long)t->tid);
        if (several && n > 0 && (size_t)n < sizeof who)
            snprintf(who + n, sizeof who - (size_t)n, " (pid %lld)",
                     (long long)t->pid);
        t->lane_ranges = t->lane_ops = -1;
        if (has[orig * 2 + 1]) {
            t->lane_ranges = (int)li;
            h->lanes[li].is_range = 1;
            snprintf(h->lanes[li++].label, sizeof h->lanes[0].label,
                     "NVTX %s", who);
        }
        if (has[orig * 2]) {
            t->lane_ops = (int)li;
            snprintf(h->lanes[li++].label, sizeof h->lanes[0].label, "CPU %s",
                     who);
        }
    }
    h->nlanes = nl;
    for (size_t i = 0; !err && i < b->spans.n; i++) {
        tfb_trace_host_event *s = &b->spans.v[i];
        thread_rec *t = &b->threads.v[s->lane];
        s->lane = (uint16_t)(is_range(s->kind) ? t->lane_ranges : t->lane_ops);
    }
    free(has);
    free(sorted);
    return err;
}

/* Rows and self times by a stack walk per lane; the extent; busy time. */
static void nest(tfb_trace_host *h)
{
    size_t stack[MAX_DEPTH + 1];
    size_t sp = 0;
    h->start_ns = h->n ? h->spans[0].start : 0;
    h->end_ns = h->start_ns;
    for (size_t i = 0; i < h->n; i++) {
        tfb_trace_host_event *s = &h->spans[i];
        if (i == 0 || s->lane != h->spans[i - 1].lane)
            sp = 0;
        while (sp > 0 && h->spans[stack[sp - 1]].end <= s->start)
            sp--;
        s->depth = (uint8_t)(sp < MAX_DEPTH ? sp : MAX_DEPTH);
        s->self_ns = s->end - s->start;
        if (sp > 0) {
            tfb_trace_host_event *p = &h->spans[stack[sp - 1]];
            int64_t e = s->end < p->end ? s->end : p->end;
            p->self_ns -= e - s->start;
        }
        if (sp < MAX_DEPTH + 1)
            stack[sp++] = i;
        if (s->depth + 1 > h->lanes[s->lane].depth)
            h->lanes[s->lane].depth = s->depth + 1;
        if (s->start < h->start_ns)
            h->start_ns = s->start;
        if (s->end > h->end_ns)
            h->end_ns = s->end;
        if (!is_range(s->kind) && s->depth == 0)
            h->busy_ns += s->end - s->start;
    }
}

/* Totals per op name (ops and runtime calls), most self time first. */
static int op_totals(tfb_trace_host *h)
{
    if (!h->nstrings)
        return 0;
    tfb_trace_host_op_stat *ops = calloc(h->nstrings, sizeof *ops);
    if (!ops)
        return TFB_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const tfb_trace_host_event *s = &h->spans[i];
        if (is_range(s->kind))
            continue;
        tfb_trace_host_op_stat *o = &ops[s->name];
        o->name = s->name;
        o->count++;
        o->total_ns += s->end - s->start;
        o->self_ns += s->self_ns;
    }
    size_t no = 0;
    for (size_t i = 0; i < h->nstrings; i++)
        if (ops[i].count)
            ops[no++] = ops[i];
    if (no > 1)
        qsort(ops, no, sizeof *ops, cmp_op_self);
    h->ops = ops;
    h->nops = no;
    return 0;
}

int tfb_trace_host_builder_finish(tfb_trace_host_builder *b,
                                  tfb_trace_host **out)
{
    *out = NULL;
    if (!b->spans.n) {
        tfb_trace_host_builder_free(b);
        return 0;
    }
    tfb_trace_host *h = calloc(1, sizeof *h);
    int err = h ? make_lanes(b, h) : TFB_ENOMEM;
    if (!err) {
        if (b->spans.n > 1)
            qsort(b->spans.v, b->spans.n, sizeof *b->spans.v, cmp_span);
        h->spans = b->spans.v;
        h->n = b->spans.n;
        h->strings = b->strings.v;
        h->nstrings = b->strings.n;
        h->probes = b->probes.v;
        h->nfiles = b->probes.n;
        /* handed over to h; the strings' table is not needed now */
        memset(&b->spans, 0, sizeof b->spans);
        tfb_strtab_free(&b->strings.tab);
        memset(&b->strings, 0, sizeof b->strings);
        memset(&b->probes, 0, sizeof b->probes);
        nest(h);
        err = op_totals(h);
    }
    tfb_trace_host_builder_free(b);
    if (err) {
        tfb_trace_host_free(h);
        return err;
    }
    h->refs = 1;
    *out = h;
    return 0;
}
