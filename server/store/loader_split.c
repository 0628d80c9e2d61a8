/*
 * loader_split.c - a loader worker's helper thread: scalar points
 * appended to their series while the worker reads on. See loader_split.h.
 */
#include "store/loader_split.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/errors.h"

/* Points in one batch. Two batches alternate: the worker fills one while
 * the helper appends the other. 4,096 points (128 KiB a batch) make a
 * hand-over (a lock and a wake-up, a few microseconds) cost well under
 * 1 % of the batch's appends, and both batches stay within a core's L2
 * cache, where the helper reads what the worker just wrote
 * (server/API.md, "Loading and reloading"). */
#define SPLIT_BATCH_POINTS 4096

typedef struct split_point {
    tfb_series *s;
    int64_t step;
    double wall;
    double value;
} split_point;

struct tfb_loader_split {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t handed_cv; /* the helper waits for a batch */
    pthread_cond_t free_cv;   /* the worker waits for a batch back */
    split_point *batch[2];
    size_t n[2];
    /* Under mu: batch k belongs to the helper while handed[k]. A batch
     * not handed belongs to the worker, which fills it without the lock. */
    int handed[2];
    int cur;  /* the worker's batch */
    int quit; /* under mu */
    uint64_t refused; /* under mu: appends the store refused */
};

static void *helper_main(void *arg)
{
    tfb_loader_split *sp = arg;
    int k = 0; /* batches are handed 0, 1, 0, 1...: taken in that order */
    pthread_mutex_lock(&sp->mu);
    for (;;) {
        while (!sp->handed[k] && !sp->quit)
            pthread_cond_wait(&sp->handed_cv, &sp->mu);
        if (!sp->handed[k])
            break; /* quit, and nothing left */
        pthread_mutex_unlock(&sp->mu);
        const split_point *p = sp->batch[k];
        size_t n = sp->n[k];
        uint64_t refused = 0;
        for (size_t i = 0; i < n; i++)
            refused += tfb_series_append_scalar(p[i].s, p[i].step, p[i].wall,
                                                p[i].value) != 0;
        pthread_mutex_lock(&sp->mu);
        sp->refused += refused;
        sp->n[k] = 0;
        sp->handed[k] = 0;
        pthread_cond_broadcast(&sp->free_cv);
        k ^= 1;
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
    free(sp->batch[0]);
    free(sp->batch[1]);
    free(sp);
}

int tfb_loader_split_start(tfb_loader_split **out)
{
    tfb_loader_split *sp = calloc(1, sizeof *sp);
    if (!sp)
        return TFB_ENOMEM;
    sp->batch[0] = malloc(SPLIT_BATCH_POINTS * sizeof *sp->batch[0]);
    sp->batch[1] = malloc(SPLIT_BATCH_POINTS * sizeof *sp->batch[1]);
    if (!sp->batch[0] || !sp->batch[1]) {
        free(sp->batch[0]);
        free(sp->batch[1]);
        free(sp);
        return TFB_ENOMEM;
    }
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
    sp->handed[sp->cur] = 1;
    pthread_cond_signal(&sp->handed_cv);
    sp->cur ^= 1;
    while (sp->handed[sp->cur])
        pthread_cond_wait(&sp->free_cv, &sp->mu);
    pthread_mutex_unlock(&sp->mu);
}

int tfb_loader_split_push(tfb_loader_split *sp, tfb_series *s, int64_t step,
                          double wall, double value)
{
    int b = sp->cur;
    split_point *p = &sp->batch[b][sp->n[b]++];
    p->s = s;
    p->step = step;
    p->wall = wall;
    p->value = value;
    if (sp->n[b] == SPLIT_BATCH_POINTS)
        hand_over(sp);
    return 0;
}

uint64_t tfb_loader_split_drain(tfb_loader_split *sp)
{
    if (!sp)
        return 0;
    if (sp->n[sp->cur])
        hand_over(sp);
    pthread_mutex_lock(&sp->mu);
    while (sp->handed[0] || sp->handed[1])
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
