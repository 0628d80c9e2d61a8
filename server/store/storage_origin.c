/*
 * storage_origin.c - what each local copy of a bucket's object holds
 * (storage.h, tfb_storage_origin_*): the object's URL, ETag and size, and
 * the copy's own file identity when it was made. The trace layer keys the
 * caches it shares through a bucket by the object, never by the copy's
 * local name (which differs from server to server).
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
    tfb_storage_origin o;
} origin;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static TFB_VEC(origin) g_origins;

static origin *find(const char *local)
{
    for (size_t i = 0; i < g_origins.n; i++)
        if (strcmp(g_origins.v[i].local, local) == 0)
            return &g_origins.v[i];
    return NULL;
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
    o.copy_size = (uint64_t)st.st_size;
    o.copy_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL +
                      st.st_mtim.tv_nsec;
    o.copy_ino = (uint64_t)st.st_ino;
    o.copy_dev = (uint64_t)st.st_dev;
    pthread_mutex_lock(&g_mu);
    origin *e = find(local);
    int rc = 0;
    if (e) {
        free(e->o.url);
        e->o = o;
    } else if (tfb_vec_need(&g_origins, g_origins.n + 1) < 0 ||
               !(g_origins.v[g_origins.n].local = strdup(local))) {
        free(o.url);
        rc = TFB_ENOMEM;
    } else {
        g_origins.v[g_origins.n++].o = o;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

int tfb_storage_origin_get(const char *local, tfb_storage_origin *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&g_mu);
    origin *e = local ? find(local) : NULL;
    int rc = e ? 0 : TFB_ENOENT;
    if (e) {
        *out = e->o;
        out->url = strdup(e->o.url);
        if (!out->url)
            rc = TFB_ENOMEM;
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

void tfb_storage_origin_free(tfb_storage_origin *o)
{
    if (o) {
        free(o->url);
        o->url = NULL;
    }
}
