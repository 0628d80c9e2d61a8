/*
 * gpu_trace.c - builds the in-memory GPU trace of a run from its trace
 * files (dispatching to the SQLite and Kineto loaders, which fill a
 * builder), and caches it per run until one of the files changes.
 *
 * Loads run on their own (detached) thread, one per run, never under the
 * cache lock: the lock only guards the table of entries, so a slow or
 * hostile file delays nobody but the requests of its own run, and those
 * answer "loading" (with progress) instead of waiting. A load ends within
 * its budgets (rows, seconds: tfb_gpu_load_limits), with the trace or with
 * an error message that the run's requests then answer.
 */
#include "base/deadline.h"
#include "plugins/gpu/gpu_file.h"
#include "plugins/gpu/gpu_trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

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

/* ------------------------------------------------------------------------
 * Budgets
 * ---------------------------------------------------------------------- */
#define DEFAULT_MAX_ROWS 100000000ull
#define DEFAULT_MAX_SECONDS 300.0

static pthread_mutex_t g_limits_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_gpu_load_limits g_limits = {DEFAULT_MAX_ROWS, DEFAULT_MAX_SECONDS};

void tfb_gpu_set_load_limits(const tfb_gpu_load_limits *l)
{
    pthread_mutex_lock(&g_limits_mu);
    g_limits.max_rows = l && l->max_rows ? l->max_rows : DEFAULT_MAX_ROWS;
    g_limits.max_seconds =
        l && l->max_seconds > 0 ? l->max_seconds : DEFAULT_MAX_SECONDS;
    pthread_mutex_unlock(&g_limits_mu);
}

void tfb_gpu_load_ctl_init(tfb_gpu_load_ctl *c, size_t nfiles)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_lock(&g_limits_mu);
    tfb_gpu_load_limits l = g_limits;
    pthread_mutex_unlock(&g_limits_mu);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    c->max_rows = l.max_rows;
    c->deadline = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 +
                  l.max_seconds;
    c->nfiles = nfiles;
    atomic_init(&c->progress_ppm, 0);
}

/* ------------------------------------------------------------------------
 * Loading files
 * ---------------------------------------------------------------------- */
int tfb_gpu_trace_load_files_ctl(char *const *paths, size_t n,
                                 tfb_gpu_load_ctl *ctl, tfb_gpu_trace **out)
{
    tfb_gpu_builder *b;
    int err = tfb_gpu_builder_new(&b, ctl);
    if (err)
        return err;
    for (size_t i = 0; i < n && !err; i++) {
        int r = 0;
        if (ctl)
            ctl->file = i;
        tfb_gpu_builder_progress(b, 0);
        tfb_gpu_builder_begin_file(b);
        if (has_suffix(paths[i], ".sqlite"))
            r = tfb_gpu_load_sqlite(b, paths[i]);
        else if (has_suffix(paths[i], ".pt.trace.json") ||
                 has_suffix(paths[i], ".pt.trace.json.gz"))
            r = tfb_gpu_load_kineto(b, paths[i]);
        if (r < 0) {
            err = r;
            if (ctl && !ctl->error[0])
                snprintf(ctl->error, sizeof ctl->error, "%s: %s",
                         base_name(paths[i]), tfb_strerror(r));
        } else {
            tfb_gpu_builder_end_file(b, r > 0);
        }
    }
    if (err) {
        tfb_gpu_builder_free(b);
        return err;
    }
    err = tfb_gpu_builder_finish(b, out);
    if (err && ctl && !ctl->error[0])
        snprintf(ctl->error, sizeof ctl->error, "building the trace: %s",
                 tfb_strerror(err));
    if (!err && ctl)
        atomic_store(&ctl->progress_ppm, 1000000u);
    return err;
}

int tfb_gpu_trace_load_files(char *const *paths, size_t n,
                             tfb_gpu_trace **out)
{
    tfb_gpu_load_ctl ctl;
    tfb_gpu_load_ctl_init(&ctl, n);
    return tfb_gpu_trace_load_files_ctl(paths, n, &ctl, out);
}

/* ------------------------------------------------------------------------
 * Cache
 * ---------------------------------------------------------------------- */
#define CACHE_SLOTS 64

/* A load in progress: owned by its thread; the entry points to it while
 * it runs (for the progress figure). */
typedef struct job {
    tfb_gpu_load_ctl ctl;
    char **files;
    size_t n;
    char *sig;
} job;

typedef struct cache_entry {
    const tfb_store *store;
    const tfb_run *run;
    int filled;            /* a load finished: state, sig, trace/error */
    tfb_gpu_state state;   /* READY, FAILED or NONE */
    char *sig;             /* the files that finished load read */
    tfb_gpu_trace *trace;  /* READY (the cache's reference) */
    char *error;           /* FAILED */
    job *loading;          /* a load of this run is running */
    uint64_t used;
} cache_entry;

static pthread_mutex_t g_cache_mu = PTHREAD_MUTEX_INITIALIZER;
/* Waits on CLOCK_MONOTONIC (a wall clock set back must not stretch them),
 * so the cond var is made at first use, not by a static initializer. */
static pthread_cond_t g_cache_cv;
static pthread_once_t g_cache_cv_once = PTHREAD_ONCE_INIT;

static void g_cache_cv_init(void)
{
    tfb_cond_init_monotonic(&g_cache_cv);
}

static pthread_cond_t *g_cache_cv_get(void)
{
    pthread_once(&g_cache_cv_once, g_cache_cv_init);
    return &g_cache_cv;
}
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

static void job_free(job *j)
{
    if (!j)
        return;
    tfb_strv_free(j->files, j->n);
    free(j->sig);
    free(j);
}

static void *load_thread(void *arg)
{
    job *j = arg;
    tfb_gpu_trace *t = NULL;
    int err = tfb_gpu_trace_load_files_ctl(j->files, j->n, &j->ctl, &t);
    if (!err && t->files_read == 0) {
        tfb_gpu_trace_free(t);
        t = NULL;
    }
    char *msg = NULL;
    if (err) {
        if (!j->ctl.error[0])
            snprintf(j->ctl.error, sizeof j->ctl.error, "%s",
                     tfb_strerror(err));
        msg = strdup(j->ctl.error);
    }
    tfb_gpu_trace *old = NULL;
    pthread_mutex_lock(&g_cache_mu);
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        cache_entry *e = &g_cache[i];
        if (e->loading != j)
            continue;
        old = e->trace;
        free(e->sig);
        free(e->error);
        e->sig = j->sig;
        j->sig = NULL;
        e->trace = t;
        e->error = msg;
        e->state = err ? TFB_GPU_FAILED : t ? TFB_GPU_READY : TFB_GPU_NONE;
        e->filled = 1;
        e->loading = NULL;
        t = NULL;
        msg = NULL;
        break;
    }
    int last = old && --old->refs == 0;
    pthread_cond_broadcast(g_cache_cv_get());
    pthread_mutex_unlock(&g_cache_mu);
    if (last)
        tfb_gpu_trace_free(old);
    tfb_gpu_trace_free(t); /* no entry took it (cannot happen) */
    free(msg);
    job_free(j);
    return NULL;
}

/* Starts the load of e's run (lock held). Takes files; 0 or TFB_ENOMEM. */
static int start_load(cache_entry *e, char **files, size_t n,
                      const char *sig)
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
        job_free(j);
        return TFB_ENOMEM;
    }
    return 0;
}

/* The answer of a finished entry (lock held). */
static void answer(cache_entry *e, tfb_gpu_trace **out, tfb_gpu_status *st)
{
    st->state = e->state;
    st->progress = 1.0;
    if (e->state == TFB_GPU_READY) {
        e->trace->refs++;
        *out = e->trace;
    } else if (e->state == TFB_GPU_FAILED) {
        snprintf(st->error, sizeof st->error, "%s",
                 e->error ? e->error : "the trace could not be read");
    }
    e->used = ++g_clock;
}


/* wait_ms < 0: until the load of the current files ended. */
int tfb_gpu_trace_get(tfb_store *store, tfb_run *r, int wait_ms,
                      tfb_gpu_trace **out, tfb_gpu_status *st)
{
    if (!store || !r || !out || !st)
        return TFB_EINVAL;
    *out = NULL;
    memset(st, 0, sizeof *st);
    char **files = NULL;
    size_t n = 0;
    int err = tfb_run_trace_files(r, &files, &n);
    if (err)
        return err;
    if (n == 0) {
        st->state = TFB_GPU_NONE;
        tfb_strv_free(files, n);
        return 0;
    }
    char *sig = tfb_gpu_files_signature(files, n);
    if (!sig) {
        tfb_strv_free(files, n);
        return TFB_ENOMEM;
    }
    struct timespec until;
    if (wait_ms > 0)
        tfb_deadline_after_ms(&until, (unsigned)wait_ms);
    tfb_gpu_trace *evicted = NULL;
    pthread_mutex_lock(&g_cache_mu);
    cache_entry *e = NULL, *victim = NULL;
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        cache_entry *c = &g_cache[i];
        if (c->store == store && c->run == r) {
            e = c;
            break;
        }
        if (!c->loading && (!victim || c->used < victim->used))
            victim = c;
    }
    if (!e) {
        if (!victim) {
            pthread_mutex_unlock(&g_cache_mu);
            free(sig);
            tfb_strv_free(files, n);
            st->state = TFB_GPU_FAILED;
            snprintf(st->error, sizeof st->error,
                     "too many GPU traces are loading at once; try again");
            return 0;
        }
        /* Evict: the trace lives on while requests hold it (freed after
         * the unlock when this was its last reference). */
        e = victim;
        evicted = e->trace;
        free(e->sig);
        free(e->error);
        memset(e, 0, sizeof *e);
        e->store = store;
        e->run = r;
    }
    e->used = ++g_clock;
    for (int round = 0;; round++) {
        if (e->filled && strcmp(e->sig, sig) == 0) {
            answer(e, out, st);
            break;
        }
        if (!e->loading) {
            if (round >= 2 && e->filled) {
                /* The files keep changing (a live trace): what the last
                 * load read. */
                answer(e, out, st);
                break;
            }
            err = files ? start_load(e, files, n, sig) : TFB_ENOMEM;
            if (err)
                break;
            files = NULL; /* the job has them */
            n = 0;
        }
        /* The load runs: wait for it, as long as allowed. */
        int rc = 0;
        while (e->loading && rc == 0) {
            if (wait_ms < 0)
                rc = pthread_cond_wait(g_cache_cv_get(), &g_cache_mu);
            else if (wait_ms == 0)
                rc = ETIMEDOUT;
            else
                rc = pthread_cond_timedwait(g_cache_cv_get(), &g_cache_mu, &until);
        }
        if (e->store != store || e->run != r) {
            /* Cannot happen: a loading entry is never evicted. */
            st->state = TFB_GPU_LOADING;
            break;
        }
        if (e->loading) {
            if (e->filled && e->state == TFB_GPU_READY) {
                /* A changed file is being read again: meanwhile, the
                 * trace read before. */
                answer(e, out, st);
            } else {
                st->state = TFB_GPU_LOADING;
                st->progress =
                    (double)atomic_load(&e->loading->ctl.progress_ppm) / 1e6;
            }
            break;
        }
        if (files == NULL && strcmp(e->sig, sig) != 0 && wait_ms >= 0) {
            /* This request's load ended but the files changed since:
             * answer it; the next request reads them again. */
            answer(e, out, st);
            break;
        }
    }
    int last = evicted && --evicted->refs == 0;
    pthread_mutex_unlock(&g_cache_mu);
    if (last)
        tfb_gpu_trace_free(evicted);
    free(sig);
    tfb_strv_free(files, n);
    return err;
}

int tfb_gpu_trace_of_run_err(tfb_store *store, tfb_run *r,
                             tfb_gpu_trace **out, char *errbuf,
                             size_t errcap)
{
    if (!out)
        return TFB_EINVAL;
    tfb_gpu_status st;
    int err = tfb_gpu_trace_get(store, r, -1, out, &st);
    if (err)
        return err;
    if (st.state == TFB_GPU_FAILED) {
        if (errbuf && errcap)
            snprintf(errbuf, errcap, "%s", st.error);
        return TFB_ECORRUPT;
    }
    return 0;
}

int tfb_gpu_trace_of_run(tfb_store *store, tfb_run *r, tfb_gpu_trace **out)
{
    return tfb_gpu_trace_of_run_err(store, r, out, NULL, 0);
}
