/*
 * query.h - the query layer's front header (issue 30): SQL over the live
 * store through SQLite virtual tables, between the analysis layer and the
 * plugins. `tfboard query` / `tfboard export`, `POST /data/query` and the
 * run filters (`--where`, the page's expression filter) all go through it.
 *
 * A tfb_query is one in-memory SQLite connection with every table of
 * server/API.md "SQL tables" registered (query_tables.h lists them). The
 * tables read the store where it is (no copy of a run's data): scalar
 * series are decoded TFB_QUERY_CHUNK points at a time without a pin, the
 * other kinds one run at a time, so what a scan holds is bounded by one
 * run's rows of one table, never by the logdir.
 *
 * Safety. Every statement passes an authorizer that allows reads of our
 * tables and read-only functions only: ATTACH/DETACH, every write
 * (INSERT/UPDATE/DELETE/CREATE/DROP/ALTER), PRAGMA (but the read-only
 * table_info/table_xinfo/table_list), transactions, ANALYZE and
 * load_extension / fts3_tokenizer are refused, and a statement that
 * SQLite does not call read-only is refused too. Temporary storage is
 * memory (PRAGMA temp_store): no statement ever writes a file.
 *
 * Limits (tfb_query_limits, per tfb_query_exec):
 *  - time: a progress handler every TFB_QUERY_PROGRESS_OPS virtual machine
 *    steps interrupts the statement past timeout_ms;
 *  - rows: the callback gets at most max_rows rows, then *truncated = 1;
 *  - memory: SQLite has no per-connection heap limit
 *    (sqlite3_soft/hard_heap_limit64 are process-wide, so one query would
 *    fail every other connection, the trace layer's included). The layer
 *    installs, once per process, an allocator in front of SQLite's that
 *    counts the bytes each thread's query holds (query_mem.h): an
 *    allocation that would take a query past max_mem fails, and the query
 *    ends with "memory limit of N bytes reached". Sorts, DISTINCT, CTE
 *    queues and strings are SQLite allocations and count;
 *    SQLITE_LIMIT_LENGTH (TFB_QUERY_MAX_LENGTH) refuses one huge string
 *    or blob (randomblob(1e9)) before it is allocated.
 *
 * Thread-safety: a tfb_query is used by one thread at a time (open one per
 * worker thread); any number of them may read one store at once. The
 * store must outlive every tfb_query opened on it.
 */
#ifndef TFB_SERVER_QUERY_H
#define TFB_SERVER_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

struct sqlite3_stmt;

/* Scalar points one scan decodes at a time (the store's block size): what
 * a scan of the scalars table holds, whatever the series' length. */
#define TFB_QUERY_CHUNK 256
/* SQLite's virtual-machine steps between two looks at the clock: about
 * 10-50 us of work, so a time limit fires within a millisecond. */
#define TFB_QUERY_PROGRESS_OPS 1000
/* The longest string or blob a query may make (SQLITE_LIMIT_LENGTH):
 * 16 MiB holds any value the store keeps (a text is at most 1 MiB) and
 * refuses randomblob(1e9) before SQLite allocates it. */
#define TFB_QUERY_MAX_LENGTH (16 * 1024 * 1024)
/* The longest SQL text accepted (SQLITE_LIMIT_SQL_LENGTH): 1 MiB. */
#define TFB_QUERY_MAX_SQL (1024 * 1024)
/* Columns of runs_wide: the fixed ones, then hparams, then two a scalar
 * tag (last, min), at most this many in all (SQLite's own default bound is
 * 2000); past it the rest of the tags are left out (reachable through
 * scalar_stats) and tfb_query_wide_left_out says how many. */
#define TFB_QUERY_WIDE_MAX_COLUMNS 1000
/* Defaults of the command line (`tfboard query`, `export`, `--where`):
 * no time limit from a terminal but Ctrl-C, no row limit, 1 GiB. */
#define TFB_QUERY_CLI_MAX_MEM ((int64_t)1 << 30)

typedef struct tfb_query tfb_query;

typedef struct tfb_query_limits {
    int64_t timeout_ms; /* progress handler interrupts past it; 0 = none */
    int64_t max_rows;   /* rows handed to the callback; more sets
                           *truncated; 0 = none */
    int64_t max_mem;    /* bytes SQLite may hold for this query (strings,
                           sorts, CTEs); 0 = none */
} tfb_query_limits;

/* Opens a connection over store with every table registered and the
 * read-only authorizer installed. 0, TFB_ENOMEM or TFB_EIO (SQLite
 * failed). Close with tfb_query_close (NULL-safe). */
int tfb_query_open(tfb_store *store, tfb_query **out);
void tfb_query_close(tfb_query *q);

/* One statement. cols: called once with the column names (before the
 * first row, also when there is none); row: once per row with the
 * sqlite3_stmt positioned on it (read with sqlite3_column_*). A callback
 * that returns non-zero stops the query (that value is returned). err /
 * err_off: SQLite's message (or the layer's: refused, limits) and the byte
 * offset of the error in sql (sqlite3_error_offset) or -1; err may be
 * NULL. Returns 0; TFB_EINVAL (syntax, unknown table or column, more than
 * one statement), TFB_EACCES (refused by the authorizer), TFB_ETIMEDOUT
 * (time limit), TFB_ETOOBIG (memory limit or a string past
 * TFB_QUERY_MAX_LENGTH), TFB_ENOMEM, TFB_EIO (any other SQLite error). */
typedef int (*tfb_query_cols_fn)(void *ctx, int ncol, const char *const *names);
typedef int (*tfb_query_row_fn)(void *ctx, struct sqlite3_stmt *st);
int tfb_query_exec(tfb_query *q, const char *sql, const tfb_query_limits *lim,
                   tfb_query_cols_fn cols, tfb_query_row_fn row, void *ctx,
                   int *truncated, char *err, size_t errcap, int *err_off);

/* A run filter: expr is a boolean SQL expression over runs_wide's columns
 * (`lr > 0.01 AND status = 'finished' AND "train/loss.last" < 0.5`); the
 * names of the matching runs, in the runs table's order, are returned
 * (malloc'd copies; free with tfb_query_names_free). The expression must
 * be one expression: unbalanced parentheses, an unterminated string,
 * quoted name or comment, or a ';' are refused (TFB_EINVAL) before SQLite
 * sees it, so it cannot close the WHERE clause and append a statement of
 * its own. err_off is relative to expr. Same errors as tfb_query_exec. */
int tfb_query_filter_runs(tfb_query *q, const char *expr,
                          const tfb_query_limits *lim, char ***names,
                          size_t *n, char *err, size_t errcap, int *err_off);
void tfb_query_names_free(char **names, size_t n);

/* Rows the tables read from the store during the last exec (points
 * decoded, records decoded): what a test of xBestIndex counts. */
int64_t tfb_query_rows_touched(const tfb_query *q);
/* Scalar tags left out of runs_wide's columns at the last exec
 * (TFB_QUERY_WIDE_MAX_COLUMNS). */
size_t tfb_query_wide_left_out(const tfb_query *q);

#endif
