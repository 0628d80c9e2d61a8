/*
 * trace_cache.c - the one per-run cache of the trace layer: for each run,
 * its GPU trace (trace_load.c), its memory events (trace_memory.c) and
 * its host side (trace_host.c), each loaded in the background and kept
 * until one of the run's trace files changes. Every dashboard that reads
 * traces (gpu, memory, ranks, pipeline, compare) and the report go
 * through it.
 *
 * A run's entry holds one part per kind of data (PART_TRACE, PART_MEMORY,
 * PART_HOST). A part is loaded on the first request that asks for it,
 * on its own (detached) thread, never under the cache lock: the lock only
 * guards the table of entries and the reference counts, so a slow or
 * hostile file delays nobody but the requests of its own run, and those
 * answer "loading" (with progress) instead of waiting. A load ends within
 * its budgets (rows, seconds: tfb_trace_load_limits), with the data or with
 * an error message that the run's requests then answer.
 *
 * The memory part needs the run's trace (kernels and steps around the
 * allocations): its caller hands the trace it got from the trace part, so
 * the two loads of a run never run at once for one request. A request for
 * the host part waits for its load (the host route asks once the run's
 * trace is ready, as it always did), with the requests for the same files
 * that arrive meanwhile: they share the one load.
 */
#include "base/deadline.h"
#include "trace/trace_internal.h"
#include "trace/trace_cachedir.h"
#include "trace/trace_file.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_SLOTS 64

enum { PART_TRACE = 0, PART_MEMORY, PART_HOST, NPARTS };

/* A load in progress: owned by its thread; the part points to it while it
 * runs (for the progress figure). */
typedef struct job {
    tfb_trace_load_ctl ctl;
    int part;
    char **files;
    size_t n;
    char *sig;
    tfb_trace *trace; /* PART_MEMORY: the job's reference, or NULL */
    tfb_trace_colcache_key *ck; /* PART_TRACE: where a built trace is cached */
} job;

/* One kind of data of a run. */
typedef struct part {
    int filled;          /* a load finished: state, sig, data/error */
    tfb_trace_state state; /* READY, FAILED or NONE */
    char *sig;           /* the files that the finished load read */
    void *data;          /* READY: the cache's reference */
    char *error;         /* FAILED */
    job *loading;        /* a load of this part is running */
} part;

typedef struct cache_entry {
    const tfb_store *store;
    const tfb_run *run;
    part parts[NPARTS];
    uint64_t used;
} cache_entry;

/* What differs between the kinds of data: how a job loads it, how it is
 * freed and counted, and the messages. */
typedef struct part_kind {
    /* Runs on the job's thread: 0 and *out (NULL: the run has none of
     * it), or an error (j->ctl.error says why). */
    int (*load)(job *j, void **out);
    void (*free)(void *data);
    int *(*refs)(void *data);
    const char *busy;    /* no slot is free */
    const char *failed;  /* a failure without a message */
} part_kind;

static int load_trace(job *j, void **out)
{
    tfb_trace *t = NULL;
    int err =
        tfb_trace_load_files_keyed(j->files, j->n, &j->ctl, &t, &j->ck);
    if (!err && t->files_read == 0) {
        tfb_trace_free(t);
        t = NULL;
    }
    *out = t;
    return err;
}

static int load_memory(job *j, void **out)
{
    tfb_trace_memory *m = NULL;
    /* read from the sources: copies of a bucket's objects are fetched
     * now (the trace part may have come from a cache without them) */
    int err = tfb_trace_files_fetch(j->files, j->n, j->ctl.error,
                                    sizeof j->ctl.error);
    if (!err)
        err = tfb_trace_memory_load_files(j->files, j->n, j->trace,
                                          &j->ctl, &m);
    if (m)
        m->refs = 1;
    *out = m;
    return err;
}

static int load_host(job *j, void **out)
{
    tfb_trace_host *h = NULL;
    int err = tfb_trace_files_fetch(j->files, j->n, j->ctl.error,
                                    sizeof j->ctl.error);
    if (!err)
        err = tfb_trace_host_load_files(j->files, j->n, &h, j->ctl.error,
                                        sizeof j->ctl.error);
    *out = h;
    return err;
}

static void free_trace(void *d)
{
    tfb_trace_free(d);
}

static void free_memory(void *d)
{
    tfb_trace_memory_free(d);
}

static void free_host(void *d)
{
    tfb_trace_host_free(d);
}

static int *refs_host(void *d)
{
    return &((tfb_trace_host *)d)->refs;
}

static int *refs_trace(void *d)
{
    return &((tfb_trace *)d)->refs;
}

static int *refs_memory(void *d)
{
    return &((tfb_trace_memory *)d)->refs;
}

static const part_kind k_kinds[NPARTS] = {
    [PART_TRACE] = {load_trace, free_trace, refs_trace,
                    "too many GPU traces are loading at once; try again",
                    "the trace could not be read"},
    [PART_MEMORY] = {load_memory, free_memory, refs_memory,
                     "too many runs' memory events are loading at once; "
                     "try again",
                     "the memory events could not be read"},
    [PART_HOST] = {load_host, free_host, refs_host,
                   "too many runs' host traces are loading at once; try "
                   "again",
                   "the host trace could not be read"},
};

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

static cache_entry g_cache[CACHE_SLOTS];
static uint64_t g_clock;
/* Load threads alive (lock held), until the last thing each does: the
 * server's stop waits for them (tfb_trace_loads_stop). */
static int g_live;

/* Drops one reference of data of kind k (lock held); 1 when it was the
 * last (the caller frees it after the unlock). */
static int unref(int k, void *data)
{
    return data && --*k_kinds[k].refs(data) == 0;
}

static void release(int k, void *data)
{
    if (!data)
        return;
    pthread_mutex_lock(&g_mu);
    int last = unref(k, data);
    pthread_mutex_unlock(&g_mu);
    if (last)
        k_kinds[k].free(data);
}

void tfb_trace_release(tfb_trace *t)
{
    release(PART_TRACE, t);
}

void tfb_trace_memory_release(tfb_trace_memory *m)
{
    release(PART_MEMORY, m);
}

void tfb_trace_host_release(tfb_trace_host *h)
{
    release(PART_HOST, h);
}

static void job_free(job *j)
{
    if (!j)
        return;
    tfb_strv_free(j->files, j->n);
    tfb_trace_release(j->trace);
    tfb_trace_colcache_key_free(j->ck);
    free(j->sig);
    free(j);
}

/* After a run's first load, off the request path (requests already have
 * the trace): its columnar cache file is written, then mapped back in its
 * place, so that the run takes as little memory as after a restart.
 * Releases the caller's reference to t. */
static void cache_trace(tfb_trace *t, tfb_trace_colcache_key *ck,
                        uint64_t rows)
{
    tfb_trace *m = NULL;
    double w0 = tfb_trace_clock_wall(), c0 = tfb_trace_clock_thread();
    int saved = tfb_trace_colcache_save(ck, t, rows);
    tfb_trace_load_report_line("cache\twritten\t%.3f\t%.3f\t%d\n",
                               tfb_trace_clock_wall() - w0,
                               tfb_trace_clock_thread() - c0, saved);
    if (saved == 0 && tfb_trace_colcache_map(ck, &m) == 0) {
        pthread_mutex_lock(&g_mu);
        for (size_t i = 0; i < CACHE_SLOTS && m; i++) {
            part *p = &g_cache[i].parts[PART_TRACE];
            if (p->data == t) {
                p->data = m; /* the entry's reference moves */
                t->refs--;
                m = NULL;
            }
        }
        pthread_mutex_unlock(&g_mu);
        tfb_trace_free(m); /* evicted meanwhile: not needed */
    }
    tfb_trace_colcache_key_free(ck);
    tfb_trace_release(t);
}

static void *load_thread(void *arg)
{
    job *j = arg;
    const part_kind *k = &k_kinds[j->part];
    void *data = NULL;
    int err = k->load(j, &data);
    /* The memory load copied what it needs of the trace. */
    tfb_trace_release(j->trace);
    j->trace = NULL;
    char *msg = NULL;
    if (err)
        msg = strdup(j->ctl.error[0] ? j->ctl.error : tfb_strerror(err));
    /* A built trace (not one mapped from the columnar cache) is cached
     * below, under a reference of this thread's, taken before anyone else
     * can see it. */
    tfb_trace *keep =
        j->part == PART_TRACE && data && j->ck ? data : NULL;
    tfb_trace_colcache_key *ck = keep ? j->ck : NULL;
    uint64_t rows = j->ctl.rows;
    if (keep) {
        keep->refs++;
        j->ck = NULL;
    }
    void *old = NULL;
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        part *p = &g_cache[i].parts[j->part];
        if (p->loading != j)
            continue;
        old = p->data;
        free(p->sig);
        free(p->error);
        p->sig = j->sig;
        j->sig = NULL;
        p->data = data;
        p->error = msg;
        p->state = err    ? TFB_TRACE_FAILED
                   : data ? TFB_TRACE_READY
                          : TFB_TRACE_NONE;
        p->filled = 1;
        p->loading = NULL;
        data = NULL;
        msg = NULL;
        break;
    }
    int last = unref(j->part, old);
    pthread_cond_broadcast(g_cv_get());
    pthread_mutex_unlock(&g_mu);
    if (last)
        k->free(old);
    if (data) {
        k->free(data); /* no entry took it (cannot happen) */
        keep = NULL;
    }
    free(msg);
    job_free(j);
    if (keep && !tfb_trace_load_stopping())
        cache_trace(keep, ck, rows);
    else {
        tfb_trace_colcache_key_free(ck);
        tfb_trace_release(keep);
    }
    pthread_mutex_lock(&g_mu);
    g_live--;
    pthread_cond_broadcast(g_cv_get());
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* Starts the load of part k of e's run (lock held). Takes files and the
 * trace on success; 0 or TFB_ENOMEM. */
static int start_load(cache_entry *e, int k, char **files, size_t n,
                      const char *sig, tfb_trace *trace)
{
    if (tfb_trace_load_stopping())
        return TFB_ESTATE;
    job *j = calloc(1, sizeof *j);
    if (!j)
        return TFB_ENOMEM;
    tfb_trace_load_ctl_init(&j->ctl, n);
    j->part = k;
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
    e->parts[k].loading = j;
    int rc = pthread_create(&th, &at, load_thread, j);
    pthread_attr_destroy(&at);
    if (rc == 0)
        g_live++;
    if (rc != 0) {
        e->parts[k].loading = NULL;
        j->files = NULL;
        j->n = 0;
        j->trace = NULL;
        job_free(j);
        return TFB_ENOMEM;
    }
    return 0;
}

/* The answer of a finished part (lock held). */
static void answer(cache_entry *e, int k, void **out, tfb_trace_status *st)
{
    part *p = &e->parts[k];
    st->state = p->state;
    st->progress = 1.0;
    if (p->state == TFB_TRACE_READY) {
        ++*k_kinds[k].refs(p->data);
        *out = p->data;
    } else if (p->state == TFB_TRACE_FAILED) {
        snprintf(st->error, sizeof st->error, "%s",
                 p->error ? p->error : k_kinds[k].failed);
    }
    e->used = ++g_clock;
}

static int entry_loading(const cache_entry *e)
{
    for (int k = 0; k < NPARTS; k++)
        if (e->parts[k].loading)
            return 1;
    return 0;
}

/* The entry of (store, r), made in the least recently used slot that
 * loads nothing when there is none (lock held); NULL when every slot
 * loads. An evicted entry's data goes to evicted[] (the caller drops
 * those references with unlock_and_free: the data lives on while
 * requests hold it). */
static cache_entry *entry_of(const tfb_store *store, const tfb_run *r,
                             void *evicted[NPARTS])
{
    cache_entry *victim = NULL;
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        cache_entry *c = &g_cache[i];
        if (c->store == store && c->run == r)
            return c;
        if (!entry_loading(c) && (!victim || c->used < victim->used))
            victim = c;
    }
    if (!victim)
        return NULL;
    for (int q = 0; q < NPARTS; q++) {
        evicted[q] = victim->parts[q].data;
        free(victim->parts[q].sig);
        free(victim->parts[q].error);
    }
    memset(victim, 0, sizeof *victim);
    victim->store = store;
    victim->run = r;
    return victim;
}

/* Unlocks, then frees what evicted[] held the last reference to. */
static void unlock_and_free(void *evicted[NPARTS])
{
    int last[NPARTS];
    for (int q = 0; q < NPARTS; q++)
        last[q] = unref(q, evicted[q]);
    pthread_mutex_unlock(&g_mu);
    for (int q = 0; q < NPARTS; q++)
        if (last[q])
            k_kinds[q].free(evicted[q]);
}

/* Part k of run r (see tfb_trace_get). trace: PART_MEMORY's input,
 * taken in all cases. wait_ms < 0: until the load of the current files
 * ended. */
static int get(tfb_store *store, tfb_run *r, int k, tfb_trace *trace,
               int wait_ms, void **out, tfb_trace_status *st)
{
    if (!store || !r || !out || !st) {
        tfb_trace_release(trace);
        return TFB_EINVAL;
    }
    *out = NULL;
    memset(st, 0, sizeof *st);
    char **files = NULL;
    size_t n = 0;
    int err = tfb_run_trace_files(r, &files, &n);
    if (err || n == 0) {
        st->state = TFB_TRACE_NONE;
        tfb_strv_free(files, n);
        tfb_trace_release(trace);
        return err;
    }
    char *sig = tfb_trace_files_signature(files, n);
    if (!sig) {
        tfb_strv_free(files, n);
        tfb_trace_release(trace);
        return TFB_ENOMEM;
    }
    struct timespec until;
    if (wait_ms > 0)
        tfb_deadline_after_ms(&until, (unsigned)wait_ms);
    void *evicted[NPARTS] = {0};
    pthread_mutex_lock(&g_mu);
    cache_entry *e = entry_of(store, r, evicted);
    if (!e) {
        st->state = TFB_TRACE_FAILED;
        snprintf(st->error, sizeof st->error, "%s", k_kinds[k].busy);
        goto out;
    }
    part *p = &e->parts[k];
    e->used = ++g_clock;
    for (int round = 0;; round++) {
        if (p->filled && strcmp(p->sig, sig) == 0) {
            answer(e, k, out, st);
            break;
        }
        if (!p->loading) {
            if (files == NULL || (round >= 2 && p->filled)) {
                /* This request's load ended but the files changed since
                 * (the next request reads them again), or the files keep
                 * changing (a live trace): what the last load read. */
                answer(e, k, out, st);
                break;
            }
            err = start_load(e, k, files, n, sig, trace);
            if (err)
                break;
            files = NULL; /* the job has them */
            n = 0;
            trace = NULL;
        }
        /* The load runs: wait for it, as long as allowed. */
        int rc = 0;
        while (p->loading && rc == 0) {
            if (wait_ms < 0)
                rc = pthread_cond_wait(g_cv_get(), &g_mu);
            else if (wait_ms == 0)
                rc = ETIMEDOUT;
            else
                rc = pthread_cond_timedwait(g_cv_get(), &g_mu, &until);
        }
        if (p->loading) {
            if (p->filled && p->state == TFB_TRACE_READY) {
                /* A changed file is being read again: meanwhile, what was
                 * read before. */
                answer(e, k, out, st);
            } else {
                st->state = TFB_TRACE_LOADING;
                st->progress =
                    (double)atomic_load(&p->loading->ctl.progress_ppm) / 1e6;
            }
            break;
        }
    }
out:
    unlock_and_free(evicted);
    free(sig);
    tfb_strv_free(files, n);
    tfb_trace_release(trace);
    return err;
}

int tfb_trace_get(tfb_store *store, tfb_run *r, int wait_ms, tfb_trace **out,
                  tfb_trace_status *st)
{
    if (!out)
        return TFB_EINVAL;
    void *d = NULL;
    int err = get(store, r, PART_TRACE, NULL, wait_ms, &d, st);
    *out = d;
    return err;
}

int tfb_trace_memory_get(tfb_store *store, tfb_run *r, tfb_trace **trace,
                         int wait_ms, tfb_trace_memory **out,
                         tfb_trace_status *st)
{
    tfb_trace *tr = trace ? *trace : NULL;
    if (trace)
        *trace = NULL;
    if (!out) {
        tfb_trace_release(tr);
        return TFB_EINVAL;
    }
    void *d = NULL;
    int err = get(store, r, PART_MEMORY, tr, wait_ms, &d, st);
    *out = d;
    return err;
}

/* Part k of run r once its load of the current files ended: 0 (*out NULL
 * when the run has none), or TFB_ECORRUPT and the message in errbuf when
 * the load failed. */
static int get_loaded(tfb_store *store, tfb_run *r, int k, void **out,
                      char *errbuf, size_t errcap)
{
    if (errbuf && errcap)
        errbuf[0] = '\0';
    tfb_trace_status st;
    int err = get(store, r, k, NULL, -1, out, &st);
    if (err)
        return err;
    if (st.state == TFB_TRACE_FAILED) {
        if (errbuf && errcap)
            snprintf(errbuf, errcap, "%s", st.error);
        return TFB_ECORRUPT;
    }
    return 0;
}

int tfb_trace_of_run_err(tfb_store *store, tfb_run *r, tfb_trace **out,
                         char *errbuf, size_t errcap)
{
    if (!out)
        return TFB_EINVAL;
    void *d = NULL;
    int err = get_loaded(store, r, PART_TRACE, &d, errbuf, errcap);
    *out = d;
    return err;
}

int tfb_trace_host_get(tfb_store *store, tfb_run *r, tfb_trace_host **out,
                       char *err, size_t errcap)
{
    if (!out)
        return TFB_EINVAL;
    void *d = NULL;
    int rc = get_loaded(store, r, PART_HOST, &d, err, errcap);
    *out = d;
    return rc;
}

int tfb_trace_loads_stop(int wait_ms)
{
    tfb_trace_load_stop_all();
    struct timespec until;
    tfb_deadline_after_ms(&until, wait_ms > 0 ? (unsigned)wait_ms : 0);
    pthread_mutex_lock(&g_mu);
    while (g_live > 0 &&
           pthread_cond_timedwait(g_cv_get(), &g_mu, &until) == 0)
        ;
    int left = g_live;
    pthread_mutex_unlock(&g_mu);
    return left;
}
