/*
 * event_encode.c - serializes Event{wall_time, step, summary{value}} and
 * frames it as a TFRecord, in one pass over memory sized in advance.
 *
 * Sizes are computed inside out (plugin name -> metadata -> value ->
 * summary -> event) so every length prefix is known before its content is
 * written: no temporary buffers, no back-patching.
 */
#include "collector/event.h"

#include <stdlib.h>
#include <string.h>

#include "collector/pb.h"
#include "tfboard.h"

enum {
    DT_STRING = 7,
    DT_INT64 = 9,
};

static size_t metadata_size(const tfb_ev_value *v)
{
    size_t pd = pb_len_field_size(v->plugin_len); /* plugin_name */
    return pb_len_field_size(pd);                 /* plugin_data */
}

static size_t histo_size(const tfb_histo *h)
{
    size_t arr = 8 * h->n;
    return 5 * 9 + 2 * pb_len_field_size(arr);
}

static size_t i64_packed_size(const int64_t *a, size_t n)
{
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += pb_varint_size((uint64_t)a[i]);
    return s;
}

/* TensorShapeProto{dim{size: n}} */
static size_t vec_shape_size(size_t n)
{
    return pb_len_field_size(1 + pb_varint_size(n));
}

static size_t tensor_size(const tfb_ev_value *v)
{
    if (v->kind == TFB_EV_STRING)
        return 2 + 2 + pb_len_field_size(v->str_len);
    /* TFB_EV_INT64_VEC */
    return 2 + pb_len_field_size(vec_shape_size(v->n_i64)) +
           pb_len_field_size(i64_packed_size(v->i64, v->n_i64));
}

static size_t value_size(const tfb_ev_value *v)
{
    size_t s = pb_len_field_size(v->tag_len);
    switch (v->kind) {
    case TFB_EV_SIMPLE:
        s += 5;
        break;
    case TFB_EV_HISTO:
        s += pb_len_field_size(histo_size(v->histo));
        break;
    case TFB_EV_STRING:
    case TFB_EV_INT64_VEC:
        s += pb_len_field_size(tensor_size(v));
        break;
    }
    if (v->plugin)
        s += pb_len_field_size(metadata_size(v));
    return s;
}

static size_t event_size(int64_t step, size_t vsize)
{
    size_t summary = pb_len_field_size(vsize);
    size_t s = 9 + pb_len_field_size(summary);
    if (step != 0) /* proto3 leaves default values out */
        s += 1 + pb_varint_size((uint64_t)step);
    return s;
}

size_t tfb_ev_record_size(int64_t step, const tfb_ev_value *v)
{
    return TFB_RECORD_OVERHEAD + event_size(step, value_size(v));
}

static uint8_t *put_doubles(uint8_t *p, unsigned field, const double *a,
                            size_t n)
{
    p = pb_put_len(p, field, 8 * n);
    for (size_t i = 0; i < n; i++)
        p = pb_put_double(p, a[i]);
    return p;
}

static uint8_t *put_histo(uint8_t *p, const tfb_histo *h)
{
    p = pb_put_len(p, 5, histo_size(h));
    p = pb_put_key(p, 1, PB_I64);
    p = pb_put_double(p, h->min);
    p = pb_put_key(p, 2, PB_I64);
    p = pb_put_double(p, h->max);
    p = pb_put_key(p, 3, PB_I64);
    p = pb_put_double(p, h->num);
    p = pb_put_key(p, 4, PB_I64);
    p = pb_put_double(p, h->sum);
    p = pb_put_key(p, 5, PB_I64);
    p = pb_put_double(p, h->sum_squares);
    p = put_doubles(p, 6, h->limits, h->n);
    return put_doubles(p, 7, h->counts, h->n);
}

static uint8_t *put_tensor(uint8_t *p, const tfb_ev_value *v)
{
    p = pb_put_len(p, 8, tensor_size(v));
    p = pb_put_key(p, 1, PB_VARINT);
    if (v->kind == TFB_EV_STRING) {
        p = pb_put_varint(p, DT_STRING);
        p = pb_put_len(p, 2, 0); /* rank-0 shape */
        return pb_put_bytes(p, 8, v->str, v->str_len);
    }
    p = pb_put_varint(p, DT_INT64);
    p = pb_put_len(p, 2, vec_shape_size(v->n_i64));   /* tensor_shape */
    p = pb_put_len(p, 2, 1 + pb_varint_size(v->n_i64)); /* dim */
    p = pb_put_key(p, 1, PB_VARINT);                  /* dim.size */
    p = pb_put_varint(p, v->n_i64);
    p = pb_put_len(p, 10, i64_packed_size(v->i64, v->n_i64)); /* int64_val */
    for (size_t i = 0; i < v->n_i64; i++)
        p = pb_put_varint(p, (uint64_t)v->i64[i]);
    return p;
}

static uint8_t *put_value(uint8_t *p, const tfb_ev_value *v, size_t vsize)
{
    p = pb_put_len(p, 1, vsize); /* Summary.value */
    p = pb_put_bytes(p, 1, v->tag, v->tag_len);
    switch (v->kind) {
    case TFB_EV_SIMPLE:
        p = pb_put_key(p, 2, PB_I32);
        p = pb_put_float(p, v->simple);
        break;
    case TFB_EV_HISTO:
        p = put_histo(p, v->histo);
        break;
    case TFB_EV_STRING:
    case TFB_EV_INT64_VEC:
        p = put_tensor(p, v);
        break;
    }
    if (v->plugin) {
        p = pb_put_len(p, 9, metadata_size(v));                  /* metadata */
        p = pb_put_len(p, 1, pb_len_field_size(v->plugin_len));  /* plugin_data */
        p = pb_put_bytes(p, 1, v->plugin, v->plugin_len);        /* plugin_name */
    }
    return p;
}

uint8_t *tfb_ev_plugin_event(double wall, int64_t step, const char *tag,
                             size_t tag_len, const char *plugin,
                             const uint8_t *content, size_t content_len,
                             size_t tensor_len, uint8_t **tensor,
                             size_t *len)
{
    size_t plugin_len = strlen(plugin);
    size_t plugin_data = pb_len_field_size(plugin_len) +
                         (content_len ? pb_len_field_size(content_len) : 0);
    size_t meta = pb_len_field_size(plugin_data);
    size_t value = pb_len_field_size(tag_len) + pb_len_field_size(meta) +
                   pb_len_field_size(tensor_len);
    size_t summary = pb_len_field_size(value);
    *len = 9 + 1 + pb_varint_size((uint64_t)step) + pb_len_field_size(summary);
    uint8_t *buf = malloc(*len), *p = buf;
    if (!buf)
        return NULL;
    p = pb_put_key(p, 1, PB_I64); /* wall_time */
    p = pb_put_double(p, wall);
    p = pb_put_key(p, 2, PB_VARINT); /* step */
    p = pb_put_varint(p, (uint64_t)step);
    p = pb_put_len(p, 5, summary); /* Event.summary */
    p = pb_put_len(p, 1, value);   /* Summary.value */
    p = pb_put_bytes(p, 1, tag, tag_len);
    p = pb_put_len(p, 9, meta);        /* Value.metadata */
    p = pb_put_len(p, 1, plugin_data); /* SummaryMetadata.plugin_data */
    p = pb_put_bytes(p, 1, plugin, plugin_len);
    if (content_len)
        p = pb_put_bytes(p, 2, content, content_len);
    *tensor = pb_put_len(p, 8, tensor_len); /* Value.tensor */
    return buf;
}

void tfb_frame_record(uint8_t *rec, size_t payload_len)
{
    pb_put_fixed64(rec, payload_len);
    pb_put_fixed32(rec + 8, tfb_masked_crc32c(rec, 8));
    pb_put_fixed32(rec + 12 + payload_len,
                   tfb_masked_crc32c(rec + 12, payload_len));
}

void tfb_seal_records(uint8_t *buf, size_t len)
{
    size_t off = 0;
    while (off + TFB_RECORD_OVERHEAD <= len) {
        uint8_t *rec = buf + off;
        size_t n = (size_t)pb_le64(rec);
        tfb_frame_record(rec, n);
        off += n + TFB_RECORD_OVERHEAD;
    }
}

size_t tfb_ev_record_write(uint8_t *dst, double wall_time, int64_t step,
                           const tfb_ev_value *v)
{
    size_t vsize = value_size(v);
    size_t esize = event_size(step, vsize);
    uint8_t *p = dst + 12;
    p = pb_put_key(p, 1, PB_I64);
    p = pb_put_double(p, wall_time);
    if (step != 0) {
        p = pb_put_key(p, 2, PB_VARINT);
        p = pb_put_varint(p, (uint64_t)step);
    }
    p = pb_put_len(p, 5, pb_len_field_size(vsize)); /* Event.summary */
    put_value(p, v, vsize);
    pb_put_fixed64(dst, esize);
    return esize + TFB_RECORD_OVERHEAD;
}

size_t tfb_ev_file_version_write(uint8_t *dst, double wall_time)
{
    static const char version[] = "brain.Event:2";
    uint8_t *p = dst + 12;
    p = pb_put_key(p, 1, PB_I64);
    p = pb_put_double(p, wall_time);
    p = pb_put_bytes(p, 3, version, sizeof version - 1);
    size_t esize = (size_t)(p - (dst + 12));
    tfb_frame_record(dst, esize);
    return esize + TFB_RECORD_OVERHEAD;
}

/* Value{tag=1, simple_value=2, metadata=9{plugin_data=1{plugin_name=1}}} */
#define SCALAR_META_BYTES 13 /* 4a 0b 0a 09 0a 07 "scalars" */

size_t tfb_ev_scalar_write(uint8_t *dst, double wall_time, int64_t step,
                           const uint8_t *tag_field, size_t field_len,
                           int with_meta, float value)
{
    static const uint8_t meta[SCALAR_META_BYTES] = {
        0x4a, 0x0b, 0x0a, 0x09, 0x0a, 0x07,
        's', 'c', 'a', 'l', 'a', 'r', 's'};
    size_t vsize = field_len + 5 + (with_meta ? SCALAR_META_BYTES : 0);
    size_t esize = event_size(step, vsize);
    uint8_t *p = dst + 12;
    *p++ = 0x09; /* wall_time */
    p = pb_put_double(p, wall_time);
    if (step != 0) {
        *p++ = 0x10;
        p = pb_put_varint(p, (uint64_t)step);
    }
    *p++ = 0x2a; /* summary */
    p = pb_put_varint(p, pb_len_field_size(vsize));
    *p++ = 0x0a; /* value */
    p = pb_put_varint(p, vsize);
    /* Short tags (nearly all) in one fixed 32-byte move: the source is
     * padded, and the bytes past the field land in space that the rest of
     * the record, or the reserved maximum, covers. */
    if (field_len <= 32)
        memcpy(p, tag_field, 32);
    else
        memcpy(p, tag_field, field_len);
    p += field_len;
    *p++ = 0x15; /* simple_value */
    p = pb_put_float(p, value);
    if (with_meta)
        memcpy(p, meta, sizeof meta);
    pb_put_fixed64(dst, esize);
    return esize + TFB_RECORD_OVERHEAD;
}
