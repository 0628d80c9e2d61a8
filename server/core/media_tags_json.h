/*
 * media_tags_json.h - TensorBoard's tags answer for a kind of media (the
 * images and PR-curves dashboards' /tags routes share it): {run: {tag:
 * {"displayName", "description"[, "samples", "count", "dropped"]}}}, from
 * each run's media index (media_index.h). Runs without a tag of that kind
 * are left out, as TensorBoard 2's data provider does.
 *
 * Thread-safety: any thread (the index is read under its own lock).
 */
#ifndef TFB_SERVER_MEDIA_TAGS_JSON_H
#define TFB_SERVER_MEDIA_TAGS_JSON_H

#include <stddef.h>

#include "core/json.h"
#include "store/media_index.h"
#include "store/store.h"

/* Writes the object for runs[0..nr); with `counts`, each tag also gets
 * tfboard's "samples", "count" and "dropped". A run whose index cannot be
 * read (out of memory) is left out. */
void tfb_media_tags_json(tfb_json *j, tfb_run *const *runs, size_t nr,
                         tfb_media_kind kind, int counts);

#endif
