/*
 * loader_split.h - a second thread for one loader worker: the worker
 * frames, checks and decodes a file's records and looks up each value's
 * series; its helper appends the scalar points to their series (the
 * store's block encoding, the larger half of a point's cost). Internal to
 * server/store/ (loader.c); see server/API.md, "Loading and reloading".
 *
 * Used when a pass has fewer runs than loader threads (one huge run, a
 * few large ones), or when a thread ran out of runs while another still
 * reads (one large run among small ones): the spare threads become
 * helpers, so one run's file is read by two cores instead of one.
 *
 * Order and semantics are those of loading on one thread: points reach
 * the helper in batches, in the order they were read, and the helper
 * appends each batch in order before it takes the next; a series gets
 * its scalar points from the helper only (loader.c routes every scalar
 * append of the worker through it), so each series still has one writer.
 * A generation bump (tfb_run_points_published, every 65,536 events) is
 * queued behind the points like a point (tfb_loader_split_publish): the
 * helper makes it once they are appended, while the worker reads on. The
 * worker drains (tfb_loader_split_drain) before anything else that must
 * see the points appended: a reset of the run, the end of a file.
 *
 * Thread-safety: one worker thread calls push/publish/drain/stop on its
 * own helper; the helper thread appends, adds to the points counter
 * given at start (atomically) and bumps run generations (an atomic).
 */
#ifndef TFB_SERVER_LOADER_SPLIT_H
#define TFB_SERVER_LOADER_SPLIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "store/store.h"

typedef struct tfb_loader_split tfb_loader_split;

/* Starts the helper thread; published points (tfb_loader_split_publish)
 * are added to *points, which must outlive it. 0, or TFB_ENOMEM (no
 * thread or memory: the caller appends by itself). */
int tfb_loader_split_start(tfb_loader_split **out,
                           atomic_uint_fast64_t *points);
/* One queued point, as the helper appends it; s NULL: a publish mark. */
typedef struct tfb_split_point {
    tfb_series *s;
    int64_t step; /* a mark: the points it publishes */
    union {
        struct {
            double wall;
            double value;
        };
        tfb_run *run; /* a mark's */
    };
} tfb_split_point;

/* The worker's end of the batch it fills, the first member of a
 * tfb_loader_split: a push is inlined into the worker's read loop (a call
 * a point was 5 % of the worker's instructions on one huge run). Only the
 * worker touches it; the helper never reads it. */
typedef struct tfb_loader_split_fill {
    tfb_split_point *at, *end;
} tfb_loader_split_fill;

/* For the inline push and publish: hands the worker's batch over (full,
 * or ending with a publish mark), blocking only while the next batch of
 * the ring is still the helper's. */
void tfb_loader_split_full(tfb_loader_split *sp);

/* Queues one scalar point for s (appended later, in queue order). Blocks
 * only while every batch of the ring is full (the helper is behind).
 * Returns 0: a point the store refuses is counted by the next publish or
 * drain. */
static inline int tfb_loader_split_push(tfb_loader_split *sp, tfb_series *s,
                                        int64_t step, double wall,
                                        double value)
{
    tfb_loader_split_fill *f = (tfb_loader_split_fill *)(void *)sp;
    tfb_split_point *p = f->at++;
    p->s = s;
    p->step = step;
    p->wall = wall;
    p->value = value;
    if (f->at == f->end)
        tfb_loader_split_full(sp);
    return 0;
}

/* Ends a batch of the run's points (store.h, tfb_run_points_published)
 * without waiting: once every point pushed so far is appended, the helper
 * adds `points` (the batch's, as the worker counted them, less those the
 * store refused since the last publish or drain) to the counter given at
 * start and, when that is not 0, bumps run's generation. The batch is
 * handed over at once, so the bump does not wait for more points. A
 * drain here idled both threads at each of a huge file's 65,536-event
 * batches. */
static inline void tfb_loader_split_publish(tfb_loader_split *sp,
                                            tfb_run *run, uint64_t points)
{
    tfb_loader_split_fill *f = (tfb_loader_split_fill *)(void *)sp;
    tfb_split_point *p = f->at++;
    p->s = NULL;
    p->step = (int64_t)points;
    p->run = run;
    tfb_loader_split_full(sp); /* now: not after the next batch's points */
}

/* Hands the queued points over and waits until every point pushed so far
 * is appended (and every publish made). Returns how many points pushed
 * since the last publish the store refused (out of memory), to take from
 * the points counted at push. */
uint64_t tfb_loader_split_drain(tfb_loader_split *sp);
/* Drains, ends the thread and frees. NULL-safe. */
void tfb_loader_split_stop(tfb_loader_split *sp);

#endif
