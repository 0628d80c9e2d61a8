/*
 * report_jsonval.c - recursive-descent JSON reader (RFC 8259) into a small
 * tree. Used on JSON our own analyses wrote, but it checks everything
 * anyway: bad input gives NULL, never a crash.
 */
#include "report_jsonval.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
    const char *p, *end;
    int depth;
} parser;

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                               *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static void free_inner(tfb_jv *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

void tfb_jv_free(tfb_jv *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At an opening quote: returns the decoded string (malloc'd) or NULL. */
static char *parse_string(parser *ps)
{
    if (ps->p >= ps->end || *ps->p != '"')
        return NULL;
    const char *s = ++ps->p;
    size_t cap = 0;
    while (s + cap < ps->end && s[cap] != '"') {
        if (s[cap] == '\\')
            cap++;
        cap++;
    }
    /* Escapes never grow the text (\uXXXX is 6 bytes for at most 4). */
    char *out = malloc(cap + 1);
    if (!out)
        return NULL;
    size_t n = 0;
    while (ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p++;
        if (c < 0x20)
            goto bad;
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        if (ps->p >= ps->end)
            goto bad;
        char e = *ps->p++;
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (ps->end - ps->p < 4 || hex4(ps->p, &cp) < 0)
                goto bad;
            ps->p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->end - ps->p >= 6 &&
                ps->p[0] == '\\' && ps->p[1] == 'u') {
                unsigned lo;
                if (hex4(ps->p + 2, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    ps->p += 6;
                }
            }
            if (cp >= 0xD800 && cp < 0xE000)
                cp = 0xFFFD; /* a lone surrogate */
            n += put_utf8(out + n, cp);
            break;
        }
        default:
            goto bad;
        }
    }
    if (ps->p >= ps->end)
        goto bad;
    ps->p++; /* closing quote */
    out[n] = 0;
    return out;
bad:
    free(out);
    return NULL;
}

static int parse_value(parser *ps, tfb_jv *v);

static int grow(tfb_jv *v, size_t *cap, int with_keys)
{
    if (v->n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    tfb_jv *ni = realloc(v->items, nc * sizeof *ni);
    if (!ni)
        return -1;
    v->items = ni;
    if (with_keys) {
        char **nk = realloc(v->keys, nc * sizeof *nk);
        if (!nk)
            return -1;
        v->keys = nk;
    }
    *cap = nc;
    return 0;
}

static int parse_container(parser *ps, tfb_jv *v, int object)
{
    char close = object ? '}' : ']';
    v->type = object ? TFB_JV_OBJECT : TFB_JV_ARRAY;
    if (++ps->depth > MAX_DEPTH)
        return -1;
    ps->p++;
    skip_ws(ps);
    size_t cap = 0;
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        if (grow(v, &cap, object) < 0)
            return -1;
        tfb_jv *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        if (object) {
            skip_ws(ps);
            char *k = parse_string(ps);
            if (!k)
                return -1;
            v->keys[v->n] = k;
            v->n++; /* counted now, so free_inner frees the key on error */
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return -1;
            ps->p++;
            if (parse_value(ps, item) < 0)
                return -1;
        } else {
            v->n++;
            if (parse_value(ps, item) < 0)
                return -1;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return -1;
    }
}

static int parse_number(parser *ps, tfb_jv *v)
{
    const char *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    int digits = 0;
    while (ps->p < ps->end && ((*ps->p >= '0' && *ps->p <= '9') ||
                               *ps->p == '.' || *ps->p == 'e' ||
                               *ps->p == 'E' || *ps->p == '+' ||
                               *ps->p == '-')) {
        digits += *ps->p >= '0' && *ps->p <= '9';
        ps->p++;
    }
    if (!digits || ps->p - s > 64)
        return -1;
    char buf[72];
    memcpy(buf, s, (size_t)(ps->p - s));
    buf[ps->p - s] = 0;
    char *end;
    v->type = TFB_JV_NUMBER;
    v->num = strtod(buf, &end);
    return *end ? -1 : 0;
}

static int literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
        return -1;
    ps->p += n;
    return 0;
}

static int parse_value(parser *ps, tfb_jv *v)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        return -1;
    switch (*ps->p) {
    case '{':
        return parse_container(ps, v, 1);
    case '[':
        return parse_container(ps, v, 0);
    case '"':
        v->type = TFB_JV_STRING;
        v->str = parse_string(ps);
        return v->str ? 0 : -1;
    case 't':
        v->type = TFB_JV_BOOL;
        v->num = 1;
        return literal(ps, "true");
    case 'f':
        v->type = TFB_JV_BOOL;
        return literal(ps, "false");
    case 'n':
        v->type = TFB_JV_NULL;
        return literal(ps, "null");
    default:
        return parse_number(ps, v);
    }
}

tfb_jv *tfb_jv_parse(const char *text, size_t len)
{
    if (!text)
        return NULL;
    tfb_jv *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    parser ps = {text, text + len, 0};
    if (parse_value(&ps, v) < 0) {
        tfb_jv_free(v);
        return NULL;
    }
    skip_ws(&ps);
    if (ps.p != ps.end) {
        tfb_jv_free(v);
        return NULL;
    }
    return v;
}

const tfb_jv *tfb_jv_get(const tfb_jv *v, const char *key)
{
    if (!v || v->type != TFB_JV_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key))
            return &v->items[i];
    return NULL;
}

double tfb_jv_num(const tfb_jv *v, double fallback)
{
    return v && v->type == TFB_JV_NUMBER ? v->num : fallback;
}

const char *tfb_jv_str(const tfb_jv *v, const char *fallback)
{
    return v && v->type == TFB_JV_STRING ? v->str : fallback;
}
