/*
 * http_internal.h - the request/answer structs behind http_api.h, shared
 * by http.c (libmicrohttpd glue) and http_params.c (parameter helpers).
 * Not for handlers, which use http_api.h only.
 */
#ifndef TFB_SERVER_HTTP_INTERNAL_H
#define TFB_SERVER_HTTP_INTERNAL_H

#include "core/http_api.h"

/* Looks up a query parameter; supplied by the transport (libmicrohttpd in
 * http.c, a table in unit tests). */
typedef const char *(*tfb_http_query_fn)(void *ctx, const char *name);
/* Every value of a repeated parameter, in request order: writes at most
 * max pointers to out and returns how many the request has. NULL in a
 * transport without repeats (then tfb_http_query_all gives the one value
 * query finds). */
typedef size_t (*tfb_http_query_all_fn)(void *ctx, const char *name,
                                        const char **out, size_t max);

/* Suspends the request's connection for an answer made later (the
 * transport's side of tfb_http_defer); NULL: it cannot. */
typedef struct tfb_http_later *(*tfb_http_defer_fn)(const struct tfb_http_req *req);

struct tfb_http_req {
    const char *path;
    tfb_http_query_fn query;
    void *query_ctx;
    tfb_store *store;
    const tfb_config *config;
    /* NULL means GET; body is set for PUT only. */
    const char *method;
    const char *body;
    size_t body_len;
    tfb_http_query_all_fn query_all;
    /* How the transport defers an answer (tfb_http_defer) and its state
     * for it (http.c's request), or NULL where answers cannot be deferred
     * (unit tests' tables). Handed in, not called by name, so that the
     * routes that defer do not reach back into http.c, which dispatches
     * to them. */
    tfb_http_defer_fn defer;
    void *later_ctx;
};

struct tfb_http_resp {
    unsigned status;
    const char *content_type; /* static string */
    char *body;               /* malloc'd */
    size_t len;
    int set;
    const char *cache_control; /* static string; NULL: no-cache on /data */
    /* A streamed answer (tfb_http_stream) instead of body. */
    tfb_http_stream_fn stream;
    void *stream_ctx;
    void (*stream_free)(void *ctx);
};

/* Frees the body; the struct may be reused. */
void tfb_http_resp_clear(tfb_http_resp *resp);

/* Runs the handler for req->path (route table), with a 404 for unknown
 * /data paths and 500 for a handler failure without an answer. */
void tfb_http_dispatch(const tfb_http_req *req, tfb_http_resp *resp);

#endif
