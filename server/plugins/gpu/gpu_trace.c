/*
 * gpu_trace.c - builds the in-memory GPU trace of a run from its trace
 * files (dispatching to the SQLite and Kineto loaders, which fill a
 * builder), and caches it per run until one of the files changes.
 */
#include "gpu_trace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

int tfb_gpu_trace_load_files(char *const *paths, size_t n,
                             tfb_gpu_trace **out)
{
    tfb_gpu_builder *b;
    int err = tfb_gpu_builder_new(&b);
    if (err)
        return err;
    for (size_t i = 0; i < n && !err; i++) {
        int r = 0;
        tfb_gpu_builder_begin_file(b);
        if (has_suffix(paths[i], ".sqlite"))
            r = tfb_gpu_load_sqlite(b, paths[i]);
        else if (has_suffix(paths[i], ".pt.trace.json") ||
                 has_suffix(paths[i], ".pt.trace.json.gz"))
            r = tfb_gpu_load_kineto(b, paths[i]);
        if (r < 0)
            err = r;
        else
            tfb_gpu_builder_end_file(b, r > 0);
    }
    if (err) {
        tfb_gpu_builder_free(b);
        return err;
    }
    *out = tfb_gpu_builder_finish(b);
    return 0;
}

/* ------------------------------------------------------------------------
 * Cache
 * ---------------------------------------------------------------------- */
#define CACHE_SLOTS 64

typedef struct cache_entry {
    const tfb_store *store;
    const tfb_run *run;
    char *sig;
    tfb_gpu_trace *trace; /* NULL = the run has no usable trace */
    uint64_t used;
} cache_entry;

static pthread_mutex_t g_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static cache_entry g_cache[CACHE_SLOTS];
static uint64_t g_clock;

void tfb_gpu_trace_release(tfb_gpu_trace *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&g_cache_mu);
    int last = --t->refs == 0;
    pthread_mutex_unlock(&g_cache_mu);
    if (last)
        tfb_gpu_trace_free(t);
}

static void sig_add_file(char **sig, size_t *len, const char *path)
{
    struct stat st;
    char buf[128];
    long long size = -1, mt = -1;
    if (stat(path, &st) == 0) {
        size = (long long)st.st_size;
        mt = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
    int n = snprintf(buf, sizeof buf, "|%lld|%lld|", size, mt);
    size_t pl = strlen(path);
    char *ns = realloc(*sig, *len + pl + (size_t)n + 1);
    if (!ns)
        return;
    memcpy(ns + *len, path, pl);
    memcpy(ns + *len + pl, buf, (size_t)n + 1);
    *len += pl + (size_t)n;
    *sig = ns;
}

/* A text that changes when any trace file (or its WAL) changes. */
static char *signature(char **files, size_t n)
{
    char *sig = calloc(1, 1);
    size_t len = 0;
    for (size_t i = 0; i < n && sig; i++) {
        sig_add_file(&sig, &len, files[i]);
        if (has_suffix(files[i], ".sqlite")) {
            size_t pl = strlen(files[i]);
            char *wal = malloc(pl + 5);
            if (wal) {
                memcpy(wal, files[i], pl);
                memcpy(wal + pl, "-wal", 5);
                sig_add_file(&sig, &len, wal);
                free(wal);
            }
        }
    }
    return sig;
}

int tfb_gpu_trace_of_run(tfb_store *store, tfb_run *r, tfb_gpu_trace **out)
{
    if (!store || !r || !out)
        return TFB_EINVAL;
    char **files = NULL;
    size_t n = 0;
    int err = tfb_run_trace_files(r, &files, &n);
    if (err)
        return err;
    char *sig = signature(files, n);
    if (!sig) {
        tfb_strv_free(files, n);
        return TFB_ENOMEM;
    }
    pthread_mutex_lock(&g_cache_mu);
    cache_entry *e = NULL, *victim = &g_cache[0];
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        if (g_cache[i].store == store && g_cache[i].run == r) {
            e = &g_cache[i];
            break;
        }
        if (g_cache[i].used < victim->used)
            victim = &g_cache[i];
    }
    if (e && strcmp(e->sig, sig) == 0) {
        if (e->trace)
            e->trace->refs++;
        *out = e->trace;
        e->used = ++g_clock;
        pthread_mutex_unlock(&g_cache_mu);
        free(sig);
        tfb_strv_free(files, n);
        return 0;
    }
    /* Built under the lock: concurrent first requests wait for one build
     * instead of each reading the files. */
    tfb_gpu_trace *t = NULL;
    if (n > 0) {
        err = tfb_gpu_trace_load_files(files, n, &t);
        if (!err && t->files_read == 0) {
            tfb_gpu_trace_free(t);
            t = NULL;
        }
    }
    tfb_strv_free(files, n);
    if (err) {
        pthread_mutex_unlock(&g_cache_mu);
        free(sig);
        return err;
    }
    if (!e)
        e = victim;
    tfb_gpu_trace *old = e->trace;
    free(e->sig);
    e->store = store;
    e->run = r;
    e->sig = sig;
    e->trace = t;
    e->used = ++g_clock;
    if (t)
        t->refs++; /* the caller's reference; the cache holds the first */
    if (old && --old->refs == 0) {
        pthread_mutex_unlock(&g_cache_mu);
        tfb_gpu_trace_free(old);
    } else {
        pthread_mutex_unlock(&g_cache_mu);
    }
    *out = t;
    return 0;
}
