/*
 * loader_split.c - a loader worker's helper thread: scalar points
 * appended to their series while the worker reads on. See loader_split.h.
 */
#include "store/loader_split.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/errors.h"

/* Points in one batch. The worker fills one batch while the helper
 * appends the ones handed before, taken in turn from a ring. 4,096 points
 * (128 KiB a batch) make a hand-over (a lock and, when the helper sleeps,
 * a wake-up: a few microseconds) cost well under 1 % of the batch's
 * appends. */
#define SPLIT_BATCH_POINTS 4096
/* Batches in the ring. With two, the worker waited for one back at a
 * third of the hand-overs of a one-file load, each a wake-up of the
 * helper late (~200 us here, under KVM) rather than the helper behind:
 * four let each side's pauses pass without stopping the other, and the
 * ring (512 KiB) stays within a core's L2 cache, where the helper reads
 * what the worker just wrote (server/API.md, "Loading and reloading"). */
#define SPLIT_BATCHES 4

typedef tfb_split_point split_point;

struct tfb_loader_split {
    /* First: loader_split.h's inline push fills batch[cur] through it. */
    tfb_loader_split_fill fill;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t handed_cv; /* the helper waits for a batch */
    pthread_cond_t free_cv;   /* the worker waits for a batch back */
    split_point *batch[SPLIT_BATCHES];
    size_t n[SPLIT_BATCHES]; /* a handed batch's points, set with handed[] */
    /* Under mu: batch k belongs to the helper while handed[k]. A batch
     * not handed belongs to the worker, which fills it without the lock. */
    int handed[SPLIT_BATCHES];
    int cur;  /* the worker's batch */
    int quit; /* under mu */
    /* Under mu: appends the store refused since the last publish mark
     * (or drain), carried by the helper from one batch to the next. */
    uint64_t refused;
    atomic_uint_fast64_t *points; /* where publish marks add */
};

static void *helper_main(void *arg)
{
    tfb_loader_split *sp = arg;
    int k = 0; /* batches are handed 0, 1, 2...: taken in that order */
    pthread_mutex_lock(&sp->mu);
    for (;;) {
        while (!sp->handed[k] && !sp->quit)
            pthread_cond_wait(&sp->handed_cv, &sp->mu);
        if (!sp->handed[k])
            break; /* quit, and nothing left */
        uint64_t refused = sp->refused;
        pthread_mutex_unlock(&sp->mu);
        const split_point *p = sp->batch[k];
        size_t n = sp->n[k];
        for (size_t i = 0; i < n; i++) {
            if (p[i].s) {
                refused += tfb_series_append_scalar(p[i].s, p[i].step,
                                                    p[i].wall,
                                                    p[i].value) != 0;
                continue;
            }
            /* A publish mark: every point before it is appended. */
            uint64_t pts = (uint64_t)p[i].step;
            pts = pts > refused ? pts - refused : 0;
            refused = 0;
            atomic_fetch_add(sp->points, pts);
            if (pts)
                tfb_run_points_published(p[i].run);
        }
        pthread_mutex_lock(&sp->mu);
        sp->refused = refused;
        sp->n[k] = 0;
        sp->handed[k] = 0;
        pthread_cond_broadcast(&sp->free_cv);
        k = (k + 1) % SPLIT_BATCHES;
    }
    pthread_mutex_unlock(&sp->mu);
    return NULL;
}

/* Frees sp, its thread ended or never started. */
static void destroy(tfb_loader_split *sp)
{
    pthread_mutex_destroy(&sp->mu);
    pthread_cond_destroy(&sp->handed_cv);
    pthread_cond_destroy(&sp->free_cv);
    for (int k = 0; k < SPLIT_BATCHES; k++)
        free(sp->batch[k]);
    free(sp);
}

int tfb_loader_split_start(tfb_loader_split **out,
                           atomic_uint_fast64_t *points)
{
    tfb_loader_split *sp = calloc(1, sizeof *sp);
    if (!sp)
        return TFB_ENOMEM;
    sp->points = points;
    for (int k = 0; k < SPLIT_BATCHES; k++)
        if (!(sp->batch[k] = malloc(SPLIT_BATCH_POINTS *
                                    sizeof *sp->batch[k]))) {
            for (int j = 0; j <= k; j++)
                free(sp->batch[j]);
            free(sp);
            return TFB_ENOMEM;
        }
    sp->fill.at = sp->batch[0];
    sp->fill.end = sp->batch[0] + SPLIT_BATCH_POINTS;
    pthread_mutex_init(&sp->mu, NULL);
    pthread_cond_init(&sp->handed_cv, NULL);
    pthread_cond_init(&sp->free_cv, NULL);
    if (pthread_create(&sp->thread, NULL, helper_main, sp) != 0) {
        destroy(sp);
        return TFB_ENOMEM;
    }
    *out = sp;
    return 0;
}

/* Hands the worker's batch to the helper and takes the other one, once
 * the helper gave it back. */
static void hand_over(tfb_loader_split *sp)
{
    pthread_mutex_lock(&sp->mu);
    sp->n[sp->cur] = (size_t)(sp->fill.at - sp->batch[sp->cur]);
    sp->handed[sp->cur] = 1;
    pthread_cond_signal(&sp->handed_cv);
    sp->cur = (sp->cur + 1) % SPLIT_BATCHES;
    while (sp->handed[sp->cur])
        pthread_cond_wait(&sp->free_cv, &sp->mu);
    pthread_mutex_unlock(&sp->mu);
    sp->fill.at = sp->batch[sp->cur];
    sp->fill.end = sp->batch[sp->cur] + SPLIT_BATCH_POINTS;
}

void tfb_loader_split_full(tfb_loader_split *sp)
{
    hand_over(sp);
}

uint64_t tfb_loader_split_drain(tfb_loader_split *sp)
{
    if (!sp)
        return 0;
    if (sp->fill.at != sp->batch[sp->cur])
        hand_over(sp);
    pthread_mutex_lock(&sp->mu);
    for (int k = 0; k < SPLIT_BATCHES; k++)
        while (sp->handed[k])
            pthread_cond_wait(&sp->free_cv, &sp->mu);
    uint64_t r = sp->refused;
    sp->refused = 0;
    pthread_mutex_unlock(&sp->mu);
    return r;
}

void tfb_loader_split_stop(tfb_loader_split *sp)
{
    if (!sp)
        return;
    (void)tfb_loader_split_drain(sp);
    pthread_mutex_lock(&sp->mu);
    sp->quit = 1;
    pthread_cond_signal(&sp->handed_cv);
    pthread_mutex_unlock(&sp->mu);
    pthread_join(sp->thread, NULL);
    destroy(sp);
}
