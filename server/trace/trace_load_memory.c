/*
 * trace_load_memory.c - a run's memory events from the files it holds:
 * an nsys-schema SQLite trace (ours or an nsys export) and Kineto
 * Chrome-trace JSON `[memory]` instant events. Formats and rules are in
 * trace_internal.h.
 *
 * The Kineto events are walked here with the one Kineto scanner's steps
 * (trace_kineto_scan.h): only the `[memory]` events are picked out, and a
 * file that is not JSON fails (the kernel and copy events' scan,
 * trace_load_kineto.c, keeps what it read).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "trace/trace_file.h"
#include "trace/trace_kineto_scan.h"
#include "trace/trace_sqlite_open.h"
#include "trace/trace_internal.h"
#include "tfboard.h"


void tfb_trace_memory_events_free(tfb_trace_memory_events *e)
{
    if (!e)
        return;
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
    e->refused = 0;
}

/* A new event at the end (unknown stream and pool size), or NULL. */
static tfb_trace_memory_event *push(tfb_trace_memory_events *e)
{
    tfb_trace_memory_event *x = tfb_vec_add(e);
    if (!x)
        return NULL;
    x->stream = -1;
    x->pool_reserved = -1;
    return x;
}

/* Sorts v[from, n) by time, keeping the file order of equal times. */
typedef struct keyed {
    int64_t t;
    size_t i;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int sort_tail(tfb_trace_memory_events *e, size_t from)
{
    size_t n = e->n - from;
    int sorted = 1;
    for (size_t i = from + 1; i < e->n && sorted; i++)
        sorted = e->v[i].t_ns >= e->v[i - 1].t_ns;
    if (sorted)
        return 0;
    keyed *k = malloc(n * sizeof *k);
    tfb_trace_memory_event *tmp = malloc(n * sizeof *tmp);
    if (!k || !tmp) {
        free(k);
        free(tmp);
        return TFB_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        k[i].t = e->v[from + i].t_ns;
        k[i].i = i;
    }
    qsort(k, n, sizeof *k, cmp_keyed);
    for (size_t i = 0; i < n; i++)
        tmp[i] = e->v[from + k[i].i];
    memcpy(e->v + from, tmp, n * sizeof *tmp);
    free(k);
    free(tmp);
    return 0;
}

/* ------------------------------------------------------------------------
 * nsys-schema SQLite
 * ---------------------------------------------------------------------- */
int64_t tfb_trace_memory_load_sqlite(tfb_trace_memory_events *out,
                                     const char *path)
{
    if (!out || !path)
        return TFB_EINVAL;
    sqlite3 *db = NULL;
    int rc = tfb_trace_sqlite_open(path, 1, &db);
    if (rc)
        return rc;
    /* Required columns, then optional ones (older nsys exports lack the
     * pool columns; they read as NULL). */
    static const char *const req[] = {"start", "deviceId", "address",
                                      "bytes", "memoryOperationType"};
    static const char *const opt[] = {"streamId", "localMemoryPoolAddress",
                                      "localMemoryPoolSize",
                                      "importedMemoryPoolAddress"};
    sqlite3_stmt *probe = NULL;
    rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = "
                                "'table' AND name = "
                                "'CUDA_GPU_MEMORY_USAGE_EVENTS'",
                            -1, &probe, NULL);
    int step = rc == SQLITE_OK ? sqlite3_step(probe) : rc;
    sqlite3_finalize(probe);
    if (step != SQLITE_ROW) {
        sqlite3_close(db);
        return step == SQLITE_DONE ? TFB_ENOENT : TFB_ECORRUPT;
    }
    const char *T = "CUDA_GPU_MEMORY_USAGE_EVENTS";
    char sql[512];
    size_t len = (size_t)snprintf(sql, sizeof sql, "SELECT");
    for (size_t i = 0; i < 5; i++) {
        if (!tfb_trace_sqlite_has_column(db, T, req[i])) {
            sqlite3_close(db);
            return TFB_ECORRUPT;
        }
        len += (size_t)snprintf(sql + len, sizeof sql - len, "%s\"%s\"",
                                i ? ", " : " ", req[i]);
    }
    for (size_t i = 0; i < 4; i++) {
        int has = tfb_trace_sqlite_has_column(db, T, opt[i]);
        len += (size_t)snprintf(sql + len, sizeof sql - len, ", %s%s%s",
                                has ? "\"" : "", has ? opt[i] : "NULL",
                                has ? "\"" : "");
    }
    snprintf(sql + len, sizeof sql - len,
             " FROM CUDA_GPU_MEMORY_USAGE_EVENTS ORDER BY start, rowid");
    sqlite3_stmt *st = tfb_trace_sqlite_prepare(db, sql);
    if (!st) {
        sqlite3_close(db);
        return TFB_ECORRUPT;
    }
    size_t from = out->n;
    int64_t n = 0;
    int err = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t op = sqlite3_column_int64(st, 4);
        if (sqlite3_column_type(st, 4) == SQLITE_NULL || (op != 0 && op != 1))
            continue;
        int64_t dev = sqlite3_column_int64(st, 1);
        if (dev < INT32_MIN || dev > INT32_MAX) {
            out->refused++; /* cut to int32 it would be another device */
            continue;
        }
        tfb_trace_memory_event *e = push(out);
        if (!e) {
            err = TFB_ENOMEM;
            break;
        }
        e->t_ns = sqlite3_column_int64(st, 0);
        e->device = (int32_t)dev;
        e->address = (uint64_t)sqlite3_column_int64(st, 2);
        e->bytes = sqlite3_column_int64(st, 3);
        e->op = op == 0 ? TFB_TRACE_MEMORY_ALLOC : TFB_TRACE_MEMORY_FREE;
        if (sqlite3_column_type(st, 5) != SQLITE_NULL)
            e->stream = sqlite3_column_int64(st, 5);
        /* nsys writes 0 where a value is missing: 0 = no pool. */
        uint64_t local = (uint64_t)sqlite3_column_int64(st, 6);
        uint64_t imported = (uint64_t)sqlite3_column_int64(st, 8);
        if (local) {
            e->pool = local;
            if (sqlite3_column_type(st, 7) != SQLITE_NULL)
                e->pool_reserved = sqlite3_column_int64(st, 7);
        } else if (imported) {
            e->pool = imported;
        }
        n++;
    }
    if (!err && rc != SQLITE_DONE)
        err = TFB_ECORRUPT;
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (err) {
        out->n = from;
        return err;
    }
    return n; /* ORDER BY start, rowid: sorted already */
}

/* ------------------------------------------------------------------------
 * Kineto JSON
 * ---------------------------------------------------------------------- */

/* The one Kineto scanner's steps (trace_kineto_scan.h); this walk fails
 * on a damaged file where the scan would keep what it read. */
typedef tfb_trace_kineto_pos js;
typedef tfb_trace_kineto_tok tok;

static int raw_is(const char *b, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(b, lit, n) == 0;
}

/* A number token's text as a C string in tmp: 0 when there is none or it
 * is longer than any number. */
static int num_text(const tok *t, char tmp[32])
{
    if (!t->s || !t->len || t->len > 24)
        return 0;
    memcpy(tmp, t->s, t->len);
    tmp[t->len] = 0;
    return 1;
}

static int num_i64(const tok *t, int64_t *out)
{
    char tmp[32], *e = NULL;
    if (!num_text(t, tmp))
        return 0;
    long long v = strtoll(tmp, &e, 10);
    if (e == tmp)
        return 0;
    if (*e == '.' || *e == 'e' || *e == 'E') {
        double d = strtod(tmp, &e);
        v = (long long)d;
    }
    *out = v;
    return 1;
}

static int num_u64(const tok *t, uint64_t *out)
{
    char tmp[32], *e = NULL;
    if (!num_text(t, tmp))
        return 0;
    unsigned long long v = strtoull(tmp, &e, 0);
    if (e == tmp)
        return 0;
    *out = v;
    return 1;
}

/* µs with decimals -> integer ns, digit by digit (an epoch in µs does not
 * fit a double to the ns). */
static int us_to_ns(const char *b, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && b[i] == '-') {
        neg = 1;
        i++;
    }
    int64_t whole = 0;
    size_t digits = 0;
    for (; i < n && b[i] >= '0' && b[i] <= '9'; i++, digits++) {
        if (whole > (INT64_MAX - 9) / 10 / 1000)
            return 0;
        whole = whole * 10 + (b[i] - '0');
    }
    int64_t frac = 0;
    int fd = 0, round_up = 0;
    if (i < n && b[i] == '.') {
        for (i++; i < n && b[i] >= '0' && b[i] <= '9'; i++) {
            if (fd < 3) {
                frac = frac * 10 + (b[i] - '0');
                fd++;
            } else if (fd == 3) {
                round_up = b[i] >= '5';
                fd++;
            }
        }
    }
    if (i < n || !digits) {
        /* An exponent or junk: through a double (rare; loses ns). */
        char tmp[40];
        if (n >= sizeof tmp)
            return 0;
        memcpy(tmp, b, n);
        tmp[n] = 0;
        char *e = NULL;
        double d = strtod(tmp, &e);
        if (e == tmp || *e)
            return 0;
        *out = (int64_t)(d * 1000.0 + (d < 0 ? -0.5 : 0.5));
        return 1;
    }
    while (fd < 3) {
        frac *= 10;
        fd++;
    }
    int64_t v = whole * 1000 + frac + round_up;
    *out = neg ? -v : v;
    return 1;
}

typedef struct mem_ev {
    int is_instant, is_memory, have_ts, have_bytes, have_dev;
    int64_t ts_ns, bytes, reserved, dev, dev_type;
    uint64_t addr;
} mem_ev;

static void read_args(js *s, mem_ev *m)
{
    if (!tfb_trace_kineto_eat(s, '{')) {
        tfb_trace_kineto_skip(s, NULL);
        return;
    }
    if (tfb_trace_kineto_eat(s, '}'))
        return;
    do {
        tok k, v;
        if (!tfb_trace_kineto_str(s, &k) || !tfb_trace_kineto_eat(s, ':')) {
            s->bad = 1;
            return;
        }
        tfb_trace_kineto_skip(s, &v);
        if (s->bad)
            return;
        if (raw_is(k.s, k.len, "Addr"))
            num_u64(&v, &m->addr);
        else if (raw_is(k.s, k.len, "Bytes"))
            m->have_bytes = num_i64(&v, &m->bytes);
        else if (raw_is(k.s, k.len, "Total Reserved"))
            num_i64(&v, &m->reserved);
        else if (raw_is(k.s, k.len, "Device Id"))
            m->have_dev = num_i64(&v, &m->dev);
        else if (raw_is(k.s, k.len, "Device Type"))
            num_i64(&v, &m->dev_type);
    } while (tfb_trace_kineto_eat(s, ','));
    if (!tfb_trace_kineto_eat(s, '}'))
        s->bad = 1;
}

static void read_event(js *s, mem_ev *m)
{
    memset(m, 0, sizeof *m);
    m->reserved = -1;
    m->dev_type = -1;
    if (!tfb_trace_kineto_eat(s, '{')) {
        tfb_trace_kineto_skip(s, NULL);
        return;
    }
    if (tfb_trace_kineto_eat(s, '}'))
        return;
    do {
        tok k, v;
        if (!tfb_trace_kineto_str(s, &k) || !tfb_trace_kineto_eat(s, ':')) {
            s->bad = 1;
            return;
        }
        if (raw_is(k.s, k.len, "args")) {
            read_args(s, m);
        } else {
            tfb_trace_kineto_skip(s, &v);
            if (raw_is(k.s, k.len, "ph"))
                m->is_instant = v.is_str && raw_is(v.s, v.len, "i");
            else if (raw_is(k.s, k.len, "name"))
                m->is_memory = v.is_str && raw_is(v.s, v.len, "[memory]");
            else if (raw_is(k.s, k.len, "ts"))
                m->have_ts = us_to_ns(v.s, v.len, &m->ts_ns);
        }
        if (s->bad)
            return;
    } while (tfb_trace_kineto_eat(s, ','));
    if (!tfb_trace_kineto_eat(s, '}'))
        s->bad = 1;
}

int64_t tfb_trace_memory_load_kineto(tfb_trace_memory_events *out,
                                     const char *path)
{
    if (!out || !path)
        return TFB_EINVAL;
    size_t len = 0;
    int err = 0;
    char *buf;
    int rc = tfb_trace_read_text(path, TFB_TRACE_MAX_TEXT_BYTES, &buf, &len);
    if (rc < 0)
        return rc;
    js s = {buf, buf + len, 0};
    size_t from = out->n;
    int64_t base = 0, n = 0;
    if (!tfb_trace_kineto_eat(&s, '{'))
        s.bad = 1;
    while (!s.bad && !err) {
        tok k, v;
        if (!tfb_trace_kineto_str(&s, &k) || !tfb_trace_kineto_eat(&s, ':')) {
            s.bad = 1;
            break;
        }
        if (raw_is(k.s, k.len, "traceEvents")) {
            if (!tfb_trace_kineto_eat(&s, '[')) {
                s.bad = 1;
                break;
            }
            if (!tfb_trace_kineto_eat(&s, ']')) {
                do {
                    mem_ev m;
                    read_event(&s, &m);
                    if (s.bad)
                        break;
                    /* Device Type 1 = CUDA (c10::DeviceType); CPU blocks
                     * (0) and others are not GPU memory. */
                    if (!m.is_instant || !m.is_memory || !m.have_ts ||
                        !m.have_bytes || m.dev_type != 1 || !m.have_dev ||
                        m.bytes == 0)
                        continue;
                    if (m.dev < INT32_MIN || m.dev > INT32_MAX ||
                        m.bytes == INT64_MIN) {
                        out->refused++; /* no such device or size */
                        continue;
                    }
                    tfb_trace_memory_event *e = push(out);
                    if (!e) {
                        err = TFB_ENOMEM;
                        break;
                    }
                    e->t_ns = m.ts_ns;
                    e->device = (int32_t)m.dev;
                    e->address = m.addr;
                    e->op = m.bytes > 0 ? TFB_TRACE_MEMORY_ALLOC
                                        : TFB_TRACE_MEMORY_FREE;
                    e->bytes = m.bytes > 0 ? m.bytes : -m.bytes;
                    e->pool = 1; /* the caching allocator */
                    e->pool_reserved = m.reserved;
                    n++;
                } while (tfb_trace_kineto_eat(&s, ','));
                if (!s.bad && !err && !tfb_trace_kineto_eat(&s, ']'))
                    s.bad = 1;
            }
        } else {
            tfb_trace_kineto_skip(&s, &v);
            if (!s.bad && raw_is(k.s, k.len, "baseTimeNanoseconds"))
                num_i64(&v, &base);
        }
        if (s.bad || err || !tfb_trace_kineto_eat(&s, ','))
            break;
    }
    if (!s.bad && !err && !tfb_trace_kineto_eat(&s, '}'))
        s.bad = 1;
    free(buf);
    if (!err && s.bad)
        err = TFB_ECORRUPT;
    if (!err)
        for (size_t i = from; i < out->n; i++)
            out->v[i].t_ns += base;
    if (!err)
        err = sort_tail(out, from);
    if (err) {
        out->n = from;
        return err;
    }
    return n;
}
