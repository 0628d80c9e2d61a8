/*
 * trace_load.c - one load of a run's trace files: the load budgets
 * (tfb_trace_load_limits) and the dispatch of each file to its loader (our
 * *.trace.sqlite and nsys exports: trace_load_sqlite.c; Kineto JSON:
 * trace_load_kineto.c), which fill one builder (trace_build.c) - unless
 * the columnar cache (trace_cachedir.c) holds a file of these very sources,
 * which is mapped instead, and a trace built from the sources is written
 * there for the next time. Runs on the calling thread: the per-run cache
 * (trace_cache.c) calls it from its loader threads, tests and tools
 * directly.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"
#include "trace/trace_internal.h"
#include "trace/trace_file.h"
#include "trace/trace_cachedir.h"
#include "trace/trace_walcopy.h"

/* ------------------------------------------------------------------------
 * Budgets
 * ---------------------------------------------------------------------- */
#define DEFAULT_MAX_ROWS 100000000ull
#define DEFAULT_MAX_SECONDS 300.0

static pthread_mutex_t g_limits_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_trace_load_limits g_limits = {DEFAULT_MAX_ROWS, DEFAULT_MAX_SECONDS};
static uint64_t g_copy_budget = TFB_TRACE_WAL_COPY_MAX_BYTES;
static int g_serial;

void tfb_trace_set_load_limits(const tfb_trace_load_limits *l)
{
    pthread_mutex_lock(&g_limits_mu);
    g_limits.max_rows = l && l->max_rows ? l->max_rows : DEFAULT_MAX_ROWS;
    g_limits.max_seconds =
        l && l->max_seconds > 0 ? l->max_seconds : DEFAULT_MAX_SECONDS;
    pthread_mutex_unlock(&g_limits_mu);
}

void tfb_trace_set_copy_budget(uint64_t max_copy_bytes)
{
    pthread_mutex_lock(&g_limits_mu);
    g_copy_budget =
        max_copy_bytes ? max_copy_bytes : TFB_TRACE_WAL_COPY_MAX_BYTES;
    pthread_mutex_unlock(&g_limits_mu);
}

void tfb_trace_set_load_serial(int serial)
{
    pthread_mutex_lock(&g_limits_mu);
    g_serial = serial != 0;
    pthread_mutex_unlock(&g_limits_mu);
}

void tfb_trace_load_ctl_init(tfb_trace_load_ctl *c, size_t nfiles)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_lock(&g_limits_mu);
    tfb_trace_load_limits l = g_limits;
    uint64_t copy_budget = g_copy_budget;
    int serial = g_serial;
    pthread_mutex_unlock(&g_limits_mu);
    c->serial = serial;
    c->max_rows = l.max_rows;
    c->max_copy_bytes = copy_budget;
    c->deadline = (double)tfb_mono_now_ns() * 1e-9 + l.max_seconds;
    c->nfiles = nfiles;
    atomic_init(&c->progress_ppm, 0);
}

/* ------------------------------------------------------------------------
 * The timeline's report
 * ---------------------------------------------------------------------- */
/* Where the loads' timelines go: the file named by this environment
 * variable, appended to (unset: nowhere). For benches and for finding
 * where a slow load's time went; docs/trace-cache.md "The first load". */
#define TIMELINE_ENV "TFB_TRACE_LOAD_TIMELINE"

static pthread_mutex_t g_report_mu = PTHREAD_MUTEX_INITIALIZER;

void tfb_trace_load_report_line(const char *fmt, ...)
{
    const char *path = getenv(TIMELINE_ENV);
    if (!path || !*path)
        return;
    pthread_mutex_lock(&g_report_mu);
    FILE *f = fopen(path, "a");
    if (f) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fclose(f);
    }
    pthread_mutex_unlock(&g_report_mu);
}

/* One line a phase, then the totals (tab-separated: see TIMELINE_ENV). */
static void report(const tfb_trace_load_ctl *c, const char *first,
                   double wall0, double cpu0, const char *how)
{
    const char *path = getenv(TIMELINE_ENV);
    if (!c || !path || !*path)
        return;
    char buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < c->nphases && k < sizeof buf; i++) {
        const tfb_trace_load_phase *p = &c->phases[i];
        int w = snprintf(buf + k, sizeof buf - k,
                         "phase\t%s\t%.3f\t%.3f\t%.3f\t%s\n", p->name,
                         p->wall_s, p->cpu_s, p->thread_cpu_s,
                         p->parallel ? "parallel" : "serial");
        if (w < 0)
            break;
        k += (size_t)w;
    }
    if (k >= sizeof buf)
        k = sizeof buf - 1;
    buf[k] = '\0';
    tfb_trace_load_report_line("load\t%s\t%s\n%stotal\t%.3f\t%.3f\n",
                               how, first ? tfb_trace_file_name(first) : "",
                               buf, tfb_trace_clock_wall() - wall0,
                               tfb_trace_clock_cpu() - cpu0);
}

/* ------------------------------------------------------------------------
 * Loading files
 * ---------------------------------------------------------------------- */
int tfb_trace_load_files_keyed(char *const *paths, size_t n,
                               tfb_trace_load_ctl *ctl, tfb_trace **out,
                               tfb_trace_colcache_key **ck)
{
    double wall0 = tfb_trace_clock_wall(), cpu0 = tfb_trace_clock_cpu();
    if (ctl) {
        ctl->nphases = 0;
        ctl->phase_wall0 = wall0;
        ctl->phase_cpu0 = cpu0;
        ctl->phase_thread0 = tfb_trace_clock_thread();
    }
    /* A columnar cache file of these very sources is mapped instead of
     * reading them (*ck NULL); else *ck says where the trace built from
     * them is to be cached (may be NULL). */
    *ck = NULL;
    int hit = tfb_trace_colcache_load(paths, n, ctl ? ctl->max_rows : 0, out,
                                      ck) == 0;
    tfb_trace_load_ctl_phase(ctl, hit ? "cache file mapped"
                                      : "cache file looked up");
    if (hit) {
        if (ctl)
            atomic_store(&ctl->progress_ppm, 1000000u);
        report(ctl, n ? paths[0] : NULL, wall0, cpu0, "mapped");
        return 0;
    }
    /* No cache: the sources' bytes are needed now. Copies of a bucket's
     * objects are fetched only here (a cache hit fetches none). */
    char why[sizeof ctl->error];
    int err = tfb_trace_files_fetch(paths, n, why, sizeof why);
    if (err) {
        tfb_trace_colcache_key_free(*ck);
        *ck = NULL;
        err = tfb_trace_load_ctl_fail(ctl, err, "%s", why);
        report(ctl, n ? paths[0] : NULL, wall0, cpu0, "failed");
        return err;
    }
    tfb_trace_colcache_key_fetched(ck);
    tfb_trace_load_ctl_phase(ctl, "sources fetched");
    tfb_trace_builder *b;
    err = tfb_trace_builder_new(&b, ctl);
    if (err)
        return err;
    for (size_t i = 0; i < n && !err; i++) {
        int r = 0;
        if (ctl)
            ctl->file = i;
        tfb_trace_builder_progress(b, 0);
        tfb_trace_builder_begin_file(b);
        tfb_trace_file_kind kind = tfb_trace_file_kind_of(paths[i]);
        if (kind == TFB_TRACE_FILE_SQLITE)
            r = tfb_trace_load_sqlite(b, paths[i]);
        else if (kind == TFB_TRACE_FILE_KINETO)
            r = tfb_trace_load_kineto(b, paths[i]);
        if (r < 0)
            err = tfb_trace_load_ctl_fail(ctl, r, "%s: %s",
                                          tfb_trace_file_name(paths[i]),
                                          tfb_strerror(r));
        else
            tfb_trace_builder_end_file(b, r > 0);
        tfb_trace_load_ctl_phase(ctl, kind == TFB_TRACE_FILE_SQLITE
                                          ? "file closed"
                                          : "file read");
    }
    if (err) {
        tfb_trace_builder_free(b);
        return err;
    }
    err = tfb_trace_builder_finish(b, out);
    if (err)
        tfb_trace_load_ctl_fail(ctl, err, "building the trace: %s",
                                tfb_strerror(err));
    /* A trace without a store's WAL data (its copy was refused) is not
     * cached: a later load, with room again, reads it in full. */
    if (ctl && ctl->wal_unread) {
        tfb_trace_colcache_key_free(*ck);
        *ck = NULL;
    }
    if (!err && ctl)
        atomic_store(&ctl->progress_ppm, 1000000u);
    report(ctl, n ? paths[0] : NULL, wall0, cpu0, err ? "failed" : "built");
    return err;
}

int tfb_trace_load_files_ctl(char *const *paths, size_t n,
                             tfb_trace_load_ctl *ctl, tfb_trace **out)
{
    tfb_trace_colcache_key *ck = NULL;
    int err = tfb_trace_load_files_keyed(paths, n, ctl, out, &ck);
    if (!err)
        tfb_trace_colcache_save(ck, *out, ctl ? ctl->rows : UINT64_MAX);
    tfb_trace_colcache_key_free(ck);
    return err;
}

int tfb_trace_load_files(char *const *paths, size_t n, tfb_trace **out)
{
    tfb_trace_load_ctl ctl;
    tfb_trace_load_ctl_init(&ctl, n);
    return tfb_trace_load_files_ctl(paths, n, &ctl, out);
}
