/* event_decode.h - decoding of one serialized Event (internal). */
#ifndef TFB_EVENT_DECODE_H
#define TFB_EVENT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

/* Decodes the top level of an Event payload into *ev (views into p).
 * Returns 0, or TFB_ECORRUPT when p is not a well-formed Event. Pure. */
int tfb_event_decode(const uint8_t *p, size_t n, tfb_event *ev);

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
