/*
 * trace_kineto_scan.c - the Kineto JSON scanner (trace_kineto_scan.h):
 * top-level keys first (traceEvents, baseTimeNanoseconds), then the events
 * one by one, each handed to the caller's callback.
 */
#include "trace/trace_kineto_scan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_file.h"
#include "trace/trace_internal.h"
#include "tfboard.h"

typedef tfb_trace_kineto_pos scan;
typedef tfb_trace_kineto_tok tok;

int tfb_trace_kineto_eat(scan *s, char c)
{
    tfb_trace_kineto_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 1;
    }
    return 0;
}

void tfb_trace_kineto_skip(scan *s, tok *v)
{
    tfb_trace_kineto_ws(s);
    if (v)
        *v = (tok){NULL, 0, 0, 0};
    if (s->p >= s->end) {
        s->bad = 1;
        return;
    }
    char c = *s->p;
    if (c == '"') {
        tok t;
        if (tfb_trace_kineto_str(s, &t) && v)
            *v = t;
        return;
    }
    if (c == '{' || c == '[') {
        int depth = 0;
        while (s->p < s->end) {
            c = *s->p++;
            if (c == '"') {
                while (s->p < s->end && *s->p != '"') {
                    if (*s->p == '\\')
                        s->p++;
                    s->p++;
                }
                s->p++;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return;
            }
        }
        s->bad = 1;
        return;
    }
    const char *b = s->p;
    while (s->p < s->end && *s->p != ',' && *s->p != '}' && *s->p != ']' &&
           !isspace((unsigned char)*s->p))
        s->p++;
    if (s->p == b)
        s->bad = 1;
    if (v) {
        v->s = b;
        v->len = (size_t)(s->p - b);
    }
}

int tfb_trace_kineto_tok_is(const tok *t, const char *lit)
{
    size_t n = strlen(lit);
    return t->s && t->len == n && memcmp(t->s, lit, n) == 0;
}

int tfb_trace_kineto_tok_ieq(const tok *t, const char *lit)
{
    size_t n = strlen(lit);
    if (!t->s || t->len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)t->s[i]) != lit[i])
            return 0;
    return 1;
}

int64_t tfb_trace_kineto_tok_i64(const tok *t, int64_t def)
{
    if (!t->s || !t->len)
        return def;
    char buf[32];
    size_t n = t->len < sizeof buf - 1 ? t->len : sizeof buf - 1;
    memcpy(buf, t->s, n);
    buf[n] = '\0';
    char *e;
    long long v = strtoll(buf, &e, 10);
    if (e == buf)
        return def;
    if (*e == '.' || *e == 'e' || *e == 'E') {
        double d = strtod(buf, NULL);
        return d > -9e18 && d < 9e18 ? (int64_t)d : def;
    }
    return (int64_t)v;
}

int tfb_trace_kineto_us_to_ns(const tok *t, int64_t *out)
{
    if (!t->s || !t->len || t->is_str)
        return 0;
    const char *p = t->s, *end = t->s + t->len;
    int neg = *p == '-';
    p += neg;
    int64_t ip = 0, frac = 0;
    int digits = 0, fd = 0;
    while (p < end && isdigit((unsigned char)*p)) {
        if (ip > INT64_MAX / 10 / 1000)
            return 0;
        ip = ip * 10 + (*p++ - '0');
        digits++;
    }
    if (p < end && *p == '.')
        for (p++; p < end && isdigit((unsigned char)*p); p++)
            if (fd < 3) {
                frac = frac * 10 + (*p - '0');
                fd++;
            }
    if (p < end && (*p == 'e' || *p == 'E')) {
        char buf[64];
        size_t n = t->len < sizeof buf - 1 ? t->len : sizeof buf - 1;
        memcpy(buf, t->s, n);
        buf[n] = '\0';
        double v = strtod(buf, NULL) * 1000.0;
        if (!(v > -9e18 && v < 9e18))
            return 0;
        *out = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
        return 1;
    }
    if (!digits && !fd)
        return 0;
    for (; fd < 3; fd++)
        frac *= 10;
    *out = (neg ? -1 : 1) * (ip * 1000 + frac);
    return 1;
}

char *tfb_trace_kineto_tok_text(const tok *t, char *buf, size_t cap,
                                size_t *len, char **heap)
{
    *heap = NULL;
    char *o = buf;
    if (t->len >= cap) {
        o = *heap = malloc(t->len + 1);
        if (!o)
            return NULL;
    }
    size_t n = t->len;
    if (t->has_esc)
        n = tfb_json_str_decode(t->s, t->len, o);
    else if (n)
        memcpy(o, t->s, n);
    o[n] = '\0';
    *len = n;
    return o;
}

/* ------------------------------------------------------------------------
 * Events
 * ---------------------------------------------------------------------- */
static void read_triple(scan *s, int64_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    tfb_trace_kineto_ws(s);
    if (s->p >= s->end || *s->p != '[') {
        tfb_trace_kineto_skip(s, NULL);
        return;
    }
    s->p++;
    for (int i = 0; !s->bad; i++) {
        if (tfb_trace_kineto_eat(s, ']'))
            return;
        if (i > 0 && !tfb_trace_kineto_eat(s, ',')) {
            s->bad = 1;
            return;
        }
        tok t;
        tfb_trace_kineto_skip(s, &t);
        if (i < 3)
            out[i] = tfb_trace_kineto_tok_i64(&t, 0);
    }
}

static void read_args(scan *s, tfb_trace_kineto_event *e)
{
    if (!tfb_trace_kineto_eat(s, '{')) {
        tfb_trace_kineto_skip(s, NULL);
        return;
    }
    if (tfb_trace_kineto_eat(s, '}'))
        return;
    do {
        tok k;
        if (!tfb_trace_kineto_str(s, &k) || !tfb_trace_kineto_eat(s, ':')) {
            s->bad = 1;
            return;
        }
        tok *dst = tfb_trace_kineto_tok_is(&k, "correlation")   ? &e->a_corr
                   : tfb_trace_kineto_tok_is(&k, "device")      ? &e->a_dev
                   : tfb_trace_kineto_tok_is(&k, "stream")      ? &e->a_stream
                   : tfb_trace_kineto_tok_is(&k, "bytes")       ? &e->a_bytes
                   : tfb_trace_kineto_tok_is(&k, "name")        ? &e->a_name
                   : tfb_trace_kineto_tok_is(&k, "registers per thread")
                       ? &e->a_regs
                   : tfb_trace_kineto_tok_is(&k, "shared memory") ? &e->a_smem
                   : tfb_trace_kineto_tok_is(&k, "Collective name") ? &e->a_coll
                   : tfb_trace_kineto_tok_is(&k, "In msg nelems")
                       ? &e->a_in_nelems
                   : tfb_trace_kineto_tok_is(&k, "Out msg nelems")
                       ? &e->a_out_nelems
                   : tfb_trace_kineto_tok_is(&k, "dtype")      ? &e->a_dtype
                   : tfb_trace_kineto_tok_is(&k, "Group size")
                       ? &e->a_group_size
                   : tfb_trace_kineto_tok_is(&k, "External id") ? &e->a_ext_id
                                                                : NULL;
        if (tfb_trace_kineto_tok_is(&k, "grid"))
            read_triple(s, e->grid);
        else if (tfb_trace_kineto_tok_is(&k, "block"))
            read_triple(s, e->block);
        else
            tfb_trace_kineto_skip(s, dst);
    } while (!s->bad && tfb_trace_kineto_eat(s, ','));
    if (!tfb_trace_kineto_eat(s, '}'))
        s->bad = 1;
}

static int read_event(scan *s, tfb_trace_kineto_event *e)
{
    memset(e, 0, sizeof *e);
    if (!tfb_trace_kineto_eat(s, '{')) {
        s->bad = 1;
        return 0;
    }
    if (tfb_trace_kineto_eat(s, '}'))
        return 1;
    do {
        tok k;
        if (!tfb_trace_kineto_str(s, &k) || !tfb_trace_kineto_eat(s, ':')) {
            s->bad = 1;
            return 0;
        }
        tok *dst = tfb_trace_kineto_tok_is(&k, "ph")     ? &e->ph
                   : tfb_trace_kineto_tok_is(&k, "cat")  ? &e->cat
                   : tfb_trace_kineto_tok_is(&k, "name") ? &e->name
                   : tfb_trace_kineto_tok_is(&k, "pid")  ? &e->pid
                   : tfb_trace_kineto_tok_is(&k, "tid")  ? &e->tid
                   : tfb_trace_kineto_tok_is(&k, "ts")   ? &e->ts
                   : tfb_trace_kineto_tok_is(&k, "dur")  ? &e->dur
                                                         : NULL;
        if (tfb_trace_kineto_tok_is(&k, "args"))
            read_args(s, e);
        else
            tfb_trace_kineto_skip(s, dst);
    } while (!s->bad && tfb_trace_kineto_eat(s, ','));
    if (!tfb_trace_kineto_eat(s, '}')) {
        s->bad = 1;
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * The file's metadata: deviceProperties and distributedInfo
 * ---------------------------------------------------------------------- */

/* Calls fn(ctx, key, s) for each key of the object at s (s is past the
 * value after each call: fn reads or skips it). */
static void each_key(scan *s, void (*fn)(void *, const tok *, scan *),
                     void *ctx)
{
    if (!tfb_trace_kineto_eat(s, '{')) {
        tfb_trace_kineto_skip(s, NULL);
        return;
    }
    if (tfb_trace_kineto_eat(s, '}'))
        return;
    do {
        tok k;
        if (!tfb_trace_kineto_str(s, &k) || !tfb_trace_kineto_eat(s, ':')) {
            s->bad = 1;
            return;
        }
        fn(ctx, &k, s);
    } while (!s->bad && tfb_trace_kineto_eat(s, ','));
    if (!tfb_trace_kineto_eat(s, '}'))
        s->bad = 1;
}

static int64_t num_of(scan *s)
{
    tok v;
    tfb_trace_kineto_skip(s, &v);
    return v.s && !v.is_str ? tfb_trace_kineto_tok_i64(&v, -1) : -1;
}

static void devprop_key(void *ctx, const tok *k, scan *s)
{
    tfb_trace_kineto_devprop *d = ctx;
    int64_t *dst =
        tfb_trace_kineto_tok_is(k, "id")               ? &d->id
        : tfb_trace_kineto_tok_is(k, "totalGlobalMem") ? &d->total_mem
        : tfb_trace_kineto_tok_is(k, "computeMajor")   ? &d->major
        : tfb_trace_kineto_tok_is(k, "computeMinor")   ? &d->minor
        : tfb_trace_kineto_tok_is(k, "numSms")         ? &d->sms
                                                       : NULL;
    if (dst) {
        *dst = num_of(s);
    } else if (tfb_trace_kineto_tok_is(k, "name")) {
        tok v;
        tfb_trace_kineto_skip(s, &v);
        if (v.is_str)
            d->name = v;
    } else {
        tfb_trace_kineto_skip(s, NULL);
    }
}

static void read_devprops(scan *s, tfb_trace_kineto_meta *m)
{
    if (!tfb_trace_kineto_eat(s, '[')) {
        tfb_trace_kineto_skip(s, NULL);
        return;
    }
    if (tfb_trace_kineto_eat(s, ']'))
        return;
    do {
        tfb_trace_kineto_devprop d = {-1, -1, -1, -1, -1, {NULL, 0, 0, 0}};
        each_key(s, devprop_key, &d);
        if (!s->bad && d.id >= 0 && m->ndev < TFB_TRACE_KINETO_MAX_DEVPROPS)
            m->dev[m->ndev++] = d;
    } while (!s->bad && tfb_trace_kineto_eat(s, ','));
    if (!tfb_trace_kineto_eat(s, ']'))
        s->bad = 1;
}

static void pg_key(void *ctx, const tok *k, scan *s)
{
    tfb_trace_kineto_pg *g = ctx;
    tok *dst = tfb_trace_kineto_tok_is(k, "pg_name")          ? &g->name
               : tfb_trace_kineto_tok_is(k, "pg_desc")        ? &g->desc
               : tfb_trace_kineto_tok_is(k, "backend_config") ? &g->backend
                                                              : NULL;
    if (dst) {
        tok v;
        tfb_trace_kineto_skip(s, &v);
        if (v.is_str)
            *dst = v;
    } else if (tfb_trace_kineto_tok_is(k, "pg_size")) {
        g->size = num_of(s);
    } else if (tfb_trace_kineto_tok_is(k, "ranks")) {
        tfb_trace_kineto_ws(s);
        const char *b = s->p;
        tfb_trace_kineto_skip(s, NULL);
        if (!s->bad && b < s->p && *b == '[') {
            g->ranks = b;
            g->ranks_len = (size_t)(s->p - b);
        }
    } else {
        tfb_trace_kineto_skip(s, NULL);
    }
}

static void dist_key(void *ctx, const tok *k, scan *s)
{
    tfb_trace_kineto_meta *m = ctx;
    if (tfb_trace_kineto_tok_is(k, "rank")) {
        m->rank = num_of(s);
    } else if (tfb_trace_kineto_tok_is(k, "world_size")) {
        m->world_size = num_of(s);
    } else if (tfb_trace_kineto_tok_is(k, "pg_count")) {
        m->pg_count = num_of(s);
    } else if (tfb_trace_kineto_tok_is(k, "backend")) {
        tok v;
        tfb_trace_kineto_skip(s, &v);
        if (v.is_str)
            m->backend = v;
    } else if (tfb_trace_kineto_tok_is(k, "pg_config")) {
        if (!tfb_trace_kineto_eat(s, '[')) {
            tfb_trace_kineto_skip(s, NULL);
            return;
        }
        if (tfb_trace_kineto_eat(s, ']'))
            return;
        do {
            tfb_trace_kineto_pg g;
            memset(&g, 0, sizeof g);
            g.size = -1;
            each_key(s, pg_key, &g);
            if (!s->bad && m->npg < TFB_TRACE_MAX_PROCESS_GROUPS)
                m->pg[m->npg++] = g;
        } while (!s->bad && tfb_trace_kineto_eat(s, ','));
        if (!tfb_trace_kineto_eat(s, ']'))
            s->bad = 1;
    } else {
        tfb_trace_kineto_skip(s, NULL);
    }
}

int tfb_trace_kineto_scan(const char *path, int legacy_ok,
                          tfb_trace_load_ctl *ctl,
                          tfb_trace_kineto_event_fn fn, void *ctx)
{
    return tfb_trace_kineto_scan_meta(path, legacy_ok, ctl, fn, NULL, ctx);
}

int tfb_trace_kineto_scan_meta(const char *path, int legacy_ok,
                               tfb_trace_load_ctl *ctl,
                               tfb_trace_kineto_event_fn fn,
                               tfb_trace_kineto_meta_fn meta_fn, void *ctx)
{
    char *text;
    size_t len = 0;
    int rc = tfb_trace_read_text(path, TFB_TRACE_MAX_TEXT_BYTES, &text, &len);
    if (rc == TFB_ETOOBIG || rc == TFB_ENOMEM)
        return tfb_trace_load_ctl_fail(ctl, rc,
                                       "%s inflates to more than %zu MiB "
                                       "or %dx its size; not read",
                                       path, TFB_TRACE_MAX_TEXT_BYTES >> 20,
                                       TFB_TRACE_MAX_RATIO);
    if (rc < 0)
        return 0; /* unreadable or damaged: not a trace */
    scan s = {text, text + len, 0};
    /* Pass 1: top-level keys; find traceEvents and baseTimeNanoseconds,
     * and the metadata when it is asked for. */
    const char *events = NULL;
    int64_t base_ns = 0;
    tfb_trace_kineto_meta *meta = NULL;
    if (meta_fn) {
        meta = calloc(1, sizeof *meta);
        if (!meta) {
            free(text);
            return tfb_trace_load_ctl_fail(ctl, TFB_ENOMEM,
                                           "out of memory reading %s", path);
        }
        meta->rank = meta->world_size = meta->pg_count = -1;
    }
    tfb_trace_kineto_ws(&s);
    int legacy = s.p < s.end && *s.p == '[';
    if (legacy) {
        if (legacy_ok)
            events = s.p;
    } else if (tfb_trace_kineto_eat(&s, '{') &&
               !tfb_trace_kineto_eat(&s, '}')) {
        do {
            tok k, v;
            if (!tfb_trace_kineto_str(&s, &k) ||
                !tfb_trace_kineto_eat(&s, ':'))
                break;
            if (tfb_trace_kineto_tok_is(&k, "traceEvents")) {
                tfb_trace_kineto_ws(&s);
                events = s.p;
                tfb_trace_kineto_skip(&s, NULL);
            } else if (meta &&
                       tfb_trace_kineto_tok_is(&k, "deviceProperties")) {
                read_devprops(&s, meta);
            } else if (meta &&
                       tfb_trace_kineto_tok_is(&k, "distributedInfo")) {
                tfb_trace_kineto_ws(&s);
                meta->has_dist = s.p < s.end && *s.p == '{';
                each_key(&s, dist_key, meta);
            } else {
                tfb_trace_kineto_skip(&s, &v);
                if (tfb_trace_kineto_tok_is(&k, "baseTimeNanoseconds"))
                    base_ns = tfb_trace_kineto_tok_i64(&v, 0);
            }
        } while (!s.bad && tfb_trace_kineto_eat(&s, ','));
    }
    if (!events) {
        free(meta);
        free(text);
        return 0;
    }
    int err = meta ? meta_fn(ctx, meta) : 0;
    free(meta);
    /* Pass 2: the events. */
    s.p = events;
    s.bad = 0;
    if (!err && tfb_trace_kineto_eat(&s, '[') &&
        !tfb_trace_kineto_eat(&s, ']')) {
        tfb_trace_kineto_event e;
        do {
            if (!read_event(&s, &e))
                break;
            err = fn(ctx, &e, base_ns, legacy);
        } while (!err && !s.bad && tfb_trace_kineto_eat(&s, ','));
    }
    free(text);
    return err ? err : 1;
}
