/*
 * event.h - encoding of TensorBoard Event records (internal).
 *
 * Each encoder writes one whole TFRecord (length, masked length CRC,
 * serialized Event, masked payload CRC) into memory the caller reserved
 * from tfb_ev_record_size() for the same arguments. Pure functions;
 * thread-safe.
 */
#ifndef TFB_EVENT_H
#define TFB_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "collector/histogram.h"

#define TFB_RECORD_OVERHEAD 16 /* 8 length + 4 length CRC + 4 data CRC */

typedef enum {
    TFB_EV_SIMPLE = 1,   /* Summary.Value.simple_value */
    TFB_EV_HISTO,        /* Summary.Value.histo */
    TFB_EV_STRING,       /* rank-0 DT_STRING tensor */
    TFB_EV_INT64_VEC     /* rank-1 DT_INT64 tensor */
} tfb_ev_kind;

typedef struct tfb_ev_value {
    tfb_ev_kind kind;
    const char *tag;
    size_t tag_len;
    const char *plugin;  /* SummaryMetadata.plugin_data.plugin_name; NULL = no metadata */
    size_t plugin_len;
    float simple;
    const tfb_histo *histo;
    const char *str;
    size_t str_len;
    const int64_t *i64;
    size_t n_i64;
} tfb_ev_value;

/* Bytes of the whole record (framing included) for one Summary value. */
size_t tfb_ev_record_size(int64_t step, const tfb_ev_value *v);

/* Writes the record with its length but without its two CRCs (see
 * tfb_seal_records: the writer computes them off the logging thread);
 * returns the bytes written (== tfb_ev_record_size). */
size_t tfb_ev_record_write(uint8_t *dst, double wall_time, int64_t step,
                           const tfb_ev_value *v);

/* Event{wall_time, step, summary{value{tag, metadata{plugin_data{
 * plugin_name, content}}, tensor}}} for the records a plugin logs whole
 * (tfb_writer_log_event): malloc'd, of the exact size *len, all written
 * but the tensor_len bytes of the TensorProto, which the caller writes at
 * *tensor. No content field when content_len is 0; step even when 0.
 * NULL when memory runs out. */
uint8_t *tfb_ev_plugin_event(double wall, int64_t step, const char *tag,
                             size_t tag_len, const char *plugin,
                             const uint8_t *content, size_t content_len,
                             size_t tensor_len, uint8_t **tensor,
                             size_t *len);

/* Fills in the length and payload CRCs of every record in buf[0..len),
 * which must hold whole records written by the encoders above. */
void tfb_seal_records(uint8_t *buf, size_t len);

/* The scalar fast path: the same bytes as a TFB_EV_SIMPLE value with the
 * "scalars" plugin (when with_meta), computed without the general size
 * walk. It is what tfb_scalar() costs, so it is kept branch-light. */
/* No scalar record is larger than this (step as a 10-byte varint, every
 * length prefix at its widest for tag_len, the metadata included), and
 * the encoder writes nothing past it. */
#define TFB_EV_SCALAR_MAX(tag_len) ((tag_len) + 80)
/* tag_field is the tag already encoded as Value field 1 (key, length,
 * bytes; see tag_table.h), readable for field_len + 32 bytes. */
size_t tfb_ev_scalar_write(uint8_t *dst, double wall_time, int64_t step,
                           const uint8_t *tag_field, size_t field_len,
                           int with_meta, float value);

/* The file_version record ("brain.Event:2"). dst must hold
 * TFB_EV_FILE_VERSION_MAX bytes; returns the bytes written. */
#define TFB_EV_FILE_VERSION_MAX 64
size_t tfb_ev_file_version_write(uint8_t *dst, double wall_time);

/* Frames an already serialized payload: writes the 12 header bytes before
 * it and the 4 CRC bytes after it (CRCs included). `rec` points at the
 * record start; the payload must already sit at rec + 12. */
void tfb_frame_record(uint8_t *rec, size_t payload_len);

#endif
