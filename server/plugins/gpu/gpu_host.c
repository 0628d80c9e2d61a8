/*
 * gpu_host.c - the host side of a run's Kineto traces (gpu_host.h): CPU
 * ops, runtime calls and NVTX-style ranges per thread, nested into rows,
 * with self times; cached per run by the files' signature.
 *
 * The JSON is scanned in place by a small scanner of its own that picks
 * out complete events ("ph":"X") of the host categories and the
 * thread_name metadata; gpu_load_kineto.c reads the device events. The two
 * stay independent so either can change alone (as gpu_memory_load.c).
 * Malformed input ends the scan of that file; what was read is kept.
 */
#include "plugins/gpu/gpu_host.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_file.h"
#include "base/hash.h"
#include "base/json_str.h"
#include "base/strtab.h"
#include "base/vec.h"
#include "tfboard.h"

/* Nesting past this depth is drawn on the last row. */
#define MAX_DEPTH 255
/* A thread's lanes: ops/runtime, and its ranges. */
#define MAX_LANES 4096
#define TOP_OPS 30

struct tfb_host_trace {
    tfb_host_span *spans; /* sorted by lane, start, then longest first */
    size_t n;
    tfb_host_lane *lanes;
    size_t nlanes;
    char **strings;
    size_t nstrings;
    int64_t start_ns, end_ns;
    int refs; /* under cache_mu */
};

/* ------------------------------------------------------------------------
 * Scanner
 * ---------------------------------------------------------------------- */
typedef struct scan {
    const char *p, *end;
    int bad;
} scan;

typedef struct tok {
    const char *s;
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
    const char *next =
        tfb_json_str_scan(s->p, s->end, &t->s, &t->len, &t->has_esc);
    if (!next) {
        s->bad = 1;
        return 0;
    }
    t->is_str = 1;
    s->p = next;
    return 1;
}

/* Skips a value (containers by counting brackets outside strings, no
 * recursion); a scalar's text goes to *v when v is not NULL. */
static void skip_value(scan *s, tok *v)
{
    ws(s);
    if (v)
        *v = (tok){NULL, 0, 0, 0};
    if (s->p >= s->end) {
        s->bad = 1;
        return;
    }
    char c = *s->p;
    if (c == '"') {
        tok t;
        if (str_tok(s, &t) && v)
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

static int tok_is(const tok *t, const char *lit)
{
    size_t n = strlen(lit);
    return t->s && t->len == n && memcmp(t->s, lit, n) == 0;
}

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
    return e == buf ? def : (int64_t)v;
}

/* µs text -> ns: digit by digit for plain decimals (epoch µs do not fit a
 * double to the ns), strtod for exponents. 1 on success. */
static int us_to_ns(const tok *t, int64_t *out)
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

/* ------------------------------------------------------------------------
 * Building
 * ---------------------------------------------------------------------- */
typedef struct thread_key {
    int64_t pid, tid;
    int lane_ops, lane_ranges; /* -1 until used */
    int32_t name;              /* thread_name metadata, -1 when none */
} thread_key;

typedef struct builder {
    TFB_VEC(tfb_host_span) spans;
    TFB_VEC(thread_key) threads;
    TFB_VEC(char *) strings;
    tfb_strtab names;
    int err;
} builder;

static int32_t intern(builder *b, const tok *t)
{
    char tmp[512];
    char *o = t->len < sizeof tmp ? tmp : malloc(t->len + 1);
    if (!o) {
        b->err = TFB_ENOMEM;
        return -1;
    }
    size_t n = t->has_esc ? tfb_json_str_decode(t->s, t->len, o) : t->len;
    if (!t->has_esc)
        memcpy(o, t->s, n);
    o[n] = '\0';
    void *v = tfb_strtab_get(&b->names, o, n);
    int32_t id = -1;
    if (v) {
        id = (int32_t)((uintptr_t)v - 1);
    } else if (b->strings.n < INT32_MAX) {
        /* Room first: the string is counted only once interned. */
        if (tfb_vec_need(&b->strings, b->strings.n + 1) < 0)
            goto oom;
        char *copy = malloc(n + 1);
        if (!copy)
            goto oom;
        memcpy(copy, o, n + 1);
        b->strings.v[b->strings.n] = copy;
        if (tfb_strtab_put(&b->names, copy, n,
                           (void *)(uintptr_t)(b->strings.n + 1)) < 0) {
            free(copy);
            goto oom;
        }
        id = (int32_t)b->strings.n++;
    }
    if (o != tmp)
        free(o);
    return id;
oom:
    if (o != tmp)
        free(o);
    b->err = TFB_ENOMEM;
    return -1;
}

static thread_key *thread_of(builder *b, int64_t pid, int64_t tid)
{
    for (size_t i = 0; i < b->threads.n; i++)
        if (b->threads.v[i].pid == pid && b->threads.v[i].tid == tid)
            return &b->threads.v[i];
    if (tfb_vec_push(&b->threads, ((thread_key){pid, tid, -1, -1, -1})) < 0) {
        b->err = TFB_ENOMEM;
        return NULL;
    }
    return &b->threads.v[b->threads.n - 1];
}

typedef struct ev {
    tok ph, cat, name, pid, tid, ts, dur, arg_name;
} ev;

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
        if (!str_tok(s, &k) || !eat(s, ':'))
            return;
        if (tok_is(&k, "name"))
            skip_value(s, &e->arg_name);
        else
            skip_value(s, NULL);
    } while (!s->bad && eat(s, ','));
    eat(s, '}');
}

static int read_event(scan *s, ev *e)
{
    memset(e, 0, sizeof *e);
    if (!eat(s, '{'))
        return 0;
    if (eat(s, '}'))
        return 1;
    do {
        tok k;
        if (!str_tok(s, &k) || !eat(s, ':'))
            return 0;
        tok *dst = tok_is(&k, "ph")     ? &e->ph
                   : tok_is(&k, "cat")  ? &e->cat
                   : tok_is(&k, "name") ? &e->name
                   : tok_is(&k, "pid")  ? &e->pid
                   : tok_is(&k, "tid")  ? &e->tid
                   : tok_is(&k, "ts")   ? &e->ts
                   : tok_is(&k, "dur")  ? &e->dur
                                        : NULL;
        if (tok_is(&k, "args"))
            read_args(s, e);
        else
            skip_value(s, dst);
    } while (!s->bad && eat(s, ','));
    return eat(s, '}');
}

static int host_kind(const tok *cat)
{
    if (tok_is(cat, "cpu_op") || tok_is(cat, "python_function") ||
        tok_is(cat, "Operator"))
        return TFB_HOST_OP;
    if (tok_is(cat, "cuda_runtime") || tok_is(cat, "cuda_driver") ||
        tok_is(cat, "Runtime"))
        return TFB_HOST_RUNTIME;
    if (tok_is(cat, "user_annotation"))
        return TFB_HOST_RANGE;
    return -1;
}

/* legacy: a bare array of events (torch.profiler built without Kineto,
 * e.g. Debian's python3-torch), whose events have no category: all ops. */
static void add_event(builder *b, const ev *e, int64_t base_ns, int legacy)
{
    if (tok_is(&e->ph, "M")) {
        if (tok_is(&e->name, "thread_name") && e->arg_name.is_str) {
            thread_key *k = thread_of(b, tok_i64(&e->pid, 0),
                                      tok_i64(&e->tid, 0));
            if (k)
                k->name = intern(b, &e->arg_name);
        }
        return;
    }
    if (!tok_is(&e->ph, "X") || !e->name.is_str)
        return;
    int kind = legacy && !e->cat.s ? TFB_HOST_OP : host_kind(&e->cat);
    int64_t ts, dur;
    if (kind < 0 || !us_to_ns(&e->ts, &ts) || !us_to_ns(&e->dur, &dur) ||
        dur < 0)
        return;
    /* Kineto's ProfilerStep#N marks are user annotations in newer builds
     * and cpu_op in older ones: either way a range. */
    thread_key *k = thread_of(b, tok_i64(&e->pid, 0), tok_i64(&e->tid, 0));
    if (!k)
        return;
    int32_t name = intern(b, &e->name);
    if (name < 0)
        return;
    /* lane holds the thread index for now; lanes are made once all files
     * are read. */
    tfb_host_span sp = {.start = ts + base_ns,
                        .end = ts + base_ns + dur,
                        .name = (uint32_t)name,
                        .lane = (uint16_t)(k - b->threads.v),
                        .kind = (uint8_t)kind};
    if (tfb_vec_push(&b->spans, sp) < 0)
        b->err = TFB_ENOMEM;
}

/* 1 when read, 0 when not a trace, or an error. */
static int load_file(builder *b, const char *path)
{
    char *text;
    size_t len;
    int rc = tfb_gpu_read_text(path, TFB_GPU_MAX_TEXT_BYTES, &text, &len);
    if (rc == TFB_ETOOBIG || rc == TFB_ENOMEM)
        return rc;
    if (rc < 0)
        return 0;
    scan s = {text, text + len, 0};
    const char *events = NULL;
    int64_t base_ns = 0;
    ws(&s);
    int legacy = s.p < s.end && *s.p == '[';
    if (legacy)
        events = s.p;
    else if (eat(&s, '{') && !eat(&s, '}')) {
        do {
            tok k, v;
            if (!str_tok(&s, &k) || !eat(&s, ':'))
                break;
            if (tok_is(&k, "traceEvents")) {
                ws(&s);
                events = s.p;
                skip_value(&s, NULL);
            } else {
                skip_value(&s, &v);
                if (tok_is(&k, "baseTimeNanoseconds"))
                    base_ns = tok_i64(&v, 0);
            }
        } while (!s.bad && eat(&s, ','));
    }
    if (events) {
        s.p = events;
        s.bad = 0;
        if (eat(&s, '[') && !eat(&s, ']')) {
            ev e;
            do {
                if (!read_event(&s, &e))
                    break;
                /* The thread index must fit a lane number. */
                if (b->threads.n < MAX_LANES / 2)
                    add_event(b, &e, base_ns, legacy);
            } while (!b->err && !s.bad && eat(&s, ','));
        }
    }
    free(text);
    return b->err ? b->err : 1;
}

static int cmp_span(const void *a, const void *b)
{
    const tfb_host_span *x = a, *y = b;
    if (x->lane != y->lane)
        return x->lane < y->lane ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* the parent first */
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static void host_free(tfb_host_trace *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->nstrings; i++)
        free(h->strings[i]);
    free(h->strings);
    free(h->spans);
    free(h->lanes);
    free(h);
}

/* Lanes (a thread's ops and calls; its ranges), then depths and self
 * times by a stack walk per lane. */
static int finish(builder *b, tfb_host_trace **out)
{
    tfb_host_trace *h = calloc(1, sizeof *h);
    if (!h)
        return TFB_ENOMEM;
    size_t nl = 0;
    for (size_t i = 0; i < b->spans.n; i++) {
        thread_key *k = &b->threads.v[b->spans.v[i].lane];
        int *slot = b->spans.v[i].kind == TFB_HOST_RANGE ? &k->lane_ranges
                                                       : &k->lane_ops;
        if (*slot < 0)
            *slot = (int)nl++;
    }
    h->lanes = calloc(nl ? nl : 1, sizeof *h->lanes);
    if (!h->lanes) {
        free(h);
        return TFB_ENOMEM;
    }
    h->nlanes = nl;
    for (size_t t = 0; t < b->threads.n; t++) {
        thread_key *k = &b->threads.v[t];
        char who[80];
        if (k->name >= 0)
            snprintf(who, sizeof who, "%.70s", b->strings.v[k->name]);
        else
            snprintf(who, sizeof who, "thread %lld", (long long)k->tid);
        if (k->lane_ops >= 0)
            snprintf(h->lanes[k->lane_ops].label, sizeof h->lanes[0].label,
                     "CPU %s", who);
        if (k->lane_ranges >= 0) {
            snprintf(h->lanes[k->lane_ranges].label,
                     sizeof h->lanes[0].label, "NVTX %s", who);
            h->lanes[k->lane_ranges].is_range = 1;
        }
    }
    for (size_t i = 0; i < b->spans.n; i++) {
        tfb_host_span *s = &b->spans.v[i];
        thread_key *k = &b->threads.v[s->lane];
        s->lane = (uint16_t)(s->kind == TFB_HOST_RANGE ? k->lane_ranges
                                                       : k->lane_ops);
    }
    /* Lanes in thread order, each thread's ranges lane before its ops. */
    if (b->spans.n > 1)
        qsort(b->spans.v, b->spans.n, sizeof *b->spans.v, cmp_span);
    size_t stack[MAX_DEPTH + 1];
    size_t sp = 0;
    h->start_ns = b->spans.n ? b->spans.v[0].start : 0;
    h->end_ns = h->start_ns;
    for (size_t i = 0; i < b->spans.n; i++) {
        tfb_host_span *s = &b->spans.v[i];
        if (i == 0 || s->lane != b->spans.v[i - 1].lane)
            sp = 0;
        while (sp > 0 && b->spans.v[stack[sp - 1]].end <= s->start)
            sp--;
        s->depth = (uint8_t)(sp < MAX_DEPTH ? sp : MAX_DEPTH);
        s->self_ns = s->end - s->start;
        if (sp > 0) {
            tfb_host_span *p = &b->spans.v[stack[sp - 1]];
            int64_t e = s->end < p->end ? s->end : p->end;
            p->self_ns -= e - s->start;
        }
        if (sp < MAX_DEPTH + 1)
            stack[sp++] = i;
        if (s->depth + 1 > h->lanes[s->lane].depth)
            h->lanes[s->lane].depth = s->depth + 1;
        if (s->start < h->start_ns)
            h->start_ns = s->start;
        if (s->end > h->end_ns)
            h->end_ns = s->end;
    }
    h->spans = b->spans.v;
    h->n = b->spans.n;
    h->strings = b->strings.v;
    h->nstrings = b->strings.n;
    b->spans.v = NULL; /* handed over to h */
    b->spans.n = b->spans.cap = 0;
    b->strings.v = NULL;
    b->strings.n = b->strings.cap = 0;
    h->refs = 1;
    *out = h;
    return 0;
}

static int host_load(char *const *files, size_t nf, tfb_host_trace **out)
{
    builder b = {0};
    int rc = 0, any = 0;
    for (size_t i = 0; i < nf && rc >= 0; i++)
        if (ends_with(files[i], ".pt.trace.json") ||
            ends_with(files[i], ".pt.trace.json.gz")) {
            rc = load_file(&b, files[i]);
            any |= rc > 0;
        }
    if (rc >= 0 && any)
        rc = finish(&b, out);
    for (size_t i = 0; i < b.strings.n; i++)
        free(b.strings.v[i]);
    tfb_vec_free(&b.strings);
    tfb_vec_free(&b.spans);
    tfb_vec_free(&b.threads);
    tfb_strtab_free(&b.names);
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------
 * Cache: the last few runs' host traces, by their files' signature.
 * ---------------------------------------------------------------------- */
#define CACHE_SLOTS 8

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *sig;
    tfb_host_trace *h;
    unsigned long used;
} cache[CACHE_SLOTS];
static unsigned long cache_clock;

void tfb_gpu_host_release(tfb_host_trace *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&cache_mu);
    int last = --h->refs == 0;
    pthread_mutex_unlock(&cache_mu);
    if (last)
        host_free(h);
}

int tfb_gpu_host_get(tfb_run *r, tfb_host_trace **out)
{
    *out = NULL;
    char **files;
    size_t nf;
    int rc = tfb_run_trace_files(r, &files, &nf);
    if (rc < 0)
        return rc;
    int kineto = 0;
    for (size_t i = 0; i < nf; i++)
        kineto |= ends_with(files[i], ".pt.trace.json") ||
                  ends_with(files[i], ".pt.trace.json.gz");
    if (!kineto) {
        tfb_strv_free(files, nf);
        return 0;
    }
    char *sig = tfb_gpu_files_signature(files, nf);
    if (!sig) {
        tfb_strv_free(files, nf);
        return TFB_ENOMEM;
    }
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].sig && !strcmp(cache[i].sig, sig)) {
            cache[i].h->refs++;
            cache[i].used = ++cache_clock;
            *out = cache[i].h;
            break;
        }
    pthread_mutex_unlock(&cache_mu);
    if (*out) {
        free(sig);
        tfb_strv_free(files, nf);
        return 0;
    }
    /* Loaded outside the lock: two requests may both load; the second
     * replaces nothing and drops its copy. */
    tfb_host_trace *h = NULL;
    rc = host_load(files, nf, &h);
    tfb_strv_free(files, nf);
    if (rc < 0 || !h) {
        free(sig);
        return rc;
    }
    pthread_mutex_lock(&cache_mu);
    int slot = 0;
    for (int i = 1; i < CACHE_SLOTS; i++)
        if (cache[i].used < cache[slot].used)
            slot = i;
    tfb_host_trace *old = cache[slot].h;
    free(cache[slot].sig);
    cache[slot].sig = sig;
    cache[slot].h = h;
    cache[slot].used = ++cache_clock;
    h->refs++; /* the cache's */
    int drop_old = old && --old->refs == 0;
    pthread_mutex_unlock(&cache_mu);
    if (drop_old)
        host_free(old);
    *out = h;
    return 0;
}

/* ------------------------------------------------------------------------
 * JSON
 * ---------------------------------------------------------------------- */
typedef struct op_stat {
    uint32_t name;
    size_t count;
    int64_t total, self;
} op_stat;

static int cmp_op_self(const void *a, const void *b)
{
    const op_stat *x = a, *y = b;
    if (x->self != y->self)
        return x->self < y->self ? 1 : -1;
    return (x->name > y->name) - (x->name < y->name);
}

static int cmp_dur_desc(const void *a, const void *b)
{
    const tfb_host_span *x = *(tfb_host_span *const *)a,
                        *y = *(tfb_host_span *const *)b;
    int64_t dx = x->end - x->start, dy = y->end - y->start;
    return (dx < dy) - (dx > dy);
}

static const char *kind_str(int k)
{
    return k == TFB_HOST_RUNTIME ? "runtime" : k == TFB_HOST_RANGE ? "range"
                                                                   : "op";
}

int tfb_gpu_host_json(const tfb_host_trace *h, int64_t w0, int64_t w1,
                      size_t max, tfb_json *j)
{
    static const tfb_host_trace none = {0};
    if (!h)
        h = &none;
    if (w0 == INT64_MIN)
        w0 = h->start_ns;
    if (w1 == INT64_MAX)
        w1 = h->end_ns;
    /* The spans in the window; past max, the longest. */
    const tfb_host_span **vis = h->n ? malloc(h->n * sizeof *vis) : NULL;
    op_stat *ops = h->nstrings ? calloc(h->nstrings, sizeof *ops) : NULL;
    if ((h->n && !vis) || (h->nstrings && !ops)) {
        free(vis);
        free(ops);
        return TFB_ENOMEM;
    }
    size_t nv = 0;
    int64_t busy = 0;
    for (size_t i = 0; i < h->n; i++) {
        const tfb_host_span *s = &h->spans[i];
        if (s->end >= w0 && s->start <= w1)
            vis[nv++] = s;
        if (s->kind == TFB_HOST_RANGE)
            continue;
        op_stat *o = &ops[s->name];
        o->name = s->name;
        o->count++;
        o->total += s->end - s->start;
        o->self += s->self_ns;
        if (s->depth == 0)
            busy += s->end - s->start;
    }
    int truncated = nv > max;
    if (truncated) {
        qsort(vis, nv, sizeof *vis, cmp_dur_desc);
        nv = max;
    }
    tfb_json_object_begin(j);
    tfb_json_key(j, "start_ns");
    tfb_json_i64(j, w0);
    tfb_json_key(j, "end_ns");
    tfb_json_i64(j, w1);
    tfb_json_key(j, "trace_start_ns");
    tfb_json_i64(j, h->start_ns);
    tfb_json_key(j, "trace_end_ns");
    tfb_json_i64(j, h->end_ns);
    tfb_json_key(j, "total");
    tfb_json_u64(j, h->n);
    tfb_json_key(j, "truncated");
    tfb_json_bool(j, truncated);
    tfb_json_key(j, "lanes");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < h->nlanes; i++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "id");
        tfb_json_u64(j, i);
        tfb_json_key(j, "kind");
        tfb_json_str(j, h->lanes[i].is_range ? "nvtx" : "thread");
        tfb_json_key(j, "label");
        tfb_json_str(j, h->lanes[i].label);
        tfb_json_key(j, "depth");
        tfb_json_i64(j, h->lanes[i].depth);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "spans");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < nv; i++) {
        const tfb_host_span *s = vis[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "lane");
        tfb_json_u64(j, s->lane);
        tfb_json_key(j, "kind");
        tfb_json_str(j, kind_str(s->kind));
        tfb_json_key(j, "name");
        tfb_json_str(j, h->strings[s->name]);
        tfb_json_key(j, "start_ns");
        tfb_json_i64(j, s->start);
        tfb_json_key(j, "end_ns");
        tfb_json_i64(j, s->end);
        tfb_json_key(j, "depth");
        tfb_json_i64(j, s->depth);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    size_t no = 0;
    for (size_t i = 0; i < h->nstrings; i++)
        if (ops[i].count)
            ops[no++] = ops[i];
    if (no > 1)
        qsort(ops, no, sizeof *ops, cmp_op_self);
    tfb_json_key(j, "top_ops");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < no && i < TOP_OPS; i++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "name");
        tfb_json_str(j, h->strings[ops[i].name]);
        tfb_json_key(j, "count");
        tfb_json_u64(j, ops[i].count);
        tfb_json_key(j, "total_ns");
        tfb_json_i64(j, ops[i].total);
        tfb_json_key(j, "self_ns");
        tfb_json_i64(j, ops[i].self);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "busy_ns");
    tfb_json_i64(j, busy);
    tfb_json_key(j, "span_ns");
    tfb_json_i64(j, h->end_ns - h->start_ns);
    tfb_json_object_end(j);
    free(vis);
    free(ops);
    return 0;
}
