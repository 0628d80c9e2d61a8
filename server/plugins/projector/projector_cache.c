/*
 * projector_cache.c - the parsed-tensor cache (projector_cache.h): a
 * short list under one mutex (at most TFB_PROJECTOR_CACHE_ENTRIES), and
 * a per-entry mutex so one PCA does not hold the whole cache.
 */
#include "plugins/projector/projector_cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "tfboard.h"

struct tfb_projector_entry {
    char *key;
    tfb_projector_file id;
    tfb_projector_tensor t;
    size_t bytes;
    int refs;       /* holders, the cache's own included while listed */
    int listed;
    uint64_t used;  /* LRU clock */
    pthread_mutex_t pca_lock;
    int pca_done, pca_rc;
    tfb_projector_pca pca;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static tfb_projector_entry *entries[TFB_PROJECTOR_CACHE_ENTRIES];
static size_t n_entries, cache_bytes;
static uint64_t clock_now;

static void entry_free(tfb_projector_entry *e)
{
    free(e->key);
    tfb_projector_tensor_free(&e->t);
    tfb_projector_pca_free(&e->pca);
    pthread_mutex_destroy(&e->pca_lock);
    free(e);
}

static int same_id(const tfb_projector_file *a, const tfb_projector_file *b)
{
    return a->size == b->size && a->mtime_ns == b->mtime_ns &&
           a->ino == b->ino && a->dev == b->dev;
}

/* Unlists entry i (cache_lock held); frees it when nobody holds it. */
static void unlist(size_t i)
{
    tfb_projector_entry *e = entries[i];
    entries[i] = entries[--n_entries];
    cache_bytes -= e->bytes;
    e->listed = 0;
    if (--e->refs == 0)
        entry_free(e);
}

static tfb_projector_entry *lookup(const char *key,
                                   const tfb_projector_file *id)
{
    for (size_t i = 0; i < n_entries; i++) {
        tfb_projector_entry *e = entries[i];
        if (strcmp(e->key, key))
            continue;
        if (!same_id(&e->id, id)) { /* the file changed: read it again */
            unlist(i);
            return NULL;
        }
        e->refs++;
        e->used = ++clock_now;
        return e;
    }
    return NULL;
}

int tfb_projector_cache_get(const char *key, const tfb_projector_file *id,
                            tfb_projector_load_fn load, void *ctx,
                            tfb_projector_entry **out, char *err,
                            size_t err_len)
{
    *out = NULL;
    pthread_mutex_lock(&cache_lock);
    tfb_projector_entry *e = lookup(key, id);
    pthread_mutex_unlock(&cache_lock);
    if (e) {
        *out = e;
        return 0;
    }
    /* Loaded without the lock: a slow parse holds no other request. Two
     * requests may both load; the second to finish keeps the first's. */
    e = calloc(1, sizeof *e);
    if (!e)
        return TFB_ENOMEM;
    e->key = tfb_strdup(key);
    if (!e->key) {
        free(e);
        return TFB_ENOMEM;
    }
    pthread_mutex_init(&e->pca_lock, NULL);
    int rc = load(ctx, &e->t, err, err_len);
    if (rc < 0) {
        entry_free(e);
        return rc;
    }
    e->id = *id;
    e->bytes = (size_t)e->t.rows * e->t.cols * sizeof(float);
    e->refs = 1;
    pthread_mutex_lock(&cache_lock);
    tfb_projector_entry *other = lookup(key, id);
    if (other) {
        pthread_mutex_unlock(&cache_lock);
        entry_free(e);
        *out = other;
        return 0;
    }
    /* Make room: least recently used entries nobody holds go first. */
    while (n_entries &&
           (n_entries >= TFB_PROJECTOR_CACHE_ENTRIES ||
            cache_bytes + e->bytes > TFB_PROJECTOR_CACHE_BYTES)) {
        size_t victim = SIZE_MAX;
        for (size_t i = 0; i < n_entries; i++)
            if (entries[i]->refs == 1 &&
                (victim == SIZE_MAX || entries[i]->used < entries[victim]->used))
                victim = i;
        if (victim == SIZE_MAX)
            break;
        unlist(victim);
    }
    if (n_entries < TFB_PROJECTOR_CACHE_ENTRIES &&
        cache_bytes + e->bytes <= TFB_PROJECTOR_CACHE_BYTES) {
        entries[n_entries++] = e;
        cache_bytes += e->bytes;
        e->listed = 1;
        e->refs++;
        e->used = ++clock_now;
    }
    /* else: served to this caller only, freed on release */
    pthread_mutex_unlock(&cache_lock);
    *out = e;
    return 0;
}

const tfb_projector_tensor *tfb_projector_entry_tensor(
    const tfb_projector_entry *e)
{
    return &e->t;
}

int tfb_projector_entry_pca(tfb_projector_entry *e,
                            const tfb_projector_pca **out)
{
    pthread_mutex_lock(&e->pca_lock);
    if (!e->pca_done) {
        e->pca_rc = tfb_projector_pca_run(e->t.data, e->t.rows, e->t.cols,
                                          TFB_PROJECTOR_PCA_COMPONENTS,
                                          &e->pca);
        /* Out of memory may pass: try again next time. */
        e->pca_done = e->pca_rc != TFB_ENOMEM;
    }
    int rc = e->pca_rc;
    pthread_mutex_unlock(&e->pca_lock);
    *out = rc == 0 ? &e->pca : NULL;
    return rc;
}

void tfb_projector_entry_release(tfb_projector_entry *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&cache_lock);
    int last = --e->refs == 0;
    pthread_mutex_unlock(&cache_lock);
    if (last)
        entry_free(e);
}
