/*
 * sql_engine.h - the seam between core's SQL routes and the engine that
 * runs SQL over the store (server/query/, a layer above core): the
 * engine's owner (the query dashboard's service, when the server starts)
 * installs its functions here, and core's routes call them without
 * naming the layer or the dashboard above.
 *
 * Routes: POST /data/query (a user's SELECT, answered later from the
 * engine's own threads: tfb_http_defer) and GET /data/runs_filter (a
 * run-filter expression checked and evaluated: the sidebar's box, as you
 * type). The multi-run chart routes select runs with tfb_run_filter.
 * server/API.md "SQL" documents them.
 *
 * Thread-safety: install before the server takes requests and uninstall
 * (NULL) after the engine stopped taking work; the functions themselves
 * must be callable from many HTTP threads at once.
 */
#ifndef TFB_SERVER_SQL_ENGINE_H
#define TFB_SERVER_SQL_ENGINE_H

#include <stddef.h>

#include "core/http_api.h"
#include "store/store.h"

/* The largest body POST /data/query takes: the SQL text and its JSON
 * quoting. 256 KiB holds any query a person writes or pastes (a list of
 * 5,000 run names in an IN (...)), and bounds what a client makes us
 * read before a query even starts. */
#define TFB_QUERY_BODY_MAX (256 * 1024)
/* The longest run-filter expression (GET /data/runs_filter, where=): an
 * expression is one line a person types; 4 KiB is far past any, and
 * keeps the URI under the server's URI bound. */
#define TFB_RUN_FILTER_MAX 4096

typedef struct tfb_sql_engine {
    /* Runs the statement sql (NUL-terminated, len bytes) on the engine's
     * own threads and finishes `later` (always, exactly once; also when
     * it fails or is refused) with the answer of POST /data/query. */
    void (*query)(tfb_store *s, const char *sql, size_t len,
                  tfb_http_later *later);
    /* The names of the runs where expr holds (runs_wide's columns); the
     * caller frees them with names_free. On a bad or stopped expression,
     * a negative TFB_E* code with the message in err and the byte offset
     * of the error in *err_off (-1: none). */
    int (*filter_runs)(tfb_store *s, const char *expr, char ***names,
                       size_t *n, char *err, size_t errcap, int *err_off);
    void (*names_free)(char **names, size_t n);
} tfb_sql_engine;

/* Installs e (static storage; NULL uninstalls). */
void tfb_sql_engine_install(const tfb_sql_engine *e);
/* The installed engine, or NULL. */
const tfb_sql_engine *tfb_sql_engine_get(void);

/* The run filter: names of the runs where expr holds (free with
 * tfb_run_filter_free). TFB_ENOTSUP (err says so) when no engine is
 * installed; else as filter_runs above. */
int tfb_run_filter(tfb_store *s, const char *expr, char ***names, size_t *n,
                   char *err, size_t errcap, int *err_off);
void tfb_run_filter_free(char **names, size_t n);

/* route_query.c */
int tfb_route_query(const tfb_http_req *req, tfb_http_resp *resp);
int tfb_route_runs_filter(const tfb_http_req *req, tfb_http_resp *resp);

#endif
