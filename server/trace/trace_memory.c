/*
 * trace_memory.c - builds a run's memory data (trace.h): its
 * memory events (trace_load_memory.c), and around them the kernels, NVTX
 * ranges and steps that the memory view asks about. The per-run cache
 * (trace_cache.c) runs it on a load thread; tests and tools call it
 * directly.
 */
#include "trace/trace_internal.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tfboard.h"
#include "base/str.h"
#include "base/vec.h"
#include "trace/trace_file.h"
#include "trace/trace_sqlite_open.h"

/* NVTX rows read per file at most (a hostile file cannot make us read
 * forever; the load's deadline bounds it too). */
#define MAX_NVTX_ROWS 20000000ull

void tfb_trace_memory_free(tfb_trace_memory *m)
{
    if (!m)
        return;
    tfb_trace_memory_events_free(&m->events);
    free(m->kernels);
    free(m->ranges);
    free(m->steps);
    tfb_strv_free(m->names, m->n_names);
    free(m);
}

/* ------------------------------------------------------------------------
 * Building
 * ---------------------------------------------------------------------- */
typedef TFB_VEC(tfb_trace_memory_interval) interval_vec;

/* What a load gathers; moved into the run when it ends (to_run). */
typedef struct builder {
    tfb_trace_memory *m;
    interval_vec kernels, ranges;
    TFB_VEC(tfb_trace_memory_step) steps;
    TFB_VEC(char *) names;
} builder;

/* Hands the gathered arrays to the run (which frees them from then on). */
static void to_run(builder *b)
{
    tfb_trace_memory *m = b->m;
    tfb_vec_trim(&b->kernels);
    tfb_vec_trim(&b->ranges);
    tfb_vec_trim(&b->steps);
    m->kernels = b->kernels.v;
    m->n_kernels = b->kernels.n;
    m->ranges = b->ranges.v;
    m->n_ranges = b->ranges.n;
    m->steps = b->steps.v;
    m->n_steps = b->steps.n;
    m->names = b->names.v;
    m->n_names = b->names.n;
    memset(&b->kernels, 0, sizeof b->kernels);
    memset(&b->ranges, 0, sizeof b->ranges);
    memset(&b->steps, 0, sizeof b->steps);
    memset(&b->names, 0, sizeof b->names);
}

/* A copy of s owned by the run (NULL: none, or ENOMEM). */
static const char *own_name(builder *b, const char *s, size_t len)
{
    if (!s || tfb_vec_need(&b->names, b->names.n + 1) < 0)
        return NULL;
    char *c = tfb_strndup(s, len);
    if (!c)
        return NULL;
    b->names.v[b->names.n++] = c;
    return c;
}

static int add_interval(builder *b, interval_vec *v, int64_t s, int64_t e,
                        int32_t dev, int64_t stream, const char *name,
                        size_t nlen)
{
    const char *own = own_name(b, name, nlen);
    if (name && !own)
        return TFB_ENOMEM;
    if (tfb_vec_push(
            v, ((tfb_trace_memory_interval){s, e, dev, stream, own})) < 0)
        return TFB_ENOMEM;
    return 0;
}

/* Allocation times, sorted; per device (dev >= 0) or all (dev < 0). */
static int64_t *alloc_times(const tfb_trace_memory_events *ev, int32_t dev,
                            size_t *n)
{
    *n = 0;
    int64_t *v = malloc((ev->n ? ev->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < ev->n; i++)
        if (ev->v[i].op == TFB_TRACE_MEMORY_ALLOC &&
            (dev < 0 || ev->v[i].device == dev))
            v[(*n)++] = ev->v[i].t_ns; /* events are time-sorted */
    return v;
}

/* 1 when some time of the sorted list lies in [s, e). */
static int holds_one(const int64_t *t, size_t n, int64_t s, int64_t e)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && t[lo] < e;
}

/* The kernels of the trace that hold an allocation time on their device,
 * and the host steps. A stream runs its kernels one after another, so for
 * each allocation the lane's last kernel started at or before it is the
 * one that can hold it (checked with a binary search per allocation). */
static int from_trace(builder *b, const tfb_trace *t)
{
    tfb_trace_memory *m = b->m;
    int32_t cur_dev = INT32_MIN;
    int64_t *times = NULL;
    size_t nt = 0;
    int err = 0;
    for (size_t li = 0; li < t->nlanes && !err; li++) {
        const tfb_trace_lane *ln = &t->lanes[li];
        const tfb_trace_span *sp = t->spans + ln->off;
        if (ln->host == TFB_TRACE_HOST_STEP) {
            for (size_t i = 0; i < ln->n && !err; i++) {
                tfb_trace_memory_step st = {tfb_trace_span_step(t, &sp[i]),
                                            sp[i].start, sp[i].end};
                if (tfb_vec_push(&b->steps, st) < 0) {
                    err = TFB_ENOMEM;
                    break;
                }
            }
            continue;
        }
        if (ln->host)
            continue;
        if (ln->device != cur_dev) {
            free(times);
            cur_dev = ln->device;
            times = alloc_times(&m->events, cur_dev, &nt);
            if (!times) {
                err = TFB_ENOMEM;
                break;
            }
        }
        size_t last_added = SIZE_MAX;
        for (size_t a = 0; a < nt && !err; a++) {
            /* Last span with start <= times[a]. */
            size_t lo = 0, hi = ln->n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (sp[mid].start <= times[a])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == 0)
                continue;
            size_t k = lo - 1;
            if (k == last_added || sp[k].kind != TFB_TRACE_KERNEL ||
                sp[k].end <= times[a])
                continue;
            const tfb_trace_kinfo *ki = tfb_trace_span_kinfo(t, &sp[k]);
            const char *name = tfb_trace_str(t, ki ? ki->name : -1, NULL);
            err = add_interval(b, &b->kernels, sp[k].start, sp[k].end, ln->device, ln->stream,
                               name, name ? strlen(name) : 0);
            last_added = k;
        }
    }
    free(times);
    return err;
}

static int is_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = "
                               "'table' AND name = ?1", -1, &st,
                           NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

/* NVTX push/pop and start/end ranges (eventType 59 / 60) of an
 * nsys-schema file that hold some allocation time. A file without the
 * tables (or with views in their place) has none. */
static int nvtx_ranges(builder *b, const char *path, const int64_t *times,
                       size_t nt, tfb_trace_load_ctl *ctl)
{
    sqlite3 *db = NULL;
    int rc = tfb_trace_sqlite_open(path, 1, &db);
    if (rc == TFB_ENOMEM)
        return rc;
    if (rc || !is_table(db, "NVTX_EVENTS")) {
        sqlite3_close(db);
        return 0;
    }
    int strings = is_table(db, "StringIds");
    const char *sql =
        strings ? "SELECT n.start, n.end, COALESCE(n.text, s.value) FROM "
                  "NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                  "WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL"
                : "SELECT start, end, text FROM NVTX_EVENTS WHERE eventType "
                  "IN (59, 60) AND end IS NOT NULL";
    sqlite3_stmt *st = tfb_trace_sqlite_prepare(db, sql);
    if (!st) {
        sqlite3_close(db); /* an odd schema: no ranges, not an error */
        return 0;
    }
    int err = 0;
    uint64_t rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (++rows > MAX_NVTX_ROWS ||
            ((rows & 0xffff) == 0 && tfb_trace_load_ctl_late(ctl))) {
            err = tfb_trace_load_ctl_fail(
                ctl, TFB_ETOOBIG,
                "%s: too many NVTX rows to read within the budget",
                tfb_trace_file_name(path));
            break;
        }
        int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        if (e <= s || !holds_one(times, nt, s, e))
            continue;
        const char *name = (const char *)sqlite3_column_text(st, 2);
        size_t len = name ? (size_t)sqlite3_column_bytes(st, 2) : 0;
        err = add_interval(b, &b->ranges, s, e, -1, -1, name, len);
        if (err)
            break;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return err;
}

/* The row budget of the load (ctl->max_rows, the trace's): a file whose
 * memory table would take the run past it is refused before it is read
 * (its events cost 56 bytes each in memory). */
static int memory_rows_ok(const char *path, size_t have,
                          tfb_trace_load_ctl *ctl)
{
    if (!ctl)
        return 0;
    sqlite3 *db = NULL;
    int rc = tfb_trace_sqlite_open(path, 1, &db);
    if (rc == TFB_ENOMEM)
        return rc;
    int64_t rows = 0;
    if (rc == 0 && is_table(db, "CUDA_GPU_MEMORY_USAGE_EVENTS")) {
        sqlite3_stmt *st = tfb_trace_sqlite_prepare(
            db, "SELECT COUNT(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS");
        if (st && sqlite3_step(st) == SQLITE_ROW)
            rows = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    if (rows > 0 && (uint64_t)rows + have > ctl->max_rows)
        return tfb_trace_load_ctl_fail(
            ctl, TFB_ETOOBIG,
            "%s: %lld memory events, more than the budget of %llu rows",
            tfb_trace_file_name(path), (long long)rows,
            (unsigned long long)ctl->max_rows);
    return 0;
}

/* Merges the sorted runs v[0, mid) and v[mid, n) keeping order on ties. */
static int merge_sorted(tfb_trace_memory_events *e, size_t mid)
{
    if (mid == 0 || mid == e->n || e->v[mid - 1].t_ns <= e->v[mid].t_ns)
        return 0;
    tfb_trace_memory_event *tmp = malloc(e->n * sizeof *tmp);
    if (!tmp)
        return TFB_ENOMEM;
    size_t i = 0, j = mid, o = 0;
    while (i < mid && j < e->n)
        tmp[o++] = e->v[j].t_ns < e->v[i].t_ns ? e->v[j++] : e->v[i++];
    while (i < mid)
        tmp[o++] = e->v[i++];
    while (j < e->n)
        tmp[o++] = e->v[j++];
    free(e->v);
    e->v = tmp;
    e->cap = e->n;
    return 0;
}

int tfb_trace_memory_load_files(char *const *paths, size_t n,
                                const tfb_trace *trace,
                                tfb_trace_load_ctl *ctl,
                                tfb_trace_memory **out)
{
    if ((!paths && n) || !out)
        return TFB_EINVAL;
    builder b = {0};
    b.m = calloc(1, sizeof *b.m);
    if (!b.m)
        return TFB_ENOMEM;
    tfb_trace_memory *m = b.m;
    int err = 0;
    for (size_t i = 0; i < n && !err; i++) {
        if (ctl) {
            ctl->file = i;
            atomic_store(&ctl->progress_ppm,
                         (uint32_t)(800000.0 * (double)i / (double)n));
        }
        int64_t got = 0;
        size_t before = m->events.n;
        tfb_trace_file_kind kind = tfb_trace_file_kind_of(paths[i]);
        if (kind == TFB_TRACE_FILE_SQLITE) {
            err = memory_rows_ok(paths[i], m->events.n, ctl);
            if (err)
                break;
            got = tfb_trace_memory_load_sqlite(&m->events, paths[i]);
        }
        else if (kind == TFB_TRACE_FILE_KINETO)
            got = tfb_trace_memory_load_kineto(&m->events, paths[i]);
        else
            continue;
        if (got == TFB_ENOENT)
            continue; /* no memory table: not an error */
        if (got == TFB_ECORRUPT || got == TFB_EIO) {
            /* Not SQLite, damaged JSON: skipped, as the trace loader
             * skips what is not a trace. */
            m->files_skipped++;
            continue;
        }
        if (got < 0) {
            err = tfb_trace_load_ctl_fail(
                ctl, (int)got, "%s: cannot read its memory events: %s",
                tfb_trace_file_name(paths[i]), tfb_strerror((int)got));
            break;
        }
        if (got > 0)
            m->files++;
        err = merge_sorted(&m->events, before);
    }
    if (!err && m->events.n) {
        m->first_ns = m->events.v[0].t_ns;
        m->last_ns = m->events.v[m->events.n - 1].t_ns;
    }
    if (!err && trace && m->events.n) {
        m->has_trace = 1;
        err = from_trace(&b, trace);
    }
    if (!err && m->events.n) {
        size_t nt;
        int64_t *times = alloc_times(&m->events, -1, &nt);
        if (!times)
            err = TFB_ENOMEM;
        for (size_t i = 0; i < n && !err; i++)
            if (tfb_trace_file_kind_of(paths[i]) == TFB_TRACE_FILE_SQLITE)
                err = nvtx_ranges(&b, paths[i], times, nt, ctl);
        free(times);
    }
    to_run(&b);
    if (err) {
        tfb_trace_load_ctl_fail(ctl, err, "reading memory events: %s",
                                tfb_strerror(err));
        tfb_trace_memory_free(m);
        return err;
    }
    if (ctl)
        atomic_store(&ctl->progress_ppm, 1000000u);
    *out = m;
    return 0;
}
