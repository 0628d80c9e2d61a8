/*
 * pbtxt.h - a serialized GraphDef or RunMetadata as protobuf text format,
 * byte for byte what TensorBoard's graphs plugin answers (Python
 * protobuf's str(message): fields in number order, map entries sorted by
 * key, strings escaped as text_encoding.CEscape with as_utf8 False,
 * floats as ToShortestFloat, unknown fields left out).
 *
 * The schema is TensorFlow's (graph.proto, node_def.proto,
 * attr_value.proto, tensor.proto, function.proto, op_def.proto,
 * step_stats.proto, cost_graph.proto, config.proto's RunMetadata), as
 * tables in pbtxt.c. Pure functions over the bytes given; thread-safe.
 */
#ifndef TFB_GRAPHS_PBTXT_H
#define TFB_GRAPHS_PBTXT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Nesting past this is refused (TFB_ECORRUPT): a crafted AttrValue can
 * nest lists of functions of attributes without end; Python protobuf
 * stops at 100. */
#define TFB_PBTXT_MAX_DEPTH 100

typedef enum { TFB_PBTXT_GRAPH_DEF = 0, TFB_PBTXT_RUN_METADATA } tfb_pbtxt_type;

typedef struct tfb_pbtxt_opts {
    /* TensorBoard's limit_attr_size / large_attrs_key (process_graph.py):
     * an attribute of a top-level node whose serialized AttrValue is over
     * limit bytes is left out and its key listed in the node's attribute
     * large_attrs_key (list.s). 0: no limit. */
    uint64_t limit_attr_size;
    const char *large_attrs_key;
    /* Prepended with "/" to every top-level node name and input (the
     * graph_%d/ of TensorBoard's merge_graph_defs); NULL: none. */
    const char *name_prefix;
    /* A GraphDef's parts: 0 all, 1 its nodes only, 2 all but its nodes
     * (to merge several graphs). */
    int part;
    /* Text past this many bytes fails with TFB_ETOOBIG. */
    size_t max_out;
} tfb_pbtxt_opts;

/* Appends the text of the message p[0..n) of type t to out. 0,
 * TFB_ECORRUPT (not a well-formed message of the type: *why, when not
 * NULL, says where, in a static string), TFB_ETOOBIG, TFB_ENOMEM. */
int tfb_pbtxt(tfb_buf *out, tfb_pbtxt_type t, const uint8_t *p, size_t n,
              const tfb_pbtxt_opts *o, const char **why);

/* Python's str() of the float32 f as text_format prints it (1.0, 1e-05,
 * 0.1, inf, nan) into buf (32 bytes); returns buf. */
const char *tfb_pbtxt_float(float f, char *buf);
/* Python's repr() of the double d into buf (32 bytes); returns buf. */
const char *tfb_pbtxt_double(double d, char *buf);

#endif
