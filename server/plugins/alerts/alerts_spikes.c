/*
 * alerts_spikes.c - loss spikes per run, detected incrementally
 * (alerts_spikes.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/alerts/alerts_spikes.h"
#include "base/vec.h"
#include "core/run_status.h"
#include "tfboard.h"

/* One detector per loss series, by series pointer (stable for the life of
 * the store). `fed` is how many points it has seen; a series that shrank
 * (its file was replaced) starts over. */
typedef struct det_entry {
    const tfb_series *s;
    size_t fed;
    tfb_spike_detector d;
    /* The precursors of spikes[0..pre.n), kept once a spike is over
     * (recovered or diverged): its window is then in the past. */
    TFB_VEC(tfb_precursors) pre;
} det_entry;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static det_entry *g_tab;
static size_t g_cap, g_n;

static size_t slot_of(const tfb_series *s, size_t cap)
{
    uintptr_t h = (uintptr_t)s;
    h ^= h >> 17;
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (cap - 1);
}

/* g_mu held. */
static det_entry *entry_of(const tfb_series *s)
{
    if ((g_n + 1) * 2 > g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 64;
        det_entry *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < g_cap; i++) {
            if (!g_tab[i].s)
                continue;
            size_t k = slot_of(g_tab[i].s, cap);
            while (t[k].s)
                k = (k + 1) & (cap - 1);
            t[k] = g_tab[i];
        }
        free(g_tab);
        g_tab = t;
        g_cap = cap;
    }
    size_t k = slot_of(s, g_cap);
    while (g_tab[k].s && g_tab[k].s != s)
        k = (k + 1) & (g_cap - 1);
    if (!g_tab[k].s) {
        g_tab[k].s = s;
        g_tab[k].fed = 0;
        tfb_spike_detector_init(&g_tab[k].d, NULL);
        g_n++;
    }
    return &g_tab[k];
}

void tfb_alert_spikes_reset(void)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_cap; i++)
        if (g_tab[i].s) {
            tfb_spike_detector_free(&g_tab[i].d);
            tfb_vec_free(&g_tab[i].pre);
        }
    free(g_tab);
    g_tab = NULL;
    g_cap = g_n = 0;
    pthread_mutex_unlock(&g_mu);
}

/* Feeds the new points of s; appends its spikes (copies) to *v. */
static int spikes_of(tfb_series *s, tfb_spike **v, size_t *n)
{
    *v = NULL;
    *n = 0;
    tfb_series_view view;
    tfb_series_read_begin(s, &view);
    pthread_mutex_lock(&g_mu);
    det_entry *e = entry_of(s);
    int rc = e ? 0 : TFB_ENOMEM;
    if (e) {
        if (view.count < e->fed) {
            tfb_spike_detector_free(&e->d);
            tfb_spike_detector_init(&e->d, NULL);
            e->fed = 0;
            e->pre.n = 0;
        }
        for (size_t i = e->fed; i < view.count && rc == 0; i++)
            rc = tfb_spike_detector_push(&e->d, view.step[i], view.value[i]);
        e->fed = view.count;
        if (rc == 0 && e->d.n_spikes) {
            *v = malloc(e->d.n_spikes * sizeof **v);
            if (*v) {
                memcpy(*v, e->d.spikes, e->d.n_spikes * sizeof **v);
                *n = e->d.n_spikes;
            } else {
                rc = TFB_ENOMEM;
            }
        }
    }
    pthread_mutex_unlock(&g_mu);
    tfb_series_read_end(s);
    return rc;
}

/* The kept precursors of spike q of s: 1 and *p filled, or 0. Takes the
 * lock; never called with a series pinned (see tfb_alert_spikes). */
static int cached_pre(const tfb_series *s, size_t q, tfb_precursors *p)
{
    int hit = 0;
    pthread_mutex_lock(&g_mu);
    det_entry *e = entry_of(s);
    if (e && q < e->pre.n) {
        *p = e->pre.v[q];
        hit = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return hit;
}

/* Keeps p as spike q's precursors when q is the next one to keep. */
static void keep_pre(const tfb_series *s, size_t q, const tfb_precursors *p)
{
    pthread_mutex_lock(&g_mu);
    det_entry *e = entry_of(s);
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
        if (!tfb_run_status_is_loss(tag))
            continue;
        tfb_spike *sp;
        size_t k;
        if ((rc = spikes_of(ser[i], &sp, &k)) < 0 || !k)
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
            if (cached_pre(ser[i], q, &a->pre))
                continue;
            rc = tfb_precursors_find(r, sp[q].step, sp[q].peak_step,
                                     TFB_PRECURSOR_K_DEFAULT, &a->pre);
            if (rc < 0)
                break;
            if (sp[q].state != TFB_SPIKE_OPEN)
                keep_pre(ser[i], q, &a->pre);
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
