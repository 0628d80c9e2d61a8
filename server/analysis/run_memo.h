/*
 * run_memo.h - answers that a dashboard derived from runs, kept for the
 * next request: for answers that cost seconds to derive and are asked for
 * again and again by a page's auto-reload (the Ranks job view, filed under
 * the job's first run). Not traces: nothing here is loaded, each answer
 * is the bytes its dashboard put.
 *
 * One answer a run: key holds everything the answer depends on, a get
 * with another key misses, and a put replaces the run's previous answer.
 * Bounded: the runs least recently asked or put lose theirs first.
 *
 * Thread-safety: all functions are thread-safe (one lock around the table;
 * bodies are copied outside it).
 */
#ifndef TFB_SERVER_RUN_MEMO_H
#define TFB_SERVER_RUN_MEMO_H

#include <stddef.h>

#include "store/store.h"

/* get: 1 and *body (a malloc'd copy, *len bytes), 0 when there is none
 * for key, TFB_ENOMEM / TFB_EINVAL. put: copies key and body; 0,
 * TFB_ENOMEM, TFB_EINVAL. */
int tfb_run_memo_get(tfb_store *store, tfb_run *r, const char *key,
                     char **body, size_t *len);
int tfb_run_memo_put(tfb_store *store, tfb_run *r, const char *key,
                     const char *body, size_t len);

#endif
