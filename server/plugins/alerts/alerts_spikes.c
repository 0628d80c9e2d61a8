/*
 * alerts_spikes.c - loss spikes per run, detected incrementally
 * (alerts_spikes.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/alerts/alerts_spikes.h"
#include "base/strtab.h"
#include "base/vec.h"
#include "core/run_status.h"
#include "tfboard.h"

/* One detector per loss series, by "run\x1ftag" (the names, not the
 * series pointer: a store destroyed and another created at the same
 * address must not inherit a detector). `fed` is how many points it has
 * seen; a series that shrank (its file was replaced) starts over. */
typedef struct det_entry {
    char *key;          /* owned; the table's key */
    size_t key_len;
    size_t fed;
    tfb_spike_detector d;
    /* The precursors of spikes[0..pre.n), kept once a spike is over
     * (recovered or diverged): its window is then in the past. */
    TFB_VEC(tfb_precursors) pre;
} det_entry;

/* Which tags are losses (the regex, once per tag name, not per series
 * and evaluation): tag copy -> LOSS or NOT_LOSS. */
#define LOSS ((void *)1)
#define NOT_LOSS ((void *)2)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_strtab g_det;            /* key -> det_entry */
static TFB_VEC(det_entry *) g_all;  /* every entry, for the reset */
static tfb_strtab g_loss;           /* tag -> LOSS / NOT_LOSS */
static TFB_VEC(char *) g_loss_keys; /* its keys */

/* g_mu held. */
static int is_loss(const char *tag)
{
    size_t n = strlen(tag);
    void *v = tfb_strtab_get(&g_loss, tag, n);
    if (v)
        return v == LOSS;
    int loss = tfb_run_status_is_loss(tag);
    char *k = malloc(n + 1);
    if (k && tfb_vec_need(&g_loss_keys, g_loss_keys.n + 1) == 0) {
        memcpy(k, tag, n + 1);
        if (tfb_strtab_put(&g_loss, k, n, loss ? LOSS : NOT_LOSS) == 0)
            g_loss_keys.v[g_loss_keys.n++] = k;
        else
            free(k);
    } else {
        free(k);
    }
    return loss;
}

/* The entry of key (created if needed); NULL on no memory. g_mu held. */
static det_entry *entry_of(const char *key, size_t len)
{
    det_entry *e = tfb_strtab_get(&g_det, key, len);
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
    e->key_len = len;
    if (tfb_strtab_put(&g_det, e->key, len, e) < 0) {
        free(e->key);
        free(e);
        return NULL;
    }
    g_all.v[g_all.n++] = e;
    tfb_spike_detector_init(&e->d, NULL);
    return e;
}

void tfb_alert_spikes_reset(void)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_all.n; i++) {
        det_entry *e = g_all.v[i];
        tfb_spike_detector_free(&e->d);
        tfb_vec_free(&e->pre);
        free(e->key);
        free(e);
    }
    tfb_vec_free(&g_all);
    tfb_strtab_free(&g_det);
    for (size_t i = 0; i < g_loss_keys.n; i++)
        free(g_loss_keys.v[i]);
    tfb_vec_free(&g_loss_keys);
    tfb_strtab_free(&g_loss);
    pthread_mutex_unlock(&g_mu);
}

/* "run\x1ftag" into buf; its length, or 0 when it does not fit. */
static size_t key_of(const tfb_series *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s\x1f%s", tfb_run_name(tfb_series_run(s)),
                     tfb_series_tag(s));
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

void tfb_alert_spikes_offer(tfb_series *s, size_t from, const int64_t *step,
                            const float *value, size_t n)
{
    char key[1024];
    size_t klen;
    pthread_mutex_lock(&g_mu);
    int loss = is_loss(tfb_series_tag(s));
    det_entry *e = loss && (klen = key_of(s, key, sizeof key))
                       ? entry_of(key, klen) : NULL;
    if (e && e->fed == from && from + n <= tfb_series_count(s)) {
        /* as spikes_of: the points count as seen even if a spike could
         * not be kept (no memory) */
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = tfb_spike_detector_push(&e->d, step[i], value[i]);
        tfb_run_status_feed(s, e->fed, step, value, n);
        e->fed += n;
    }
    pthread_mutex_unlock(&g_mu);
}

/* Feeds the new points of s (read by ranges of the store's blocks: never
 * the whole series again); copies its spikes to *v. */
static int spikes_of(tfb_series *s, const char *key, size_t klen,
                     tfb_spike **v, size_t *n)
{
    enum { CHUNK = 256 };
    int64_t step[CHUNK];
    float val[CHUNK];
    *v = NULL;
    *n = 0;
    pthread_mutex_lock(&g_mu);
    det_entry *e = entry_of(key, klen);
    int rc = e ? 0 : TFB_ENOMEM;
    if (e) {
        size_t count = tfb_series_count(s);
        if (count < e->fed) {
            tfb_spike_detector_free(&e->d);
            tfb_spike_detector_init(&e->d, NULL);
            e->fed = 0;
            e->pre.n = 0;
        }
        size_t got;
        while (rc == 0 && e->fed < count &&
               (got = tfb_series_scalar_range(s, e->fed, CHUNK, step, NULL,
                                              val, NULL)) > 0) {
            for (size_t i = 0; i < got && rc == 0; i++)
                rc = tfb_spike_detector_push(&e->d, step[i], val[i]);
            /* the status's blow-up scan need not decode them again */
            tfb_run_status_feed(s, e->fed, step, val, got);
            e->fed += got;
        }
        if (rc == 0 && e->d.spikes.n) {
            *v = malloc(e->d.spikes.n * sizeof **v);
            if (*v) {
                memcpy(*v, e->d.spikes.v, e->d.spikes.n * sizeof **v);
                *n = e->d.spikes.n;
            } else {
                rc = TFB_ENOMEM;
            }
        }
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

/* The kept precursors of spike q of s: 1 and *p filled, or 0. Takes the
 * lock; never called with a series pinned (see tfb_alert_spikes). */
static int cached_pre(const char *key, size_t klen, size_t q,
                      tfb_precursors *p)
{
    int hit = 0;
    pthread_mutex_lock(&g_mu);
    det_entry *e = entry_of(key, klen);
    if (e && q < e->pre.n) {
        *p = e->pre.v[q];
        hit = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return hit;
}

/* Keeps p as spike q's precursors when q is the next one to keep. */
static void keep_pre(const char *key, size_t klen, size_t q,
                     const tfb_precursors *p)
{
    pthread_mutex_lock(&g_mu);
    det_entry *e = entry_of(key, klen);
    /* A failed push keeps nothing: the precursors are searched again. */
    if (e && q == e->pre.n)
        (void)tfb_vec_push(&e->pre, *p);
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
        const char *tag = tfb_series_tag(ser[i]);
        pthread_mutex_lock(&g_mu);
        int loss = is_loss(tag);
        pthread_mutex_unlock(&g_mu);
        char key[1024];
        size_t klen;
        if (!loss || !(klen = key_of(ser[i], key, sizeof key)))
            continue;
        tfb_spike *sp;
        size_t k;
        if ((rc = spikes_of(ser[i], key, klen, &sp, &k)) < 0 || !k)
            continue;
        if (tfb_vec_need(&all, all.n + k) < 0) {
            free(sp);
            rc = TFB_ENOMEM;
            break;
        }
        for (size_t q = 0; q < k; q++) {
            tfb_alert_spike *a = &all.v[all.n++];
            a->run = tfb_run_name(r);
            a->tag = tag;
            a->spike = sp[q];
            /* Precursors are found outside the detectors' lock: the
             * search pins other series, and a pin may wait for the
             * loader. */
            if (cached_pre(key, klen, q, &a->pre))
                continue;
            rc = tfb_precursors_find(r, sp[q].step, sp[q].peak_step,
                                     TFB_PRECURSOR_K_DEFAULT, &a->pre);
            if (rc < 0)
                break;
            if (sp[q].state != TFB_SPIKE_OPEN)
                keep_pre(key, klen, q, &a->pre);
        }
        free(sp);
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
