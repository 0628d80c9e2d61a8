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
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plugin.h"
#include "plugins/scalars/scalars_layout.h"
#include "base/utf8.h"

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
        /* The one UTF-8 rule of the tree (base/utf8.h): no overlong
         * forms, no surrogates, nothing past U+10FFFF. */
        size_t n = tfb_utf8_seq((const unsigned char *)v->p,
                                (size_t)(v->end - v->p));
        if (!n)
            return -1;
        v->p += n;
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

/* Saves are serialised in this process: each writes a temp file of its
 * own (mkstemp: a fresh name, O_CREAT|O_EXCL, so a link planted in the
 * logdir is never written through), syncs it and renames it over the
 * layout, so the last complete PUT wins and the file is always one body
 * whole. Servers sharing a logdir never share a temp file either. */
static pthread_mutex_t save_lock = PTHREAD_MUTEX_INITIALIZER;

static char *layout_path(tfb_store *s, const char *suffix)
{
    const char *dir = tfb_store_logdir(s);
    size_t n = strlen(dir) + sizeof LAYOUT_FILE + strlen(suffix) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, LAYOUT_FILE, suffix);
    return p;
}

/* Reads the layout file into *buf (*n bytes, at most TFB_HTTP_PUT_MAX;
 * malloc'd): 0, or why it is ignored (*why, a constant), or TFB_ENOENT
 * when there is none, TFB_ENOMEM. As event files are read: the file is
 * opened without following a link and without blocking (a FIFO planted
 * there would hold the HTTP thread forever), and only a regular file of
 * the size PUT allows is read. */
static int read_layout(const char *path, char **buf, size_t *n,
                       const char **why)
{
    *buf = NULL;
    *n = 0;
    *why = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return TFB_ENOENT;
        *why = errno == ELOOP ? LAYOUT_FILE " is a symbolic link; ignored"
                              : LAYOUT_FILE " cannot be opened; ignored";
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *why = LAYOUT_FILE " is not a regular file; ignored";
        return 0;
    }
    if (st.st_size > TFB_HTTP_PUT_MAX) {
        close(fd);
        *why = LAYOUT_FILE " is over 64 KiB; ignored";
        return 0;
    }
    char *b = malloc(TFB_HTTP_PUT_MAX + 1);
    if (!b) {
        close(fd);
        return TFB_ENOMEM;
    }
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fd, b + got, TFB_HTTP_PUT_MAX + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got > TFB_HTTP_PUT_MAX)
            break; /* grew since fstat */
    }
    close(fd);
    if (got > TFB_HTTP_PUT_MAX) {
        free(b);
        *why = LAYOUT_FILE " is over 64 KiB; ignored";
        return 0;
    }
    *buf = b;
    *n = got;
    return 0;
}

/* Appends a validated JSON text with <, > and & as \u003c, \u003e,
 * \u0026, as every /data answer sends them. In valid JSON these bytes
 * can only be inside strings, where the escape means the same. */
static void json_raw_escaped(tfb_json *j, const char *t, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = t[i] == '<'   ? "\\u003c"
                          : t[i] == '>' ? "\\u003e"
                          : t[i] == '&' ? "\\u0026"
                                        : NULL;
        if (!esc)
            continue;
        tfb_json_append(j, t + run, i - run);
        tfb_json_append(j, esc, 6);
        run = i + 1;
    }
    tfb_json_append(j, t + run, n - run);
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
    char *buf;
    size_t n;
    const char *why;
    int e = read_layout(path, &buf, &n, &why);
    free(path);
    if (e == TFB_ENOMEM)
        return tfb_http_error(resp, 500, "out of memory");
    /* A file edited by hand may be anything: only a valid object is
     * passed on, else a note says why. */
    if (buf && tfb_json_validate_object(buf, n) < 0)
        why = LAYOUT_FILE " is not a JSON object; ignored";
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "layout");
    if (buf && !why) {
        tfb_json_raw(&j, "", 0); /* the separator before a value */
        json_raw_escaped(&j, buf, n);
    } else {
        tfb_json_null(&j);
    }
    if (why) {
        tfb_json_key(&j, "error");
        tfb_json_str(&j, why);
    }
    free(buf);
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

/* Writes body to a fresh temp file beside path and renames it over path.
 * Returns 0 or an errno value; on failure nothing is left behind. */
static int save_file(const char *path, const char *body, size_t len)
{
    size_t pn = strlen(path);
    char *tmp = malloc(pn + sizeof ".XXXXXX");
    if (!tmp)
        return ENOMEM;
    memcpy(tmp, path, pn);
    memcpy(tmp + pn, ".XXXXXX", sizeof ".XXXXXX");
    int err = 0;
    pthread_mutex_lock(&save_lock);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        err = errno;
    } else {
        /* mkstemp makes the file 0600; the layout is for the team. */
        if (fchmod(fd, 0644) != 0)
            err = errno;
        for (size_t off = 0; !err && off < len;) {
            ssize_t w = write(fd, body + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                err = w < 0 ? errno : EIO;
            else
                off += (size_t)w;
        }
        if (!err && fsync(fd) != 0)
            err = errno;
        if (close(fd) != 0 && !err)
            err = errno;
        if (!err && rename(tmp, path) != 0)
            err = errno;
        if (err)
            unlink(tmp);
    }
    pthread_mutex_unlock(&save_lock);
    free(tmp);
    return err;
}

static int put_layout(const tfb_http_req *req, tfb_http_resp *resp)
{
    size_t len;
    const char *body = tfb_http_body(req, &len);
    if (!body || tfb_json_validate_object(body, len) < 0)
        return tfb_http_error(resp, 400, "the layout must be one JSON "
                                         "object (valid UTF-8)");
    tfb_store *s = tfb_server_store(req);
    if (in_bucket(s))
        return tfb_http_error(resp, 501, "the layout cannot be saved to a "
                                         "logdir in a bucket");
    char *path = layout_path(s, "");
    if (!path)
        return tfb_http_error(resp, 500, "out of memory");
    int err = save_file(path, body, len);
    free(path);
    if (err) {
        /* A logdir the server may not write (permissions, a read-only
         * mount) is the caller's to fix: 403 with the reason. */
        int denied = err == EACCES || err == EPERM || err == EROFS;
        return tfb_http_error(resp, denied ? 403 : 500,
                              "cannot write %s: %s", LAYOUT_FILE,
                              strerror(err));
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "saved");
    tfb_json_bool(&j, 1);
    tfb_json_key(&j, "bytes");
    tfb_json_u64(&j, len);
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

int tfb_route_scalars_layout(const tfb_http_req *req, tfb_http_resp *resp)
{
    if (strcmp(tfb_http_method(req), "PUT") == 0)
        return put_layout(req, resp);
    return get_layout(req, resp);
}
