/*
 * query_trace_gpu.c - the device-work tables (kernels, memcpy, memset,
 * comms) over a run's GPU trace (tfb_trace): the spans of each GPU lane
 * (device, stream) in start order, read in place.
 *
 * A scan walks the lanes that meet device= and stream=, and in each the
 * spans whose start is in [start_lo, min(start_hi, end_hi)] (binary
 * search: start <= end, so an end bound is also a start bound); a lower
 * bound on end_ns skips, through the lane's max-end tree (trace.h), every
 * 16, 256, ... spans that all end before it. So `start_ns BETWEEN a AND
 * b` examines the window's spans, not the trace. Lanes mix kernels,
 * copies and memsets: a table skips the other kinds as it walks.
 */
#include "query/query_trace_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/ranks_analysis.h"

enum {
    FAM_KERNELS,
    FAM_MEMCPY,
    FAM_MEMSET,
    FAM_COMMS
};

static int gpu_load(qt_cursor *c, tfb_run *r)
{
    int rc = tfb_qt_load_trace(c, r);
    if (rc != SQLITE_OK || !c->t)
        return rc;
    if (c->t == c->named) {
        tfb_trace_release(c->t); /* held once already, by c->named */
    } else if (!c->named && c->nruns == 1) {
        /* a one-run scan: keeping its trace to the statement's end costs
         * nothing (the cursor holds it anyway) and spares SQLite a copy
         * of each row's name */
        c->named = c->t;
    }
    return SQLITE_OK;
}

static int fam_of(const qt_cursor *c)
{
    if (c->tab == &tfb_qt_kernels)
        return FAM_KERNELS;
    if (c->tab == &tfb_qt_memcpy)
        return FAM_MEMCPY;
    if (c->tab == &tfb_qt_memset)
        return FAM_MEMSET;
    return FAM_COMMS;
}

static const char *span_name(const tfb_trace *t, const tfb_trace_span *s)
{
    const tfb_trace_kinfo *k = tfb_trace_span_kinfo(t, s);
    return k ? tfb_trace_str(t, k->name, NULL) : NULL;
}

/* The current row's kernel name and its length (NULL: none), from the
 * cursor's table of the trace's names by kinfo (made at the first call
 * for this trace: one look-up and strlen a distinct kernel, not a row).
 * 0, or SQLITE_NOMEM. */
static int row_name(qt_cursor *c, const tfb_trace_span *s, const char **out,
                    int *len)
{
    const tfb_trace *t = c->t;
    *out = NULL;
    *len = 0;
    if (s->kind != TFB_TRACE_KERNEL || s->info < 0 ||
        (size_t)s->info >= t->nkinfo)
        return SQLITE_OK;
    if (!c->kname) {
        size_t nk = t->nkinfo;
        c->kname = malloc(nk * sizeof *c->kname);
        c->klen = malloc(nk * sizeof *c->klen);
        if (!c->kname || !c->klen) {
            free(c->kname);
            free(c->klen);
            c->kname = NULL;
            c->klen = NULL;
            return SQLITE_NOMEM;
        }
        for (size_t k = 0; k < nk; k++) {
            const char *n = tfb_trace_str(t, t->kinfo[k].name, NULL);
            size_t l = n ? strlen(n) : 0;
            c->kname[k] = n;
            c->klen[k] = l > INT32_MAX ? INT32_MAX : (int)l;
        }
    }
    *out = c->kname[s->info];
    *len = c->klen[s->info];
    return SQLITE_OK;
}

static void result_name(qt_cursor *c, sqlite3_context *ctx,
                        const tfb_trace_span *s)
{
    const char *n;
    int len;
    if (row_name(c, s, &n, &len) != SQLITE_OK)
        sqlite3_result_error_nomem(ctx);
    else
        tfb_qt_result_str(c, ctx, n, len);
}

/* Whether span s is a row of the cursor's table (kind and bounds). */
static int wanted(const qt_cursor *c, const tfb_trace_span *s)
{
    if (s->end < c->b.end_lo || s->end > c->b.end_hi)
        return 0;
    switch (fam_of(c)) {
    case FAM_KERNELS:
        return s->kind == TFB_TRACE_KERNEL;
    case FAM_MEMCPY:
        return s->kind == TFB_TRACE_MEMCPY;
    case FAM_MEMSET:
        return s->kind == TFB_TRACE_MEMSET;
    default:
        return s->kind == TFB_TRACE_KERNEL &&
               tfb_ranks_classify_kernel(span_name(c->t, s)) ==
                   TFB_RANKS_COMM;
    }
}

static int lane_ok(const qt_cursor *c, const tfb_trace_lane *l)
{
    if (l->host)
        return 0;
    if (c->b.has_device && l->device != c->b.device)
        return 0;
    if (c->b.has_stream && l->stream != c->b.stream)
        return 0;
    return 1;
}

/* First index i in [0, l->n) whose span starts at or after x (l->n when
 * none). */
static size_t lower_start(const tfb_trace *t, const tfb_trace_lane *l,
                          int64_t x)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->spans[l->off + mid].start < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first index >= i (relative to the lane) whose span ends at or after
 * lo: a block of 16^(k+1) spans aligned on its size is skipped whole when
 * its tree maximum is below lo (trace.h: level k's entry j covers spans
 * [j 16^(k+1), (j+1) 16^(k+1))). Spans it looks at one by one count as
 * read. */
static size_t next_end_from(qt_cursor *c, const tfb_trace_lane *l, size_t i,
                            size_t stop)
{
    const int64_t lo = c->b.end_lo;
    const tfb_trace_span *sp = c->t->spans + l->off;
    while (i < stop) {
        /* the largest aligned block ending before lo: a block whose
         * maximum reaches lo has every block above it reach lo too */
        size_t skip = 0, w = TFB_TRACE_TREE_FANOUT;
        if (lo != INT64_MIN)
            for (size_t k = 0; k < l->levels && i % w == 0;
                 k++, w *= TFB_TRACE_TREE_FANOUT) {
                if (l->tree[l->tree_off[k] + i / w] >= lo)
                    break;
                skip = w;
            }
        if (skip) {
            i += skip;
            continue;
        }
        c->ctx->rows_read++;
        if (sp[i].end >= lo)
            return i;
        i++;
    }
    return stop;
}

/* The lane's spans [*pos, *stop) whose start is within the bounds (an
 * upper bound on end_ns bounds the start too). */
static void lane_window(const qt_cursor *c, const tfb_trace_lane *l,
                        size_t *pos, size_t *stop)
{
    int64_t hi = c->b.start_hi < c->b.end_hi ? c->b.start_hi : c->b.end_hi;
    *pos = c->b.start_lo == INT64_MIN ? 0
                                      : lower_start(c->t, l, c->b.start_lo);
    *stop = hi == INT64_MAX ? l->n
            : hi == INT64_MIN ? 0
                              : lower_start(c->t, l, hi + 1);
}

/* From span pos of the current lane (or the start of lane c->lane when
 * fresh), the next wanted span, crossing lanes: 1 found, 0 none. */
static int walk(qt_cursor *c, int fresh)
{
    const tfb_trace *t = c->t;
    while (c->lane < t->nlanes) {
        const tfb_trace_lane *l = &t->lanes[c->lane];
        if (fresh) {
            if (!lane_ok(c, l)) {
                c->lane++;
                continue;
            }
            lane_window(c, l, &c->pos, &c->stop);
            fresh = 0;
        }
        while (c->pos < c->stop) {
            size_t i = next_end_from(c, l, c->pos, c->stop);
            if (i >= c->stop)
                break;
            c->pos = i;
            if (wanted(c, &t->spans[l->off + i])) {
                c->cur = l->off + i;
                return 1;
            }
            c->pos++;
        }
        c->lane++;
        fresh = 1;
    }
    return 0;
}

/* ---- ORDER BY name ------------------------------------------------------
 * When the planner let the scan deliver the run's rows in name order
 * (xBestIndex: one run), the rows within the bounds are put in that
 * order once, by a counting sort on each name's rank: one walk counts the
 * rows of each name, a second places their span indexes. Names are
 * ranked by their bytes (SQLite's BINARY collation), rows without a name
 * first (NULL sorts first); equal names from different strings share a
 * rank. The order costs 4 bytes a row of the window, an eighth of the
 * span's own 32, released with the run. */

typedef struct named {
    const char *name;
    uint32_t k;
} named;

static int cmp_named(const void *a, const void *b)
{
    const char *x = ((const named *)a)->name, *y = ((const named *)b)->name;
    if (!x || !y)
        return (x != NULL) - (y != NULL);
    return strcmp(x, y);
}

/* rank[k] for each kinfo k (rank 0: no name), *nranks. */
static int32_t *name_ranks(const tfb_trace *t, size_t *nranks)
{
    size_t nk = t->nkinfo;
    named *v = malloc((nk ? nk : 1) * sizeof *v);
    int32_t *rank = malloc((nk ? nk : 1) * sizeof *rank);
    if (!v || !rank) {
        free(v);
        free(rank);
        return NULL;
    }
    for (size_t k = 0; k < nk; k++) {
        v[k].name = tfb_trace_str(t, t->kinfo[k].name, NULL);
        v[k].k = (uint32_t)k;
    }
    qsort(v, nk, sizeof *v, cmp_named);
    int32_t r = 0;
    for (size_t i = 0; i < nk; i++) {
        if (!v[i].name)
            rank[v[i].k] = 0;
        else {
            if (i == 0 || !v[i - 1].name || strcmp(v[i - 1].name, v[i].name))
                r++;
            rank[v[i].k] = r;
        }
    }
    free(v);
    *nranks = (size_t)r + 1;
    return rank;
}

static int32_t rank_of(const tfb_trace *t, const int32_t *rank,
                       const tfb_trace_span *s)
{
    return s->info >= 0 && (size_t)s->info < t->nkinfo ? rank[s->info] : 0;
}

/* One pass of the counting sort over the run's rows in walk order:
 * counts the rows of each rank (place 0: next[rank + 1]++) or puts each
 * row's span index at its place (place 1: order[next[rank]++]). With no
 * lower bound on end_ns the max-end tree has nothing to skip, so each
 * lane's start window is read in one tight loop (the order of 10 M rows
 * is made in two sequential reads of the spans), not a walk() a row. */
static void rank_pass(qt_cursor *c, const int32_t *rank, size_t *next,
                      int place)
{
    const tfb_trace *t = c->t;
    int fam = fam_of(c);
    if (c->b.end_lo != INT64_MIN || fam == FAM_COMMS) {
        /* the tree, or a name test a row: walk() */
        c->lane = 0;
        for (int f = walk(c, 1); f; c->pos++, f = walk(c, 0)) {
            int32_t r = rank_of(t, rank, &t->spans[c->cur]);
            if (place)
                c->order[next[r]++] = (uint32_t)c->cur;
            else
                next[r + 1]++;
        }
        return;
    }
    uint8_t kind = fam == FAM_KERNELS  ? TFB_TRACE_KERNEL
                   : fam == FAM_MEMCPY ? TFB_TRACE_MEMCPY
                                       : TFB_TRACE_MEMSET;
    const int64_t end_hi = c->b.end_hi;
    for (size_t li = 0; li < t->nlanes; li++) {
        const tfb_trace_lane *l = &t->lanes[li];
        if (!lane_ok(c, l))
            continue;
        size_t pos, stop;
        lane_window(c, l, &pos, &stop);
        if (stop > pos)
            c->ctx->rows_read += (int64_t)(stop - pos);
        const tfb_trace_span *sp = t->spans + l->off;
        for (size_t i = pos; i < stop; i++) {
            if (sp[i].kind != kind || sp[i].end > end_hi)
                continue;
            int32_t r = rank_of(t, rank, &sp[i]);
            if (place)
                c->order[next[r]++] = (uint32_t)(l->off + i);
            else
                next[r + 1]++;
        }
    }
}

/* Builds c->order for the loaded run: 0, or SQLITE_NOMEM. */
static int build_order(qt_cursor *c)
{
    const tfb_trace *t = c->t;
    if (t->nspans > UINT32_MAX)
        return SQLITE_NOMEM; /* past the load budgets: never */
    size_t nranks = 0;
    int32_t *rank = name_ranks(t, &nranks);
    size_t *next = rank ? calloc(nranks + 1, sizeof *next) : NULL;
    if (!next) {
        free(rank);
        return SQLITE_NOMEM;
    }
    rank_pass(c, rank, next, 0);
    for (size_t r = 1; r <= nranks; r++)
        next[r] += next[r - 1];
    size_t total = next[nranks];
    c->order = malloc((total ? total : 1) * sizeof *c->order);
    if (!c->order) {
        free(rank);
        free(next);
        return SQLITE_NOMEM;
    }
    /* the second pass reads the same rows again: counted once */
    int64_t read = c->ctx->rows_read;
    rank_pass(c, rank, next, 1);
    c->ctx->rows_read = read;
    c->norder = total;
    free(rank);
    free(next);
    return SQLITE_OK;
}

/* Rows ahead of the current one whose span is fetched into the cache
 * while SQLite works on this row: in name order the spans are read out of
 * their memory order (a name's rows are far apart in a big trace), so
 * each row would otherwise wait for memory (10 M kernels: about 100 ns a
 * row, most of the query's time). 8 rows of SQLite's work cover a memory
 * fetch; a prefetch past the end is not made. */
#define QT_ORDER_PREFETCH 8

static int ordered_at(qt_cursor *c)
{
    if (c->opos >= c->norder)
        return 0;
    size_t i = c->desc ? c->norder - 1 - c->opos : c->opos;
    c->cur = c->order[i];
    if (c->opos + QT_ORDER_PREFETCH < c->norder)
        __builtin_prefetch(&c->t->spans[c->order[c->desc ? i - QT_ORDER_PREFETCH
                                                         : i + QT_ORDER_PREFETCH]]);
    return 1;
}

static int gpu_seek(qt_cursor *c)
{
    if (!c->t)
        return 0;
    if (c->ordered) {
        if (build_order(c) != SQLITE_OK)
            return -1;
        c->opos = 0;
        return ordered_at(c);
    }
    c->lane = 0;
    return walk(c, 1);
}

static int gpu_next(qt_cursor *c)
{
    if (c->ordered) {
        c->opos++;
        return ordered_at(c);
    }
    c->pos++;
    return walk(c, 0);
}

static const tfb_trace_span *cur_span(const qt_cursor *c)
{
    return &c->t->spans[c->cur];
}

/* The common columns: 0 run (the module's), 1 device, 2 stream,
 * 3 start_ns, 4 end_ns, 5 dur_ns; 1 when col was one of them. */
static int common_column(qt_cursor *c, sqlite3_context *ctx, int col)
{
    const tfb_trace_span *s = cur_span(c);
    const tfb_trace_lane *l = &c->t->lanes[s->lane];
    switch (col) {
    case 1:
        sqlite3_result_int64(ctx, l->device);
        return 1;
    case 2:
        sqlite3_result_int64(ctx, l->stream);
        return 1;
    case 3:
        sqlite3_result_int64(ctx, s->start);
        return 1;
    case 4:
        sqlite3_result_int64(ctx, s->end);
        return 1;
    case 5:
        sqlite3_result_int64(ctx, s->end - s->start);
        return 1;
    default:
        return 0;
    }
}

static void corr_result(sqlite3_context *ctx, const tfb_trace_span *s)
{
    if (s->correlation < 0)
        sqlite3_result_null(ctx);
    else
        sqlite3_result_int64(ctx, s->correlation);
}

static void kernels_column(qt_cursor *c, sqlite3_context *ctx, int col)
{
    if (common_column(c, ctx, col))
        return;
    const tfb_trace_span *s = cur_span(c);
    if (col == 6) {
        result_name(c, ctx, s);
        return;
    }
    const tfb_trace_kinfo *k = tfb_trace_span_kinfo(c->t, s);
    switch (col) {
    case 7: case 8: case 9:
        if (k)
            sqlite3_result_int64(ctx, k->grid[col - 7]);
        return;
    case 10: case 11: case 12:
        if (k)
            sqlite3_result_int64(ctx, k->block[col - 10]);
        return;
    case 13:
        if (k)
            sqlite3_result_int64(ctx, k->registers);
        return;
    case 14:
        if (k)
            sqlite3_result_int64(ctx, k->shared_mem);
        return;
    case 15:
        corr_result(ctx, s);
        return;
    default:
        return;
    }
}

static void memcpy_column(qt_cursor *c, sqlite3_context *ctx, int col)
{
    if (common_column(c, ctx, col))
        return;
    const tfb_trace_span *s = cur_span(c);
    switch (col) {
    case 6:
        sqlite3_result_text(ctx, tfb_trace_copy_kind_label(s->copy_kind), -1,
                            SQLITE_STATIC);
        return;
    case 7:
        sqlite3_result_int64(ctx, tfb_trace_span_bytes(c->t, s));
        return;
    case 8:
        corr_result(ctx, s);
        return;
    default:
        return;
    }
}

static void memset_column(qt_cursor *c, sqlite3_context *ctx, int col)
{
    if (common_column(c, ctx, col))
        return;
    const tfb_trace_span *s = cur_span(c);
    if (col == 6)
        sqlite3_result_int64(ctx, tfb_trace_span_bytes(c->t, s));
    else if (col == 7)
        corr_result(ctx, s);
}

/* The collective an NCCL kernel runs, from its name (ncclKernel_AllReduce_
 * RING_LL_Sum_float, ncclDevKernel_AllGather_RING_LL,
 * ncclAllReduceRingLLKernel_sum_f32): the first of these words found, in
 * any case; longer words first so that AllReduce is not Reduce. */
static const char *collective_of(const char *name)
{
    static const char *const words[] = {
        "ReduceScatter", "AllReduce", "AllGather", "AllToAll", "SendRecv",
        "Broadcast",     "Reduce",    "Send",      "Recv",
    };
    if (!name)
        return NULL;
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t n = strlen(words[w]);
        for (const char *p = name; *p; p++)
            if (!strncasecmp(p, words[w], n))
                return words[w];
    }
    return NULL;
}

/* The message size of an NCCL kernel: the trace's collective of the same
 * device and GPU span (trace.h, tfb_trace_collectives: sorted by start, so
 * a binary search); 0 when none or unknown. */
static uint64_t comm_bytes(const tfb_trace *t, const tfb_trace_span *s)
{
    size_t n;
    const tfb_trace_collective *v = tfb_trace_collectives(t, &n);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start < s->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    int32_t dev = tfb_trace_span_device(t, s);
    for (; lo < n && v[lo].start == s->start; lo++)
        if (v[lo].end == s->end && v[lo].device == dev)
            return v[lo].bytes;
    return 0;
}

static void comms_column(qt_cursor *c, sqlite3_context *ctx, int col)
{
    if (common_column(c, ctx, col))
        return;
    const tfb_trace_span *s = cur_span(c);
    switch (col) {
    case 6: {
        const char *coll = collective_of(span_name(c->t, s));
        if (coll)
            sqlite3_result_text(ctx, coll, -1, SQLITE_STATIC);
        return;
    }
    case 7: { /* bytes: the collective's message size, when known */
        uint64_t b = comm_bytes(c->t, s);
        if (b)
            sqlite3_result_int64(ctx, (sqlite3_int64)b);
        return;
    }
    case 8: /* group_name: the trace layer keeps no process group name */
        return;
    case 9:
        result_name(c, ctx, s);
        return;
    case 10:
        corr_result(ctx, s);
        return;
    default:
        return;
    }
}

/* A kernel-sized guess per run for the planner. */
#define ROWS_GUESS 100000.0

const qt_table tfb_qt_kernels = {
    "kernels",
    "CREATE TABLE x(run TEXT, device INTEGER, stream INTEGER, "
    "start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, name TEXT, "
    "grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, "
    "block_y INTEGER, block_z INTEGER, registers INTEGER, "
    "shared_mem INTEGER, correlation INTEGER)",
    0, 1, 2, 3, 4, 6, ROWS_GUESS,
    gpu_load, gpu_seek, gpu_next, kernels_column,
};

const qt_table tfb_qt_memcpy = {
    "memcpy",
    "CREATE TABLE x(run TEXT, device INTEGER, stream INTEGER, "
    "start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, kind TEXT, "
    "bytes INTEGER, correlation INTEGER)",
    0, 1, 2, 3, 4, -1, ROWS_GUESS,
    gpu_load, gpu_seek, gpu_next, memcpy_column,
};

const qt_table tfb_qt_memset = {
    "memset",
    "CREATE TABLE x(run TEXT, device INTEGER, stream INTEGER, "
    "start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, bytes INTEGER, "
    "correlation INTEGER)",
    0, 1, 2, 3, 4, -1, ROWS_GUESS,
    gpu_load, gpu_seek, gpu_next, memset_column,
};

const qt_table tfb_qt_comms = {
    "comms",
    "CREATE TABLE x(run TEXT, device INTEGER, stream INTEGER, "
    "start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, collective TEXT, "
    "bytes INTEGER, group_name TEXT, name TEXT, correlation INTEGER)",
    0, 1, 2, 3, 4, 9, ROWS_GUESS,
    gpu_load, gpu_seek, gpu_next, comms_column,
};
