/*
 * query_trace_memory.c - the memory_events table over a run's memory
 * data (tfb_trace_memory): GPU allocations and frees, sorted by time,
 * read in place. A range on time_ns is found by binary search (the
 * planner's token for it is "start_ns"), device= is checked per event.
 */
#include "query/query_trace_internal.h"

#include <string.h>

static int mem_load(qt_cursor *c, tfb_run *r)
{
    int rc = tfb_qt_load_trace(c, r);
    if (rc != SQLITE_OK)
        return rc;
    tfb_trace_status st;
    memset(&st, 0, sizeof st);
    /* the call takes c->t's reference (and sets it to NULL) */
    rc = tfb_trace_memory_get(c->ctx->store, r, &c->t, -1, &c->m, &st);
    if (rc < 0)
        return tfb_qt_fail(c, rc, "its memory events could not be loaded",
                           NULL);
    if (st.state == TFB_TRACE_FAILED)
        return tfb_qt_fail(c, TFB_ECORRUPT,
                           "its memory events could not be loaded", st.error);
    return SQLITE_OK;
}

static size_t lower(const tfb_trace_memory *m, int64_t x)
{
    size_t lo = 0, hi = m->events.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->events.v[mid].t_ns < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int walk(qt_cursor *c)
{
    for (; c->pos < c->stop; c->pos++) {
        c->ctx->rows_read++;
        if (!c->b.has_device ||
            c->m->events.v[c->pos].device == c->b.device)
            return 1;
    }
    return 0;
}

static int mem_seek(qt_cursor *c)
{
    if (!c->m)
        return 0;
    c->pos = lower(c->m, c->b.start_lo);
    c->stop = c->b.start_hi == INT64_MAX ? c->m->events.n
                                          : lower(c->m, c->b.start_hi + 1);
    return walk(c);
}

static int mem_next(qt_cursor *c)
{
    c->pos++;
    return walk(c);
}

/* Columns: 0 run, 1 device, 2 time_ns, 3 op, 4 address, 5 bytes,
 * 6 stream, 7 pool, 8 pool_reserved. */
static void mem_column(qt_cursor *c, sqlite3_context *ctx, int col)
{
    const tfb_trace_memory_event *e = &c->m->events.v[c->pos];
    switch (col) {
    case 1:
        sqlite3_result_int64(ctx, e->device);
        return;
    case 2:
        sqlite3_result_int64(ctx, e->t_ns);
        return;
    case 3:
        sqlite3_result_text(ctx,
                            e->op == TFB_TRACE_MEMORY_FREE ? "free" : "alloc",
                            -1, SQLITE_STATIC);
        return;
    case 4:
        sqlite3_result_int64(ctx, (int64_t)e->address);
        return;
    case 5:
        sqlite3_result_int64(ctx, e->bytes);
        return;
    case 6:
        if (e->stream >= 0)
            sqlite3_result_int64(ctx, e->stream);
        return;
    case 7:
        if (e->pool)
            sqlite3_result_int64(ctx, (int64_t)e->pool);
        return;
    case 8:
        if (e->pool_reserved >= 0)
            sqlite3_result_int64(ctx, e->pool_reserved);
        return;
    default:
        return;
    }
}

const qt_table tfb_qt_memory_events = {
    "memory_events",
    "CREATE TABLE x(run TEXT, device INTEGER, time_ns INTEGER, op TEXT, "
    "address INTEGER, bytes INTEGER, stream INTEGER, pool INTEGER, "
    "pool_reserved INTEGER)",
    0, 1, -1, 2, -1, -1, 10000.0,
    mem_load, mem_seek, mem_next, mem_column,
};
