/*
 * scalars_layout.c - /data/plugin/scalars/layout: the scalars page's
 * shared layout (multi-tag charts, run groups), kept in
 * <logdir>/tfboard_layout.json so a team sees the same charts.
 *
 * GET answers {"layout": <the file's JSON> | null}. PUT (Content-Type
 * application/json, at most TFB_HTTP_PUT_MAX bytes: the HTTP layer checks
 * both) replaces the file with the body when the body is one valid JSON
 * object (RFC 8259, nesting at most 64 deep); the file is written to a
 * temporary name and renamed, so a reader never sees half a file. The
 * web UI decides what the object means; the server only keeps it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/plugin.h"
#include "plugins/scalars/scalars_layout.h"

#define LAYOUT_FILE "tfboard_layout.json"
#define MAX_DEPTH 64

/* ---- a strict JSON validator ---------------------------------------------- */

typedef struct jv {
    const char *p, *end;
    int depth;
} jv;

static void ws(jv *v)
{
    while (v->p < v->end && (*v->p == ' ' || *v->p == '\t' || *v->p == '\n' ||
                             *v->p == '\r'))
        v->p++;
}

static int lit(jv *v, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(v->end - v->p) < n || memcmp(v->p, w, n) != 0)
        return -1;
    v->p += n;
    return 0;
}

static int hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
}

/* A string: no raw control characters, valid escapes, valid UTF-8. */
static int str(jv *v)
{
    if (v->p >= v->end || *v->p != '"')
        return -1;
    v->p++;
    while (v->p < v->end) {
        unsigned char c = (unsigned char)*v->p;
        if (c == '"') {
            v->p++;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            if (++v->p >= v->end)
                return -1;
            char e = *v->p++;
            if (e == 'u') {
                if (v->end - v->p < 4 || !hex(v->p[0]) || !hex(v->p[1]) ||
                    !hex(v->p[2]) || !hex(v->p[3]))
                    return -1;
                v->p += 4;
            } else if (!strchr("\"\\/bfnrt", e)) {
                return -1;
            }
            continue;
        }
        if (c < 0x80) {
            v->p++;
            continue;
        }
        int n = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : -1;
        if (n < 0 || c > 0xf4 || v->end - v->p <= n)
            return -1;
        for (int i = 1; i <= n; i++)
            if (((unsigned char)v->p[i] & 0xc0) != 0x80)
                return -1;
        v->p += n + 1;
    }
    return -1;
}

static int digits(jv *v)
{
    const char *s = v->p;
    while (v->p < v->end && *v->p >= '0' && *v->p <= '9')
        v->p++;
    return v->p > s ? 0 : -1;
}

static int number(jv *v)
{
    if (v->p < v->end && *v->p == '-')
        v->p++;
    if (v->p < v->end && *v->p == '0')
        v->p++;
    else if (digits(v) < 0)
        return -1;
    if (v->p < v->end && *v->p == '.') {
        v->p++;
        if (digits(v) < 0)
            return -1;
    }
    if (v->p < v->end && (*v->p == 'e' || *v->p == 'E')) {
        v->p++;
        if (v->p < v->end && (*v->p == '+' || *v->p == '-'))
            v->p++;
        if (digits(v) < 0)
            return -1;
    }
    return 0;
}

static int value(jv *v);

static int container(jv *v, char close, int object)
{
    if (++v->depth > MAX_DEPTH)
        return -1;
    v->p++;
    ws(v);
    if (v->p < v->end && *v->p == close) {
        v->p++;
        v->depth--;
        return 0;
    }
    for (;;) {
        ws(v);
        if (object) {
            if (str(v) < 0)
                return -1;
            ws(v);
            if (v->p >= v->end || *v->p++ != ':')
                return -1;
        }
        if (value(v) < 0)
            return -1;
        ws(v);
        if (v->p >= v->end)
            return -1;
        char c = *v->p++;
        if (c == close)
            break;
        if (c != ',')
            return -1;
    }
    v->depth--;
    return 0;
}

static int value(jv *v)
{
    ws(v);
    if (v->p >= v->end)
        return -1;
    switch (*v->p) {
    case '{': return container(v, '}', 1);
    case '[': return container(v, ']', 0);
    case '"': return str(v);
    case 't': return lit(v, "true");
    case 'f': return lit(v, "false");
    case 'n': return lit(v, "null");
    default: return number(v);
    }
}

int tfb_json_validate_object(const char *text, size_t len)
{
    jv v = {text, text + len, 0};
    ws(&v);
    if (v.p >= v.end || *v.p != '{')
        return TFB_EINVAL;
    if (value(&v) < 0)
        return TFB_EINVAL;
    ws(&v);
    return v.p == v.end ? 0 : TFB_EINVAL;
}

/* ---- the route -------------------------------------------------------------- */

static char *layout_path(tfb_store *s, const char *suffix)
{
    const char *dir = tfb_store_logdir(s);
    size_t n = strlen(dir) + sizeof LAYOUT_FILE + strlen(suffix) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, LAYOUT_FILE, suffix);
    return p;
}

/* A logdir in a bucket (s3://, gs://) is not a local directory: its
 * "<logdir>/tfboard_layout.json" would be a relative path under the
 * server's working directory, outside the logdir. */
static int in_bucket(tfb_store *s)
{
    const char *d = tfb_store_logdir(s);
    return strncmp(d, "s3://", 5) == 0 || strncmp(d, "gs://", 5) == 0;
}

static int get_layout(const tfb_http_req *req, tfb_http_resp *resp)
{
    if (in_bucket(tfb_server_store(req))) {
        tfb_json j;
        tfb_json_init(&j);
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "layout");
        tfb_json_null(&j);
        tfb_json_object_end(&j);
        return tfb_http_json(resp, &j);
    }
    char *path = layout_path(tfb_server_store(req), "");
    if (!path)
        return tfb_http_error(resp, 500, "out of memory");
    FILE *f = fopen(path, "rb");
    free(path);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "layout");
    if (!f) {
        tfb_json_null(&j);
    } else {
        char *buf = malloc(TFB_HTTP_PUT_MAX + 1);
        size_t n = buf ? fread(buf, 1, TFB_HTTP_PUT_MAX + 1, f) : 0;
        fclose(f);
        if (!buf) {
            tfb_json_free(&j);
            return tfb_http_error(resp, 500, "out of memory");
        }
        /* A file edited by hand may be anything: only a valid object of
         * the size PUT allows is passed on, else a note says why. */
        if (n <= TFB_HTTP_PUT_MAX && tfb_json_validate_object(buf, n) == 0) {
            tfb_json_raw(&j, buf, n);
        } else {
            tfb_json_null(&j);
            tfb_json_key(&j, "error");
            tfb_json_str(&j, n > TFB_HTTP_PUT_MAX
                                 ? LAYOUT_FILE " is over 64 KiB; ignored"
                                 : LAYOUT_FILE " is not a JSON object; "
                                               "ignored");
        }
        free(buf);
    }
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

static int put_layout(const tfb_http_req *req, tfb_http_resp *resp)
{
    size_t len;
    const char *body = tfb_http_body(req, &len);
    if (!body || tfb_json_validate_object(body, len) < 0)
        return tfb_http_error(resp, 400, "the layout must be one JSON "
                                         "object");
    tfb_store *s = tfb_server_store(req);
    if (in_bucket(s))
        return tfb_http_error(resp, 501, "the layout cannot be saved to a "
                                         "logdir in a bucket");
    char *path = layout_path(s, ""), *tmp = NULL;
    if (path) {
        char sfx[40];
        snprintf(sfx, sizeof sfx, ".tmp.%ld", (long)getpid());
        tmp = layout_path(s, sfx);
    }
    if (!path || !tmp) {
        free(path);
        free(tmp);
        return tfb_http_error(resp, 500, "out of memory");
    }
    int rc = 0, err = 0;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        err = errno;
    } else {
        if (fwrite(body, 1, len, f) != len)
            err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err)
            err = errno;
        if (!err && rename(tmp, path) != 0)
            err = errno;
        if (err)
            unlink(tmp);
    }
    if (err) {
        rc = tfb_http_error(resp, 500, "cannot write %s: %s", LAYOUT_FILE,
                            strerror(err));
    } else {
        tfb_json j;
        tfb_json_init(&j);
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "saved");
        tfb_json_bool(&j, 1);
        tfb_json_key(&j, "bytes");
        tfb_json_u64(&j, len);
        tfb_json_object_end(&j);
        rc = tfb_http_json(resp, &j);
    }
    free(path);
    free(tmp);
    return rc;
}

int tfb_route_scalars_layout(const tfb_http_req *req, tfb_http_resp *resp)
{
    if (strcmp(tfb_http_method(req), "PUT") == 0)
        return put_layout(req, resp);
    return get_layout(req, resp);
}
