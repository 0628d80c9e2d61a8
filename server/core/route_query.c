/*
 * route_query.c - core's SQL routes (server/API.md "SQL"): POST
 * /data/query hands the statement to the installed engine, which answers
 * later from its own threads; GET /data/runs_filter checks a run-filter
 * expression and names the runs it selects.
 */
#include <stdlib.h>
#include <string.h>

#include "base/json_str.h"
#include "core/sql_engine.h"
#include "tfboard.h"

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Parses exactly {"sql": "..."} (white space anywhere) from body[0..len):
 * the decoded text into a malloc'd, NUL-terminated *out. Returns 0,
 * TFB_EINVAL with the reason in why, or TFB_ENOMEM. */
static int parse_body(const char *body, size_t len, char **out, size_t *olen,
                      const char **why)
{
    const char *p = skip_ws(body, body + len), *end = body + len, *s, *q;
    size_t sl;
    int esc;
    *out = NULL;
    if (p == end || *p++ != '{') {
        *why = "the body must be a JSON object {\"sql\": \"SELECT ...\"}";
        return TFB_EINVAL;
    }
    p = skip_ws(p, end);
    q = p < end ? tfb_json_str_scan(p, end, &s, &sl, &esc) : NULL;
    if (!q || sl != 3 || memcmp(s, "sql", 3) != 0) {
        *why = "the body's one member must be \"sql\"";
        return TFB_EINVAL;
    }
    p = skip_ws(q, end);
    if (p == end || *p++ != ':') {
        *why = "expected ':' after \"sql\"";
        return TFB_EINVAL;
    }
    p = skip_ws(p, end);
    q = p < end ? tfb_json_str_scan(p, end, &s, &sl, &esc) : NULL;
    if (!q) {
        *why = "\"sql\" must be a string";
        return TFB_EINVAL;
    }
    p = skip_ws(q, end);
    if (p == end || *p++ != '}' || skip_ws(p, end) != end) {
        *why = "the body's one member must be \"sql\"";
        return TFB_EINVAL;
    }
    char *text = malloc(sl + 1);
    if (!text)
        return TFB_ENOMEM;
    size_t n = esc ? tfb_json_str_decode(s, sl, text) : sl;
    if (!esc)
        memcpy(text, s, sl);
    text[n] = 0;
    if (strlen(text) != n) { /* \u0000 would cut the statement silently */
        free(text);
        *why = "\"sql\" holds a NUL character";
        return TFB_EINVAL;
    }
    *out = text;
    *olen = n;
    return 0;
}

int tfb_route_query(const tfb_http_req *req, tfb_http_resp *resp)
{
    const tfb_sql_engine *e = tfb_sql_engine_get();
    if (!e || !e->query)
        return tfb_http_error(resp, 501, "SQL queries need the query "
                                         "engine, which this server does "
                                         "not run");
    size_t blen;
    const char *body = tfb_http_body(req, &blen);
    char *sql = NULL;
    size_t n = 0;
    const char *why = NULL;
    int rc = parse_body(body ? body : "", blen, &sql, &n, &why);
    if (rc == TFB_ENOMEM)
        return tfb_http_error(resp, 500, "out of memory");
    if (rc < 0)
        return tfb_http_error(resp, 400, "%s", why);
    tfb_http_later *l = tfb_http_defer(req);
    if (!l) { /* cannot defer (stopping): refuse rather than block */
        free(sql);
        return tfb_http_error(resp, 503, "the server is stopping");
    }
    e->query(tfb_server_store(req), sql, n, l);
    free(sql);
    return 0;
}

int tfb_route_runs_filter(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *expr;
    if (tfb_http_param_str(req, resp, "where", 1, NULL, &expr) < 0)
        return TFB_EINVAL;
    if (strlen(expr) > TFB_RUN_FILTER_MAX)
        return tfb_http_error(resp, 400, "parameter 'where': longer than "
                                         "%d bytes", TFB_RUN_FILTER_MAX);
    char **names = NULL, err[512] = "";
    size_t n = 0;
    int off = -1;
    int rc = tfb_run_filter(tfb_server_store(req), expr, &names, &n, err,
                            sizeof err, &off);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    if (rc < 0) {
        tfb_json_key(&j, "error");
        tfb_json_str(&j, err[0] ? err : tfb_strerror(rc));
        tfb_json_key(&j, "offset");
        tfb_json_i64(&j, off);
        tfb_json_object_end(&j);
        size_t len;
        char *text = tfb_json_take(&j, &len);
        if (!text)
            return tfb_http_error(resp, 500, "out of memory");
        return tfb_http_body_take(resp, rc == TFB_ENOTSUP ? 501 : 400,
                                  "application/json; charset=utf-8", text,
                                  len);
    }
    tfb_json_key(&j, "count");
    tfb_json_u64(&j, n);
    tfb_json_key(&j, "runs");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < n; i++)
        tfb_json_str(&j, names[i]);
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    tfb_run_filter_free(names, n);
    return tfb_http_json(resp, &j);
}
