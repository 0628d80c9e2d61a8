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

void tfb_trace_load_ctl_init(tfb_trace_load_ctl *c, size_t nfiles)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_lock(&g_limits_mu);
    tfb_trace_load_limits l = g_limits;
    uint64_t copy_budget = g_copy_budget;
    pthread_mutex_unlock(&g_limits_mu);
    c->max_rows = l.max_rows;
    c->max_copy_bytes = copy_budget;
    c->deadline = (double)tfb_mono_now_ns() * 1e-9 + l.max_seconds;
    c->nfiles = nfiles;
    atomic_init(&c->progress_ppm, 0);
}

/* ------------------------------------------------------------------------
 * Loading files
 * ---------------------------------------------------------------------- */
int tfb_trace_load_files_keyed(char *const *paths, size_t n,
                               tfb_trace_load_ctl *ctl, tfb_trace **out,
                               tfb_trace_colcache_key **ck)
{
    /* A columnar cache file of these very sources is mapped instead of
     * reading them (*ck NULL); else *ck says where the trace built from
     * them is to be cached (may be NULL). */
    *ck = NULL;
    if (tfb_trace_colcache_load(paths, n, ctl ? ctl->max_rows : 0, out, ck) ==
        0) {
        if (ctl)
            atomic_store(&ctl->progress_ppm, 1000000u);
        return 0;
    }
    tfb_trace_builder *b;
    int err = tfb_trace_builder_new(&b, ctl);
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
