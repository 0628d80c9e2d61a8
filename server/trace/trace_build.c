/*
 * trace_build.c - the builder that the trace loaders fill: interned
 * strings and kernel descriptions, spans gathered per lane, runtime calls,
 * devices, correlation ids made unique across files, the load's budgets;
 * then sorting, the per-lane window index and the aggregates
 * (trace_aggregate.c) when the trace is finished, and freeing a trace.
 * The aggregates only read the trace (trace.c), never the builder, so the
 * calls go one way: build -> aggregate -> trace.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/deadline.h"
#include "base/hash.h"
#include "base/idxtab.h"
#include "base/str.h"
#include "base/strtab.h"
#include "trace/trace_internal.h"
#include "base/vec.h"

#define MAX_LANES 65535u
#define LANE_MEMO 16 /* a power of two */

typedef struct tmp_lane {
    int32_t device, stream;
    uint8_t host;
    TFB_VEC(tfb_trace_span) spans;
    size_t prefaulted; /* bytes of spans faulted in (trace_prefault.c) */
} tmp_lane;

/* The arrays grow in the builder and move into the trace when it is
 * finished (t holds the counters and the extent meanwhile). */
struct tfb_trace_builder {
    tfb_trace *t;
    tfb_trace_load_ctl *ctl;
    TFB_VEC(tfb_trace_call) calls;
    TFB_VEC(tfb_trace_device) devices; /* sorted by id */
    TFB_VEC(int64_t) values;
    tfb_trace_strings strings;
    /* kernel descriptions and their intern table: indexes into kinfo,
     * -1 = empty */
    TFB_VEC(tfb_trace_kinfo) kinfo;
    tfb_idxtab ktab;
    /* lanes while building, and their (host, device, stream) table */
    TFB_VEC(tmp_lane) lanes;
    tfb_idxtab ltab;
    int64_t corr_base;
    int64_t corr_max; /* largest raw id seen in the current file */
    size_t file_calls; /* calls.n when the current file began */
    /* Memos of the last answers of the per-row look-ups (10 M rows: the
     * hashing shows): the lane of a few (device, stream)s, by stream;
     * each name's last kernel description; the last device seen. */
    struct {
        int32_t device, stream, lane; /* lane -1: empty */
    } lane_memo[LANE_MEMO];
    TFB_VEC(int32_t) kinfo_memo; /* by name index + 1; -1: none */
    int32_t last_device;         /* INT32_MIN: none yet */
    /* Categories not understood (at most TFB_TRACE_MAX_NOTES) and the
     * distributedInfo's process groups (TFB_TRACE_MAX_PROCESS_GROUPS). */
    TFB_VEC(tfb_trace_note) notes;
    TFB_VEC(tfb_trace_pg) pgs;
    TFB_VEC(tfb_trace_collective) colls;
    /* Names of calls [call_map_from, + call_map_n) still to be renamed by
     * call_map (call_map_len entries; tfb_trace_builder_calls_take): done
     * in finish_calls' pass, not in a pass of its own. */
    int32_t *call_map;
    size_t call_map_len, call_map_from, call_map_n;
};

/* ------------------------------------------------------------------------
 * Load control
 * ---------------------------------------------------------------------- */
/* Set once, when the server stops: every load's time is up. */
static atomic_int g_loads_stopping;

void tfb_trace_load_stop_all(void)
{
    atomic_store(&g_loads_stopping, 1);
}

int tfb_trace_load_stopping(void)
{
    return atomic_load(&g_loads_stopping);
}

int tfb_trace_load_ctl_late(const tfb_trace_load_ctl *c)
{
    if (atomic_load_explicit(&g_loads_stopping, memory_order_relaxed))
        return 1;
    return c && c->deadline > 0 &&
           (double)tfb_mono_now_ns() * 1e-9 > c->deadline;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double tfb_trace_clock_wall(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

double tfb_trace_clock_cpu(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

double tfb_trace_clock_thread(void)
{
    return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* The slot of phase `name`: a new one, or the last when the table is
 * full (its name then says it holds more). */
static tfb_trace_load_phase *phase_slot(tfb_trace_load_ctl *c,
                                        const char *name)
{
    if (c->nphases < TFB_TRACE_LOAD_MAX_PHASES) {
        tfb_trace_load_phase *p = &c->phases[c->nphases++];
        memset(p, 0, sizeof *p);
        p->name = name;
        return p;
    }
    tfb_trace_load_phase *p = &c->phases[TFB_TRACE_LOAD_MAX_PHASES - 1];
    p->name = "later phases";
    return p;
}

void tfb_trace_load_ctl_phase(tfb_trace_load_ctl *c, const char *name)
{
    if (!c)
        return;
    double w = tfb_trace_clock_wall(), cpu = tfb_trace_clock_cpu(),
           th = tfb_trace_clock_thread();
    tfb_trace_load_phase *p = phase_slot(c, name);
    p->wall_s += w - c->phase_wall0;
    p->cpu_s += cpu - c->phase_cpu0;
    p->thread_cpu_s += th - c->phase_thread0;
    c->phase_wall0 = w;
    c->phase_cpu0 = cpu;
    c->phase_thread0 = th;
}

void tfb_trace_load_ctl_phase_add(tfb_trace_load_ctl *c, const char *name,
                                  double wall_s, double thread_cpu_s)
{
    if (!c)
        return;
    tfb_trace_load_phase *p = phase_slot(c, name);
    p->wall_s += wall_s;
    p->thread_cpu_s += thread_cpu_s;
    p->cpu_s += thread_cpu_s;
    p->parallel = 1;
}

tfb_trace_load_ctl *tfb_trace_builder_ctl(tfb_trace_builder *b)
{
    return b->ctl;
}

int tfb_trace_load_ctl_fail(tfb_trace_load_ctl *c, int code, const char *fmt,
                            ...)
{
    if (c && !c->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->error, sizeof c->error, fmt, ap);
        va_end(ap);
    }
    return code;
}

void tfb_trace_builder_progress(tfb_trace_builder *b, double frac)
{
    tfb_trace_load_ctl *c = b->ctl;
    if (!c || c->nfiles == 0)
        return;
    if (frac < 0)
        frac = 0;
    if (frac > 1)
        frac = 1;
    double p = ((double)c->file + frac) / (double)c->nfiles;
    /* Sorting and indexing come after the rows: keep 5 % for them. */
    atomic_store_explicit(&c->progress_ppm, (uint32_t)(p * 950000.0),
                          memory_order_relaxed);
}

/* Budget check every 64 Ki rows: the clock is read rarely. */
static int count_rows(tfb_trace_builder *b, uint64_t n)
{
    tfb_trace_load_ctl *c = b->ctl;
    if (!c)
        return 0;
    uint64_t before = c->rows;
    c->rows += n;
    if (c->max_rows && c->rows > c->max_rows)
        return tfb_trace_load_ctl_fail(
            c, TFB_ETOOBIG,
            "the trace has more than %llu rows (the load budget)",
            (unsigned long long)c->max_rows);
    if ((before >> 16) != (c->rows >> 16) && tfb_trace_load_ctl_late(c))
        return tfb_trace_load_stopping()
                   ? tfb_trace_load_ctl_fail(c, TFB_ESTATE,
                                             "the server is stopping")
                   : tfb_trace_load_ctl_fail(c, TFB_ETOOBIG,
                                             "reading the trace took longer "
                                             "than the load budget");
    return 0;
}

int tfb_trace_builder_rows(tfb_trace_builder *b, uint64_t n)
{
    return count_rows(b, n);
}

/* ------------------------------------------------------------------------
 * Builder
 * ---------------------------------------------------------------------- */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}


int32_t tfb_trace_strings_put(tfb_trace_strings *st, const char *s,
                              size_t len)
{
    if (!s)
        return -1;
    uint64_t h = tfb_hash_bytes(s, len);
    void *v = tfb_strtab_get_h(&st->tab, s, len, h);
    if (v)
        return (int32_t)((uintptr_t)v - 1);
    if (st->n >= INT32_MAX || tfb_vec_need(st, st->n + 1) < 0 ||
        tfb_strtab_reserve(&st->tab, st->n + 1) < 0)
        return -1;
    char *copy = tfb_strndup(s, len);
    if (!copy)
        return -1;
    int32_t idx = (int32_t)st->n;
    /* Cannot fail: room was reserved above. */
    tfb_strtab_put_h(&st->tab, copy, len, h, (void *)(uintptr_t)(idx + 1));
    st->v[st->n++] = copy;
    return idx;
}

void tfb_trace_strings_free(tfb_trace_strings *st)
{
    tfb_strtab_free(&st->tab);
    tfb_strv_free(st->v, st->n);
    memset(st, 0, sizeof *st);
}

int32_t tfb_trace_builder_str(tfb_trace_builder *b, const char *s, size_t len)
{
    return tfb_trace_strings_put(&b->strings, s, len);
}

static uint64_t kinfo_hash(const tfb_trace_kinfo *k)
{
    uint64_t h = (uint64_t)(uint32_t)k->name;
    for (int i = 0; i < 3; i++) {
        h = mix(h, (uint32_t)k->grid[i]);
        h = mix(h, (uint32_t)k->block[i]);
    }
    h = mix(h, (uint32_t)k->registers);
    return mix(h, (uint32_t)k->shared_mem);
}

static int kinfo_eq(const tfb_trace_kinfo *a, const tfb_trace_kinfo *b)
{
    return a->name == b->name && a->registers == b->registers &&
           a->shared_mem == b->shared_mem &&
           memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
           memcmp(a->block, b->block, sizeof a->block) == 0;
}

static int32_t intern_kinfo_hashed(tfb_trace_builder *b,
                                   const tfb_trace_kinfo *k);

/* The index of an equal kernel description, added when new; -1 ENOMEM.
 * A name's launches mostly share one geometry: its last description is
 * tried before the hash table. */
static int32_t intern_kinfo(tfb_trace_builder *b, const tfb_trace_kinfo *k)
{
    size_t slot = (size_t)k->name + 1; /* name >= -1 */
    if (k->name >= -1 && slot < b->kinfo_memo.n) {
        int32_t m = b->kinfo_memo.v[slot];
        if (m >= 0 && kinfo_eq(&b->kinfo.v[m], k))
            return m;
    }
    int32_t i = intern_kinfo_hashed(b, k);
    if (i >= 0 && k->name >= -1) {
        size_t n = b->kinfo_memo.n;
        if (slot >= n && tfb_vec_need(&b->kinfo_memo, slot + 1) == 0) {
            for (; n <= slot; n++)
                b->kinfo_memo.v[n] = -1;
            b->kinfo_memo.n = n;
        }
        if (slot < b->kinfo_memo.n)
            b->kinfo_memo.v[slot] = i;
    }
    return i;
}

static uint64_t kinfo_hash_at(const void *ctx, int32_t i)
{
    return kinfo_hash(&((const tfb_trace_builder *)ctx)->kinfo.v[i]);
}

static int32_t intern_kinfo_hashed(tfb_trace_builder *b,
                                   const tfb_trace_kinfo *k)
{
    if (tfb_idxtab_reserve(&b->ktab, b->kinfo.n + 1, kinfo_hash_at, b) < 0)
        return -1;
    size_t j = tfb_idxtab_first(&b->ktab, kinfo_hash(k));
    for (int32_t i; (i = b->ktab.slot[j]) >= 0; j = tfb_idxtab_next(&b->ktab, j))
        if (kinfo_eq(&b->kinfo.v[i], k))
            return i;
    if (b->kinfo.n >= INT32_MAX || tfb_vec_push(&b->kinfo, *k) < 0)
        return -1;
    tfb_idxtab_set(&b->ktab, j, (int32_t)(b->kinfo.n - 1));
    return (int32_t)(b->kinfo.n - 1);
}

static uint64_t lane_hash(int host, int32_t device, int32_t stream)
{
    return mix(mix((uint64_t)host, (uint32_t)device), (uint32_t)stream);
}

/* The building lane of (host, device, stream); -1 on ENOMEM, -2 when
 * there are too many lanes. */
static int32_t lane_of_hashed(tfb_trace_builder *b, int host, int32_t device,
                              int32_t stream);

static int32_t lane_of(tfb_trace_builder *b, int host, int32_t device,
                       int32_t stream)
{
    if (host)
        return lane_of_hashed(b, host, device, stream);
    size_t m = (size_t)(uint32_t)stream & (LANE_MEMO - 1);
    if (b->lane_memo[m].lane >= 0 && b->lane_memo[m].device == device &&
        b->lane_memo[m].stream == stream)
        return b->lane_memo[m].lane;
    int32_t li = lane_of_hashed(b, host, device, stream);
    if (li >= 0) {
        b->lane_memo[m].device = device;
        b->lane_memo[m].stream = stream;
        b->lane_memo[m].lane = li;
    }
    return li;
}

static uint64_t lane_hash_at(const void *ctx, int32_t i)
{
    const tmp_lane *l = &((const tfb_trace_builder *)ctx)->lanes.v[i];
    return lane_hash(l->host, l->device, l->stream);
}

static int32_t lane_of_hashed(tfb_trace_builder *b, int host, int32_t device,
                              int32_t stream)
{
    if (tfb_idxtab_reserve(&b->ltab, b->lanes.n + 1, lane_hash_at, b) < 0)
        return -1;
    size_t j = tfb_idxtab_first(&b->ltab, lane_hash(host, device, stream));
    for (int32_t i; (i = b->ltab.slot[j]) >= 0;
         j = tfb_idxtab_next(&b->ltab, j)) {
        const tmp_lane *l = &b->lanes.v[i];
        if (l->host == host && l->device == device && l->stream == stream)
            return i;
    }
    if (b->lanes.n >= MAX_LANES)
        return -2;
    tmp_lane *l = tfb_vec_add(&b->lanes);
    if (!l)
        return -1;
    l->host = (uint8_t)host;
    l->device = device;
    l->stream = stream;
    tfb_idxtab_set(&b->ltab, j, (int32_t)(b->lanes.n - 1));
    return (int32_t)(b->lanes.n - 1);
}

static int32_t add_value(tfb_trace_builder *b, int64_t v)
{
    if (b->values.n >= INT32_MAX || tfb_vec_push(&b->values, v) < 0)
        return -1;
    return (int32_t)(b->values.n - 1);
}

int tfb_trace_builder_span(tfb_trace_builder *b, const tfb_trace_span_in *s)
{
    int err = count_rows(b, 1);
    if (err)
        return err;
    /* Malformed or nonsense times are skipped: before the epoch, ending
     * before starting, or lasting more than a week (sums of durations must
     * stay far from overflowing). */
    if (s->start < 0 || s->end < s->start ||
        s->end - s->start > INT64_C(7) * 86400 * 1000000000 ||
        s->kind >= TFB_TRACE_KIND_COUNT)
        return 0;
    int host = s->kind == TFB_TRACE_HOST_STEP || s->kind == TFB_TRACE_HOST_INPUT
                   ? s->kind
                   : 0;
    int32_t li = lane_of(b, host, host ? -1 : s->device, host ? -1 : s->stream);
    if (li == -2) {
        b->t->spans_dropped++;
        return 0;
    }
    if (li < 0)
        return TFB_ENOMEM;
    tfb_trace_span d;
    memset(&d, 0, sizeof d);
    d.start = s->start;
    d.end = s->end;
    d.kind = s->kind;
    d.copy_kind = s->copy_kind;
    d.lane = (uint16_t)li;
    d.correlation = s->correlation;
    if (d.correlation >= 0) {
        if (d.correlation > b->corr_max)
            b->corr_max = d.correlation;
        d.correlation += b->corr_base;
    }
    if (s->kind == TFB_TRACE_KERNEL) {
        tfb_trace_kinfo k;
        k.name = s->name;
        memcpy(k.grid, s->grid, sizeof k.grid);
        memcpy(k.block, s->block, sizeof k.block);
        k.registers = s->registers;
        k.shared_mem = s->shared_mem;
        d.info = intern_kinfo(b, &k);
    } else {
        d.info = add_value(b, host ? s->step : s->bytes);
    }
    if (d.info < 0)
        return TFB_ENOMEM;
    tmp_lane *tl = &b->lanes.v[li];
    if (tfb_vec_push(&tl->spans, d) < 0)
        return TFB_ENOMEM;
    size_t used = tl->spans.n * sizeof d;
    if (used + TFB_TRACE_PREFAULT_CHUNK / 2 > tl->prefaulted)
        tfb_trace_prefault_ahead(tl->spans.v, used, tl->spans.cap * sizeof d,
                                 &tl->prefaulted);
    if (!host && s->device >= 0 && s->device != b->last_device) {
        err = tfb_trace_builder_device(b, s->device, -1, -1);
        if (!err)
            b->last_device = s->device;
    }
    return err;
}

int tfb_trace_builder_call(tfb_trace_builder *b, const tfb_trace_call *c)
{
    int err = count_rows(b, 1);
    if (err)
        return err;
    if (c->correlation < 0 || c->end < c->start || c->start < 0)
        return 0;
    /* A copy field by field: the caller's padding bytes would reach the
     * columnar cache file (which stores calls raw). */
    tfb_trace_call k;
    memset(&k, 0, sizeof k);
    k.start = c->start;
    k.end = c->end;
    k.correlation = c->correlation;
    k.name = c->name;
    if (b->calls.n >= UINT32_MAX || tfb_vec_push(&b->calls, k) < 0)
        return TFB_ENOMEM;
    tfb_trace_call *d = &b->calls.v[b->calls.n - 1];
    if (d->correlation > b->corr_max)
        b->corr_max = d->correlation;
    d->correlation += b->corr_base;
    return 0;
}

/* Renames calls [from, from + n) by map (nmap entries; a name past it:
 * -1). */
static void rename_calls(tfb_trace_call *c, size_t from, size_t n,
                         const int32_t *map, size_t nmap)
{
    for (size_t i = from; i < from + n; i++)
        if (c[i].name >= 0)
            c[i].name = (size_t)c[i].name < nmap ? map[c[i].name] : -1;
}

int64_t tfb_trace_builder_corr_base(const tfb_trace_builder *b)
{
    return b->corr_base;
}

int tfb_trace_builder_calls_take(tfb_trace_builder *b, tfb_trace_call *v,
                                 size_t n, size_t cap, uint64_t rows,
                                 int64_t corr_max, int32_t *map, size_t nmap)
{
    int err = count_rows(b, rows);
    if (!err && (uint64_t)b->calls.n + n >= UINT32_MAX)
        err = TFB_ETOOBIG;
    if (err) {
        free(v);
        free(map);
        return err;
    }
    if (corr_max > b->corr_max)
        b->corr_max = corr_max;
    /* One map waits for finish_calls; an older one is applied now (a
     * second store of the run). */
    if (b->call_map)
        rename_calls(b->calls.v, b->call_map_from, b->call_map_n,
                     b->call_map, b->call_map_len);
    free(b->call_map);
    b->call_map = map;
    b->call_map_len = nmap;
    b->call_map_from = b->calls.n;
    b->call_map_n = map ? n : 0;
    if (b->calls.n == 0) {
        free(b->calls.v);
        b->calls.v = v;
        b->calls.n = n;
        b->calls.cap = cap;
        return 0;
    }
    if (tfb_vec_need(&b->calls, b->calls.n + n) < 0) {
        free(v);
        return TFB_ENOMEM;
    }
    if (n)
        memcpy(b->calls.v + b->calls.n, v, n * sizeof *v);
    b->calls.n += n;
    free(v);
    return 0;
}

int tfb_trace_builder_device(tfb_trace_builder *b, int32_t id, int32_t name,
                             int32_t sm_count)
{
    tfb_trace_device *dv = b->devices.v;
    /* Sorted by id: binary search (spans call this for every row). */
    size_t lo = 0, hi = b->devices.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dv[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < b->devices.n && dv[lo].id == id) {
        if (name >= 0)
            dv[lo].name = name;
        if (sm_count >= 0)
            dv[lo].sm_count = sm_count;
        return 0;
    }
    if (tfb_vec_need(&b->devices, b->devices.n + 1) < 0)
        return TFB_ENOMEM;
    dv = b->devices.v;
    memmove(&dv[lo + 1], &dv[lo], (b->devices.n - lo) * sizeof *dv);
    dv[lo] = (tfb_trace_device){id, name, sm_count, -1, -1, 0, -1};
    b->devices.n++;
    return 0;
}

int tfb_trace_builder_device_props(tfb_trace_builder *b,
                                   const tfb_trace_device *p)
{
    for (size_t i = 0; i < b->devices.n; i++) {
        tfb_trace_device *d = &b->devices.v[i];
        if (d->id != p->id)
            continue;
        if (p->name >= 0)
            d->name = p->name;
        if (p->sm_count > 0)
            d->sm_count = p->sm_count;
        if (p->cc_major >= 0) {
            d->cc_major = p->cc_major;
            d->cc_minor = p->cc_minor;
        }
        if (p->total_mem >= 0)
            d->total_mem = p->total_mem;
        return 1;
    }
    return 0;
}

int tfb_trace_builder_note(tfb_trace_builder *b, const char *cat, size_t len)
{
    /* Compared by text first: only a new category (at most
     * TFB_TRACE_MAX_NOTES of them) is interned, so a file naming millions
     * of categories costs no memory. */
    for (size_t i = 0; i < b->notes.n; i++) {
        const char *s = b->strings.v[b->notes.v[i].category];
        if (strlen(s) == len && memcmp(s, cat, len) == 0) {
            b->notes.v[i].events++;
            return 0;
        }
    }
    if (b->notes.n >= TFB_TRACE_MAX_NOTES) {
        b->t->notes_more_events++;
        return 0;
    }
    int32_t id = tfb_trace_builder_str(b, cat, len);
    if (id < 0 || tfb_vec_push(&b->notes, ((tfb_trace_note){id, 0, 1})) < 0)
        return TFB_ENOMEM;
    return 0;
}

int tfb_trace_builder_dist(tfb_trace_builder *b, const tfb_trace_dist *d,
                           const tfb_trace_pg *pgs, size_t n)
{
    if (b->t->dist.present)
        return 0; /* the first file's */
    b->t->dist = *d;
    b->t->dist.present = 1;
    for (size_t i = 0; i < n && i < TFB_TRACE_MAX_PROCESS_GROUPS; i++)
        if (tfb_vec_push(&b->pgs, pgs[i]) < 0)
            return TFB_ENOMEM;
    return 0;
}

int tfb_trace_builder_collective(tfb_trace_builder *b,
                                 const tfb_trace_collective *c)
{
    if (b->colls.n >= TFB_TRACE_MAX_COLLECTIVES) {
        b->t->colls_dropped++;
        return 0;
    }
    int rc = tfb_trace_builder_rows(b, 1);
    if (rc < 0)
        return rc;
    tfb_trace_collective v = *c;
    v.reserved = 0;
    return tfb_vec_push(&b->colls, v) < 0 ? TFB_ENOMEM : 0;
}

void tfb_trace_builder_colls_unmatched(tfb_trace_builder *b, size_t n)
{
    b->t->colls_unmatched += n;
}

const tfb_trace_call *tfb_trace_builder_file_calls(tfb_trace_builder *b,
                                                   size_t *n, int64_t *base)
{
    size_t from = b->file_calls <= b->calls.n ? b->file_calls : b->calls.n;
    *n = b->calls.n - from;
    *base = b->corr_base;
    return *n ? b->calls.v + from : NULL;
}

void tfb_trace_free(tfb_trace *t)
{
    if (!t)
        return;
    if (t->release) {
        t->release(t);
        return;
    }
    tfb_trace_aggregates_free(t->agg);
    tfb_strv_free(t->strings, t->nstrings);
    for (size_t i = 0; i < t->nlanes; i++)
        free(t->lanes[i].tree);
    free(t->lanes);
    free(t->spans);
    free(t->kinfo);
    free(t->values);
    free(t->calls);
    free(t->calls_by_corr);
    free(t->devices);
    free(t->notes);
    free(t->pgs);
    free(t->colls);
    free(t);
}

int tfb_trace_builder_new(tfb_trace_builder **out, tfb_trace_load_ctl *ctl)
{
    tfb_trace_builder *b = calloc(1, sizeof *b);
    if (!b)
        return TFB_ENOMEM;
    b->t = calloc(1, sizeof *b->t);
    if (!b->t) {
        free(b);
        return TFB_ENOMEM;
    }
    b->ctl = ctl;
    for (size_t i = 0; i < LANE_MEMO; i++)
        b->lane_memo[i].lane = -1;
    b->last_device = INT32_MIN;
    *out = b;
    return 0;
}

void tfb_trace_builder_begin_file(tfb_trace_builder *b)
{
    b->corr_max = -1;
    b->file_calls = b->calls.n;
}

void tfb_trace_builder_end_file(tfb_trace_builder *b, int read)
{
    if (read)
        b->t->files_read++;
    else
        b->t->files_skipped++;
    /* The next file's correlation ids start above this file's. */
    if (b->corr_max >= 0)
        b->corr_base += b->corr_max + 1;
}

/* Frees the builder and what it holds that no trace took. */
static void free_building(tfb_trace_builder *b)
{
    for (size_t i = 0; i < b->lanes.n; i++)
        tfb_vec_free(&b->lanes.v[i].spans);
    tfb_vec_free(&b->lanes);
    tfb_idxtab_free(&b->ltab);
    tfb_idxtab_free(&b->ktab);
    tfb_vec_free(&b->kinfo_memo);
    tfb_trace_strings_free(&b->strings);
    tfb_vec_free(&b->kinfo);
    tfb_vec_free(&b->values);
    tfb_vec_free(&b->calls);
    tfb_vec_free(&b->devices);
    tfb_vec_free(&b->notes);
    tfb_vec_free(&b->pgs);
    tfb_vec_free(&b->colls);
    free(b->call_map);
    free(b);
}

/* Moves the grown arrays into the trace (trimmed: the growth doubles);
 * the builder keeps none of them. */
#define MOVE(b, vec, ptr, count)                                             \
    do {                                                                     \
        tfb_vec_trim(&(b)->vec);                                             \
        (ptr) = (b)->vec.v;                                                  \
        (count) = (b)->vec.n;                                                \
        memset(&(b)->vec, 0, sizeof (b)->vec);                               \
    } while (0)

static void move_arrays(tfb_trace_builder *b)
{
    tfb_trace *t = b->t;
    tfb_strtab_free(&b->strings.tab);
    MOVE(b, strings, t->strings, t->nstrings);
    MOVE(b, kinfo, t->kinfo, t->nkinfo);
    MOVE(b, values, t->values, t->nvalues);
    MOVE(b, calls, t->calls, t->ncalls);
    MOVE(b, devices, t->devices, t->ndevices);
    MOVE(b, notes, t->notes, t->nnotes);
    MOVE(b, pgs, t->pgs, t->npgs);
    MOVE(b, colls, t->colls, t->ncolls);
}

/* ------------------------------------------------------------------------
 * Finishing: lanes in order, spans sorted per lane, the max-end trees,
 * calls by start and by correlation, the extent, the aggregates.
 * ---------------------------------------------------------------------- */
static int cmp_coll(const void *a, const void *b)
{
    const tfb_trace_collective *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static int cmp_span(const void *a, const void *b)
{
    const tfb_trace_span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static int cmp_tmp_lane(const void *a, const void *b)
{
    const tmp_lane *x = a, *y = b;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return (x->stream > y->stream) - (x->stream < y->stream);
}

static int cmp_call_start(const void *a, const void *b)
{
    const tfb_trace_call *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->correlation > y->correlation) -
           (x->correlation < y->correlation);
}

static int cmp_corr_idx(const void *a, const void *b, void *arg)
{
    const tfb_trace_call *c = arg;
    int64_t x = c[*(const uint32_t *)a].correlation;
    int64_t y = c[*(const uint32_t *)b].correlation;
    return (x > y) - (x < y);
}

/* The shape of lane l's max-end tree (levels of TFB_TRACE_TREE_FANOUT)
 * and its memory: 0 or TFB_ENOMEM. Level 0 is filled by the caller (as
 * the spans are copied: no pass of its own), the others by tree_upper. */
static int tree_alloc(tfb_trace_lane *l)
{
    const size_t F = TFB_TRACE_TREE_FANOUT;
    size_t total = 0, n = l->n;
    l->levels = 0;
    l->tree = NULL;
    while (n > F && l->levels < TFB_TRACE_TREE_LEVELS) {
        n = (n + F - 1) / F;
        l->tree_off[l->levels] = total;
        l->tree_n[l->levels] = n;
        total += n;
        l->levels++;
    }
    if (!total)
        return 0;
    l->tree = malloc(total * sizeof *l->tree);
    return l->tree ? 0 : TFB_ENOMEM;
}

/* Level 0 of lane l's tree from its spans (a lane that had to be sorted
 * after its copy). */
static void tree_level0(const tfb_trace *t, tfb_trace_lane *l)
{
    const size_t F = TFB_TRACE_TREE_FANOUT;
    if (!l->levels)
        return;
    for (size_t k = 0; k < l->tree_n[0]; k++) {
        int64_t m = INT64_MIN;
        for (size_t i = k * F; i < (k + 1) * F && i < l->n; i++)
            if (t->spans[l->off + i].end > m)
                m = t->spans[l->off + i].end;
        l->tree[k] = m;
    }
}

/* The levels above 0, each from the one below. */
static void tree_upper(tfb_trace_lane *l)
{
    const size_t F = TFB_TRACE_TREE_FANOUT;
    for (size_t lv = 1; lv < l->levels; lv++) {
        int64_t *dst = l->tree + l->tree_off[lv];
        const int64_t *below = l->tree + l->tree_off[lv - 1];
        size_t nb = l->tree_n[lv - 1];
        for (size_t k = 0; k < l->tree_n[lv]; k++) {
            int64_t m = INT64_MIN;
            for (size_t i = k * F; i < (k + 1) * F && i < nb; i++)
                if (below[i] > m)
                    m = below[i];
            dst[k] = m;
        }
    }
}

static int finish_spans(tfb_trace_builder *b)
{
    tfb_trace *t = b->t;
    size_t total = 0;
    size_t nl = b->lanes.n;
    for (size_t i = 0; i < nl; i++)
        total += b->lanes.v[i].spans.n;
    /* Lane order: GPU streams by (device, stream), then host kinds; each
     * span gets its lane's final number as it is copied. */
    if (nl)
        qsort(b->lanes.v, nl, sizeof *b->lanes.v, cmp_tmp_lane);
    t->spans = malloc((total ? total : 1) * sizeof *t->spans);
    t->lanes = calloc(nl ? nl : 1, sizeof *t->lanes);
    if (!t->spans || !t->lanes)
        return TFB_ENOMEM;
    t->nlanes = nl; /* freed with the trace from here on (trees) */
    const size_t F = TFB_TRACE_TREE_FANOUT;
    size_t off = 0;
    for (size_t i = 0; i < nl; i++) {
        tmp_lane *tl = &b->lanes.v[i];
        tfb_trace_lane *l = &t->lanes[i];
        l->device = tl->device;
        l->stream = tl->stream;
        l->host = tl->host;
        l->off = off;
        l->n = tl->spans.n;
        if (tree_alloc(l))
            return TFB_ENOMEM;
        /* One pass: the copy, the order check, and the tree's level 0
         * (the max end of each F spans), kept when no sort follows. */
        int64_t *lv0 = l->levels ? l->tree : NULL;
        int64_t m = INT64_MIN;
        tfb_trace_span *dst = t->spans + off;
        /* Faulted in lane by lane, as each lane's own array is freed after
         * its copy: the peak stays one lane above the spans' size. */
        tfb_trace_prefault_all(dst, l->n * sizeof *dst);
        int sorted = 1;
        for (size_t k = 0; k < tl->spans.n; k++) {
            dst[k] = tl->spans.v[k];
            dst[k].lane = (uint16_t)i;
            if (k && sorted && cmp_span(&dst[k - 1], &dst[k]) > 0)
                sorted = 0;
            if (dst[k].end > m)
                m = dst[k].end;
            if (lv0 && (k % F == F - 1 || k + 1 == tl->spans.n)) {
                lv0[k / F] = m;
                m = INT64_MIN;
            }
        }
        tfb_vec_free(&tl->spans);
        if (!sorted) {
            qsort(dst, l->n, sizeof *dst, cmp_span);
            tree_level0(t, l);
        }
        tree_upper(l);
        off += l->n;
    }
    t->nspans = total;
    return 0;
}

/* Calls by start, and their order by correlation id. One pass over the
 * calls in the usual case (launch order is start and correlation order):
 * the reader's names renamed (the builder's pending map), both order
 * checks and the identity index. */
static int finish_calls(tfb_trace_builder *b, tfb_trace *t)
{
    if (!t->ncalls)
        return 0;
    t->calls_by_corr = malloc(t->ncalls * sizeof *t->calls_by_corr);
    if (!t->calls_by_corr)
        return TFB_ENOMEM;
    tfb_trace_prefault_all(t->calls_by_corr,
                           t->ncalls * sizeof *t->calls_by_corr);
    tfb_trace_call *c = t->calls;
    const int32_t *map = b->call_map;
    size_t m0 = b->call_map_from, m1 = m0 + b->call_map_n;
    int sorted = 1, corr_sorted = 1;
    for (size_t i = 0; i < t->ncalls; i++) {
        if (map && i >= m0 && i < m1 && c[i].name >= 0)
            c[i].name = (size_t)c[i].name < b->call_map_len
                            ? map[c[i].name]
                            : -1;
        t->calls_by_corr[i] = (uint32_t)i;
        if (i && sorted && cmp_call_start(&c[i - 1], &c[i]) > 0)
            sorted = 0;
        if (i && c[i - 1].correlation > c[i].correlation)
            corr_sorted = 0;
    }
    if (!sorted) {
        qsort(c, t->ncalls, sizeof *c, cmp_call_start);
        corr_sorted = 1;
        for (size_t i = 1; i < t->ncalls && corr_sorted; i++)
            corr_sorted = c[i - 1].correlation <= c[i].correlation;
    }
    /* Launch order is usually correlation order: no sort then. */
    if (!corr_sorted)
        qsort_r(t->calls_by_corr, t->ncalls, sizeof *t->calls_by_corr,
                cmp_corr_idx, t->calls);
    return 0;
}

int tfb_trace_builder_finish(tfb_trace_builder *b, tfb_trace **out)
{
    tfb_trace *t = b->t;
    tfb_trace_load_ctl *ctl = b->ctl;
    tfb_idxtab_free(&b->ktab);
    move_arrays(b);
    if (t->ncolls > 1)
        qsort(t->colls, t->ncolls, sizeof *t->colls, cmp_coll);
    int err = finish_spans(b);
    tfb_trace_load_ctl_phase(ctl, "spans sorted, lanes indexed");
    if (!err)
        err = finish_calls(b, t);
    free_building(b);
    tfb_trace_load_ctl_phase(ctl, "calls indexed, builder freed");
    if (err) {
        tfb_trace_free(t);
        return err;
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < t->nlanes; i++) {
        const tfb_trace_lane *l = &t->lanes[i];
        if (!l->n)
            continue;
        if (t->spans[l->off].start < lo)
            lo = t->spans[l->off].start;
        int64_t m = INT64_MIN;
        if (l->levels)
            for (size_t k = 0; k < l->tree_n[l->levels - 1]; k++)
                m = l->tree[l->tree_off[l->levels - 1] + k] > m
                        ? l->tree[l->tree_off[l->levels - 1] + k]
                        : m;
        else
            for (size_t k = 0; k < l->n; k++)
                m = t->spans[l->off + k].end > m ? t->spans[l->off + k].end
                                                 : m;
        if (m > hi)
            hi = m;
    }
    if (lo == INT64_MAX)
        lo = hi = 0;
    t->start_ns = lo;
    t->end_ns = hi;
    t->first_ns = t->nspans ? lo : INT64_MAX;
    if (t->ncalls && t->calls[0].start < t->first_ns)
        t->first_ns = t->calls[0].start;
    if (t->first_ns == INT64_MAX)
        t->first_ns = 0;
    err = tfb_trace_aggregate(t);
    tfb_trace_load_ctl_phase(ctl, "aggregates");
    if (err) {
        tfb_trace_free(t);
        return err;
    }
    t->refs = 1;
    *out = t;
    return 0;
}

void tfb_trace_builder_free(tfb_trace_builder *b)
{
    if (!b)
        return;
    tfb_trace_free(b->t);
    free_building(b);
}
