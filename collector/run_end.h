/*
 * run_end.h - the end-of-run record: what tfb_writer_close writes last so
 * that a reader can tell a run that finished from one that stopped.
 *
 * Shape (one Event, like every other summary):
 *   Event{wall_time, step: 0, summary{value{tag: "tfboard/run_end",
 *     tensor{dtype: DT_STRING, tensor_shape{}, string_val: reason},
 *     metadata{plugin_data{plugin_name: "tfboard_run_end",
 *                          content: reason}}}}}
 * A reader that does not know the plugin skips the value (TensorBoard keeps
 * it as a tensor of a plugin it does not serve); ours keeps it as a plugin
 * record of the run (server/analysis/run_status.c). The reason is free UTF-8
 * text ("" when none was given), at most TFB_RUN_END_REASON_MAX bytes
 * (longer ones are cut at a character boundary).
 *
 * Not installed. Thread-safety: pure functions.
 */
#ifndef TFB_RUN_END_H
#define TFB_RUN_END_H

#include <stddef.h>
#include <stdint.h>

#define TFB_RUN_END_PLUGIN "tfboard_run_end"
#define TFB_RUN_END_TAG "tfboard/run_end"
#define TFB_RUN_END_REASON_MAX 256

/* The serialized Event (no TFRecord framing) in *out (malloc'd, the
 * caller frees), *len its size. reason may be NULL (""). Returns 0 or
 * TFB_ENOMEM. */
int tfb_run_end_event(const char *reason, double wall, uint8_t **out,
                      size_t *len);

#endif
