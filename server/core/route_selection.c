/*
 * route_selection.c - /data/selection (server/API.md "Selections"): PUT a
 * set of run names, get its id; GET an id, get its names; and the
 * `selection=ID` parameter the multi-run routes take (selection.h).
 */
#include <stdlib.h>
#include <string.h>

#include "base/json_str.h"
#include "base/vec.h"
#include "core/selection.h"
#include "tfboard.h"

typedef struct put_answer {
    char id[TFB_SELECTION_ID_LEN + 1];
    size_t runs;
} put_answer;

static const tfb_json_field put_fields[] = {
    TFB_JSON_FIELD(put_answer, id, CHARS),
    TFB_JSON_FIELD(put_answer, runs, SIZE),
};

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

typedef TFB_VEC(const char *) name_vec;

/* Parses exactly {"runs": ["name", ...]} (white space anywhere) from
 * body[0..len): the names decoded into buf (len bytes: a decoded string
 * is never longer than its literal) and pointed at from out. Returns 0,
 * TFB_EINVAL with the reason in why, or TFB_ENOMEM. */
static int parse_body(const char *body, size_t len, char *buf, name_vec *out,
                      const char **why)
{
    const char *p = body, *end = body + len, *s;
    size_t sl;
    int esc;
    p = skip_ws(p, end);
    if (p == end || *p++ != '{') {
        *why = "the body must be a JSON object {\"runs\": [name, ...]}";
        return TFB_EINVAL;
    }
    p = skip_ws(p, end);
    const char *q = p < end ? tfb_json_str_scan(p, end, &s, &sl, &esc) : NULL;
    if (!q || sl != 4 || memcmp(s, "runs", 4) != 0) {
        *why = "the body's one member must be \"runs\"";
        return TFB_EINVAL;
    }
    p = skip_ws(q, end);
    if (p == end || *p++ != ':') {
        *why = "expected ':' after \"runs\"";
        return TFB_EINVAL;
    }
    p = skip_ws(p, end);
    if (p == end || *p++ != '[') {
        *why = "\"runs\" must be an array of run names";
        return TFB_EINVAL;
    }
    p = skip_ws(p, end);
    if (p < end && *p == ']') {
        p++;
    } else {
        for (;;) {
            if (out->n >= TFB_SELECTION_MAX_RUNS) {
                *why = "more run names than a selection may hold";
                return TFB_EINVAL;
            }
            q = p < end ? tfb_json_str_scan(p, end, &s, &sl, &esc) : NULL;
            if (!q) {
                *why = "\"runs\" must hold strings only";
                return TFB_EINVAL;
            }
            size_t dl = esc ? tfb_json_str_decode(s, sl, buf) : sl;
            if (!esc)
                memcpy(buf, s, sl);
            if (memchr(buf, 0, dl)) {
                *why = "a run name holds a NUL character";
                return TFB_EINVAL;
            }
            buf[dl] = 0;
            if (tfb_vec_push(out, buf) < 0)
                return TFB_ENOMEM;
            buf += dl + 1;
            p = skip_ws(q, end);
            if (p < end && *p == ',') {
                p = skip_ws(p + 1, end);
                continue;
            }
            if (p < end && *p == ']') {
                p++;
                break;
            }
            *why = "expected ',' or ']' in \"runs\"";
            return TFB_EINVAL;
        }
    }
    p = skip_ws(p, end);
    if (p == end || *p++ != '}' || skip_ws(p, end) != end) {
        *why = "the body must end after the \"runs\" array";
        return TFB_EINVAL;
    }
    return 0;
}

static int put_selection(const tfb_http_req *req, tfb_http_resp *resp)
{
    size_t len;
    const char *body = tfb_http_body(req, &len);
    /* Each name takes at least its two quotes in the body, so the decoded
     * names and their NULs fit in len + 1 bytes. */
    char *buf = malloc(len + 1);
    name_vec names = {0};
    if (!buf)
        return tfb_http_error(resp, 500, "out of memory");
    const char *why = NULL;
    int rc = parse_body(body ? body : "", len, buf, &names, &why);
    put_answer a = {.runs = 0};
    if (rc == 0)
        rc = tfb_selection_hold(names.v, names.n, a.id);
    if (rc == TFB_EINVAL && !why)
        why = "the names need more memory than selections may hold";
    if (rc == 0) {
        tfb_selection *s = tfb_selection_get(a.id);
        a.runs = s ? tfb_selection_count(s) : 0;
        tfb_selection_release(s);
    }
    tfb_vec_free(&names);
    free(buf);
    if (rc == TFB_EINVAL)
        return tfb_http_error(resp, 400, "selection: %s (at most %d names, "
                                         "%d bytes of body)",
                              why, TFB_SELECTION_MAX_RUNS,
                              TFB_SELECTION_BODY_MAX);
    if (rc < 0)
        return tfb_http_error(resp, 500, "%s", tfb_strerror(rc));
    tfb_json j;
    tfb_json_init(&j);
    TFB_JSON_STRUCT(&j, &a, put_fields);
    return tfb_http_json(resp, &j);
}

static int unknown(tfb_http_resp *resp, const char *id)
{
    return tfb_http_error(resp, 404, "unknown selection '%.40s': never made "
                                     "or evicted (the server keeps the %d "
                                     "last used); PUT its runs to "
                                     "/data/selection again",
                          id, TFB_SELECTION_MAX_HELD);
}

int tfb_http_param_selection(const tfb_http_req *req, tfb_http_resp *resp,
                             tfb_selection **out)
{
    *out = NULL;
    const char *id = tfb_http_query(req, "selection");
    if (!id)
        return 0;
    *out = tfb_selection_get(id);
    if (!*out) {
        unknown(resp, id);
        return TFB_ENOENT;
    }
    return 0;
}

int tfb_route_selection(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *m = tfb_http_method(req);
    if (m && strcmp(m, "PUT") == 0)
        return put_selection(req, resp);
    const char *id;
    if (tfb_http_param_str(req, resp, "id", 1, NULL, &id) < 0)
        return 0;
    tfb_selection *s = tfb_selection_get(id);
    if (!s)
        return unknown(resp, id);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "id");
    tfb_json_str(&j, id);
    tfb_json_key(&j, "runs");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < tfb_selection_count(s); i++)
        tfb_json_str(&j, tfb_selection_name(s, i));
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    tfb_selection_release(s);
    return tfb_http_json(resp, &j);
}
