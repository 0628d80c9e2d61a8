/*
 * gpu_memory_run.c - loads a run's memory events (with the kernels, NVTX
 * ranges and steps around them) in the background and caches them per
 * run, the way gpu_trace.c caches traces: the cache lock only guards the
 * table of entries and is never held while a file is read; a load runs on
 * its own detached thread, and the run's requests answer "loading" until
 * it ends.
 */
#include "plugins/gpu/gpu_memory_run.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/deadline.h"
#include "plugins/gpu/gpu_file.h"
#include "tfboard.h"

/* NVTX rows read per file at most (a hostile file cannot make us read
 * forever; the load's deadline bounds it too). */
#define MAX_NVTX_ROWS 20000000ull

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

void tfb_gmem_run_free(tfb_gmem_run *m)
{
    if (!m)
        return;
    tfb_gmem_events_free(&m->events);
    free(m->kernels);
    free(m->ranges);
    free(m->steps);
    for (size_t i = 0; i < m->n_names; i++)
        free(m->names[i]);
    free(m->names);
    free(m);
}

void tfb_gmem_run_input(const tfb_gmem_run *m, tfb_gmem_input *in)
{
    memset(in, 0, sizeof *in);
    in->events = m->events.v;
    in->n_events = m->events.n;
    in->kernels = m->kernels;
    in->n_kernels = m->n_kernels;
    in->ranges = m->ranges;
    in->n_ranges = m->n_ranges;
    in->steps = m->steps;
    in->n_steps = m->n_steps;
}

/* ------------------------------------------------------------------------
 * Building
 * ---------------------------------------------------------------------- */
typedef struct builder {
    tfb_gmem_run *m;
    size_t cap_k, cap_r, cap_s, cap_n;
} builder;

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *nv = realloc(*v, c * elem);
    if (!nv)
        return TFB_ENOMEM;
    *v = nv;
    *cap = c;
    return 0;
}

static const char *own_name(builder *b, const char *s, size_t len)
{
    if (!s)
        return NULL;
    if (grow((void **)&b->m->names, &b->cap_n, b->m->n_names + 1,
             sizeof(char *)))
        return NULL;
    char *c = malloc(len + 1);
    if (!c)
        return NULL;
    memcpy(c, s, len);
    c[len] = '\0';
    b->m->names[b->m->n_names++] = c;
    return c;
}

static int add_interval(builder *b, tfb_gmem_interval **v, size_t *n,
                        size_t *cap, int64_t s, int64_t e, int32_t dev,
                        int64_t stream, const char *name, size_t nlen)
{
    if (grow((void **)v, cap, *n + 1, sizeof **v))
        return TFB_ENOMEM;
    const char *own = own_name(b, name, nlen);
    if (name && !own)
        return TFB_ENOMEM;
    (*v)[(*n)++] = (tfb_gmem_interval){s, e, dev, stream, own};
    return 0;
}

/* Allocation times, sorted; per device (dev >= 0) or all (dev < 0). */
static int64_t *alloc_times(const tfb_gmem_events *ev, int32_t dev,
                            size_t *n)
{
    *n = 0;
    int64_t *v = malloc((ev->n ? ev->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < ev->n; i++)
        if (ev->v[i].op == TFB_GMEM_ALLOC && (dev < 0 || ev->v[i].device == dev))
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
static int from_trace(builder *b, const tfb_gpu_trace *t)
{
    tfb_gmem_run *m = b->m;
    int32_t cur_dev = INT32_MIN;
    int64_t *times = NULL;
    size_t nt = 0;
    int err = 0;
    for (size_t li = 0; li < t->nlanes && !err; li++) {
        const tfb_gpu_lane *ln = &t->lanes[li];
        const tfb_gpu_span *sp = t->spans + ln->off;
        if (ln->host == TFB_GPU_HOST_STEP) {
            for (size_t i = 0; i < ln->n && !err; i++) {
                if (grow((void **)&m->steps, &b->cap_s, m->n_steps + 1,
                         sizeof *m->steps)) {
                    err = TFB_ENOMEM;
                    break;
                }
                m->steps[m->n_steps++] = (tfb_gmem_step){
                    tfb_gpu_span_step(t, &sp[i]), sp[i].start, sp[i].end};
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
            if (k == last_added || sp[k].kind != TFB_GPU_KERNEL ||
                sp[k].end <= times[a])
                continue;
            const tfb_gpu_kinfo *ki = tfb_gpu_span_kinfo(t, &sp[k]);
            const char *name = tfb_gpu_str(t, ki ? ki->name : -1, NULL);
            err = add_interval(b, &m->kernels, &m->n_kernels, &b->cap_k,
                               sp[k].start, sp[k].end, ln->device, ln->stream,
                               name, name ? strlen(name) : 0);
            last_added = k;
        }
    }
    free(times);
    return err;
}

static char *ro_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = malloc(n * 3 + 32);
    if (!u)
        return NULL;
    char *o = u;
    o += sprintf(o, "file:");
    for (const char *p = path; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '%' || c == '?' || c == '#' || c < 0x21 || c >= 0x7f)
            o += sprintf(o, "%%%02X", c);
        else
            *o++ = (char)c;
    }
    strcpy(o, "?mode=ro&immutable=1");
    return u;
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* NVTX push/pop and start/end ranges (eventType 59 / 60) of an
 * nsys-schema file that hold some allocation time. A file without the
 * tables (or with views in their place) has none. */
static int nvtx_ranges(builder *b, const char *path, const int64_t *times,
                       size_t nt, tfb_gpu_load_ctl *ctl)
{
    char *uri = ro_uri(path);
    if (!uri)
        return TFB_ENOMEM;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                             NULL);
    free(uri);
    if (rc != SQLITE_OK || !is_table(db, "NVTX_EVENTS")) {
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
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_close(db); /* an odd schema: no ranges, not an error */
        return 0;
    }
    int err = 0;
    uint64_t rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (++rows > MAX_NVTX_ROWS ||
            ((rows & 0xffff) == 0 && ctl && now_s() > ctl->deadline)) {
            if (ctl)
                snprintf(ctl->error, sizeof ctl->error,
                         "%s: too many NVTX rows to read within the budget",
                         base_name(path));
            err = TFB_ETOOBIG;
            break;
        }
        int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        if (e <= s || !holds_one(times, nt, s, e))
            continue;
        const char *name = (const char *)sqlite3_column_text(st, 2);
        size_t len = name ? (size_t)sqlite3_column_bytes(st, 2) : 0;
        err = add_interval(b, &b->m->ranges, &b->m->n_ranges, &b->cap_r, s, e,
                           -1, -1, name, len);
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
static int memory_rows_ok(const char *path, size_t have, tfb_gpu_load_ctl *ctl)
{
    if (!ctl)
        return 0;
    char *uri = ro_uri(path);
    if (!uri)
        return TFB_ENOMEM;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                             NULL);
    free(uri);
    int64_t rows = 0;
    if (rc == SQLITE_OK && is_table(db, "CUDA_GPU_MEMORY_USAGE_EVENTS")) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM "
                                   "CUDA_GPU_MEMORY_USAGE_EVENTS",
                               -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            rows = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    if (rows > 0 && (uint64_t)rows + have > ctl->max_rows) {
        snprintf(ctl->error, sizeof ctl->error,
                 "%s: %lld memory events, more than the budget of %llu rows",
                 base_name(path), (long long)rows,
                 (unsigned long long)ctl->max_rows);
        return TFB_ETOOBIG;
    }
    return 0;
}

/* Merges the sorted runs v[0, mid) and v[mid, n) keeping order on ties. */
static int merge_sorted(tfb_gmem_events *e, size_t mid)
{
    if (mid == 0 || mid == e->n || e->v[mid - 1].t_ns <= e->v[mid].t_ns)
        return 0;
    tfb_gmem_event *tmp = malloc(e->n * sizeof *tmp);
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

int tfb_gmem_run_load_files(char *const *paths, size_t n,
                            const tfb_gpu_trace *trace,
                            tfb_gpu_load_ctl *ctl, tfb_gmem_run **out)
{
    if ((!paths && n) || !out)
        return TFB_EINVAL;
    builder b = {0};
    b.m = calloc(1, sizeof *b.m);
    if (!b.m)
        return TFB_ENOMEM;
    tfb_gmem_run *m = b.m;
    int err = 0;
    for (size_t i = 0; i < n && !err; i++) {
        if (ctl) {
            ctl->file = i;
            atomic_store(&ctl->progress_ppm,
                         (uint32_t)(800000.0 * (double)i / (double)n));
        }
        int64_t got = 0;
        size_t before = m->events.n;
        if (has_suffix(paths[i], ".sqlite")) {
            err = memory_rows_ok(paths[i], m->events.n, ctl);
            if (err)
                break;
            got = tfb_gmem_load_sqlite(&m->events, paths[i]);
        }
        else if (has_suffix(paths[i], ".pt.trace.json") ||
                 has_suffix(paths[i], ".pt.trace.json.gz"))
            got = tfb_gmem_load_kineto(&m->events, paths[i]);
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
            err = (int)got;
            if (ctl)
                snprintf(ctl->error, sizeof ctl->error,
                         "%s: cannot read its memory events: %s",
                         base_name(paths[i]), tfb_strerror(err));
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
            if (has_suffix(paths[i], ".sqlite"))
                err = nvtx_ranges(&b, paths[i], times, nt, ctl);
        free(times);
    }
    if (err) {
        if (ctl && !ctl->error[0])
            snprintf(ctl->error, sizeof ctl->error,
                     "reading memory events: %s", tfb_strerror(err));
        tfb_gmem_run_free(m);
        return err;
    }
    if (ctl)
        atomic_store(&ctl->progress_ppm, 1000000u);
    *out = m;
    return 0;
}

/* ------------------------------------------------------------------------
 * Cache
 * ---------------------------------------------------------------------- */
#define CACHE_SLOTS 64

typedef struct job {
    tfb_gpu_load_ctl ctl;
    char **files;
    size_t n;
    char *sig;
    tfb_gpu_trace *trace; /* the job's reference, or NULL */
} job;

typedef struct entry {
    const tfb_store *store;
    const tfb_run *run;
    int filled;
    tfb_gpu_state state; /* READY, FAILED or NONE */
    char *sig;
    tfb_gmem_run *data;
    char *error;
    job *loading;
    uint64_t used;
} entry;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
/* Waits on CLOCK_MONOTONIC (a wall clock set back must not stretch them),
 * so the cond var is made at first use, not by a static initializer. */
static pthread_cond_t g_cv;
static pthread_once_t g_cv_once = PTHREAD_ONCE_INIT;

static void g_cv_init(void)
{
    tfb_cond_init_monotonic(&g_cv);
}

static pthread_cond_t *g_cv_get(void)
{
    pthread_once(&g_cv_once, g_cv_init);
    return &g_cv;
}
static entry g_cache[CACHE_SLOTS];
static uint64_t g_clock;

void tfb_gmem_run_release(tfb_gmem_run *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&g_mu);
    int last = --m->refs == 0;
    pthread_mutex_unlock(&g_mu);
    if (last)
        tfb_gmem_run_free(m);
}

static void job_free(job *j)
{
    if (!j)
        return;
    tfb_strv_free(j->files, j->n);
    tfb_gpu_trace_release(j->trace);
    free(j->sig);
    free(j);
}

static void *load_thread(void *arg)
{
    job *j = arg;
    tfb_gmem_run *m = NULL;
    int err = tfb_gmem_run_load_files(j->files, j->n, j->trace, &j->ctl, &m);
    tfb_gpu_trace_release(j->trace);
    j->trace = NULL;
    char *msg = NULL;
    if (err)
        msg = strdup(j->ctl.error[0] ? j->ctl.error : tfb_strerror(err));
    if (m)
        m->refs = 1;
    tfb_gmem_run *old = NULL;
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        entry *e = &g_cache[i];
        if (e->loading != j)
            continue;
        old = e->data;
        free(e->sig);
        free(e->error);
        e->sig = j->sig;
        j->sig = NULL;
        e->data = m;
        e->error = msg;
        e->state = err ? TFB_GPU_FAILED : TFB_GPU_READY;
        e->filled = 1;
        e->loading = NULL;
        m = NULL;
        msg = NULL;
        break;
    }
    int last = old && --old->refs == 0;
    pthread_cond_broadcast(g_cv_get());
    pthread_mutex_unlock(&g_mu);
    if (last)
        tfb_gmem_run_free(old);
    tfb_gmem_run_free(m);
    free(msg);
    job_free(j);
    return NULL;
}

/* Starts e's load (lock held); takes files and, on success, the trace. */
static int start_load(entry *e, char **files, size_t n, const char *sig,
                      tfb_gpu_trace *trace)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        return TFB_ENOMEM;
    tfb_gpu_load_ctl_init(&j->ctl, n);
    j->sig = strdup(sig);
    if (!j->sig) {
        free(j);
        return TFB_ENOMEM;
    }
    j->files = files;
    j->n = n;
    j->trace = trace;
    pthread_attr_t at;
    pthread_t th;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    e->loading = j;
    int rc = pthread_create(&th, &at, load_thread, j);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        e->loading = NULL;
        j->files = NULL;
        j->n = 0;
        j->trace = NULL;
        job_free(j);
        return TFB_ENOMEM;
    }
    return 0;
}

static void answer(entry *e, tfb_gmem_run **out, tfb_gpu_status *st)
{
    st->state = e->state;
    st->progress = 1.0;
    if (e->state == TFB_GPU_READY) {
        e->data->refs++;
        *out = e->data;
    } else if (e->state == TFB_GPU_FAILED) {
        snprintf(st->error, sizeof st->error, "%s",
                 e->error ? e->error : "the memory events could not be read");
    }
    e->used = ++g_clock;
}


int tfb_gmem_run_get(tfb_store *store, tfb_run *r, tfb_gpu_trace **trace,
                     int wait_ms, tfb_gmem_run **out, tfb_gpu_status *st)
{
    tfb_gpu_trace *tr = trace ? *trace : NULL;
    if (trace)
        *trace = NULL;
    if (!store || !r || !out || !st) {
        tfb_gpu_trace_release(tr);
        return TFB_EINVAL;
    }
    *out = NULL;
    memset(st, 0, sizeof *st);
    char **files = NULL;
    size_t n = 0;
    int err = tfb_run_trace_files(r, &files, &n);
    if (err || n == 0) {
        st->state = TFB_GPU_NONE;
        tfb_strv_free(files, n);
        tfb_gpu_trace_release(tr);
        return err;
    }
    char *sig = tfb_gpu_files_signature(files, n);
    if (!sig) {
        tfb_strv_free(files, n);
        tfb_gpu_trace_release(tr);
        return TFB_ENOMEM;
    }
    struct timespec until;
    if (wait_ms > 0)
        tfb_deadline_after_ms(&until, (unsigned)wait_ms);
    tfb_gmem_run *evicted = NULL;
    pthread_mutex_lock(&g_mu);
    entry *e = NULL, *victim = NULL;
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        entry *c = &g_cache[i];
        if (c->store == store && c->run == r) {
            e = c;
            break;
        }
        if (!c->loading && (!victim || c->used < victim->used))
            victim = c;
    }
    if (!e && !victim) {
        st->state = TFB_GPU_FAILED;
        snprintf(st->error, sizeof st->error,
                 "too many runs' memory events are loading at once; try "
                 "again");
    } else {
        if (!e) {
            e = victim;
            evicted = e->data;
            free(e->sig);
            free(e->error);
            memset(e, 0, sizeof *e);
            e->store = store;
            e->run = r;
        }
        e->used = ++g_clock;
        if (e->filled && strcmp(e->sig, sig) == 0) {
            answer(e, out, st);
        } else {
            if (!e->loading) {
                err = start_load(e, files, n, sig, tr);
                if (!err) {
                    files = NULL;
                    n = 0;
                    tr = NULL;
                }
            }
            int rc = 0;
            while (!err && e->loading && rc == 0) {
                if (wait_ms < 0)
                    rc = pthread_cond_wait(g_cv_get(), &g_mu);
                else if (wait_ms == 0)
                    rc = ETIMEDOUT;
                else
                    rc = pthread_cond_timedwait(g_cv_get(), &g_mu, &until);
            }
            if (err) {
                /* nothing */
            } else if (!e->loading || (e->filled &&
                                       e->state == TFB_GPU_READY)) {
                /* Done (the files may have changed again since: the
                 * next request reads them), or a changed file is read
                 * again and meanwhile the data read before answers. */
                answer(e, out, st);
            } else {
                st->state = TFB_GPU_LOADING;
                st->progress =
                    (double)atomic_load(&e->loading->ctl.progress_ppm) / 1e6;
            }
        }
    }
    int last = evicted && --evicted->refs == 0;
    pthread_mutex_unlock(&g_mu);
    if (last)
        tfb_gmem_run_free(evicted);
    free(sig);
    tfb_strv_free(files, n);
    tfb_gpu_trace_release(tr);
    return err;
}
