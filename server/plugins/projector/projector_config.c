/*
 * projector_config.c - projector_config.pbtxt (protobuf text format of
 * TensorBoard's ProjectorConfig) into structs, and back out as /info's
 * JSON. A small hand-written scanner: the message has a handful of
 * fields, and a protobuf runtime for one text file is not worth the
 * dependency.
 */
#include "plugins/projector/projector_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/str.h"
#include "base/vec.h"
#include "tfboard.h"

typedef struct scan {
    const char *p, *end;
    int line;
    char *err;
    size_t err_len;
    int failed; /* TFB_ECORRUPT or TFB_ENOMEM once set */
} scan;

static void fail(scan *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(scan *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = TFB_ECORRUPT;
    if (s->err && s->err_len) {
        int n = snprintf(s->err, s->err_len, "line %d: ", s->line);
        if (n >= 0 && (size_t)n < s->err_len) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(s->err + n, s->err_len - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
}

static void skip_space(scan *s)
{
    while (s->p < s->end) {
        char c = *s->p;
        if (c == '\n') {
            s->line++;
            s->p++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' ||
                   c == '\v' || c == ',' || c == ';') {
            /* protobuf's text format allows , and ; between fields */
            s->p++;
        } else if (c == '#') {
            while (s->p < s->end && *s->p != '\n')
                s->p++;
        } else {
            break;
        }
    }
}

static int is_ident(char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && ((c >= '0' && c <= '9') || c == '.' || c == '/'));
}

/* A field name into buf (cut at its size; names here are short). */
static int ident(scan *s, char *buf, size_t cap)
{
    skip_space(s);
    if (s->p >= s->end || !is_ident(*s->p, 1)) {
        fail(s, "expected a field name");
        return -1;
    }
    size_t n = 0;
    /* [ext.name] of an extension is not part of this message: refused by
     * the first-character test above. */
    while (s->p < s->end && is_ident(*s->p, 0)) {
        if (n + 1 < cap)
            buf[n++] = *s->p;
        s->p++;
    }
    buf[n] = 0;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* One or more adjacent quoted strings, unescaped, as a new string. */
static char *string_value(scan *s)
{
    tfb_buf out = {0};
    int any = 0;
    for (;;) {
        skip_space(s);
        if (s->p >= s->end || (*s->p != '"' && *s->p != '\''))
            break;
        any = 1;
        char q = *s->p++;
        for (;;) {
            if (s->p >= s->end || *s->p == '\n') {
                fail(s, "string not closed");
                tfb_buf_free(&out);
                return NULL;
            }
            char c = *s->p++;
            if (c == q)
                break;
            if (c == '\\') {
                if (s->p >= s->end) {
                    fail(s, "string not closed");
                    tfb_buf_free(&out);
                    return NULL;
                }
                char e = *s->p++;
                switch (e) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                case 'a': c = '\a'; break;
                case 'b': c = '\b'; break;
                case 'f': c = '\f'; break;
                case 'v': c = '\v'; break;
                case '\\': case '\'': case '"': case '?': c = e; break;
                case 'x': {
                    int v = 0, k = 0, h;
                    while (k < 2 && s->p < s->end &&
                           (h = hexval(*s->p)) >= 0) {
                        v = v * 16 + h;
                        s->p++;
                        k++;
                    }
                    if (!k) {
                        fail(s, "\\x without hex digits");
                        tfb_buf_free(&out);
                        return NULL;
                    }
                    c = (char)v;
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        int v = e - '0', k = 1;
                        while (k < 3 && s->p < s->end && *s->p >= '0' &&
                               *s->p <= '7') {
                            v = v * 8 + (*s->p++ - '0');
                            k++;
                        }
                        c = (char)v;
                    } else {
                        fail(s, "unknown escape \\%c", e);
                        tfb_buf_free(&out);
                        return NULL;
                    }
                }
            }
            tfb_buf_put(&out, &c, 1);
            if (out.failed) {
                tfb_buf_free(&out);
                s->failed = TFB_ENOMEM;
                return NULL;
            }
        }
    }
    if (!any) {
        fail(s, "expected a quoted string");
        tfb_buf_free(&out);
        return NULL;
    }
    if (out.n && memchr(out.v, 0, out.n)) {
        fail(s, "a path or name with a NUL byte");
        tfb_buf_free(&out);
        return NULL;
    }
    char *r = tfb_buf_take(&out);
    if (!r)
        s->failed = TFB_ENOMEM;
    return r;
}

/* A bare token (number, enum or bool), skipped or read as uint32. */
static int bare_value(scan *s, uint32_t *out)
{
    skip_space(s);
    const char *b = s->p;
    while (s->p < s->end && (is_ident(*s->p, 0) || *s->p == '-' ||
                             *s->p == '+'))
        s->p++;
    if (s->p == b) {
        fail(s, "expected a value");
        return -1;
    }
    if (!out)
        return 0;
    char tmp[32];
    size_t n = (size_t)(s->p - b);
    if (n >= sizeof tmp || b[0] == '-') {
        fail(s, "not an unsigned 32-bit number");
        return -1;
    }
    memcpy(tmp, b, n);
    tmp[n] = 0;
    char *e;
    errno = 0;
    unsigned long long v = strtoull(tmp, &e, 0);
    if (*e || errno || v > UINT32_MAX) {
        fail(s, "not an unsigned 32-bit number: %s", tmp);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* After a field name: ':' (required before a scalar, optional before a
 * message). Returns the closing bracket of a message ('}' or '>'), or 0
 * for a scalar. */
static char field_open(scan *s)
{
    skip_space(s);
    int colon = 0;
    if (s->p < s->end && *s->p == ':') {
        colon = 1;
        s->p++;
        skip_space(s);
    }
    if (s->p < s->end && (*s->p == '{' || *s->p == '<'))
        return *s->p++ == '{' ? '}' : '>';
    if (!colon)
        fail(s, "expected ':' or '{'");
    return 0;
}

static void skip_message(scan *s, char close, int depth);

/* Skips the value of an unknown field. */
static void skip_field(scan *s, int depth)
{
    char close = field_open(s);
    if (s->failed)
        return;
    if (close) {
        skip_message(s, close, depth + 1);
        return;
    }
    skip_space(s);
    if (s->p < s->end && *s->p == '[') { /* a list of scalars */
        s->p++;
        for (;;) {
            skip_space(s);
            if (s->p < s->end && *s->p == ']') {
                s->p++;
                return;
            }
            if (s->p < s->end && (*s->p == '"' || *s->p == '\''))
                free(string_value(s));
            else
                bare_value(s, NULL);
            if (s->failed)
                return;
        }
    }
    if (s->p < s->end && (*s->p == '"' || *s->p == '\''))
        free(string_value(s));
    else
        bare_value(s, NULL);
}

static void skip_message(scan *s, char close, int depth)
{
    if (depth > TFB_PROJECTOR_MAX_DEPTH) {
        fail(s, "nested more than %d deep", TFB_PROJECTOR_MAX_DEPTH);
        return;
    }
    char name[64];
    for (;;) {
        skip_space(s);
        if (s->p >= s->end) {
            fail(s, "'%c' missing", close);
            return;
        }
        if (*s->p == close) {
            s->p++;
            return;
        }
        if (ident(s, name, sizeof name) < 0)
            return;
        skip_field(s, depth);
        if (s->failed)
            return;
    }
}

/* A repeated uint32 (`dim: 8` or `dim: [8, 8]`), appended to v. */
static void uint_field(scan *s, uint32_t *v, size_t *n)
{
    if (field_open(s)) {
        fail(s, "expected a number");
        return;
    }
    if (s->failed)
        return;
    skip_space(s);
    int list = s->p < s->end && *s->p == '[';
    if (list)
        s->p++;
    for (;;) {
        uint32_t x;
        if (list) {
            skip_space(s);
            if (s->p < s->end && *s->p == ']') {
                s->p++;
                return;
            }
        }
        if (bare_value(s, &x) < 0)
            return;
        if (*n < TFB_PROJECTOR_MAX_SHAPE)
            v[(*n)++] = x;
        else {
            fail(s, "more than %d dimensions", TFB_PROJECTOR_MAX_SHAPE);
            return;
        }
        if (!list)
            return;
    }
}

static void str_field(scan *s, char **dst)
{
    if (field_open(s)) {
        fail(s, "expected a string");
        return;
    }
    if (s->failed)
        return;
    char *v = string_value(s);
    if (!v)
        return;
    free(*dst); /* a repeated singular field: the last one wins */
    *dst = v;
}

static void sprite_message(scan *s, char close, tfb_projector_embedding *e)
{
    char name[64];
    e->has_sprite = 1;
    for (;;) {
        skip_space(s);
        if (s->p >= s->end) {
            fail(s, "'%c' missing", close);
            return;
        }
        if (*s->p == close) {
            s->p++;
            return;
        }
        if (ident(s, name, sizeof name) < 0)
            return;
        if (!strcmp(name, "image_path"))
            str_field(s, &e->sprite_image_path);
        else if (!strcmp(name, "single_image_dim"))
            uint_field(s, e->sprite_dim, &e->n_sprite_dim);
        else
            skip_field(s, 3);
        if (s->failed)
            return;
    }
}

static void embedding_message(scan *s, char close, tfb_projector_embedding *e)
{
    char name[64];
    for (;;) {
        skip_space(s);
        if (s->p >= s->end) {
            fail(s, "'%c' missing", close);
            return;
        }
        if (*s->p == close) {
            s->p++;
            return;
        }
        if (ident(s, name, sizeof name) < 0)
            return;
        if (!strcmp(name, "tensor_name"))
            str_field(s, &e->tensor_name);
        else if (!strcmp(name, "metadata_path"))
            str_field(s, &e->metadata_path);
        else if (!strcmp(name, "bookmarks_path"))
            str_field(s, &e->bookmarks_path);
        else if (!strcmp(name, "tensor_path"))
            str_field(s, &e->tensor_path);
        else if (!strcmp(name, "tensor_shape"))
            uint_field(s, e->tensor_shape, &e->n_tensor_shape);
        else if (!strcmp(name, "sprite")) {
            char c = field_open(s);
            if (!s->failed && !c)
                fail(s, "sprite: expected '{'");
            if (!s->failed)
                sprite_message(s, c, e);
        } else
            skip_field(s, 2);
        if (s->failed)
            return;
    }
}

static void emb_free(tfb_projector_embedding *e)
{
    free(e->tensor_name);
    free(e->metadata_path);
    free(e->bookmarks_path);
    free(e->tensor_path);
    free(e->sprite_image_path);
}

/* Every string member set ("" when absent), so readers need no NULL
 * tests. */
static int fill_empty(char **p)
{
    if (!*p)
        *p = tfb_strdup("");
    return *p ? 0 : TFB_ENOMEM;
}

int tfb_projector_config_parse(const char *text, size_t len,
                               tfb_projector_config *out, char *err,
                               size_t err_len)
{
    memset(out, 0, sizeof *out);
    if (err && err_len)
        err[0] = 0;
    scan s = {.p = text, .end = text + len, .line = 1, .err = err,
              .err_len = err_len};
    TFB_VEC(tfb_projector_embedding) embs = {0}; /* grows out->emb */
    char name[64];
    for (;;) {
        skip_space(&s);
        if (s.p >= s.end || s.failed)
            break;
        if (ident(&s, name, sizeof name) < 0)
            break;
        if (!strcmp(name, "model_checkpoint_path")) {
            str_field(&s, &out->model_checkpoint_path);
        } else if (!strcmp(name, "model_checkpoint_dir")) {
            str_field(&s, &out->model_checkpoint_dir);
        } else if (!strcmp(name, "embeddings")) {
            char c = field_open(&s);
            if (!s.failed && !c)
                fail(&s, "embeddings: expected '{'");
            if (s.failed)
                break;
            tfb_projector_embedding e = {0};
            embedding_message(&s, c, &e);
            if (s.failed) {
                emb_free(&e);
                break;
            }
            if (out->n_emb >= TFB_PROJECTOR_MAX_EMBEDDINGS) {
                emb_free(&e);
                out->dropped++;
                continue;
            }
            if (tfb_vec_push(&embs, e) < 0) {
                emb_free(&e);
                s.failed = TFB_ENOMEM;
                break;
            }
            out->emb = embs.v; /* lent: the config owns the array */
            out->n_emb = embs.n;
        } else {
            skip_field(&s, 1);
        }
    }
    int rc = s.failed;
    if (!rc) {
        rc = fill_empty(&out->model_checkpoint_path);
        if (!rc)
            rc = fill_empty(&out->model_checkpoint_dir);
        for (size_t i = 0; !rc && i < out->n_emb; i++) {
            tfb_projector_embedding *e = &out->emb[i];
            rc = fill_empty(&e->tensor_name);
            if (!rc)
                rc = fill_empty(&e->metadata_path);
            if (!rc)
                rc = fill_empty(&e->bookmarks_path);
            if (!rc)
                rc = fill_empty(&e->tensor_path);
            if (!rc)
                rc = fill_empty(&e->sprite_image_path);
            /* TensorBoard names an embedding without a tensor_name after
             * its tensor file (projector_plugin.py). */
            if (!rc && !e->tensor_name[0] && e->tensor_path[0]) {
                const char *b = strrchr(e->tensor_path, '/');
                char *nn = tfb_strdup(b ? b + 1 : e->tensor_path);
                if (!nn)
                    rc = TFB_ENOMEM;
                else {
                    free(e->tensor_name);
                    e->tensor_name = nn;
                }
            }
            /* ... and drops a trailing ":0" from every name. */
            size_t n = strlen(e->tensor_name);
            if (!rc && n >= 2 && !strcmp(e->tensor_name + n - 2, ":0"))
                e->tensor_name[n - 2] = 0;
        }
    }
    if (rc) {
        if (rc == TFB_ENOMEM && err && err_len)
            snprintf(err, err_len, "out of memory");
        tfb_projector_config_free(out);
    }
    return rc;
}

void tfb_projector_config_free(tfb_projector_config *c)
{
    if (!c)
        return;
    free(c->model_checkpoint_path);
    free(c->model_checkpoint_dir);
    for (size_t i = 0; i < c->n_emb; i++)
        emb_free(&c->emb[i]);
    free(c->emb);
    memset(c, 0, sizeof *c);
}

const tfb_projector_embedding *
tfb_projector_config_find(const tfb_projector_config *c, const char *name)
{
    size_t n = strlen(name);
    if (n >= 2 && !strcmp(name + n - 2, ":0"))
        n -= 2;
    for (size_t i = 0; i < c->n_emb; i++) {
        const char *t = c->emb[i].tensor_name;
        if (strlen(t) == n && !memcmp(t, name, n))
            return &c->emb[i];
    }
    return NULL;
}

static void json_str_if(tfb_json *j, const char *key, const char *v)
{
    if (v && v[0]) {
        tfb_json_key(j, key);
        tfb_json_str(j, v);
    }
}

static void json_uints(tfb_json *j, const char *key, const uint32_t *v,
                       size_t n)
{
    if (!n)
        return;
    tfb_json_key(j, key);
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        tfb_json_u64(j, v[i]);
    tfb_json_array_end(j);
}

/* Written member by member rather than by a field table: protobuf's JSON
 * leaves empty fields out and writes repeated ones as arrays, which the
 * tables (one value per member, null when unknown) do not express. */
void tfb_projector_config_json(tfb_json *j, const tfb_projector_config *c)
{
    tfb_json_object_begin(j);
    json_str_if(j, "modelCheckpointPath", c->model_checkpoint_path);
    if (c->n_emb) {
        tfb_json_key(j, "embeddings");
        tfb_json_array_begin(j);
        for (size_t i = 0; i < c->n_emb; i++) {
            const tfb_projector_embedding *e = &c->emb[i];
            tfb_json_object_begin(j);
            json_str_if(j, "tensorName", e->tensor_name);
            json_str_if(j, "metadataPath", e->metadata_path);
            json_str_if(j, "bookmarksPath", e->bookmarks_path);
            json_uints(j, "tensorShape", e->tensor_shape, e->n_tensor_shape);
            if (e->has_sprite) {
                tfb_json_key(j, "sprite");
                tfb_json_object_begin(j);
                json_str_if(j, "imagePath", e->sprite_image_path);
                json_uints(j, "singleImageDim", e->sprite_dim,
                           e->n_sprite_dim);
                tfb_json_object_end(j);
            }
            json_str_if(j, "tensorPath", e->tensor_path);
            tfb_json_object_end(j);
        }
        tfb_json_array_end(j);
    }
    json_str_if(j, "modelCheckpointDir", c->model_checkpoint_dir);
    tfb_json_object_end(j);
}
