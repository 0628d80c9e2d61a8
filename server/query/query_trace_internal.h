/*
 * query_trace_internal.h - what the trace tables' files share
 * (query_trace_tables.c: the module, the run walk and the constraints;
 * query_trace_run.c: a cursor's hold on one run's data;
 * query_trace_gpu.c, query_trace_host.c, query_trace_memory.c: one table
 * family each). Not for use outside server/query/.
 */
#ifndef TFB_SERVER_QUERY_TRACE_INTERNAL_H
#define TFB_SERVER_QUERY_TRACE_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "trace/trace.h"

/* What the tables of one connection share. */
typedef struct qt_ctx {
    tfb_store *store;
    int64_t rows_read; /* trace rows examined (tfb_trace_rows_read()) */
    int refs;          /* modules and the function holding it */
} qt_ctx;

/* The constraints a scan was given (inclusive bounds; what cannot be
 * told exactly is widened, SQLite checks every row again). */
typedef struct qt_bounds {
    int has_device, has_stream;
    int64_t device, stream;
    int64_t start_lo, start_hi;
    int64_t end_lo, end_hi;
} qt_bounds;

struct qt_table;

typedef struct qt_cursor {
    sqlite3_vtab_cursor base;
    qt_ctx *ctx;
    const struct qt_table *tab;
    tfb_run **runs;
    size_t nruns, irun;
    qt_bounds b;
    int eof;
    int64_t rowid;
    /* the current run's data: at most one of each */
    tfb_run *run;
    tfb_trace *t;
    tfb_trace_host *h;
    tfb_trace_memory *m;
    int64_t *bases; /* host side: each file's correlation offset in t */
    /* the family's position; cur: the current span (GPU tables) */
    size_t lane, pos, stop, cur;
    /* ORDER BY name consumed (GPU tables with a name column, one run):
     * the run's rows as span indexes in name order, walked from opos
     * (backwards for DESC) */
    int ordered, desc;
    uint32_t *order;
    size_t norder, opos;
    /* GPU tables: the current trace's kernel names by kinfo index, text
     * and length (NULL: none), made when a row's name is first asked
     * for, freed with the run: a row's name is two array reads */
    const char **kname;
    int *klen;
    /* the trace whose strings are given to SQLite without a copy
     * (SQLITE_STATIC): the first trace of a one-run scan, held until
     * xClose (values SQLite keeps in its registers, a group's key or a
     * max(), may point into it until the statement ends); NULL until
     * then. Any other trace's strings are copied. */
    tfb_trace *named;
} qt_cursor;

/* A table: its schema, the columns the scan understands (-1: none) and
 * the family's functions over the current run's data. */
typedef struct qt_table {
    const char *name;
    const char *decl; /* CREATE TABLE x(...) */
    int col_run, col_device, col_stream, col_start, col_end;
    int col_name; /* a scan can deliver rows in this column's order */
    double rows_per_run; /* the planner's guess */
    /* Takes run r's data into c (NULL data: the run has none): 0, or an
     * SQLite error code with the message in c->base.pVtab->zErrMsg. */
    int (*load)(qt_cursor *c, tfb_run *r);
    /* Positions on the run's first row within c->b: 1, 0 (none), or -1
     * (out of memory). */
    int (*seek)(qt_cursor *c);
    /* The run's next row: 1, or 0 (the run has no more). */
    int (*next)(qt_cursor *c);
    void (*column)(qt_cursor *c, sqlite3_context *ctx, int col);
} qt_table;

extern const qt_table tfb_qt_kernels, tfb_qt_memcpy, tfb_qt_memset,
    tfb_qt_comms, tfb_qt_host_spans, tfb_qt_nvtx, tfb_qt_memory_events;

/* Sets the cursor's error: "run 'NAME': WHAT: MSG" (SQLITE_ERROR), or
 * SQLITE_NOMEM for TFB_ENOMEM. */
int tfb_qt_fail(qt_cursor *c, int rc, const char *what, const char *msg);
/* The run's GPU trace into c->t (NULL: the run has none). */
int tfb_qt_load_trace(qt_cursor *c, tfb_run *r);
/* Releases whatever run data c holds (but c->named: tfb_qt_close). */
void tfb_qt_unload(qt_cursor *c);
/* Releases everything, c->named too (xClose). */
void tfb_qt_close(qt_cursor *c);
/* Sets ctx to s (len bytes, or NULL for NULL) from the current run's
 * trace: without a copy when that trace is c->named. */
void tfb_qt_result_str(qt_cursor *c, sqlite3_context *ctx, const char *s,
                       int len);

#endif
