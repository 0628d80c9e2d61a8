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
 * The worker drains (tfb_loader_split_drain) before anything that must
 * see the points appended: a generation bump (tfb_run_points_published),
 * a reset of the run, the end of a file.
 *
 * Thread-safety: one worker thread calls push/drain/stop on its own
 * helper; the helper thread only appends.
 */
#ifndef TFB_SERVER_LOADER_SPLIT_H
#define TFB_SERVER_LOADER_SPLIT_H

#include <stdint.h>

#include "store/store.h"

typedef struct tfb_loader_split tfb_loader_split;

/* Starts the helper thread. 0, or TFB_ENOMEM (no thread or memory: the
 * caller appends by itself). */
int tfb_loader_split_start(tfb_loader_split **out);
/* Queues one scalar point for s (appended later, in queue order). Blocks
 * only while both batches are full (the helper is behind). Returns 0: a
 * point the store refuses is counted by the next drain. */
int tfb_loader_split_push(tfb_loader_split *sp, tfb_series *s, int64_t step,
                          double wall, double value);
/* Hands the queued points over and waits until every point pushed so far
 * is appended. Returns how many of them the store refused (out of
 * memory), to take from the points counted at push. */
uint64_t tfb_loader_split_drain(tfb_loader_split *sp);
/* Drains, ends the thread and frees. NULL-safe. */
void tfb_loader_split_stop(tfb_loader_split *sp);

#endif
