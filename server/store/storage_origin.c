/*
 * storage_origin.c - what each local copy of a bucket's object holds or
 * is to hold (storage.h, tfb_storage_origin_*): the object's URL, ETag
 * and size, and the copy's own file identity once it was fetched. The
 * trace layer keys the caches it shares through a bucket by the object,
 * never by the copy's local name (which differs from server to server),
 * so it needs no copy's bytes to find a cache; the copy is fetched only
 * when a reader needs those bytes (tfb_storage_copy_ready).
 *
 * One process-wide table: copies are few (a run's trace stores), so a
 * linear search is enough and costs nothing next to a trace load.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/vec.h"
#include "store/storage.h"

typedef struct origin {
    char *local;
    tfb_storage *owner; /* who fetches it (NULL: nobody, the file is all) */
    tfb_storage_origin o;
} origin;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
/* fetches in flight, so that forget waits for them (under g_mu) */
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static TFB_VEC(origin) g_origins;
typedef struct fetching {
    tfb_storage *owner;
    int n;
} fetching;
static TFB_VEC(fetching) g_fetching;

static origin *find(const char *local)
{
    for (size_t i = 0; i < g_origins.n; i++)
        if (strcmp(g_origins.v[i].local, local) == 0)
            return &g_origins.v[i];
    return NULL;
}

/* The note of local, made when there is none (lock held); NULL on ENOMEM. */
static origin *find_or_add(const char *local)
{
    origin *e = find(local);
    if (e)
        return e;
    if (tfb_vec_need(&g_origins, g_origins.n + 1) < 0)
        return NULL;
    e = &g_origins.v[g_origins.n];
    memset(e, 0, sizeof *e);
    if (!(e->local = strdup(local)))
        return NULL;
    g_origins.n++;
    return e;
}

static int same_file(const tfb_storage_origin *o, const struct stat *st)
{
    return (uint64_t)st->st_size == o->copy_size &&
           (uint64_t)st->st_ino == o->copy_ino &&
           (uint64_t)st->st_dev == o->copy_dev &&
           (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec ==
               o->copy_mtime_ns;
}

int tfb_storage_origin_note(const char *local, const char *url,
                            const char *etag, uint64_t size)
{
    struct stat st;
    if (!local || !url || !etag || stat(local, &st) != 0)
        return TFB_EINVAL;
    tfb_storage_origin o;
    memset(&o, 0, sizeof o);
    o.url = strdup(url);
    if (!o.url)
        return TFB_ENOMEM;
    snprintf(o.etag, sizeof o.etag, "%s", etag);
    o.size = size;
    o.fetched = 1;
    o.copy_size = (uint64_t)st.st_size;
    o.copy_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL +
                      st.st_mtim.tv_nsec;
    o.copy_ino = (uint64_t)st.st_ino;
    o.copy_dev = (uint64_t)st.st_dev;
    pthread_mutex_lock(&g_mu);
    origin *e = find_or_add(local);
    if (e) {
        free(e->o.url);
        e->o = o;
    } else {
        free(o.url);
    }
    pthread_mutex_unlock(&g_mu);
    return e ? 0 : TFB_ENOMEM;
}

int tfb_storage_origin_defer(const char *local, tfb_storage *owner,
                             const char *url, const char *etag,
                             uint64_t size)
{
    if (!local || !owner || !url || !etag)
        return TFB_EINVAL;
    pthread_mutex_lock(&g_mu);
    origin *e = find_or_add(local);
    int rc = e ? 0 : TFB_ENOMEM;
    if (e) {
        e->owner = owner;
        int same = e->o.url && strcmp(e->o.url, url) == 0 &&
                   strcmp(e->o.etag, etag) == 0 && e->o.size == size;
        if (!same || !e->o.fetched) {
            char *u = strdup(url);
            if (!u) {
                rc = TFB_ENOMEM;
            } else {
                free(e->o.url);
                memset(&e->o, 0, sizeof e->o);
                e->o.url = u;
                snprintf(e->o.etag, sizeof e->o.etag, "%s", etag);
                e->o.size = size;
            }
        }
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

int tfb_storage_origin_get(const char *local, tfb_storage_origin *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&g_mu);
    origin *e = local ? find(local) : NULL;
    int rc = e && e->o.url ? 0 : TFB_ENOENT;
    if (rc == 0) {
        *out = e->o;
        out->url = strdup(e->o.url);
        if (!out->url)
            rc = TFB_ENOMEM;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

static fetching *fetching_of(tfb_storage *owner)
{
    for (size_t i = 0; i < g_fetching.n; i++)
        if (g_fetching.v[i].owner == owner)
            return &g_fetching.v[i];
    return NULL;
}

int tfb_storage_copy_ready(const char *local)
{
    if (!local)
        return TFB_EINVAL;
    pthread_mutex_lock(&g_mu);
    origin *e = find(local);
    struct stat st;
    /* no note: a local file (or a copy its backend could not name), read
     * as it is */
    int ready = !e || !e->owner ||
                (e->o.fetched && stat(local, &st) == 0 &&
                 same_file(&e->o, &st));
    if (ready) {
        pthread_mutex_unlock(&g_mu);
        return 0;
    }
    tfb_storage *owner = e->owner;
    char *url = e->o.url ? strdup(e->o.url) : NULL;
    /* counted in flight under the lock, so that forget, which drops the
     * owner's notes first, waits for this call to leave the owner */
    fetching *f = url ? fetching_of(owner) : NULL;
    if (url && !f && tfb_vec_need(&g_fetching, g_fetching.n + 1) == 0) {
        f = &g_fetching.v[g_fetching.n++];
        f->owner = owner;
        f->n = 0;
    }
    if (!f) {
        pthread_mutex_unlock(&g_mu);
        free(url);
        return TFB_ENOMEM;
    }
    f->n++;
    pthread_mutex_unlock(&g_mu);
    int rc = owner->ops->copy_fetch(owner, url);
    free(url);
    pthread_mutex_lock(&g_mu);
    f = fetching_of(owner);
    if (f && --f->n == 0) {
        *f = g_fetching.v[--g_fetching.n];
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

void tfb_storage_origin_drop(const char *local)
{
    pthread_mutex_lock(&g_mu);
    origin *e = local ? find(local) : NULL;
    if (e) {
        free(e->local);
        free(e->o.url);
        *e = g_origins.v[--g_origins.n];
    }
    pthread_mutex_unlock(&g_mu);
}

void tfb_storage_origin_forget(tfb_storage *owner)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_origins.n;) {
        origin *e = &g_origins.v[i];
        if (e->owner != owner) {
            i++;
            continue;
        }
        free(e->local);
        free(e->o.url);
        *e = g_origins.v[--g_origins.n];
    }
    while (fetching_of(owner))
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
}

void tfb_storage_origin_free(tfb_storage_origin *o)
{
    if (o) {
        free(o->url);
        o->url = NULL;
    }
}
