/*
 * query_pool.h - the query dashboard's engine (core/sql_engine.h): its
 * own worker threads for POST /data/query, each with its own connection
 * (tfb_query: one thread at a time), so a slow statement holds neither an
 * HTTP thread nor another statement's connection; and a few pooled
 * connections for the short run filters and the table listing.
 *
 * Bounds (server/plugins/query/API.md "Limits"): QUERY_THREADS workers,
 * QUERY_QUEUE_MAX statements waiting (past it: 503), the answer's JSON at
 * most QUERY_ANSWER_MAX bytes (past it: truncated), the per-statement
 * limits of the --query_* options, a run filter's FILTER_TIMEOUT_MS.
 *
 * Thread-safety: start and stop from the serve command's thread (the
 * service); everything else from any thread.
 */
#ifndef TFB_PLUGIN_QUERY_POOL_H
#define TFB_PLUGIN_QUERY_POOL_H

#include <stdint.h>

#include "core/json.h"
#include "store/store.h"

/* Worker threads: two, so that one long statement (up to the time limit)
 * leaves another user's query running; more would let SQL take the CPUs
 * the loader and the HTTP threads need. */
#define QUERY_THREADS 2
/* Statements waiting for a worker: a page sends one at a time; 32 is a
 * team's burst, and bounds the SQL text held (32 x 256 KiB). */
#define QUERY_QUEUE_MAX 32
/* The answer's JSON: 64 MiB is far past what a browser table shows and
 * bounds the memory an answer holds beside the row limit (wide rows). */
#define QUERY_ANSWER_MAX (64u << 20)
/* A run filter runs on the HTTP thread that asks (it is checked as the
 * user types): 1 s bounds what one expression may take there. */
#define FILTER_TIMEOUT_MS 1000
/* Pooled connections kept for filters and listings. */
#define FILTER_CONNS_MAX 4

/* The per-statement limits (the --query_* options; query.c owns them). */
typedef struct query_opts {
    double timeout_s;  /* 0: none */
    int64_t max_rows;
    int64_t max_mem_mb;
} query_opts;

/* Starts the workers on store s and installs the engine in core. Returns
 * 0 or a negative TFB_E* code. Without the query layer in the build,
 * installs nothing and returns 0 (the routes answer 501). */
int query_pool_start(tfb_store *s, const query_opts *o);
/* Uninstalls the engine, answers what waits with 503, lets the running
 * statements end (each within its time limit) and joins the workers. */
void query_pool_stop(void);

/* The tables and views the engine has, with their columns, and the
 * example queries, as the "tables" route answers them. Returns 0, or a
 * negative TFB_E* code (TFB_ENOTSUP: no engine). */
int query_pool_tables(tfb_store *s, tfb_json *j);

#endif
