/*
 * gpu_memory.c - GPU memory analysis (issue 13). The rules are stated in
 * gpu_memory.h; this file follows them in one pass over the events (state,
 * change points, peak, churn) and then answers the per-allocation
 * questions from the allocation records the pass kept: an allocation is
 * live after event p when it was made at or before p and freed after p.
 */
#include "plugins/gpu/gpu_memory.h"

#include <stdlib.h>
#include <string.h>

#include "base/idxtab.h"
#include "base/vec.h"
#include "tfboard.h"

#define NO_EVENT SIZE_MAX

void tfb_gpu_memory_opts_init(tfb_gpu_memory_opts *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->start_ns = INT64_MIN;
    o->end_ns = INT64_MAX;
    o->max_points = 1000;
    o->top_live = 20;
    o->last_allocs = 20;
}

/* ------------------------------------------------------------------------
 * Working state
 * ---------------------------------------------------------------------- */
typedef struct rec {
    uint64_t address;
    int64_t bytes, t_ns, stream;
    uint64_t pool;
    size_t alloc_ev, free_ev; /* event indexes; free_ev NO_EVENT = live */
    uint32_t dev;             /* index into devs */
} rec;

typedef struct pool_state {
    uint64_t id;
    int64_t reported; /* -1 = never */
    int64_t live;
    int64_t max_reported; /* the largest reported size (0 = none) */
} pool_state;

typedef struct dev_work {
    int32_t id;
    int64_t bytes, nonpool, pool_term; /* reserved = nonpool + pool_term */
    TFB_VEC(pool_state) pools;
    TFB_VEC(tfb_gpu_memory_point) pts; /* change points in the window */
    int64_t entry_bytes, entry_reserved;
    size_t last_pre_ev; /* last event of this device before the window */
    int64_t peak_bytes, peak_t;
    size_t peak_ev;     /* NO_EVENT: the peak is the state on entry */
    int64_t peak_reserved;
    size_t *ring;       /* last `last_allocs` allocation records */
    size_t ring_n, ring_at;
    tfb_gpu_memory_churn *churn; /* per step index, lazily */
    tfb_gpu_memory_device out;
} dev_work;

typedef struct work {
    const tfb_gpu_memory_input *in;
    tfb_gpu_memory_opts o;
    TFB_VEC(dev_work) devs;
    TFB_VEC(rec) recs;
    /* (device index, address) -> index of the live record (base/idxtab). */
    tfb_idxtab map;
    const tfb_trace_memory_step **steps; /* sorted by start */
    const tfb_trace_memory_interval **kern, **rng; /* sorted by start */
    int64_t kern_maxdur, rng_maxdur;
    uint64_t outside_steps;
    /* The sizes taken in so far: every allocation's bytes, every
     * unmatched free's, and each pool's largest reported size. Every sum
     * the analysis keeps (bytes in use, reserved, the counters) is a sum
     * of some of these, so while this fits in int64 none can overflow. */
    int64_t sizes_total;
    uint64_t skipped; /* events with an impossible size */
} work;

/* The largest size one event may carry: 2^50 bytes (1 PiB), far beyond
 * any device's memory. A larger one is a damaged or hostile file. */
#define MAX_EVENT_BYTES ((int64_t)1 << 50)

static size_t dev_index(work *w, int32_t id, int *err)
{
    for (size_t i = 0; i < w->devs.n; i++)
        if (w->devs.v[i].id == id)
            return i;
    if (tfb_vec_need(&w->devs, w->devs.n + 1) < 0) {
        *err = TFB_ENOMEM;
        return 0;
    }
    dev_work *d = &w->devs.v[w->devs.n];
    memset(d, 0, sizeof *d);
    d->id = id;
    d->last_pre_ev = NO_EVENT;
    d->peak_ev = NO_EVENT;
    d->peak_bytes = -1; /* set at the window start */
    if (w->o.last_allocs) {
        d->ring = malloc(w->o.last_allocs * sizeof *d->ring);
        if (!d->ring) {
            *err = TFB_ENOMEM;
            return 0;
        }
    }
    return w->devs.n++;
}

/* ---- live map: linear probing, backward-shift deletion ---- */
static uint64_t key_hash(size_t dev, uint64_t addr)
{
    uint64_t h = addr ^ ((uint64_t)dev * 0x9e3779b97f4a7c15ull);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static uint64_t rec_hash_at(const void *ctx, int32_t i)
{
    const rec *r = &((const work *)ctx)->recs.v[i];
    return key_hash(r->dev, r->address);
}

/* The slot of the live record of (dev, addr), or of the empty slot its
 * probe ends on: w->map.slot[pos] >= 0 when there is one. */
static size_t map_find(const work *w, size_t dev, uint64_t addr)
{
    size_t j = tfb_idxtab_first(&w->map, key_hash(dev, addr));
    for (int32_t i; (i = w->map.slot[j]) >= 0; j = tfb_idxtab_next(&w->map, j))
        if (w->recs.v[i].dev == dev && w->recs.v[i].address == addr)
            break;
    return j;
}

/* Makes record rec_idx (its fields written) the live one of its key. */
static int map_put(work *w, size_t dev, uint64_t addr, size_t rec_idx)
{
    if (rec_idx >= INT32_MAX ||
        tfb_idxtab_reserve(&w->map, w->map.n + 1, rec_hash_at, w) < 0)
        return TFB_ENOMEM;
    tfb_idxtab_set(&w->map, map_find(w, dev, addr), (int32_t)rec_idx);
    return 0;
}

static void map_del(work *w, size_t pos)
{
    tfb_idxtab_remove(&w->map, pos, rec_hash_at, w);
}

/* ---- pools ---- */
static int64_t pool_term(const pool_state *p)
{
    return p->reported > p->live ? p->reported : p->live;
}

static pool_state *pool_get(dev_work *d, uint64_t id, int *err)
{
    for (size_t i = 0; i < d->pools.n; i++)
        if (d->pools.v[i].id == id)
            return &d->pools.v[i];
    if (tfb_vec_need(&d->pools, d->pools.n + 1) < 0) {
        *err = TFB_ENOMEM;
        return NULL;
    }
    pool_state *p = &d->pools.v[d->pools.n++];
    p->id = id;
    p->reported = -1;
    p->live = 0;
    p->max_reported = 0;
    return p;
}

/* Adds delta live bytes to the pool (or outside pools) and takes its new
 * reported size (-1 = unchanged). */
static void account(dev_work *d, uint64_t pool, int64_t delta,
                    int64_t reported, int *err)
{
    d->bytes += delta;
    if (!pool) {
        d->nonpool += delta;
        return;
    }
    pool_state *p = pool_get(d, pool, err);
    if (!p)
        return;
    d->pool_term -= pool_term(p);
    p->live += delta;
    if (reported >= 0)
        p->reported = reported;
    d->pool_term += pool_term(p);
}

/* ---- sorting ---- */
static int cmp_step(const void *a, const void *b)
{
    const tfb_trace_memory_step *x = *(const tfb_trace_memory_step *const *)a;
    const tfb_trace_memory_step *y = *(const tfb_trace_memory_step *const *)b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int cmp_iv(const void *a, const void *b)
{
    const tfb_trace_memory_interval *x =
        *(const tfb_trace_memory_interval *const *)a;
    const tfb_trace_memory_interval *y =
        *(const tfb_trace_memory_interval *const *)b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static const tfb_trace_memory_interval **
sorted_ivs(const tfb_trace_memory_interval *v, size_t n, int64_t *maxdur,
           int *err)
{
    *maxdur = 0;
    if (!n)
        return NULL;
    const tfb_trace_memory_interval **p = malloc(n * sizeof *p);
    if (!p) {
        *err = TFB_ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        p[i] = &v[i];
        if (v[i].end_ns - v[i].start_ns > *maxdur)
            *maxdur = v[i].end_ns - v[i].start_ns;
    }
    qsort(p, n, sizeof *p, cmp_iv);
    return p;
}

/* Number of entries with start <= t (entries sorted by start). */
static size_t upper_iv(const tfb_trace_memory_interval *const *v, size_t n,
                       int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid]->start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The interval holding t on the device (see the header's context rule):
 * scanning back from the last start <= t, no interval starting before
 * t - maxdur can hold t. */
static const char *context_at(const tfb_trace_memory_interval *const *v,
                              size_t n, int64_t maxdur, int32_t dev,
                              int64_t stream, int64_t t, int any_device_ok)
{
    const tfb_trace_memory_interval *best = NULL;
    for (size_t i = upper_iv(v, n, t); i > 0; i--) {
        const tfb_trace_memory_interval *x = v[i - 1];
        if (x->start_ns < t - maxdur)
            break;
        if (t >= x->end_ns)
            continue;
        if (x->device != dev && !(any_device_ok && x->device < 0))
            continue;
        if (!best)
            best = x; /* latest started */
        if (stream < 0 || x->stream == stream) {
            best = x;
            break;
        }
        if (any_device_ok)
            break; /* ranges: the innermost, streams do not apply */
    }
    return best ? best->name : NULL;
}

static void fill_alloc(const work *w, const rec *r, tfb_gpu_memory_alloc *a,
                       int end_live)
{
    a->address = r->address;
    a->bytes = r->bytes;
    a->t_ns = r->t_ns;
    a->stream = r->stream;
    a->pool = r->pool;
    a->live_at_end = end_live;
    int32_t dev = w->devs.v[r->dev].id;
    a->kernel = context_at(w->kern, w->in->n_kernels, w->kern_maxdur, dev,
                           r->stream, r->t_ns, 0);
    a->range = context_at(w->rng, w->in->n_ranges, w->rng_maxdur, dev, -1,
                          r->t_ns, 1);
}

/* Sort keys of the allocations live at the peak (qsort has no context
 * argument, and a static pointer would not be thread-safe). */
typedef struct live_key {
    int64_t bytes, t_ns;
    uint64_t address;
    size_t rec;
} live_key;

static int cmp_live(const void *a, const void *b)
{
    const live_key *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return (x->address > y->address) - (x->address < y->address);
}

/* ------------------------------------------------------------------------
 * The pass over the events
 * ---------------------------------------------------------------------- */
static void add_point(dev_work *d, int64_t t, int *err)
{
    if (tfb_vec_need(&d->pts, d->pts.n + 1) < 0) {
        *err = TFB_ENOMEM;
        return;
    }
    tfb_gpu_memory_point *p = &d->pts.v[d->pts.n++];
    p->t_ns = t;
    p->bytes = d->bytes;
    p->reserved = d->nonpool + d->pool_term;
}

static void enter_window(dev_work *d)
{
    if (d->peak_bytes >= 0)
        return; /* entered already */
    d->entry_bytes = d->bytes;
    d->entry_reserved = d->nonpool + d->pool_term;
    d->peak_bytes = d->bytes;
    d->peak_reserved = d->entry_reserved;
    d->peak_ev = NO_EVENT;
}

static void churn_add(work *w, dev_work *d, int64_t t, int alloc,
                      int64_t bytes, int *err)
{
    size_t ns = w->in->n_steps;
    if (!ns)
        return;
    size_t lo = 0, hi = ns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->steps[mid]->start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || t >= w->steps[lo - 1]->end_ns) {
        w->outside_steps++;
        return;
    }
    if (!d->churn) {
        d->churn = calloc(ns, sizeof *d->churn);
        if (!d->churn) {
            *err = TFB_ENOMEM;
            return;
        }
    }
    tfb_gpu_memory_churn *c = &d->churn[lo - 1];
    if (alloc) {
        c->allocs++;
        c->alloc_bytes += bytes;
    } else {
        c->frees++;
        c->free_bytes += bytes;
    }
}

/* Whether event e's sizes are possible: its byte count within
 * +-MAX_EVENT_BYTES, its pool's reported size at most that, and the sizes
 * taken in so far still within int64 with them (see sizes_total). When
 * they are, they are taken in and *abs_bytes is the byte count's size.
 * Called before the event changes any state, so a skipped event leaves
 * none behind. */
static int sizes_possible(work *w, const tfb_trace_memory_event *e,
                          int64_t *abs_bytes)
{
    if (e->bytes < -MAX_EVENT_BYTES || e->bytes > MAX_EVENT_BYTES ||
        e->pool_reserved > MAX_EVENT_BYTES)
        return 0;
    *abs_bytes = e->bytes < 0 ? -e->bytes : e->bytes;
    int64_t total;
    return !__builtin_add_overflow(w->sizes_total, *abs_bytes, &total) &&
           (w->sizes_total = total, 1);
}

/* The pool part of sizes_possible, once the device is known: the growth
 * of the pool's largest reported size is taken in. */
static int pool_size_possible(work *w, dev_work *d,
                              const tfb_trace_memory_event *e, int *err)
{
    if (!e->pool || e->pool_reserved <= 0)
        return 1;
    pool_state *p = pool_get(d, e->pool, err);
    if (!p || e->pool_reserved <= p->max_reported)
        return 1;
    int64_t total;
    if (__builtin_add_overflow(w->sizes_total,
                               e->pool_reserved - p->max_reported, &total))
        return 0;
    w->sizes_total = total;
    p->max_reported = e->pool_reserved;
    return 1;
}

static int run_events(work *w)
{
    const tfb_trace_memory_event *ev = w->in->events;
    int err = 0;
    for (size_t i = 0; i < w->in->n_events && !err; i++) {
        const tfb_trace_memory_event *e = &ev[i];
        if (e->t_ns > w->o.end_ns)
            break;
        if (e->op != TFB_TRACE_MEMORY_ALLOC && e->op != TFB_TRACE_MEMORY_FREE)
            continue; /* unknown operation: ignored */
        int64_t abs_bytes;
        if (!sizes_possible(w, e, &abs_bytes)) {
            w->skipped++;
            continue;
        }
        size_t di = dev_index(w, e->device, &err);
        if (err)
            break;
        dev_work *d = &w->devs.v[di];
        if (!pool_size_possible(w, d, e, &err)) {
            w->skipped++;
            continue;
        }
        if (err)
            break;
        int in_win = e->t_ns >= w->o.start_ns;
        if (in_win)
            enter_window(d);
        else
            d->last_pre_ev = i;
        if (e->op == TFB_TRACE_MEMORY_ALLOC) {
            size_t slot = map_find(w, di, e->address);
            if (w->map.slot[slot] >= 0) {
                rec *old = &w->recs.v[w->map.slot[slot]];
                account(d, old->pool, -old->bytes, -1, &err);
                old->free_ev = i;
                map_del(w, slot);
                if (in_win)
                    d->out.replaced++;
            }
            if (tfb_vec_need(&w->recs, w->recs.n + 1) < 0) {
                err = TFB_ENOMEM;
                break;
            }
            rec *r = &w->recs.v[w->recs.n];
            r->address = e->address;
            r->bytes = abs_bytes;
            r->t_ns = e->t_ns;
            r->stream = e->stream;
            r->pool = e->pool;
            r->alloc_ev = i;
            r->free_ev = NO_EVENT;
            r->dev = (uint32_t)di;
            if ((err = map_put(w, di, e->address, w->recs.n)) != 0)
                break;
            account(d, e->pool, abs_bytes, e->pool ? e->pool_reserved : -1,
                    &err);
            if (d->ring) {
                d->ring[d->ring_at] = w->recs.n;
                d->ring_at = (d->ring_at + 1) % w->o.last_allocs;
                if (d->ring_n < w->o.last_allocs)
                    d->ring_n++;
            }
            w->recs.n++;
            if (in_win) {
                d->out.allocs++;
                d->out.alloc_bytes += abs_bytes;
                if (e->pool)
                    d->out.pool_allocs++;
                churn_add(w, d, e->t_ns, 1, abs_bytes, &err);
            }
        } else if (e->op == TFB_TRACE_MEMORY_FREE) {
            size_t slot = map_find(w, di, e->address);
            if (w->map.slot[slot] >= 0) {
                rec *r = &w->recs.v[w->map.slot[slot]];
                int64_t b = r->bytes;
                account(d, r->pool, -b, e->pool == r->pool ? e->pool_reserved
                                                           : -1,
                        &err);
                r->free_ev = i;
                map_del(w, slot);
                if (in_win) {
                    d->out.frees++;
                    d->out.free_bytes += b;
                    churn_add(w, d, e->t_ns, 0, b, &err);
                }
            } else {
                /* Allocated before the trace (or lost): counted, and the
                 * state stays as it is. The pool's size is still news. */
                if (e->pool && e->pool_reserved >= 0)
                    account(d, e->pool, 0, e->pool_reserved, &err);
                if (in_win) {
                    d->out.unmatched_frees++;
                    d->out.unmatched_free_bytes += abs_bytes;
                    churn_add(w, d, e->t_ns, 0, abs_bytes, &err);
                }
            }
        } else {
            continue; /* unknown operation: ignored */
        }
        if (!in_win)
            continue;
        add_point(d, e->t_ns, &err);
        if (d->bytes > d->peak_bytes) {
            d->peak_bytes = d->bytes;
            d->peak_t = e->t_ns;
            d->peak_ev = i;
        }
        int64_t res = d->nonpool + d->pool_term;
        if (res > d->peak_reserved)
            d->peak_reserved = res;
    }
    return err;
}

/* ------------------------------------------------------------------------
 * Per-device results
 * ---------------------------------------------------------------------- */
static size_t bucket_of(int64_t t, int64_t t0, double span, size_t nb)
{
    double f = ((double)t - (double)t0) / span;
    if (f <= 0)
        return 0;
    size_t b = (size_t)(f * (double)nb);
    return b < nb ? b : nb - 1;
}

static int downsample(work *w, dev_work *d, int64_t t0, int64_t t1)
{
    size_t maxp = w->o.max_points, n = d->pts.n;
    size_t cap = n + 2 < maxp ? n + 2 : maxp;
    tfb_gpu_memory_point *o = malloc(cap * sizeof *o);
    if (!o)
        return TFB_ENOMEM;
    size_t k = 0;
    o[k].t_ns = t0;
    o[k].bytes = d->entry_bytes;
    o[k].reserved = d->entry_reserved;
    k++;
    if (n + 2 <= maxp) {
        if (n)
            memcpy(o + k, d->pts.v, n * sizeof *o);
        k += n;
    } else {
        size_t nb = (maxp - 2) / 2;
        double span = (double)t1 - (double)t0 + 1.0;
        size_t i = 0;
        while (i < n) {
            size_t b = bucket_of(d->pts.v[i].t_ns, t0, span, nb);
            size_t lo = i, hi = i, j = i + 1;
            for (; j < n && bucket_of(d->pts.v[j].t_ns, t0, span, nb) == b; j++) {
                /* First lowest, first highest: the peak (earliest of the
                 * highest) is the highest of its bucket. */
                if (d->pts.v[j].bytes < d->pts.v[lo].bytes)
                    lo = j;
                if (d->pts.v[j].bytes > d->pts.v[hi].bytes)
                    hi = j;
            }
            size_t a = lo < hi ? lo : hi, c = lo < hi ? hi : lo;
            o[k++] = d->pts.v[a];
            if (c != a)
                o[k++] = d->pts.v[c];
            i = j;
        }
    }
    o[k].t_ns = t1;
    o[k].bytes = d->bytes;
    o[k].reserved = d->nonpool + d->pool_term;
    k++;
    d->out.points = o;
    d->out.n_points = k;
    return 0;
}

static int finish_device(work *w, dev_work *d, int64_t t0, int64_t t1)
{
    enter_window(d); /* a device with no event in the window */
    tfb_gpu_memory_device *out = &d->out;
    size_t di = (size_t)(d - w->devs.v);
    out->device = d->id;
    out->n_changes = d->pts.n;
    out->peak_bytes = d->peak_bytes;
    out->peak_t_ns = d->peak_ev == NO_EVENT ? t0 : d->peak_t;
    out->peak_reserved = d->peak_reserved;
    out->end_bytes = d->bytes;
    out->end_reserved = d->nonpool + d->pool_term;
    int err = downsample(w, d, t0, t1);
    if (err)
        return err;

    /* Live right after event p: made at or before p, freed after it. */
    size_t p = d->peak_ev != NO_EVENT ? d->peak_ev : d->last_pre_ev;
    size_t nlive = 0, nend = 0;
    if (p != NO_EVENT) {
        for (size_t r = 0; r < w->recs.n; r++) {
            const rec *x = &w->recs.v[r];
            if (x->dev != di)
                continue;
            if (x->free_ev == NO_EVENT)
                nend++;
            if (x->alloc_ev <= p && (x->free_ev == NO_EVENT || x->free_ev > p))
                nlive++;
        }
    } else {
        for (size_t r = 0; r < w->recs.n; r++)
            if (w->recs.v[r].dev == di && w->recs.v[r].free_ev == NO_EVENT)
                nend++;
    }
    out->live_at_peak_total = nlive;
    out->live_at_end = nend;
    if (nlive) {
        live_key *keys = malloc(nlive * sizeof *keys);
        if (!keys)
            return TFB_ENOMEM;
        size_t k = 0;
        for (size_t r = 0; r < w->recs.n; r++) {
            const rec *x = &w->recs.v[r];
            if (x->dev == di && x->alloc_ev <= p &&
                (x->free_ev == NO_EVENT || x->free_ev > p)) {
                keys[k].bytes = x->bytes;
                keys[k].t_ns = x->t_ns;
                keys[k].address = x->address;
                keys[k].rec = r;
                k++;
            }
        }
        qsort(keys, nlive, sizeof *keys, cmp_live);
        size_t top = nlive < w->o.top_live ? nlive : w->o.top_live;
        out->live_at_peak = calloc(top ? top : 1, sizeof *out->live_at_peak);
        if (!out->live_at_peak) {
            free(keys);
            return TFB_ENOMEM;
        }
        for (size_t i = 0; i < top; i++) {
            const rec *x = &w->recs.v[keys[i].rec];
            fill_alloc(w, x, &out->live_at_peak[i], x->free_ev == NO_EVENT);
        }
        out->n_live_at_peak = top;
        free(keys);
    }
    if (d->ring_n) {
        out->last_allocs = calloc(d->ring_n, sizeof *out->last_allocs);
        if (!out->last_allocs)
            return TFB_ENOMEM;
        size_t L = w->o.last_allocs;
        for (size_t i = 0; i < d->ring_n; i++) {
            size_t at = (d->ring_at + L - 1 - i) % L;
            const rec *x = &w->recs.v[d->ring[at]];
            fill_alloc(w, x, &out->last_allocs[i], x->free_ev == NO_EVENT);
        }
        out->n_last_allocs = d->ring_n;
    }
    return 0;
}

static int cmp_dev(const void *a, const void *b)
{
    const tfb_gpu_memory_device *x = a, *y = b;
    return (x->device > y->device) - (x->device < y->device);
}

/* ------------------------------------------------------------------------
 * Entry points
 * ---------------------------------------------------------------------- */
void tfb_gpu_memory_result_free(tfb_gpu_memory_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_devices; i++) {
        free(r->devices[i].points);
        free(r->devices[i].live_at_peak);
        free(r->devices[i].last_allocs);
    }
    free(r->devices);
    free(r->churn);
    free(r);
}

static void work_free(work *w)
{
    for (size_t i = 0; i < w->devs.n; i++) {
        tfb_vec_free(&w->devs.v[i].pools);
        tfb_vec_free(&w->devs.v[i].pts);
        free(w->devs.v[i].ring);
        free(w->devs.v[i].churn);
        free(w->devs.v[i].out.points);
        free(w->devs.v[i].out.live_at_peak);
        free(w->devs.v[i].out.last_allocs);
    }
    tfb_vec_free(&w->devs);
    tfb_vec_free(&w->recs);
    tfb_idxtab_free(&w->map);
    free(w->steps);
    free(w->kern);
    free(w->rng);
}

int tfb_gpu_memory_analyze(const tfb_gpu_memory_input *in,
                           const tfb_gpu_memory_opts *opts,
                           tfb_gpu_memory_result **out)
{
    if (!in || !out || (in->n_events && !in->events) ||
        (in->n_kernels && !in->kernels) || (in->n_ranges && !in->ranges) ||
        (in->n_steps && !in->steps))
        return TFB_EINVAL;
    work w;
    memset(&w, 0, sizeof w);
    w.in = in;
    tfb_gpu_memory_opts_init(&w.o);
    if (opts)
        w.o = *opts;
    if (!w.o.max_points)
        w.o.max_points = 1000;
    if (!w.o.top_live)
        w.o.top_live = 20;
    if (!w.o.last_allocs)
        w.o.last_allocs = 20;
    if (w.o.max_points < 4 || w.o.start_ns > w.o.end_ns)
        return TFB_EINVAL;
    for (size_t i = 1; i < in->n_events; i++)
        if (in->events[i].t_ns < in->events[i - 1].t_ns)
            return TFB_EINVAL;

    int err = 0;
    if (in->n_steps) {
        w.steps = malloc(in->n_steps * sizeof *w.steps);
        if (!w.steps)
            return TFB_ENOMEM;
        for (size_t i = 0; i < in->n_steps; i++)
            w.steps[i] = &in->steps[i];
        qsort(w.steps, in->n_steps, sizeof *w.steps, cmp_step);
    }
    w.kern = sorted_ivs(in->kernels, in->n_kernels, &w.kern_maxdur, &err);
    if (!err)
        w.rng = sorted_ivs(in->ranges, in->n_ranges, &w.rng_maxdur, &err);
    if (!err) {
        /* Room before the first look-up (a table needs a capacity). */
        if (tfb_idxtab_reserve(&w.map, 512, rec_hash_at, &w) < 0)
            err = TFB_ENOMEM;
    }
    if (!err)
        err = run_events(&w);

    /* The window's effective ends: the given ones, else the events'. */
    int64_t t0 = w.o.start_ns, t1 = w.o.end_ns;
    if (t0 == INT64_MIN)
        t0 = in->n_events ? in->events[0].t_ns : 0;
    if (t1 == INT64_MAX) {
        t1 = t0;
        for (size_t i = in->n_events; i > 0; i--)
            if (in->events[i - 1].t_ns <= w.o.end_ns) {
                t1 = in->events[i - 1].t_ns;
                break;
            }
        if (t1 < t0)
            t1 = t0;
    }
    for (size_t i = 0; !err && i < w.devs.n; i++)
        err = finish_device(&w, &w.devs.v[i], t0, t1);

    tfb_gpu_memory_result *r = NULL;
    if (!err) {
        r = calloc(1, sizeof *r);
        if (!r)
            err = TFB_ENOMEM;
    }
    if (!err && w.devs.n) {
        r->devices = calloc(w.devs.n, sizeof *r->devices);
        if (!r->devices)
            err = TFB_ENOMEM;
    }
    size_t nchurn = 0;
    for (size_t i = 0; !err && i < w.devs.n; i++)
        for (size_t s = 0; w.devs.v[i].churn && s < in->n_steps; s++)
            if (w.devs.v[i].churn[s].allocs || w.devs.v[i].churn[s].frees)
                nchurn++;
    if (!err && nchurn) {
        r->churn = calloc(nchurn, sizeof *r->churn);
        if (!r->churn)
            err = TFB_ENOMEM;
    }
    if (err) {
        tfb_gpu_memory_result_free(r);
        work_free(&w);
        return err;
    }
    /* Churn by step (sorted order), then device id. */
    for (size_t i = 0; i < w.devs.n; i++) {
        r->devices[i] = w.devs.v[i].out;
        memset(&w.devs.v[i].out, 0, sizeof w.devs.v[i].out);
    }
    r->n_devices = w.devs.n;
    if (w.devs.n)
        qsort(r->devices, w.devs.n, sizeof *r->devices, cmp_dev);
    size_t k = 0;
    for (size_t s = 0; s < in->n_steps; s++)
        for (size_t i = 0; i < r->n_devices; i++) {
            const dev_work *d = NULL;
            for (size_t j = 0; j < w.devs.n; j++)
                if (w.devs.v[j].id == r->devices[i].device)
                    d = &w.devs.v[j];
            if (!d->churn || (!d->churn[s].allocs && !d->churn[s].frees))
                continue;
            r->churn[k] = d->churn[s];
            r->churn[k].step = w.steps[s]->step;
            r->churn[k].device = d->id;
            k++;
        }
    r->n_churn = k;
    r->events_outside_steps = w.outside_steps;
    r->events_skipped = w.skipped;
    work_free(&w);
    *out = r;
    return 0;
}
