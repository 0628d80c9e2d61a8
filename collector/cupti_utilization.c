/*
 * cupti_utilization.c - per-device GPU utilization over fixed buckets: the
 * fraction of each bucket during which at least one kernel ran (the union
 * of kernel intervals, so concurrent kernels are not counted twice).
 *
 * Kernel records reach us in buffers, late and out of order, so intervals
 * are kept until their bucket is emitted; the tracer emits with a lag of
 * one bucket and finishes at stop.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/cupti_internal.h"

typedef struct span {
    int64_t s, e;
} span;

typedef struct dev_state {
    uint32_t id;
    int64_t cursor; /* next bucket to emit */
    span *v;
    size_t n, cap;
} dev_state;

struct tfb_gpu_util {
    int64_t origin, interval;
    dev_state *devs;
    size_t ndev, capdev;
    uint64_t late_ns;
    int64_t max_end;
};

tfb_gpu_util *tfb_gpu_util_new(int64_t origin_ns, int64_t interval_ns)
{
    if (interval_ns <= 0)
        return NULL;
    tfb_gpu_util *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->origin = origin_ns;
    u->interval = interval_ns;
    u->max_end = origin_ns;
    return u;
}

void tfb_gpu_util_free(tfb_gpu_util *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->ndev; i++)
        free(u->devs[i].v);
    free(u->devs);
    free(u);
}

static dev_state *get_dev(tfb_gpu_util *u, uint32_t device)
{
    for (size_t i = 0; i < u->ndev; i++)
        if (u->devs[i].id == device)
            return &u->devs[i];
    if (u->ndev == u->capdev) {
        size_t nc = u->capdev ? u->capdev * 2 : 4;
        dev_state *nd = realloc(u->devs, nc * sizeof *nd);
        if (!nd)
            return NULL;
        u->devs = nd;
        u->capdev = nc;
    }
    /* Keep devices sorted by id so emission order is stable. */
    size_t pos = u->ndev;
    while (pos > 0 && u->devs[pos - 1].id > device) {
        u->devs[pos] = u->devs[pos - 1];
        pos--;
    }
    memset(&u->devs[pos], 0, sizeof u->devs[pos]);
    u->devs[pos].id = device;
    u->ndev++;
    return &u->devs[pos];
}

int tfb_gpu_util_add_device(tfb_gpu_util *u, uint32_t device)
{
    if (!u)
        return TFB_EINVAL;
    return get_dev(u, device) ? 0 : TFB_ENOMEM;
}

int tfb_gpu_util_add(tfb_gpu_util *u, uint32_t device, int64_t start_ns,
                     int64_t end_ns)
{
    if (!u || end_ns < start_ns)
        return TFB_EINVAL;
    dev_state *d = get_dev(u, device);
    if (!d)
        return TFB_ENOMEM;
    int64_t open_from = u->origin + d->cursor * u->interval;
    if (start_ns < open_from) {
        int64_t cut = end_ns < open_from ? end_ns : open_from;
        u->late_ns += (uint64_t)(cut - start_ns);
        start_ns = cut;
    }
    if (end_ns > u->max_end)
        u->max_end = end_ns;
    if (end_ns <= start_ns)
        return 0;
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 256;
        span *nv = realloc(d->v, nc * sizeof *nv);
        if (!nv)
            return TFB_ENOMEM;
        d->v = nv;
        d->cap = nc;
    }
    d->v[d->n].s = start_ns;
    d->v[d->n].e = end_ns;
    d->n++;
    return 0;
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

/* Sorts and merges d's intervals into disjoint ones (same union). */
static void merge(dev_state *d)
{
    if (d->n < 2)
        return;
    qsort(d->v, d->n, sizeof *d->v, cmp_span);
    size_t o = 0;
    for (size_t i = 1; i < d->n; i++) {
        if (d->v[i].s <= d->v[o].e) {
            if (d->v[i].e > d->v[o].e)
                d->v[o].e = d->v[i].e;
        } else {
            d->v[++o] = d->v[i];
        }
    }
    d->n = o + 1;
}

/* Busy ns of the merged intervals inside [bs, be). */
static int64_t busy_in(const dev_state *d, int64_t bs, int64_t be)
{
    int64_t sum = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i].s >= be)
            break;
        int64_t s = d->v[i].s > bs ? d->v[i].s : bs;
        int64_t e = d->v[i].e < be ? d->v[i].e : be;
        if (e > s)
            sum += e - s;
    }
    return sum;
}

static void drop_before(dev_state *d, int64_t t)
{
    size_t o = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].e > t)
            d->v[o++] = d->v[i];
    d->n = o;
}

void tfb_gpu_util_emit_until(tfb_gpu_util *u, int64_t t_ns,
                             tfb_gpu_util_emit_fn fn, void *user)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->ndev; i++) {
        dev_state *d = &u->devs[i];
        merge(d);
        for (;;) {
            int64_t bs = u->origin + d->cursor * u->interval;
            int64_t be = bs + u->interval;
            if (be > t_ns)
                break;
            double f = (double)busy_in(d, bs, be) / (double)u->interval;
            if (fn)
                fn(user, d->id, d->cursor, be, f);
            d->cursor++;
            drop_before(d, be);
        }
    }
}

void tfb_gpu_util_finish(tfb_gpu_util *u, int64_t t_ns,
                         tfb_gpu_util_emit_fn fn, void *user)
{
    if (!u)
        return;
    if (u->max_end > t_ns)
        t_ns = u->max_end;
    tfb_gpu_util_emit_until(u, t_ns, fn, user);
    for (size_t i = 0; i < u->ndev; i++) {
        dev_state *d = &u->devs[i];
        int64_t bs = u->origin + d->cursor * u->interval;
        if (t_ns <= bs)
            continue;
        double f = (double)busy_in(d, bs, t_ns) / (double)(t_ns - bs);
        if (fn)
            fn(user, d->id, d->cursor, t_ns, f);
        d->cursor++;
        d->n = 0;
    }
}

uint64_t tfb_gpu_util_late_ns(const tfb_gpu_util *u)
{
    return u ? u->late_ns : 0;
}
