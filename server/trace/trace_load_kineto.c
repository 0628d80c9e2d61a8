/*
 * trace_load_kineto.c - the device side of a PyTorch profiler (Kineto)
 * trace, *.pt.trace.json or *.pt.trace.json.gz, into the GPU trace:
 * complete events ("ph":"X") of every category that holds device work
 * (the table below: CUDA and ROCm kernels, copies and memsets, MTIA's
 * mtia_ccp_events) and of the launch calls' categories (cuda_runtime,
 * cuda_driver, mtia_runtime, ...); host categories Kineto writes are
 * known and left to the host side; any other category is counted in a
 * note on the trace (tfb_trace.notes), never dropped without a word. The
 * top-level deviceProperties name the devices (name, SMs, memory,
 * compute capability) and distributedInfo gives the rank's place in the
 * job. NCCL kernels become the trace's collectives (trace.h,
 * tfb_trace_collective): with the call's args on the kernel (PyTorch
 * 2.x), else joined at the file's end to the record_param_comms op of
 * their External id or around their launch call. The file is read by the one Kineto scanner
 * (trace_kineto_scan.h),
 * which the host side (trace_host_kineto.c) shares; times are exact ns
 * plus baseTimeNanoseconds.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/trace_internal.h"
#include "base/vec.h"
#include "trace/trace_kineto_scan.h"

typedef tfb_trace_kineto_tok tok;
typedef tfb_trace_kineto_event ev;

/* Interns a string token, decoding escapes. */
static int32_t intern_tok(tfb_trace_builder *b, const tok *t)
{
    if (!t->has_esc)
        return tfb_trace_builder_str(b, t->s, t->len);
    char buf[256], *heap;
    size_t n;
    const char *o = tfb_trace_kineto_tok_text(t, buf, sizeof buf, &n, &heap);
    int32_t id = o ? tfb_trace_builder_str(b, o, n) : -1;
    free(heap);
    return id;
}

/* What the metadata callback keeps until the events are read: the devices
 * are known only then (a device the file lists but never used is not
 * one of the trace's). */
/* A record_param_comms op's args, kept until the file's NCCL kernels
 * without args of their own are joined to it by External id. */
typedef struct comm_op {
    int64_t ext;
    int64_t start, end; /* on the host, ns */
    uint64_t bytes;
    int32_t name, group_size;
} comm_op;

/* An NCCL kernel that carries no collective args: its row, less what the
 * op gives, and the External id to find the op by. */
typedef struct comm_pending {
    tfb_trace_collective c;
    int64_t ext;
    int64_t corr; /* the file's correlation id of its launch, -1 none */
} comm_pending;

typedef struct load_ctx {
    tfb_trace_builder *b;
    tfb_trace_device props[TFB_TRACE_KINETO_MAX_DEVPROPS];
    size_t nprops;
    /* this file's collectives to join (each at most
     * TFB_TRACE_MAX_COLLECTIVES: one per NCCL kernel) */
    TFB_VEC(comm_op) ops;
    TFB_VEC(comm_pending) pending;
} load_ctx;

/* ------------------------------------------------------------------------
 * Collectives: PyTorch's args of a c10d call, on its record_param_comms
 * op and (PyTorch 2.x) on its NCCL kernel
 * ---------------------------------------------------------------------- */

/* Bytes of one element of a dtype as PyTorch names it in the args (c10's
 * ScalarType names, "Float", "BFloat16"...; torch's "torch.float32" and
 * short spellings too); 0 when unknown. */
static uint64_t dtype_size(const tok *t)
{
    static const struct {
        const char *name;
        uint8_t size;
    } SIZES[] = {
        {"float", 4},          {"float32", 4},       {"bfloat16", 2},
        {"half", 2},           {"float16", 2},       {"double", 8},
        {"float64", 8},        {"int", 4},           {"int32", 4},
        {"long", 8},           {"int64", 8},         {"short", 2},
        {"int16", 2},          {"char", 1},          {"int8", 1},
        {"byte", 1},           {"uint8", 1},         {"bool", 1},
        {"uint16", 2},         {"uint32", 4},        {"uint64", 8},
        {"float8_e4m3fn", 1},  {"float8_e5m2", 1},   {"float8_e4m3fnuz", 1},
        {"float8_e5m2fnuz", 1}, {"float8_e8m0fnu", 1}, {"complexhalf", 4},
        {"complexfloat", 8},   {"complexdouble", 16},
    };
    if (!t->s || !t->is_str || t->has_esc)
        return 0;
    tok v = *t;
    if (v.len > 6 && memcmp(v.s, "torch.", 6) == 0) {
        v.s += 6;
        v.len -= 6;
    }
    for (size_t i = 0; i < sizeof SIZES / sizeof *SIZES; i++)
        if (tfb_trace_kineto_tok_ieq(&v, SIZES[i].name))
            return SIZES[i].size;
    return 0;
}

/* max(in, out nelems) x the dtype's size; 0 (unknown) for a missing or
 * negative count, an unknown dtype, or past TFB_TRACE_COLL_MAX_BYTES. */
static uint64_t coll_bytes(const ev *e)
{
    int64_t in = tfb_trace_kineto_tok_i64(&e->a_in_nelems, -1);
    int64_t out = tfb_trace_kineto_tok_i64(&e->a_out_nelems, -1);
    int64_t m = in > out ? in : out;
    uint64_t size = dtype_size(&e->a_dtype);
    if (m < 0 || (in < 0 && e->a_in_nelems.s) ||
        (out < 0 && e->a_out_nelems.s) || !size)
        return 0;
    if ((uint64_t)m > TFB_TRACE_COLL_MAX_BYTES / size)
        return 0;
    return (uint64_t)m * size;
}

static int32_t group_size_of(const ev *e)
{
    int64_t g = tfb_trace_kineto_tok_i64(&e->a_group_size, 0);
    return g < 0 ? 0 : g > INT32_MAX ? INT32_MAX : (int32_t)g;
}

/* An NCCL (or RCCL) kernel by its name: ncclKernel_..., ncclDevKernel_...,
 * ncclAllReduceRingLLKernel_... */
static int is_nccl_kernel(const tok *name)
{
    static const char P[] = "nccl";
    if (!name->s || name->len < sizeof P - 1)
        return 0;
    for (size_t i = 0; i < sizeof P - 1; i++)
        if ((name->s[i] | 0x20) != P[i])
            return 0;
    return 1;
}

/* A host event that is PyTorch's record of a collective call: kept. */
static int add_comm_op(load_ctx *c, const ev *e, int64_t base_ns)
{
    int64_t ts, dur = 0;
    if (!e->a_coll.s || c->ops.n >= TFB_TRACE_MAX_COLLECTIVES ||
        !tfb_trace_kineto_us_to_ns(&e->ts, &ts) ||
        (e->dur.s && !tfb_trace_kineto_us_to_ns(&e->dur, &dur)) || dur < 0 ||
        __builtin_add_overflow(ts, base_ns, &ts) ||
        __builtin_add_overflow(ts, dur, &dur))
        return 0;
    comm_op o = {tfb_trace_kineto_tok_i64(&e->a_ext_id, -1), ts, dur,
                 coll_bytes(e), intern_tok(c->b, &e->a_coll),
                 group_size_of(e)};
    if (o.name < 0)
        return TFB_ENOMEM;
    return tfb_vec_push(&c->ops, o) < 0 ? TFB_ENOMEM : 0;
}

/* A kernel: a collective row when it carries the call's args, pending (to
 * join to its op) when it is an NCCL kernel without them. */
static int add_comm_kernel(load_ctx *c, const ev *e,
                           const tfb_trace_span_in *s)
{
    tfb_trace_collective r = {s->start, s->end, 0, -1, 0, s->device, 0};
    if (e->a_coll.s) {
        r.name = intern_tok(c->b, &e->a_coll);
        if (r.name < 0)
            return TFB_ENOMEM;
        r.bytes = coll_bytes(e);
        r.group_size = group_size_of(e);
        return tfb_trace_builder_collective(c->b, &r);
    }
    if (!is_nccl_kernel(&e->name))
        return 0;
    if (c->pending.n >= TFB_TRACE_MAX_COLLECTIVES) {
        tfb_trace_builder_colls_unmatched(c->b, 1);
        return 0;
    }
    comm_pending p = {r, tfb_trace_kineto_tok_i64(&e->a_ext_id, -1),
                      s->correlation};
    return tfb_vec_push(&c->pending, p) < 0 ? TFB_ENOMEM : 0;
}

static int cmp_op(const void *a, const void *b)
{
    const comm_op *x = a, *y = b;
    return (x->ext > y->ext) - (x->ext < y->ext);
}

static int cmp_op_start(const void *a, const void *b)
{
    const comm_op *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

typedef struct launch {
    int64_t corr, start;
} launch;

static int cmp_launch(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

/* The op around the launch of kernel p: its launch call (the runtime call
 * of the same correlation id, in l: n sorted by id) started inside it.
 * ops: sorted by start; record_param_comms ops do not nest, so the last
 * one starting at or before the launch is the only candidate. */
static const comm_op *op_around_launch(const comm_pending *p,
                                       const launch *l, size_t n,
                                       const comm_op *ops, size_t nops)
{
    if (p->corr < 0 || !n || !nops)
        return NULL;
    launch key = {p->corr, 0};
    const launch *k = bsearch(&key, l, n, sizeof key, cmp_launch);
    if (!k)
        return NULL;
    size_t lo = 0, hi = nops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ops[mid].start <= k->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && ops[lo - 1].end >= k->start ? &ops[lo - 1] : NULL;
}

/* The file's launch calls by correlation id (its own ids), malloc'd;
 * NULL with *n 0 when none or out of memory (no join then). */
static launch *file_launches(tfb_trace_builder *b, size_t *n)
{
    int64_t base;
    const tfb_trace_call *calls = tfb_trace_builder_file_calls(b, n, &base);
    launch *l = *n ? malloc(*n * sizeof *l) : NULL;
    if (!l) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        l[i] = (launch){calls[i].correlation - base, calls[i].start};
    qsort(l, *n, sizeof *l, cmp_launch);
    return l;
}

/* The file's NCCL kernels without args, each joined to its op: the
 * record_param_comms op with the kernel's External id (the op active at
 * the launch), else the one its launch call (same correlation id: what
 * the ac2g flow draws) ran inside, when the kernel's External id is an
 * enclosing op's. */
static int join_pending(load_ctx *c)
{
    int rc = 0;
    if (!c->pending.n)
        return 0;
    comm_op *by_start = NULL;
    launch *l = NULL;
    size_t nl = 0;
    if (c->ops.n) {
        by_start = malloc(c->ops.n * sizeof *by_start);
        if (!by_start)
            return TFB_ENOMEM;
        memcpy(by_start, c->ops.v, c->ops.n * sizeof *by_start);
        qsort(by_start, c->ops.n, sizeof *by_start, cmp_op_start);
        qsort(c->ops.v, c->ops.n, sizeof *c->ops.v, cmp_op);
        l = file_launches(c->b, &nl);
    }
    size_t unmatched = 0;
    for (size_t i = 0; i < c->pending.n && !rc; i++) {
        comm_pending *p = &c->pending.v[i];
        comm_op key = {p->ext, 0, 0, 0, 0, 0};
        const comm_op *o =
            c->ops.n && p->ext >= 0
                ? bsearch(&key, c->ops.v, c->ops.n, sizeof key, cmp_op)
                : NULL;
        if (!o)
            o = op_around_launch(p, l, nl, by_start, c->ops.n);
        if (!o) {
            unmatched++;
            continue;
        }
        p->c.name = o->name;
        p->c.bytes = o->bytes;
        p->c.group_size = o->group_size;
        rc = tfb_trace_builder_collective(c->b, &p->c);
    }
    free(by_start);
    free(l);
    tfb_trace_builder_colls_unmatched(c->b, unmatched);
    return rc;
}

/* Kineto's categories (libkineto ActivityType names, lower case; the
 * match ignores case): what each is to the device side. */
enum { CAT_HOST = -2, CAT_CALL = -1 }; /* else a tfb_trace_kind */
static const struct {
    const char *name;
    int kind;
} CATEGORIES[] = {
    /* the most frequent first: each event walks the table */
    {"kernel", TFB_TRACE_KERNEL},
    {"cpu_op", CAT_HOST},
    {"cuda_runtime", CAT_CALL},
    {"python_function", CAT_HOST},
    {"user_annotation", CAT_HOST},
    {"gpu_memcpy", TFB_TRACE_MEMCPY},
    {"gpu_memset", TFB_TRACE_MEMSET},
    {"gpu_user_annotation", CAT_HOST},
    {"cuda_driver", CAT_CALL},
    /* device work */
    {"mtia_ccp_events", TFB_TRACE_KERNEL}, /* MTIA's on-device work */
    {"memcpy", TFB_TRACE_MEMCPY},
    {"memset", TFB_TRACE_MEMSET},
    /* launch calls, for HTA's host wait */
    {"runtime", CAT_CALL},
    {"driver", CAT_CALL},
    {"mtia_runtime", CAT_CALL},
    {"xpu_runtime", CAT_CALL},
    {"xpu_driver", CAT_CALL},
    {"privateuse1_runtime", CAT_CALL},
    {"privateuse1_driver", CAT_CALL},
    /* host side, annotations, counters, flows: not device work */
    {"cpu_instant_event", CAT_HOST},
    {"overhead", CAT_HOST},
    {"external_correlation", CAT_HOST},
    {"cuda_sync", CAT_HOST},
    {"cuda_event", CAT_HOST},
    {"cuda_profiler_range", CAT_HOST},
    {"glow_runtime", CAT_HOST},
    {"hpu_op", CAT_HOST},
    {"collective_comm", CAT_HOST},
    {"mtia_insight", CAT_HOST},
    {"mtia_workloadd", CAT_HOST},
    {"mtia_counters", CAT_HOST},
    {"trace", CAT_HOST},
    {"ac2g", CAT_HOST},
    {"fwdbwd", CAT_HOST},
};

/* The kind of category t; 1 and *kind when known. */
static int category_kind(const tok *t, int *kind)
{
    for (size_t i = 0; i < sizeof CATEGORIES / sizeof *CATEGORIES; i++)
        if (tfb_trace_kineto_tok_ieq(t, CATEGORIES[i].name)) {
            *kind = CATEGORIES[i].kind;
            return 1;
        }
    return 0;
}

/* One event (the scanner's callback; ctx is the builder). */
static int add_event(void *ctx, const ev *e, int64_t base_ns, int legacy)
{
    (void)legacy; /* not accepted: a bare array has no device events */
    load_ctx *lc = ctx;
    tfb_trace_builder *b = lc->b;
    if (!tfb_trace_kineto_tok_is(&e->ph, "X"))
        return 0;
    int kind;
    if (!e->cat.s || !e->cat.len)
        return 0; /* no category: nothing to name */
    if (!category_kind(&e->cat, &kind)) {
        /* Named as written (escapes and all: a name, not markup), its
         * first TFB_TRACE_NOTE_CATEGORY_MAX bytes. */
        return tfb_trace_builder_note(b, e->cat.s,
                                      e->cat.len < TFB_TRACE_NOTE_CATEGORY_MAX
                                          ? e->cat.len
                                          : TFB_TRACE_NOTE_CATEGORY_MAX);
    }
    if (kind == CAT_HOST)
        return tfb_trace_kineto_tok_is(&e->name, "record_param_comms")
                   ? add_comm_op(lc, e, base_ns)
                   : 0;
    int64_t ts, dur = 0;
    if (!tfb_trace_kineto_us_to_ns(&e->ts, &ts))
        return 0;
    if (e->dur.s && !tfb_trace_kineto_us_to_ns(&e->dur, &dur))
        return 0;
    int64_t end;
    if (dur < 0 || __builtin_add_overflow(ts, base_ns, &ts) ||
        __builtin_add_overflow(ts, dur, &end))
        return 0; /* nonsense times: skipped */
    int64_t corr = tfb_trace_kineto_tok_i64(&e->a_corr, -1);
    if (kind == CAT_CALL) {
        tfb_trace_call c;
        c.start = ts;
        c.end = end;
        c.correlation = corr;
        c.name = e->name.s ? intern_tok(b, &e->name) : -1;
        if (e->name.s && c.name < 0)
            return TFB_ENOMEM;
        return tfb_trace_builder_call(b, &c);
    }
    tfb_trace_span_in s;
    memset(&s, 0, sizeof s);
    s.kind = (uint8_t)kind;
    s.start = ts;
    s.end = end;
    s.correlation = corr;
    s.device = (int32_t)tfb_trace_kineto_tok_i64(
        &e->a_dev, tfb_trace_kineto_tok_i64(&e->pid, 0));
    s.stream = (int32_t)tfb_trace_kineto_tok_i64(
        &e->a_stream, tfb_trace_kineto_tok_i64(&e->tid, 0));
    s.step = -1;
    s.name = -1;
    if (kind == TFB_TRACE_KERNEL) {
        s.name = e->name.s ? intern_tok(b, &e->name) : -1;
        if (e->name.s && s.name < 0)
            return TFB_ENOMEM;
        for (int i = 0; i < 3; i++) {
            s.grid[i] = (int32_t)e->grid[i];
            s.block[i] = (int32_t)e->block[i];
        }
        s.registers = (int32_t)tfb_trace_kineto_tok_i64(&e->a_regs, 0);
        s.shared_mem = (int32_t)tfb_trace_kineto_tok_i64(&e->a_smem, 0);
        int rc = add_comm_kernel(lc, e, &s);
        if (rc < 0)
            return rc;
    } else {
        s.bytes = tfb_trace_kineto_tok_i64(&e->a_bytes, 0);
        if (kind == TFB_TRACE_MEMCPY && e->name.s)
            s.copy_kind =
                (uint8_t)tfb_trace_copy_kind_from_text(e->name.s, e->name.len);
    }
    return tfb_trace_builder_span(b, &s);
}

/* ------------------------------------------------------------------------
 * The file's metadata
 * ---------------------------------------------------------------------- */

static int32_t clamp32(int64_t v)
{
    return v < 0 ? -1 : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* A process group's ranks as text: runs of consecutive ranks as "a-b",
 * comma separated, cut after TFB_TRACE_PG_RANKS_TEXT bytes with "...". */
static void ranks_text(const char *s, size_t len, char *out, size_t cap)
{
    tfb_trace_kineto_pos p = {s, s + len, 0};
    size_t o = 0;
    out[0] = '\0';
    if (!tfb_trace_kineto_eat(&p, '[') || tfb_trace_kineto_eat(&p, ']'))
        return;
    int64_t lo = -1, hi = -1;
    int cut = 0;
    for (;;) {
        tok v;
        tfb_trace_kineto_skip(&p, &v);
        int64_t r = v.s && !v.is_str ? tfb_trace_kineto_tok_i64(&v, -1) : -1;
        int more = !p.bad && tfb_trace_kineto_eat(&p, ',');
        if (r >= 0 && lo >= 0 && r == hi + 1) {
            hi = r;
        } else {
            if (lo >= 0 && !cut) {
                char run[48];
                int n = lo == hi ? snprintf(run, sizeof run, "%lld",
                                            (long long)lo)
                                 : snprintf(run, sizeof run, "%lld-%lld",
                                            (long long)lo, (long long)hi);
                if (o + (size_t)n + 5 >= cap) {
                    cut = 1;
                    snprintf(out + o, cap - o, "%s...", o ? "," : "");
                } else {
                    o += (size_t)snprintf(out + o, cap - o, "%s%s",
                                          o ? "," : "", run);
                }
            }
            lo = hi = r;
        }
        if (!more)
            break;
    }
    if (lo >= 0 && !cut) {
        char run[48];
        int n = lo == hi ? snprintf(run, sizeof run, "%lld", (long long)lo)
                         : snprintf(run, sizeof run, "%lld-%lld",
                                    (long long)lo, (long long)hi);
        if (o + (size_t)n + 2 >= cap)
            snprintf(out + o, cap - o, "%s...", o ? "," : "");
        else
            snprintf(out + o, cap - o, "%s%s", o ? "," : "", run);
    }
}

static int32_t intern_opt(tfb_trace_builder *b, const tok *t, int *err)
{
    if (!t->s)
        return -1;
    int32_t id = intern_tok(b, t);
    if (id < 0)
        *err = TFB_ENOMEM;
    return id;
}

static int add_meta(void *ctx, const tfb_trace_kineto_meta *m)
{
    load_ctx *c = ctx;
    int err = 0;
    for (size_t i = 0; i < m->ndev && !err; i++) {
        const tfb_trace_kineto_devprop *d = &m->dev[i];
        tfb_trace_device p = {clamp32(d->id), -1, clamp32(d->sms),
                              clamp32(d->major), clamp32(d->minor), 0,
                              d->total_mem};
        if (p.cc_major < 0)
            p.cc_minor = -1;
        p.name = intern_opt(c->b, &d->name, &err);
        c->props[c->nprops++] = p;
    }
    if (!m->has_dist || err)
        return err;
    tfb_trace_dist dist = {m->rank, m->world_size, m->pg_count, -1, 1};
    dist.backend = intern_opt(c->b, &m->backend, &err);
    tfb_trace_pg pgs[TFB_TRACE_MAX_PROCESS_GROUPS];
    for (size_t i = 0; i < m->npg && !err; i++) {
        const tfb_trace_kineto_pg *g = &m->pg[i];
        pgs[i].name = intern_opt(c->b, &g->name, &err);
        pgs[i].desc = intern_opt(c->b, &g->desc, &err);
        pgs[i].backend = intern_opt(c->b, &g->backend, &err);
        pgs[i].size = g->size;
        pgs[i].ranks = -1;
        if (g->ranks) {
            char text[TFB_TRACE_PG_RANKS_TEXT + 8];
            ranks_text(g->ranks, g->ranks_len, text, sizeof text);
            if (text[0]) {
                pgs[i].ranks = tfb_trace_builder_str(c->b, text,
                                                     strlen(text));
                if (pgs[i].ranks < 0)
                    err = TFB_ENOMEM;
            }
        }
    }
    return err ? err : tfb_trace_builder_dist(c->b, &dist, pgs, m->npg);
}

int tfb_trace_load_kineto(tfb_trace_builder *b, const char *path)
{
    load_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return TFB_ENOMEM;
    c->b = b;
    int rc = tfb_trace_kineto_scan_meta(path, 0, tfb_trace_builder_ctl(b),
                                        add_event, add_meta, c);
    /* The devices are known now: name those the file describes. */
    for (size_t i = 0; rc > 0 && i < c->nprops; i++)
        tfb_trace_builder_device_props(b, &c->props[i]);
    if (rc > 0) {
        int jr = join_pending(c);
        if (jr < 0)
            rc = jr;
    }
    tfb_vec_free(&c->ops);
    tfb_vec_free(&c->pending);
    free(c);
    return rc;
}
