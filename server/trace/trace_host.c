/*
 * trace_host.c - the host side of a run's traces (trace_host.h): one load
 * of a run's files (each to its host loader, into one builder, under the
 * load budgets), the small cache of loaded host traces by the files'
 * signature, and the link of each file's correlation ids to the GPU
 * trace's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_host.h"
#include "trace/trace_file.h"
#include "tfboard.h"

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int is_kineto(const char *p)
{
    return has_suffix(p, ".pt.trace.json") ||
           has_suffix(p, ".pt.trace.json.gz");
}

int tfb_host_load_files(char *const *paths, size_t n, tfb_host_trace **out,
                        char *err, size_t errcap)
{
    *out = NULL;
    if (err && errcap)
        err[0] = '\0';
    tfb_gpu_load_ctl ctl;
    tfb_gpu_load_ctl_init(&ctl, n);
    tfb_host_builder *b;
    int rc = tfb_host_builder_new(&b, &ctl);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && rc >= 0; i++) {
        tfb_host_builder_begin_file(b, i);
        rc = has_suffix(paths[i], ".sqlite") ? tfb_host_load_sqlite(b, paths[i])
             : is_kineto(paths[i])          ? tfb_host_load_kineto(b, paths[i])
                                            : 0;
        if (rc < 0 && err && errcap) {
            const char *slash = strrchr(paths[i], '/');
            if (ctl.error[0])
                snprintf(err, errcap, "%s", ctl.error);
            else
                snprintf(err, errcap, "%s: %s", slash ? slash + 1 : paths[i],
                         tfb_strerror(rc));
        }
    }
    if (rc < 0) {
        tfb_host_builder_free(b);
        return rc;
    }
    rc = tfb_host_builder_finish(b, out);
    if (rc < 0 && err && errcap)
        snprintf(err, errcap, "building the host trace: %s",
                 tfb_strerror(rc));
    return rc;
}

/* ------------------------------------------------------------------------
 * Correlation link
 * ---------------------------------------------------------------------- */
void tfb_host_link(const tfb_host_trace *h, const tfb_gpu_trace *t,
                   int64_t *bases)
{
    for (size_t f = 0; h && f < h->nfiles; f++) {
        bases[f] = -1;
        if (!t || !t->ncalls)
            continue;
        /* Each probe call votes for the offsets of the calls of t with its
         * start and end; the offset with the most votes wins (a call of
         * another file at the same times votes alone). */
        int64_t cand[TFB_HOST_PROBES * 4];
        size_t nc = 0;
        for (size_t k = 0; k < h->probes[f].n; k++) {
            const tfb_host_probe *p = &h->probes[f].v[k];
            for (size_t i = tfb_gpu_calls_from(t, p->start);
                 i < t->ncalls && t->calls[i].start == p->start &&
                 nc < sizeof cand / sizeof cand[0];
                 i++)
                if (t->calls[i].end == p->end &&
                    t->calls[i].correlation >= p->correlation)
                    cand[nc++] = t->calls[i].correlation - p->correlation;
        }
        size_t best = 0;
        for (size_t i = 0; i < nc; i++) {
            size_t votes = 0;
            for (size_t j = 0; j < nc; j++)
                votes += cand[j] == cand[i];
            if (votes > best) {
                best = votes;
                bases[f] = cand[i];
            }
        }
    }
}

int64_t tfb_host_span_correlation(const tfb_host_span *s,
                                  const int64_t *bases)
{
    if (s->kind != TFB_HOST_RUNTIME || s->correlation < 0 ||
        bases[s->file] < 0)
        return -1;
    return s->correlation + bases[s->file];
}

/* ------------------------------------------------------------------------
 * Cache: the last few runs' host traces by their files' signature (runs
 * without host events too, so their files are not opened on each
 * request). A miss reads the files on the requesting thread; requests for
 * the same files meanwhile wait for that read (a flight) instead of
 * reading them again.
 * ---------------------------------------------------------------------- */
#define CACHE_SLOTS 8

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *sig;
    tfb_host_trace *h; /* NULL: the files hold no host events */
    unsigned long used;
} cache[CACHE_SLOTS];
static unsigned long cache_clock;

void tfb_host_release(tfb_host_trace *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&cache_mu);
    int last = --h->refs == 0;
    pthread_mutex_unlock(&cache_mu);
    if (last)
        tfb_host_trace_free(h);
}

/* The cached entry of sig: 1 (and *out, referenced) when there is one.
 * cache_mu held. */
static int cache_find(const char *sig, tfb_host_trace **out)
{
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i].sig && !strcmp(cache[i].sig, sig)) {
            if (cache[i].h)
                cache[i].h->refs++;
            cache[i].used = ++cache_clock;
            *out = cache[i].h;
            return 1;
        }
    return 0;
}

/* Keeps h (may be NULL) under sig (taken), in the least recently used
 * slot; returns the trace it evicted when that was its last reference
 * (to free after unlocking), else NULL. cache_mu held. */
static tfb_host_trace *cache_put(char *sig, tfb_host_trace *h)
{
    int slot = 0;
    for (int i = 1; i < CACHE_SLOTS; i++)
        if (cache[i].used < cache[slot].used)
            slot = i;
    tfb_host_trace *old = cache[slot].h;
    free(cache[slot].sig);
    cache[slot].sig = sig;
    cache[slot].h = h;
    cache[slot].used = ++cache_clock;
    if (h)
        h->refs++; /* the cache's */
    return old && --old->refs == 0 ? old : NULL;
}

/* A load in progress: requests for the same files wait for it rather
 * than read them again (one load's memory, not one per request). */
typedef struct flight {
    struct flight *next;
    char *sig;
    int done, rc, users; /* users: the loader and the waiters */
    tfb_host_trace *h;
    char err[512];
} flight;

static pthread_cond_t flight_cv = PTHREAD_COND_INITIALIZER;
static flight *flights; /* under cache_mu */

/* The last user unlinks and frees it, and drops the flight's reference
 * to its answer: the trace to free (after unlocking) when that was the
 * last one, else NULL. cache_mu held. */
static tfb_host_trace *flight_leave(flight *f)
{
    if (--f->users)
        return NULL;
    for (flight **p = &flights; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    tfb_host_trace *h = f->h;
    free(f->sig);
    free(f);
    return h && --h->refs == 0 ? h : NULL;
}

/* Waits for the load of f (cache_mu held) and takes its answer; *dead:
 * a trace to free after unlocking (or NULL). */
static int flight_wait(flight *f, tfb_host_trace **out, char *err,
                       size_t errcap, tfb_host_trace **dead)
{
    f->users++;
    while (!f->done)
        pthread_cond_wait(&flight_cv, &cache_mu);
    int rc = f->rc;
    if (rc >= 0 && f->h) {
        f->h->refs++;
        *out = f->h;
    }
    if (rc < 0 && err && errcap)
        snprintf(err, errcap, "%s", f->err);
    *dead = flight_leave(f);
    return rc < 0 ? rc : 0;
}

int tfb_host_get(tfb_run *r, tfb_host_trace **out, char *err, size_t errcap)
{
    *out = NULL;
    if (err && errcap)
        err[0] = '\0';
    char **files;
    size_t nf;
    int rc = tfb_run_trace_files(r, &files, &nf);
    if (rc < 0)
        return rc;
    if (!nf) {
        tfb_strv_free(files, nf);
        return 0;
    }
    char *sig = tfb_gpu_files_signature(files, nf);
    if (!sig) {
        tfb_strv_free(files, nf);
        return TFB_ENOMEM;
    }
    pthread_mutex_lock(&cache_mu);
    if (cache_find(sig, out)) {
        pthread_mutex_unlock(&cache_mu);
        free(sig);
        tfb_strv_free(files, nf);
        return 0;
    }
    for (flight *f = flights; f; f = f->next)
        if (!strcmp(f->sig, sig)) {
            tfb_host_trace *dead = NULL;
            rc = flight_wait(f, out, err, errcap, &dead);
            pthread_mutex_unlock(&cache_mu);
            tfb_host_trace_free(dead);
            free(sig);
            tfb_strv_free(files, nf);
            return rc;
        }
    flight *f = calloc(1, sizeof *f);
    char *fsig = f ? strdup(sig) : NULL;
    if (!fsig) {
        pthread_mutex_unlock(&cache_mu);
        free(f);
        free(sig);
        tfb_strv_free(files, nf);
        return TFB_ENOMEM;
    }
    f->sig = fsig;
    f->users = 1;
    f->next = flights;
    flights = f;
    pthread_mutex_unlock(&cache_mu);
    /* Read outside the lock; requests for the same files wait on
     * flight_cv meanwhile. */
    tfb_host_trace *h = NULL;
    char ferr[512];
    rc = tfb_host_load_files(files, nf, &h, ferr, sizeof ferr);
    tfb_strv_free(files, nf);
    pthread_mutex_lock(&cache_mu);
    tfb_host_trace *old = NULL;
    if (rc >= 0)
        old = cache_put(sig, h); /* takes sig */
    else
        free(sig);
    snprintf(f->err, sizeof f->err, "%s", ferr);
    f->done = 1;
    f->rc = rc;
    f->h = h;
    if (h)
        h->refs++; /* the flight's: alive until its last waiter took it */
    pthread_cond_broadcast(&flight_cv);
    tfb_host_trace *dead = flight_leave(f);
    pthread_mutex_unlock(&cache_mu);
    tfb_host_trace_free(dead);
    tfb_host_trace_free(old);
    if (rc < 0 && err && errcap)
        snprintf(err, errcap, "%s", ferr);
    if (rc < 0)
        return rc;
    *out = h;
    return 0;
}
