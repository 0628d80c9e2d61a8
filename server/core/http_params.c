/*
 * http_params.c - query parameters and answers for route handlers
 * (http_api.h), independent of the HTTP library.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "core/http_internal.h"

static const char JSON_TYPE[] = "application/json; charset=utf-8";

tfb_store *tfb_server_store(const tfb_http_req *req) { return req->store; }

const char *tfb_http_method(const tfb_http_req *req)
{
    return req->method ? req->method : "GET";
}

const char *tfb_http_body(const tfb_http_req *req, size_t *len)
{
    *len = req->body ? req->body_len : 0;
    return req->body;
}

const char *tfb_http_query(const tfb_http_req *req, const char *name)
{
    return req->query ? req->query(req->query_ctx, name) : NULL;
}

size_t tfb_http_query_all(const tfb_http_req *req, const char *name,
                          const char **out, size_t max)
{
    if (req->query_all)
        return req->query_all(req->query_ctx, name, out, max);
    const char *v = tfb_http_query(req, name);
    if (v && max)
        out[0] = v;
    return v != NULL;
}

void tfb_http_resp_clear(tfb_http_resp *resp)
{
    free(resp->body);
    if (resp->stream_free)
        resp->stream_free(resp->stream_ctx);
    memset(resp, 0, sizeof *resp);
}

int tfb_http_stream(tfb_http_resp *resp, unsigned status,
                    const char *content_type, tfb_http_stream_fn fn,
                    void *ctx, void (*free_ctx)(void *ctx))
{
    tfb_http_resp_clear(resp);
    resp->status = status;
    resp->content_type = content_type;
    resp->stream = fn;
    resp->stream_ctx = ctx;
    resp->stream_free = free_ctx;
    resp->set = 1;
    return 0;
}

int tfb_http_resp_is_set(const tfb_http_resp *resp)
{
    return resp->set;
}

int tfb_http_body_take(tfb_http_resp *resp, unsigned status,
                       const char *content_type, char *body, size_t len)
{
    /* A body replaces a stream that was set before. */
    char *old = resp->body;
    resp->body = NULL;
    tfb_http_resp_clear(resp);
    free(old == body ? NULL : old);
    resp->status = status;
    resp->content_type = content_type;
    resp->body = body;
    resp->len = len;
    resp->set = 1;
    return 0;
}

int tfb_http_text(tfb_http_resp *resp, unsigned status,
                  const char *content_type, const char *body, size_t len)
{
    char *b = tfb_strndup(body, len);
    if (!b)
        return TFB_ENOMEM;
    return tfb_http_body_take(resp, status, content_type, b, len);
}

void tfb_http_set_cache(tfb_http_resp *resp, const char *cache_control)
{
    resp->cache_control = cache_control;
}

int tfb_http_error(tfb_http_resp *resp, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "error");
    tfb_json_str(&j, msg);
    tfb_json_object_end(&j);
    size_t len;
    char *b = tfb_json_take(&j, &len);
    if (b)
        tfb_http_body_take(resp, status, JSON_TYPE, b, len);
    else
        tfb_http_body_take(resp, 500, JSON_TYPE, NULL, 0);
    return status >= 500 ? TFB_EIO : TFB_EINVAL;
}

int tfb_http_json(tfb_http_resp *resp, tfb_json *j)
{
    size_t len;
    char *b = tfb_json_take(j, &len);
    if (!b)
        return tfb_http_error(resp, 500, "out of memory");
    return tfb_http_body_take(resp, 200, JSON_TYPE, b, len);
}

int tfb_http_param_str(const tfb_http_req *req, tfb_http_resp *resp,
                       const char *name, int required, const char *def,
                       const char **out)
{
    const char *v = tfb_http_query(req, name);
    if (!v) {
        if (required)
            return tfb_http_error(resp, 400, "missing parameter '%s'", name);
        *out = def;
        return 0;
    }
    *out = v;
    return 0;
}

int tfb_http_param_i64(const tfb_http_req *req, tfb_http_resp *resp,
                       const char *name, int required, int64_t def,
                       int64_t min, int64_t max, int64_t *out)
{
    const char *v = tfb_http_query(req, name);
    if (!v || !*v) {
        if (required || (v && !*v))
            return tfb_http_error(resp, 400, "missing parameter '%s'", name);
        *out = def;
        return 0;
    }
    errno = 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || end == v)
        return tfb_http_error(resp, 400, "parameter '%s' must be an integer",
                              name);
    if (x < min || x > max)
        return tfb_http_error(resp, 400,
                              "parameter '%s' must be in [%lld, %lld]", name,
                              (long long)min, (long long)max);
    *out = (int64_t)x;
    return 0;
}

int tfb_http_param_double(const tfb_http_req *req, tfb_http_resp *resp,
                          const char *name, int required, double def,
                          double min, double max, double *out)
{
    const char *v = tfb_http_query(req, name);
    if (!v || !*v) {
        if (required || (v && !*v))
            return tfb_http_error(resp, 400, "missing parameter '%s'", name);
        *out = def;
        return 0;
    }
    errno = 0;
    char *end;
    double x = strtod(v, &end);
    if (errno || *end || end == v || !isfinite(x))
        return tfb_http_error(resp, 400, "parameter '%s' must be a number",
                              name);
    if (x < min || x > max)
        return tfb_http_error(resp, 400, "parameter '%s' must be in [%g, %g]",
                              name, min, max);
    *out = x;
    return 0;
}

int tfb_http_param_bool(const tfb_http_req *req, tfb_http_resp *resp,
                        const char *name, int def, int *out)
{
    const char *v = tfb_http_query(req, name);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!strcmp(v, "true") || !strcmp(v, "1")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(v, "false") || !strcmp(v, "0")) {
        *out = 0;
        return 0;
    }
    return tfb_http_error(resp, 400, "parameter '%s' must be true or false",
                          name);
}

int tfb_http_param_run(const tfb_http_req *req, tfb_http_resp *resp,
                       tfb_run **out)
{
    const char *name;
    int rc = tfb_http_param_str(req, resp, "run", 1, NULL, &name);
    if (rc < 0)
        return rc;
    tfb_run *r = tfb_store_find_run(req->store, name);
    if (!r) {
        tfb_http_error(resp, 404, "no run named '%s'", name);
        return TFB_ENOENT;
    }
    *out = r;
    return 0;
}

int tfb_http_param_series(const tfb_http_req *req, tfb_http_resp *resp,
                          tfb_series_kind kind, tfb_run **run_out,
                          tfb_series **out)
{
    const char *tag;
    /* Check both parameters' presence before looking anything up, so a
     * missing tag is a 400 even when the run is unknown. */
    if (!tfb_http_query(req, "run"))
        return tfb_http_error(resp, 400, "missing parameter 'run'");
    int rc = tfb_http_param_str(req, resp, "tag", 1, NULL, &tag);
    if (rc < 0)
        return rc;
    tfb_run *r;
    rc = tfb_http_param_run(req, resp, &r);
    if (rc < 0)
        return rc;
    tfb_series *s = tfb_run_find_series(r, kind, tag);
    if (!s) {
        tfb_http_error(resp, 404, "run '%s' has no tag '%s' of this kind",
                       tfb_run_name(r), tag);
        return TFB_ENOENT;
    }
    if (run_out)
        *run_out = r;
    *out = s;
    return 0;
}

tfb_http_later *tfb_http_defer(const tfb_http_req *req)
{
    return req->defer ? req->defer(req) : NULL;
}
