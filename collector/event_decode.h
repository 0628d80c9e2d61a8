/* event_decode.h - decoding of one serialized Event (internal). */
#ifndef TFB_EVENT_DECODE_H
#define TFB_EVENT_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tfboard.h"

/* Decodes the top level of an Event payload into *ev (views into p).
 * Returns 0, or TFB_ECORRUPT when p is not a well-formed Event. Pure. */
int tfb_event_decode(const uint8_t *p, size_t n, tfb_event *ev);

/* The scalar value at summary[*pos], when its bytes are exactly what
 * tf.summary.scalar writes after a tag's first step: a value field
 * holding a tag and a simple_value, nothing else, with one-byte keys and
 * lengths (0a L 0a T <T tag bytes> 15 <float>, L == T + 7). Returns 1
 * with *tag (a view into summary), *scalar and *pos past the value; 0
 * for any other bytes, *pos unchanged: tfb_summary_next reads them. For
 * bytes this takes, tfb_summary_next gives the same tag and scalar with
 * kind SCALAR and every other field empty, so a caller that needs only
 * those may skip the tfb_value (its clearing and the general decode are
 * most of a scalar's parse; server/API.md, "Loading and reloading").
 * Pure; no allocation. */
static inline int tfb_summary_next_simple(const uint8_t *summary, size_t len,
                                          size_t *pos, tfb_strview *tag,
                                          float *scalar)
{
    size_t at = *pos;
    if (at >= len || len - at < 9)
        return 0;
    const uint8_t *p = summary + at;
    size_t t = p[3];
    if (p[0] != 0x0a || p[2] != 0x0a || t + 7 >= 0x80 || p[1] != t + 7 ||
        len - at < t + 9 || p[4 + t] != 0x15)
        return 0;
    uint32_t u = (uint32_t)p[5 + t] | (uint32_t)p[6 + t] << 8 |
                 (uint32_t)p[7 + t] << 16 | (uint32_t)p[8 + t] << 24;
    memcpy(scalar, &u, sizeof u);
    tag->ptr = (const char *)p + 4;
    tag->len = t;
    *pos = at + t + 9;
    return 1;
}

/* The header of a TensorProto: the one decoder of a tensor's shape, for
 * every reader of tensors (scalars and histograms here, text tables, PR
 * curves). Views into the bytes given. */
#define TFB_TENSOR_MAX_DIMS 8
typedef struct tfb_tensor_shape {
    int dtype;                          /* DataType (1 float, 7 string...) */
    int rank;                           /* all dims, even past the 8 kept */
    int64_t dims[TFB_TENSOR_MAX_DIMS];  /* the first 8 sizes */
    /* The element count: the product of the sizes (1 for rank 0), or -1
     * when a size is negative or the product passes int64 (a crafted
     * shape), so no size check can pass by wrap-around. */
    int64_t elems;
    const uint8_t *content;             /* tensor_content; NULL if none */
    size_t content_len;
} tfb_tensor_shape;

/* Reads the dtype, shape and tensor_content of the TensorProto p[0..n).
 * Returns 0, or TFB_ECORRUPT (*out then holds what was read). Pure. */
int tfb_tensor_shape_parse(const uint8_t *p, size_t n, tfb_tensor_shape *out);

#endif
