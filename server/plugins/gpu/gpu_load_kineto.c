/*
 * gpu_load_kineto.c - reads a PyTorch profiler (Kineto) trace,
 * *.pt.trace.json or *.pt.trace.json.gz: complete events ("ph":"X") of
 * categories kernel, gpu_memcpy, gpu_memset, cuda_runtime and cuda_driver.
 * ts/dur are µs with up to three decimals; they are converted to integer ns
 * digit by digit (a double cannot hold epoch µs to the ns). A top-level
 * baseTimeNanoseconds, when present, is added to every ts.
 *
 * The JSON is scanned in place with a small scanner that skips what it
 * does not need; malformed input ends the scan (what was read is kept).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/gpu/gpu_file.h"
#include "plugins/gpu/gpu_trace.h"
#include "base/json_str.h"


/* ------------------------------------------------------------------------
 * File
 * ---------------------------------------------------------------------- */
/* ------------------------------------------------------------------------
 * Scanner
 * ---------------------------------------------------------------------- */
typedef struct scan {
    const char *p, *end;
    int bad;
} scan;

typedef struct tok {
    const char *s; /* string contents (escaped form) or number text */
    size_t len;
    int is_str, has_esc;
} tok;

static void ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' ||
                             *s->p == '\t'))
        s->p++;
}

static int eat(scan *s, char c)
{
    ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 1;
    }
    return 0;
}

static int str_tok(scan *s, tok *t)
{
    ws(s);
    const char *next = tfb_json_str_scan(s->p, s->end, &t->s, &t->len,
                                         &t->has_esc);
    if (!next) {
        s->bad = 1;
        return 0;
    }
    t->is_str = 1;
    s->p = next;
    return 1;
}

/* Skips any value; nested containers are skipped by counting brackets
 * outside strings (no recursion, so depth cannot exhaust the stack). */
static void skip_value(scan *s, tok *num)
{
    ws(s);
    if (num) {
        num->s = NULL;
        num->len = 0;
        num->is_str = 0;
    }
    if (s->p >= s->end) {
        s->bad = 1;
        return;
    }
    char c = *s->p;
    if (c == '"') {
        tok t;
        str_tok(s, &t);
        if (num)
            *num = t;
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
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
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
    if (num) {
        num->s = b;
        num->len = (size_t)(s->p - b);
    }
}

static int tok_is(const tok *t, const char *lit)
{
    size_t n = strlen(lit);
    return t->len == n && memcmp(t->s, lit, n) == 0;
}

static int tok_ieq(const tok *t, const char *lit)
{
    size_t n = strlen(lit);
    if (t->len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)t->s[i]) != lit[i])
            return 0;
    return 1;
}

/* Integer value of a number (or numeric string) token; def when none. */
static int64_t tok_i64(const tok *t, int64_t def)
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
    if (*e == '.' || *e == 'e' || *e == 'E')
        return (int64_t)strtod(buf, NULL);
    return (int64_t)v;
}

/* µs text -> ns, exactly for plain decimals; 1 on success. */
static int us_to_ns(const tok *t, int64_t *out)
{
    if (!t->s || !t->len || t->is_str)
        return 0;
    const char *p = t->s, *end = t->s + t->len;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    int64_t ip = 0;
    int digits = 0;
    while (p < end && isdigit((unsigned char)*p)) {
        if (ip > INT64_MAX / 10 / 1000)
            return 0;
        ip = ip * 10 + (*p++ - '0');
        digits++;
    }
    int64_t frac = 0;
    int fd = 0;
    if (p < end && *p == '.') {
        p++;
        while (p < end && isdigit((unsigned char)*p)) {
            if (fd < 3) {
                frac = frac * 10 + (*p - '0');
                fd++;
            }
            p++;
        }
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
    while (fd < 3) {
        frac *= 10;
        fd++;
    }
    int64_t ns = ip * 1000 + frac;
    *out = neg ? -ns : ns;
    return 1;
}

/* Interns a string token, decoding escapes. */
static int32_t intern_tok(tfb_gpu_builder *b, const tok *t)
{
    if (!t->has_esc)
        return tfb_gpu_builder_str(b, t->s, t->len);
    char *o = malloc(t->len + 1);
    if (!o)
        return -1;
    size_t n = tfb_json_str_decode(t->s, t->len, o);
    int32_t id = tfb_gpu_builder_str(b, o, n);
    free(o);
    return id;
}

/* ------------------------------------------------------------------------
 * Events
 * ---------------------------------------------------------------------- */
typedef struct ev {
    tok ph, cat, name, pid, tid, ts, dur;
    tok a_corr, a_dev, a_stream, a_bytes, a_regs, a_smem;
    int64_t grid[3], block[3];
} ev;

static void read_triple(scan *s, int64_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    ws(s);
    if (s->p >= s->end || *s->p != '[') {
        skip_value(s, NULL);
        return;
    }
    s->p++;
    for (int i = 0; !s->bad; i++) {
        if (eat(s, ']'))
            return;
        if (i > 0 && !eat(s, ',')) {
            s->bad = 1;
            return;
        }
        tok t;
        skip_value(s, &t);
        if (i < 3)
            out[i] = tok_i64(&t, 0);
    }
}

static void read_args(scan *s, ev *e)
{
    if (!eat(s, '{')) {
        skip_value(s, NULL);
        return;
    }
    if (eat(s, '}'))
        return;
    do {
        tok k;
        if (!str_tok(s, &k) || !eat(s, ':')) {
            s->bad = 1;
            return;
        }
        if (tok_is(&k, "correlation"))
            skip_value(s, &e->a_corr);
        else if (tok_is(&k, "device"))
            skip_value(s, &e->a_dev);
        else if (tok_is(&k, "stream"))
            skip_value(s, &e->a_stream);
        else if (tok_is(&k, "bytes"))
            skip_value(s, &e->a_bytes);
        else if (tok_is(&k, "registers per thread"))
            skip_value(s, &e->a_regs);
        else if (tok_is(&k, "shared memory"))
            skip_value(s, &e->a_smem);
        else if (tok_is(&k, "grid"))
            read_triple(s, e->grid);
        else if (tok_is(&k, "block"))
            read_triple(s, e->block);
        else
            skip_value(s, NULL);
    } while (!s->bad && eat(s, ','));
    if (!eat(s, '}'))
        s->bad = 1;
}

static int read_event(scan *s, ev *e)
{
    memset(e, 0, sizeof *e);
    if (!eat(s, '{')) {
        s->bad = 1;
        return 0;
    }
    if (eat(s, '}'))
        return 1;
    do {
        tok k;
        if (!str_tok(s, &k) || !eat(s, ':')) {
            s->bad = 1;
            return 0;
        }
        if (tok_is(&k, "ph"))
            skip_value(s, &e->ph);
        else if (tok_is(&k, "cat"))
            skip_value(s, &e->cat);
        else if (tok_is(&k, "name"))
            skip_value(s, &e->name);
        else if (tok_is(&k, "pid"))
            skip_value(s, &e->pid);
        else if (tok_is(&k, "tid"))
            skip_value(s, &e->tid);
        else if (tok_is(&k, "ts"))
            skip_value(s, &e->ts);
        else if (tok_is(&k, "dur"))
            skip_value(s, &e->dur);
        else if (tok_is(&k, "args"))
            read_args(s, e);
        else
            skip_value(s, NULL);
    } while (!s->bad && eat(s, ','));
    if (!eat(s, '}')) {
        s->bad = 1;
        return 0;
    }
    return 1;
}

static int add_event(tfb_gpu_builder *b, const ev *e, int64_t base_ns)
{
    if (!tok_is(&e->ph, "X"))
        return 0;
    int kind;
    if (tok_ieq(&e->cat, "kernel"))
        kind = TFB_GPU_KERNEL;
    else if (tok_ieq(&e->cat, "gpu_memcpy") || tok_ieq(&e->cat, "memcpy"))
        kind = TFB_GPU_MEMCPY;
    else if (tok_ieq(&e->cat, "gpu_memset") || tok_ieq(&e->cat, "memset"))
        kind = TFB_GPU_MEMSET;
    else if (tok_ieq(&e->cat, "cuda_runtime") || tok_ieq(&e->cat, "runtime") ||
             tok_ieq(&e->cat, "cuda_driver") || tok_ieq(&e->cat, "driver"))
        kind = -1;
    else
        return 0;
    int64_t ts, dur = 0;
    if (!us_to_ns(&e->ts, &ts))
        return 0;
    if (e->dur.s && !us_to_ns(&e->dur, &dur))
        return 0;
    int64_t end;
    if (dur < 0 || __builtin_add_overflow(ts, base_ns, &ts) ||
        __builtin_add_overflow(ts, dur, &end))
        return 0; /* nonsense times: skipped */
    int64_t corr = tok_i64(&e->a_corr, -1);
    if (kind < 0) {
        tfb_gpu_call c;
        c.start = ts;
        c.end = end;
        c.correlation = corr;
        c.name = e->name.s ? intern_tok(b, &e->name) : -1;
        if (e->name.s && c.name < 0)
            return TFB_ENOMEM;
        return tfb_gpu_builder_call(b, &c);
    }
    tfb_gpu_span_in s;
    memset(&s, 0, sizeof s);
    s.kind = (uint8_t)kind;
    s.start = ts;
    s.end = end;
    s.correlation = corr;
    s.device = (int32_t)tok_i64(&e->a_dev, tok_i64(&e->pid, 0));
    s.stream = (int32_t)tok_i64(&e->a_stream, tok_i64(&e->tid, 0));
    s.step = -1;
    s.name = -1;
    if (kind == TFB_GPU_KERNEL) {
        s.name = e->name.s ? intern_tok(b, &e->name) : -1;
        if (e->name.s && s.name < 0)
            return TFB_ENOMEM;
        for (int i = 0; i < 3; i++) {
            s.grid[i] = (int32_t)e->grid[i];
            s.block[i] = (int32_t)e->block[i];
        }
        s.registers = (int32_t)tok_i64(&e->a_regs, 0);
        s.shared_mem = (int32_t)tok_i64(&e->a_smem, 0);
    } else {
        s.bytes = tok_i64(&e->a_bytes, 0);
        if (kind == TFB_GPU_MEMCPY && e->name.s)
            s.copy_kind = (uint8_t)tfb_gpu_copy_kind_from_text(e->name.s,
                                                               e->name.len);
    }
    return tfb_gpu_builder_span(b, &s);
}

int tfb_gpu_load_kineto(tfb_gpu_builder *b, const char *path)
{
    size_t len = 0;
    char *text;
    int rc = tfb_gpu_read_text(path, TFB_GPU_MAX_TEXT_BYTES, &text, &len);
    if (rc == TFB_ETOOBIG || rc == TFB_ENOMEM)
        return tfb_gpu_builder_fail(b, rc, "%s inflates to more than %zu MiB "
                                    "or %dx its size; not read",
                                    path, TFB_GPU_MAX_TEXT_BYTES >> 20,
                                    TFB_GPU_MAX_RATIO);
    if (rc < 0)
        return 0; /* unreadable or damaged: not a trace */
    scan s = {text, text + len, 0};
    /* Pass 1: top-level keys; find traceEvents and baseTimeNanoseconds. */
    const char *events = NULL;
    int64_t base_ns = 0;
    if (!eat(&s, '{')) {
        free(text);
        return 0;
    }
    if (!eat(&s, '}')) {
        do {
            tok k;
            if (!str_tok(&s, &k) || !eat(&s, ':'))
                break;
            if (tok_is(&k, "traceEvents")) {
                ws(&s);
                events = s.p;
                skip_value(&s, NULL);
            } else if (tok_is(&k, "baseTimeNanoseconds")) {
                tok v;
                skip_value(&s, &v);
                base_ns = tok_i64(&v, 0);
            } else {
                skip_value(&s, NULL);
            }
        } while (!s.bad && eat(&s, ','));
    }
    if (!events) {
        free(text);
        return 0;
    }
    /* Pass 2: the events. */
    s.p = events;
    s.bad = 0;
    int err = 0;
    if (eat(&s, '[') && !eat(&s, ']')) {
        do {
            ev e;
            if (!read_event(&s, &e))
                break;
            err = add_event(b, &e, base_ns);
        } while (!err && !s.bad && eat(&s, ','));
    }
    free(text);
    return err ? err : 1;
}
