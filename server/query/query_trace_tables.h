/*
 * query_trace_tables.h - the trace-side SQL tables of the query layer
 * (server/query/, above the analyses, below the plugins): kernels, memcpy,
 * memset, comms, host_spans, nvtx and memory_events, as SQLite
 * virtual-table modules over the trace layer (server/trace/trace.h).
 * server/API.md "Trace tables" documents every table and column.
 *
 * The tables read the trace layer's loaded data in place (no copy of the
 * rows): a scan gets a run's trace with the trace layer's getters (one
 * reference), walks its spans and releases it before it takes the next
 * run's, so a cursor pins at most TFB_QUERY_TRACE_PINNED_RUNS runs' data
 * at a time. A run's trace is loaded
 * only when a scan reaches that run (`run = 'x'` reaches one run), and a
 * run whose trace fails to load ends the query with an error naming the
 * run and the file.
 *
 * Thread-safety: a connection is used by one thread at a time (SQLite's
 * rule for the query layer's connections); the store may be read by any
 * number of connections at once.
 */
#ifndef TFB_SERVER_QUERY_TRACE_TABLES_H
#define TFB_SERVER_QUERY_TRACE_TABLES_H

#include <stdint.h>

#include "store/store.h"

struct sqlite3;

/* Runs whose data a cursor holds at once: the run it reads (its
 * reference to the run's trace, host side or memory data is released
 * before the next run's is taken), plus, for a GPU table, the trace of
 * the first one-run scan it made, held until the cursor closes because
 * its kernel names were handed to SQLite without a copy (a group's key
 * or a max() may point into it until the statement ends;
 * query_trace_gpu.c). So a scan over every run of a big logdir costs one
 * run's trace in memory, and a cursor filtered again on other runs (a
 * correlated subquery) at most two, never all of them. */
#define TFB_QUERY_TRACE_PINNED_RUNS 2

/* Registers the trace-side modules on db as eponymous-only virtual
 * tables: each table exists in the "main" schema under its module's name
 * (kernels, memcpy, memset, comms, host_spans, nvtx, memory_events) as
 * soon as this returns, with no CREATE statement. Also registers the SQL
 * function tfb_trace_rows_read(): the trace rows the tables of this
 * connection have examined so far (an index that works reads few).
 * store must outlive db. Returns 0, TFB_ENOMEM or TFB_EINVAL (SQLite
 * refused a registration). Called by tfb_query_open once per
 * connection. */
int tfb_query_trace_tables_register(struct sqlite3 *db, tfb_store *store);

#endif
