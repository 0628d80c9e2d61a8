/*
 * event_blobs.h - the blobs an Event carries outside its Summary: the
 * graph_def, the meta_graph_def and the tagged_run_metadata.
 *
 * They can be large (a TF1 GraphDef with its constants runs to tens of
 * MB), so the store keeps no bytes: the loader keeps, for each one, a
 * locator (file, record offset, place and length in the record) as the
 * run's plugin record under TensorBoard's own names, the way TensorBoard
 * migrates these events into summaries (dataclass_compat.py):
 *   graph_def           -> plugin "graphs", tag "__run_graph__";
 *   meta_graph_def      -> plugin "graphs", tag "__meta_graph__" (its
 *                          graph_def field only; tfboard's name: TensorBoard
 *                          2.x shows a meta graph's graph only through the
 *                          legacy accumulator, as the run graph when the run
 *                          has no graph_def);
 *   tagged_run_metadata -> plugin "graph_tagged_run_metadata", tag: the
 *                          TaggedRunMetadata's tag (its run_metadata
 *                          bytes).
 * The latest of each (plugin, tag) is kept, as TensorBoard keeps the
 * latest blob (downsample 1). A locator record's content is
 * TFB_EVENT_BLOB_MARK, which no writer's plugin content is.
 *
 * tfb_event_blob_read reads the bytes back with pread, checks both CRCs
 * and the step, so a file changed since gives an error, never other
 * bytes. Thread-safety: every function is reentrant; note runs on the
 * run's loader thread, read on any.
 */
#ifndef TFB_SERVER_EVENT_BLOBS_H
#define TFB_SERVER_EVENT_BLOBS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define TFB_EVENT_BLOB_MARK "\001tfboard-event-blob-locator"
#define TFB_RUN_GRAPH_TAG "__run_graph__"
#define TFB_META_GRAPH_TAG "__meta_graph__"

/* The most bytes one blob may have and still be read back: a GraphDef
 * past 256 MiB is not served (protobuf itself refuses messages over
 * 2 GiB; 256 MiB of graph is ~2 million nodes, past what any page can
 * draw). */
#define TFB_EVENT_BLOB_MAX ((uint64_t)256 << 20)

/* The loader's call for an event of kind GRAPH or RUN_METADATA read from
 * path: keeps its locator as run r's record. 0 (also for events that
 * carry nothing to keep: a meta_graph_def without graph_def, a tag-less
 * run metadata), TFB_ENOMEM. */
int tfb_event_blob_note(tfb_run *r, const char *path, const tfb_event *ev);

/* 1 when rec is a locator (tfb_event_blob_note's record). */
int tfb_event_blob_is_locator(const tfb_plugin_record *rec);

/* The blob rec locates: *out malloc'd (free()), *len bytes. TFB_EINVAL
 * (not a locator), TFB_ETOOBIG (over TFB_EVENT_BLOB_MAX), TFB_EIO /
 * TFB_ECORRUPT (the file no longer holds it), TFB_ENOMEM. */
int tfb_event_blob_read(const tfb_plugin_record *rec, uint8_t **out,
                        size_t *len);

#endif
