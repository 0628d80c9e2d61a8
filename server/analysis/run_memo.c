/*
 * run_memo.c - the run-memo cache (run_memo.h): one table of 64 runs'
 * answers, least recently used out first, under one lock.
 */
#include "analysis/run_memo.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

#define MEMO_SLOTS 64

/* An answer: reference counted, so that a get copies it outside the lock
 * (an answer may be megabytes) while a put may replace it. */
typedef struct memo {
    int refs;
    size_t len;
    char body[];
} memo;

typedef struct slot {
    const tfb_store *store;
    const tfb_run *run;
    char *key;
    memo *m; /* the table's reference; NULL: a free slot */
    uint64_t used;
} slot;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static slot g_slots[MEMO_SLOTS];
static uint64_t g_clock;

/* Drops a reference (lock held): m when it was the last (the caller frees
 * it after the unlock), else NULL. */
static memo *unref(memo *m)
{
    return m && --m->refs == 0 ? m : NULL;
}

int tfb_run_memo_get(tfb_store *store, tfb_run *r, const char *key,
                     char **body, size_t *len)
{
    if (!store || !r || !key || !body || !len)
        return TFB_EINVAL;
    *body = NULL;
    memo *m = NULL;
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < MEMO_SLOTS && !m; i++) {
        slot *s = &g_slots[i];
        if (s->m && s->store == store && s->run == r &&
            strcmp(s->key, key) == 0) {
            m = s->m;
            m->refs++;
            s->used = ++g_clock;
        }
    }
    pthread_mutex_unlock(&g_mu);
    if (!m)
        return 0;
    char *copy = malloc(m->len ? m->len : 1);
    if (copy) {
        memcpy(copy, m->body, m->len);
        *len = m->len;
    }
    pthread_mutex_lock(&g_mu);
    memo *dead = unref(m);
    pthread_mutex_unlock(&g_mu);
    free(dead);
    if (!copy)
        return TFB_ENOMEM;
    *body = copy;
    return 1;
}

int tfb_run_memo_put(tfb_store *store, tfb_run *r, const char *key,
                     const char *body, size_t len)
{
    if (!store || !r || !key || (!body && len))
        return TFB_EINVAL;
    memo *m = malloc(sizeof *m + (len ? len : 1));
    char *k = strdup(key);
    if (!m || !k) {
        free(m);
        free(k);
        return TFB_ENOMEM;
    }
    m->refs = 1; /* the table's */
    m->len = len;
    if (len)
        memcpy(m->body, body, len);
    pthread_mutex_lock(&g_mu);
    /* The run's slot, else the least recently used (a free one first). */
    slot *s = &g_slots[0];
    for (size_t i = 0; i < MEMO_SLOTS; i++) {
        slot *c = &g_slots[i];
        if (c->m && c->store == store && c->run == r) {
            s = c;
            break;
        }
        if (c->used < s->used)
            s = c;
    }
    memo *dead = unref(s->m);
    char *old_key = s->key;
    *s = (slot){store, r, k, m, ++g_clock};
    pthread_mutex_unlock(&g_mu);
    free(dead);
    free(old_key);
    return 0;
}
