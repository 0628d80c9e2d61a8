/*
 * selection.h - run selections the server holds (issue 27): a set of run
 * names sent once (PUT /data/selection) and named after by a short id, so
 * a chart of 3,000 brushed runs asks `selection=ID` instead of a 41 KB
 * run_regex (HTTP 414), and the page's URL carries the id, not the names.
 *
 * The id is a content hash: the sum (mod 2^64) over the set's distinct
 * names of tfb_hash_str(name) (base/hash.h), as 16 lowercase hex digits.
 * A sum is independent of order and of repeats, so the same set always
 * gives the same id, on the server and in the page (webui/js/core/
 * selection.js computes it too, so the URL is written at once).
 *
 * Why core: a selection names runs of the store but is no data of the
 * logdir (the store layer holds what was read from it); it is a thing of
 * the requests, which several dashboards' routes take (scalars multirun
 * and nearest, hparams groups), so it sits with the routes of no
 * dashboard. One store per process (the server is one per process).
 *
 * Bounds (server/API.md "Selections" has the reasons):
 */
#ifndef TFB_SERVER_SELECTION_H
#define TFB_SERVER_SELECTION_H

#include <stddef.h>
#include <stdint.h>

#include "core/http_api.h"

/* Selections held at once; the least recently used one goes first. */
#define TFB_SELECTION_MAX_HELD 256
/* Names in one selection (a sweep of 10,000 runs is the case at hand). */
#define TFB_SELECTION_MAX_RUNS 100000
/* The PUT body: 100,000 names of about 40 bytes, quoted and separated. */
#define TFB_SELECTION_BODY_MAX (4 * 1024 * 1024)
/* Bytes of names held by all selections together; past it the least
 * recently used ones are evicted. */
#define TFB_SELECTION_MAX_BYTES (64 * 1024 * 1024)
/* The id: 16 hex digits. */
#define TFB_SELECTION_ID_LEN 16

/* An immutable held selection: its distinct names in byte order. */
typedef struct tfb_selection tfb_selection;

/* The id of the set of names (repeats and order do not matter) into
 * id[TFB_SELECTION_ID_LEN + 1]. Pure: any thread. */
void tfb_selection_id(const char *const *names, size_t n,
                      char id[TFB_SELECTION_ID_LEN + 1]);

/* Holds the set of n names (copied; repeats dropped) and writes its id.
 * Holding a set already held refreshes its place in the LRU order.
 * Returns 0, TFB_EINVAL (more than TFB_SELECTION_MAX_RUNS names, or a set
 * whose names need more than TFB_SELECTION_MAX_BYTES) or TFB_ENOMEM.
 * Thread-safe. */
int tfb_selection_hold(const char *const *names, size_t n,
                       char id[TFB_SELECTION_ID_LEN + 1]);

/* The held selection with that id, pinned (valid until
 * tfb_selection_release, even if evicted meanwhile), or NULL when none
 * (never held, or evicted). Counts as a use. Thread-safe. */
tfb_selection *tfb_selection_get(const char *id);
void tfb_selection_release(tfb_selection *s);

size_t tfb_selection_count(const tfb_selection *s);
/* Name i (0 <= i < count), in byte order. */
const char *tfb_selection_name(const tfb_selection *s, size_t i);
/* 1 when name is in the selection (binary search). */
int tfb_selection_has(const tfb_selection *s, const char *name);

/* Selections held now (for tests and /data/environment). Thread-safe. */
size_t tfb_selection_held(void);

/* route_selection.c: the optional `selection` parameter of a multi-run
 * route. Sets *out to the pinned selection (release it), or NULL when the
 * request has none; an unknown id sets a 404 answer {"error", "selection":
 * "unknown"} saying to send the runs again, and returns TFB_ENOENT. */
int tfb_http_param_selection(const tfb_http_req *req, tfb_http_resp *resp,
                             tfb_selection **out);

/* route_selection.c: PUT /data/selection {"runs": [name, ...]} ->
 * {"id", "runs": n}; GET /data/selection?id=ID -> {"id", "runs": [...]}. */
int tfb_route_selection(const tfb_http_req *req, tfb_http_resp *resp);

#endif
