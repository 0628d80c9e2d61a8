/*
 * query_trace_host.c - the host-side tables over a run's host side
 * (tfb_trace_host): host_spans (CPU threads' ops and CUDA runtime/driver
 * calls) and nvtx (NVTX ranges and marks), read in place.
 *
 * The host side's spans are sorted by lane, then start: a scan walks the
 * lanes of its table's kind (a thread's CPU lane or its NVTX lane) and in
 * each the spans whose start is in [start_lo, min(start_hi, end_hi)]
 * (binary search), so a time window reads its spans only. The GPU trace
 * is held too (when the run has one) to give runtime calls the
 * correlation id their kernels carry in the kernels table.
 */
#include "query/query_trace_internal.h"

#include <stdlib.h>
#include <string.h>

static int is_nvtx(const qt_cursor *c)
{
    return c->tab == &tfb_qt_nvtx;
}

static int host_load(qt_cursor *c, tfb_run *r)
{
    char err[512] = "";
    int rc = tfb_trace_host_get(c->ctx->store, r, &c->h, err, sizeof err);
    if (rc < 0)
        return tfb_qt_fail(c, rc, "its host trace could not be loaded",
                           err);
    if (!c->h) {
        /* no host events: fine, unless the run's trace files could not
         * be read at all (the same error as the GPU tables') */
        rc = tfb_qt_load_trace(c, r);
        if (c->t) {
            tfb_trace_release(c->t);
            c->t = NULL;
        }
        return rc;
    }
    if (is_nvtx(c))
        return SQLITE_OK;
    rc = tfb_qt_load_trace(c, r);
    if (rc != SQLITE_OK)
        return rc;
    c->bases = malloc((c->h->nfiles ? c->h->nfiles : 1) * sizeof *c->bases);
    if (!c->bases)
        return SQLITE_NOMEM;
    tfb_trace_host_link(c->h, c->t, c->bases);
    return SQLITE_OK;
}

/* First index of h's spans at or after (lane, start). */
static size_t lower(const tfb_trace_host *h, size_t lane, int64_t start)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const tfb_trace_host_event *e = &h->spans[mid];
        if (e->lane < lane || (e->lane == lane && e->start < start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int walk(qt_cursor *c, int fresh)
{
    const tfb_trace_host *h = c->h;
    int want_range = is_nvtx(c);
    while (c->lane < h->nlanes) {
        if (fresh) {
            if (!h->lanes[c->lane].is_range != !want_range) {
                c->lane++;
                continue;
            }
            int64_t hi = c->b.start_hi < c->b.end_hi ? c->b.start_hi
                                                      : c->b.end_hi;
            c->pos = lower(h, c->lane, c->b.start_lo);
            c->stop = hi == INT64_MAX ? lower(h, c->lane + 1, INT64_MIN)
                                      : lower(h, c->lane, hi + 1);
            fresh = 0;
        }
        for (; c->pos < c->stop; c->pos++) {
            const tfb_trace_host_event *e = &h->spans[c->pos];
            c->ctx->rows_read++;
            if (e->end >= c->b.end_lo && e->end <= c->b.end_hi)
                return 1;
        }
        c->lane++;
        fresh = 1;
    }
    return 0;
}

static int host_seek(qt_cursor *c)
{
    if (!c->h)
        return 0;
    c->lane = 0;
    return walk(c, 1);
}

static int host_next(qt_cursor *c)
{
    c->pos++;
    return walk(c, 0);
}

/* The thread of a lane label ("CPU <thread>", "NVTX <thread>"). */
static const char *thread_of(const char *label)
{
    const char *sp = strchr(label, ' ');
    return sp ? sp + 1 : label;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case TFB_TRACE_HOST_OP:
        return "op";
    case TFB_TRACE_HOST_RUNTIME:
        return "runtime";
    case TFB_TRACE_HOST_RANGE:
        return "range";
    default:
        return "mark";
    }
}

/* Columns: 0 run, 1 thread, 2 kind, 3 name, 4 start_ns, 5 end_ns,
 * 6 dur_ns, 7 depth, then host_spans' 8 self_ns, 9 correlation. */
static void host_column(qt_cursor *c, sqlite3_context *ctx, int col)
{
    const tfb_trace_host *h = c->h;
    const tfb_trace_host_event *e = &h->spans[c->pos];
    switch (col) {
    case 1:
        sqlite3_result_text(ctx, thread_of(h->lanes[e->lane].label), -1,
                            SQLITE_TRANSIENT);
        return;
    case 2:
        sqlite3_result_text(ctx, kind_name(e->kind), -1, SQLITE_STATIC);
        return;
    case 3:
        if (e->name < h->nstrings && h->strings[e->name])
            sqlite3_result_text(ctx, h->strings[e->name], -1,
                                SQLITE_TRANSIENT);
        return;
    case 4:
        sqlite3_result_int64(ctx, e->start);
        return;
    case 5:
        sqlite3_result_int64(ctx, e->end);
        return;
    case 6:
        sqlite3_result_int64(ctx, e->end - e->start);
        return;
    case 7:
        sqlite3_result_int64(ctx, e->depth);
        return;
    case 8:
        sqlite3_result_int64(ctx, e->self_ns);
        return;
    case 9: {
        int64_t corr = c->bases ? tfb_trace_host_correlation(e, c->bases)
                                : -1;
        if (corr >= 0)
            sqlite3_result_int64(ctx, corr);
        return;
    }
    default:
        return;
    }
}

const qt_table tfb_qt_host_spans = {
    "host_spans",
    "CREATE TABLE x(run TEXT, thread TEXT, kind TEXT, name TEXT, "
    "start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, depth INTEGER, "
    "self_ns INTEGER, correlation INTEGER)",
    0, -1, -1, 4, 5, -1, 100000.0,
    host_load, host_seek, host_next, host_column,
};

const qt_table tfb_qt_nvtx = {
    "nvtx",
    "CREATE TABLE x(run TEXT, thread TEXT, kind TEXT, name TEXT, "
    "start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, depth INTEGER)",
    0, -1, -1, 4, 5, -1, 1000.0,
    host_load, host_seek, host_next, host_column,
};
