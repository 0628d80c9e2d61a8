/*
 * alerts_spikes.c - loss spikes per run with their precursors
 * (alerts_spikes.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/alerts/alerts_spikes.h"
#include "base/strtab.h"
#include "base/vec.h"
#include "analysis/loss_watch.h"
#include "tfboard.h"

/* The precursors of a series' spikes that are over (recovered or
 * diverged: their window is in the past), by "run\x1ftag" (the names,
 * not the series pointer: a store destroyed and another created at the
 * same address must not inherit them). Each is kept with its spike's
 * step, so a series that was reset (its file replaced) and spiked
 * elsewhere is searched again. */
typedef struct kept_pre {
    int64_t step;
    tfb_precursors pre;
} kept_pre;

typedef struct pre_entry {
    char *key;                /* owned; the table's key */
    TFB_VEC(kept_pre) pre;    /* spikes [0, pre.n) of the series */
} pre_entry;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_strtab g_pre;             /* key -> pre_entry */
static TFB_VEC(pre_entry *) g_all;   /* every entry, for the reset */

/* The entry of key (created if needed); NULL on no memory. g_mu held. */
static pre_entry *entry_of(const char *key, size_t len)
{
    pre_entry *e = tfb_strtab_get(&g_pre, key, len);
    if (e)
        return e;
    e = calloc(1, sizeof *e);
    if (!e || !(e->key = malloc(len + 1)) ||
        tfb_vec_need(&g_all, g_all.n + 1) < 0) {
        if (e)
            free(e->key);
        free(e);
        return NULL;
    }
    memcpy(e->key, key, len);
    e->key[len] = 0;
    if (tfb_strtab_put(&g_pre, e->key, len, e) < 0) {
        free(e->key);
        free(e);
        return NULL;
    }
    g_all.v[g_all.n++] = e;
    return e;
}

void tfb_alert_spikes_reset(void)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_all.n; i++) {
        tfb_vec_free(&g_all.v[i]->pre);
        free(g_all.v[i]->key);
        free(g_all.v[i]);
    }
    tfb_vec_free(&g_all);
    tfb_strtab_free(&g_pre);
    pthread_mutex_unlock(&g_mu);
}

/* The kept precursors of spike q (at step) of key: 1 and *p filled, or
 * 0. A kept one at another step (the series was reset) drops it and what
 * follows. */
static int cached_pre(const char *key, size_t klen, size_t q, int64_t step,
                      tfb_precursors *p)
{
    int hit = 0;
    pthread_mutex_lock(&g_mu);
    pre_entry *e = tfb_strtab_get(&g_pre, key, klen);
    if (e && q < e->pre.n) {
        if (e->pre.v[q].step == step) {
            *p = e->pre.v[q].pre;
            hit = 1;
        } else {
            e->pre.n = q;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return hit;
}

/* Keeps p as spike q's precursors when q is the next one to keep. */
static void keep_pre(const char *key, size_t klen, size_t q, int64_t step,
                     const tfb_precursors *p)
{
    pthread_mutex_lock(&g_mu);
    pre_entry *e = entry_of(key, klen);
    /* A failed push keeps nothing: the precursors are searched again. */
    if (e && q == e->pre.n)
        (void)tfb_vec_push(&e->pre, ((kept_pre){step, *p}));
    pthread_mutex_unlock(&g_mu);
}

int tfb_alert_spikes(tfb_run *r, tfb_alert_spike **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    tfb_series **ser;
    size_t ns;
    if (tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &ns) < 0)
        return TFB_ENOMEM;
    TFB_VEC(tfb_alert_spike) all = {0};
    int rc = 0;
    for (size_t i = 0; i < ns && rc == 0; i++) {
        /* The store's watch of a loss series has seen every point as it
         * loaded; other series have none. */
        tfb_loss_watch w;
        int got = tfb_series_loss_watch(ser[i], &w);
        if (got == TFB_ENOENT)
            continue;
        if ((rc = got) < 0)
            break;
        size_t k = w.det.spikes.n;
        char key[1024];
        size_t klen = k ? tfb_series_key(ser[i], key, sizeof key) : 0;
        if (k && tfb_vec_need(&all, all.n + k) < 0)
            rc = TFB_ENOMEM;
        for (size_t q = 0; q < k && rc == 0; q++) {
            const tfb_spike *sp = &w.det.spikes.v[q];
            tfb_alert_spike *a = &all.v[all.n++];
            a->run = tfb_run_name(r);
            a->tag = tfb_series_tag(ser[i]);
            a->spike = *sp;
            if (klen && cached_pre(key, klen, q, sp->step, &a->pre))
                continue;
            /* The search pins other series (and a pin may wait for the
             * loader): no lock of ours is held. */
            rc = tfb_precursors_find(r, sp->step, sp->peak_step,
                                     TFB_PRECURSOR_K_DEFAULT, &a->pre);
            if (rc == 0 && klen && sp->state != TFB_SPIKE_OPEN)
                keep_pre(key, klen, q, sp->step, &a->pre);
        }
        tfb_loss_watch_free(&w);
    }
    free(ser);
    if (rc < 0) {
        tfb_vec_free(&all);
        return rc;
    }
    *out = all.v;
    *nout = all.n;
    return 0;
}
