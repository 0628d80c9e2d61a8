/*
 * http_api.h - what an HTTP route handler sees: the request's query
 * parameters, the store and config, and the ways to answer.
 *
 * Handlers are named in a plugin's descriptor (plugin.h) or, for the few
 * routes of the core, in core/dispatch.c.
 *
 * Thread-safety: handlers run on libmicrohttpd's pool threads, many at
 * once; a req/resp pair belongs to one call on one thread. The store is
 * safe to read concurrently (see store.h); the config is read-only.
 *
 * A handler returns 0 after filling resp (tfb_http_json, _text, _error),
 * or a negative TFB_E* code, which becomes 500 unless it already set an
 * answer (the param helpers below set the 400/404 answer themselves and
 * return a negative code, so `if (helper(...) < 0) return 0;`... or simply
 * return the code: an answer already set is kept).
 */
#ifndef TFB_SERVER_HTTP_API_H
#define TFB_SERVER_HTTP_API_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/json.h"
#include "store/store.h"

typedef struct tfb_http_req tfb_http_req;
typedef struct tfb_http_resp tfb_http_resp;

typedef int (*tfb_http_handler)(const tfb_http_req *req,
                                tfb_http_resp *resp);

/* The store of the server answering req. */
tfb_store *tfb_server_store(const tfb_http_req *req);

/* "GET", "HEAD", "PUT" (PUT only for a plugin's put_routes) or "POST"
 * (only for core's /data/query). */
const char *tfb_http_method(const tfb_http_req *req);

/* The body of a PUT or POST: *len bytes, NUL-terminated; NULL (and *len 0) for
 * other methods. Valid during the handler call. At most TFB_HTTP_PUT_MAX
 * bytes (a plugin's PUT; core's /data/selection takes more). */
#define TFB_HTTP_PUT_MAX (64 * 1024)
const char *tfb_http_body(const tfb_http_req *req, size_t *len);

/* The raw (URL-decoded) value of query parameter name, NULL if absent. */
const char *tfb_http_query(const tfb_http_req *req, const char *name);
/* Every value of a parameter that may repeat (run=a&run=b), in request
 * order: writes at most max pointers (valid during the handler call) to
 * out and returns how many values the request has (so a result > max
 * means some were left out). At most 256 parameters reach a handler. */
size_t tfb_http_query_all(const tfb_http_req *req, const char *name,
                          const char **out, size_t max);

/* Parameter helpers. Each returns 0 and sets *out, or sets a 400 answer
 * {"error": "..."} naming the parameter and returns TFB_EINVAL. When the
 * parameter is absent and required is 0, *out = def and 0 is returned. */
int tfb_http_param_str(const tfb_http_req *req, tfb_http_resp *resp,
                       const char *name, int required, const char *def,
                       const char **out);
int tfb_http_param_i64(const tfb_http_req *req, tfb_http_resp *resp,
                       const char *name, int required, int64_t def,
                       int64_t min, int64_t max, int64_t *out);
int tfb_http_param_double(const tfb_http_req *req, tfb_http_resp *resp,
                          const char *name, int required, double def,
                          double min, double max, double *out);
/* Boolean: true/false/1/0. */
int tfb_http_param_bool(const tfb_http_req *req, tfb_http_resp *resp,
                        const char *name, int def, int *out);

/* The required `run` parameter: 400 when missing, 404 {"error"} when no
 * such run (TFB_ENOENT). */
int tfb_http_param_run(const tfb_http_req *req, tfb_http_resp *resp,
                       tfb_run **out);
/* `run` and `tag` for a series of the given kind: 400 when missing, 404
 * when unknown. run_out may be NULL. */
int tfb_http_param_series(const tfb_http_req *req, tfb_http_resp *resp,
                          tfb_series_kind kind, tfb_run **run_out,
                          tfb_series **out);

/* Answers. Each replaces any earlier answer. */
/* 200 application/json from the builder (its buffer is taken; j is left
 * empty). A failed builder gives 500. */
int tfb_http_json(tfb_http_resp *resp, tfb_json *j);
/* Any status and content type; body is copied. */
int tfb_http_text(tfb_http_resp *resp, unsigned status,
                  const char *content_type, const char *body, size_t len);
/* Takes ownership of a malloc'd body. */
int tfb_http_body_take(tfb_http_resp *resp, unsigned status,
                       const char *content_type, char *body, size_t len);
/* status with {"error": "<message>"}; printf-style. Returns TFB_EINVAL for
 * 4xx and TFB_EIO for 5xx so handlers may `return tfb_http_error(...)`. */
int tfb_http_error(tfb_http_resp *resp, unsigned status, const char *fmt,
                   ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A streamed answer, for answers too large to build whole (a full-
 * resolution series of millions of points): fn is called again and again
 * on the HTTP event loop as the client takes the bytes, each time to write
 * at most max bytes into buf; it returns how many it wrote (> 0), 0 at the
 * end, or a negative value to abort the connection. Memory stays at one
 * buffer per answer, and small requests are served between the chunks.
 * free_ctx(ctx) runs once when the answer is done or abandoned (also when
 * a later answer replaces this one). fn must not block on I/O; it may pin
 * store series for the duration of one call only. */
typedef long (*tfb_http_stream_fn)(void *ctx, char *buf, size_t max);
int tfb_http_stream(tfb_http_resp *resp, unsigned status,
                    const char *content_type, tfb_http_stream_fn fn,
                    void *ctx, void (*free_ctx)(void *ctx));

/* An answer made later, on another thread, while no HTTP thread waits
 * for it: for work that may take seconds (a user's SQL, /data/query), so
 * that it never delays the other requests of the pool thread that took
 * it. In the handler: l = tfb_http_defer(req); a non-NULL l suspends the
 * connection once the handler returns (return 0 without an answer); then,
 * from any thread, fill tfb_http_later_resp(l) with the answer helpers
 * and call tfb_http_later_finish(l) exactly once: the answer goes out.
 * NULL: this transport cannot defer (answer at once). A later holds no
 * HTTP thread; the server's stop waits for every later to be finished,
 * so whoever takes one must finish it within a bound of its own. */
typedef struct tfb_http_later tfb_http_later;
tfb_http_later *tfb_http_defer(const tfb_http_req *req);
tfb_http_resp *tfb_http_later_resp(tfb_http_later *l);
void tfb_http_later_finish(tfb_http_later *l);

/* The answer's Cache-Control (a static string), for answers that never
 * change for their URL (an image whose URL names its step); call after
 * setting the answer. Without it, /data answers get "no-cache". */
void tfb_http_set_cache(tfb_http_resp *resp, const char *cache_control);

/* 1 when an answer has been set. */
int tfb_http_resp_is_set(const tfb_http_resp *resp);

/* A core route (core/dispatch.c): exact path. */
typedef struct tfb_route {
    const char *path;
    tfb_http_handler handler;
} tfb_route;

/* Returns the handler for path (core routes, then the plugins' routes
 * under /data/plugin/<name>/), or NULL. */
tfb_http_handler tfb_route_find(const char *path);
/* The PUT handler for path (a plugin's put_routes, /data/reload,
 * /data/selection), or NULL; *max_body: the largest body it takes
 * (TFB_HTTP_PUT_MAX but for /data/selection's TFB_SELECTION_BODY_MAX). */
tfb_http_handler tfb_route_find_put(const char *path, size_t *max_body);
/* The POST handler for path (core's /data/query only), or NULL;
 * *max_body as above (TFB_QUERY_BODY_MAX). */
tfb_http_handler tfb_route_find_post(const char *path, size_t *max_body);

#endif
