/*
 * pbtxt.c - protobuf text format of GraphDef and RunMetadata (see
 * pbtxt.h): TensorFlow's schema as tables, one printer over them.
 */
#include "plugins/graphs/pbtxt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/pb.h"
#include "tfboard.h"

typedef enum {
    F_STRING, /* string and bytes: both CEscaped */
    F_INT32,
    F_INT64,
    F_UINT32,
    F_UINT64,
    F_FIXED64,
    F_BOOL,
    F_FLOAT,
    F_DOUBLE,
    F_ENUM,
    F_MSG,
} ftype;

typedef struct msg_desc msg_desc;
typedef const char *(*enum_name_fn)(int64_t v);

typedef struct fdesc {
    unsigned num;
    const char *name;
    ftype type;
    unsigned char repeated, map, oneof;
    const msg_desc *msg;   /* F_MSG (for a map: its entry) */
    enum_name_fn en;       /* F_ENUM */
} fdesc;

struct msg_desc {
    const fdesc *f; /* ascending num */
    size_t n;
};

#define DESC(name, ...)                                                   \
    static const fdesc name##_f[] = {__VA_ARGS__};                       \
    static const msg_desc name = {name##_f, sizeof name##_f / sizeof *name##_f}
#define S(n, nm) {n, nm, F_STRING, 0, 0, 0, NULL, NULL}
#define RS(n, nm) {n, nm, F_STRING, 1, 0, 0, NULL, NULL}
#define T(n, nm, ty) {n, nm, ty, 0, 0, 0, NULL, NULL}
#define RT(n, nm, ty) {n, nm, ty, 1, 0, 0, NULL, NULL}
#define O(n, nm, ty) {n, nm, ty, 0, 0, 1, NULL, NULL}
#define E(n, nm, fn) {n, nm, F_ENUM, 0, 0, 0, NULL, fn}
#define RE(n, nm, fn) {n, nm, F_ENUM, 1, 0, 0, NULL, fn}
#define OE(n, nm, fn) {n, nm, F_ENUM, 0, 0, 1, NULL, fn}
#define M(n, nm, d) {n, nm, F_MSG, 0, 0, 0, &d, NULL}
#define RM(n, nm, d) {n, nm, F_MSG, 1, 0, 0, &d, NULL}
#define OM(n, nm, d) {n, nm, F_MSG, 0, 0, 1, &d, NULL}
#define MAP(n, nm, d) {n, nm, F_MSG, 1, 1, 0, &d, NULL}

/* ---- enums ---- */

static const char *const dtypes[] = {
    "DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8",
    "DT_INT16", "DT_INT8", "DT_STRING", "DT_COMPLEX64", "DT_INT64",
    "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
    "DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF",
    "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64",
    "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E4M3FNUZ",
    "DT_FLOAT8_E4M3B11FNUZ", "DT_FLOAT8_E5M2FNUZ", "DT_INT4", "DT_UINT4",
};
#define N_DTYPES (sizeof dtypes / sizeof *dtypes)

static const char *dtype_name(int64_t v)
{
    static const char *const refs[] = {
        "DT_FLOAT_REF", "DT_DOUBLE_REF", "DT_INT32_REF", "DT_UINT8_REF",
        "DT_INT16_REF", "DT_INT8_REF", "DT_STRING_REF", "DT_COMPLEX64_REF",
        "DT_INT64_REF", "DT_BOOL_REF", "DT_QINT8_REF", "DT_QUINT8_REF",
        "DT_QINT32_REF", "DT_BFLOAT16_REF", "DT_QINT16_REF",
        "DT_QUINT16_REF", "DT_UINT16_REF", "DT_COMPLEX128_REF",
        "DT_HALF_REF", "DT_RESOURCE_REF", "DT_VARIANT_REF", "DT_UINT32_REF",
        "DT_UINT64_REF", "DT_FLOAT8_E5M2_REF", "DT_FLOAT8_E4M3FN_REF",
        "DT_FLOAT8_E4M3FNUZ_REF", "DT_FLOAT8_E4M3B11FNUZ_REF",
        "DT_FLOAT8_E5M2FNUZ_REF", "DT_INT4_REF", "DT_UINT4_REF",
    };
    if (v >= 0 && (uint64_t)v < N_DTYPES)
        return dtypes[v];
    if (v >= 101 && (uint64_t)(v - 101) < sizeof refs / sizeof *refs)
        return refs[v - 101];
    return NULL;
}

static const char *fulltype_name(int64_t v)
{
    static const struct {
        int v;
        const char *n;
    } t[] = {
        {0, "TFT_UNSET"},        {1, "TFT_VAR"},
        {2, "TFT_ANY"},          {3, "TFT_PRODUCT"},
        {4, "TFT_NAMED"},        {20, "TFT_FOR_EACH"},
        {100, "TFT_CALLABLE"},   {200, "TFT_BOOL"},
        {201, "TFT_UINT8"},      {202, "TFT_UINT16"},
        {203, "TFT_UINT32"},     {204, "TFT_UINT64"},
        {205, "TFT_INT8"},       {206, "TFT_INT16"},
        {207, "TFT_INT32"},      {208, "TFT_INT64"},
        {209, "TFT_HALF"},       {210, "TFT_FLOAT"},
        {211, "TFT_DOUBLE"},     {212, "TFT_COMPLEX64"},
        {213, "TFT_COMPLEX128"}, {214, "TFT_STRING"},
        {215, "TFT_BFLOAT16"},   {1000, "TFT_TENSOR"},
        {1001, "TFT_ARRAY"},     {1002, "TFT_OPTIONAL"},
        {1003, "TFT_LITERAL"},   {1004, "TFT_ENCODED"},
        {1005, "TFT_SHAPE_TENSOR"}, {10102, "TFT_DATASET"},
        {10103, "TFT_RAGGED"},   {10104, "TFT_ITERATOR"},
        {10202, "TFT_MUTEX_LOCK"}, {10203, "TFT_LEGACY_VARIANT"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (t[i].v == v)
            return t[i].n;
    return NULL;
}

/* ---- schema (TensorFlow's .proto files) ---- */

/* Tentative definitions: the schema refers to itself. */
static const msg_desc attr_value_d, tensor_d, node_def_d, graph_def_d,
    fulltype_d, name_attr_list_d;

DESC(dim_d, T(1, "size", F_INT64), S(2, "name"));
DESC(shape_d, RM(2, "dim", dim_d), T(3, "unknown_rank", F_BOOL));
DESC(dtype_shape_d, E(1, "dtype", dtype_name), M(2, "shape", shape_d));
DESC(resource_handle_d, S(1, "device"), S(2, "container"), S(3, "name"),
     T(4, "hash_code", F_UINT64), S(5, "maybe_type_name"),
     RM(6, "dtypes_and_shapes", dtype_shape_d));
DESC(variant_d, S(1, "type_name"), S(2, "metadata"),
     RM(3, "tensors", tensor_d));
DESC(tensor_d, E(1, "dtype", dtype_name), M(2, "tensor_shape", shape_d),
     T(3, "version_number", F_INT32), S(4, "tensor_content"),
     RT(5, "float_val", F_FLOAT), RT(6, "double_val", F_DOUBLE),
     RT(7, "int_val", F_INT32), RS(8, "string_val"),
     RT(9, "scomplex_val", F_FLOAT), RT(10, "int64_val", F_INT64),
     RT(11, "bool_val", F_BOOL), RT(12, "dcomplex_val", F_DOUBLE),
     RT(13, "half_val", F_INT32),
     RM(14, "resource_handle_val", resource_handle_d),
     RM(15, "variant_val", variant_d), RT(16, "uint32_val", F_UINT32),
     RT(17, "uint64_val", F_UINT64), S(18, "float8_val"));
DESC(list_value_d, RS(2, "s"), RT(3, "i", F_INT64), RT(4, "f", F_FLOAT),
     RT(5, "b", F_BOOL), RE(6, "type", dtype_name),
     RM(7, "shape", shape_d), RM(8, "tensor", tensor_d),
     RM(9, "func", name_attr_list_d));
DESC(attr_value_d, OM(1, "list", list_value_d), O(2, "s", F_STRING),
     O(3, "i", F_INT64), O(4, "f", F_FLOAT), O(5, "b", F_BOOL),
     OE(6, "type", dtype_name), OM(7, "shape", shape_d),
     OM(8, "tensor", tensor_d), O(9, "placeholder", F_STRING),
     OM(10, "func", name_attr_list_d));
DESC(attr_entry_d, S(1, "key"), M(2, "value", attr_value_d));
DESC(name_attr_list_d, S(1, "name"), MAP(2, "attr", attr_entry_d));
DESC(fulltype_d, E(1, "type_id", fulltype_name), RM(2, "args", fulltype_d),
     O(3, "s", F_STRING), O(4, "i", F_INT64));
DESC(node_debug_d, RS(1, "original_node_names"),
     RS(2, "original_func_names"));
DESC(node_def_d, S(1, "name"), S(2, "op"), RS(3, "input"), S(4, "device"),
     MAP(5, "attr", attr_entry_d), M(6, "experimental_debug_info",
                                     node_debug_d),
     M(7, "experimental_type", fulltype_d));
DESC(arg_def_d, S(1, "name"), S(2, "description"), E(3, "type", dtype_name),
     S(4, "type_attr"), S(5, "number_attr"), S(6, "type_list_attr"),
     RM(7, "handle_data", dtype_shape_d), T(16, "is_ref", F_BOOL),
     M(17, "experimental_full_type", fulltype_d));
DESC(attr_def_d, S(1, "name"), S(2, "type"),
     M(3, "default_value", attr_value_d), S(4, "description"),
     T(5, "has_minimum", F_BOOL), T(6, "minimum", F_INT64),
     M(7, "allowed_values", attr_value_d));
DESC(op_deprecation_d, T(1, "version", F_INT32), S(2, "explanation"));
DESC(op_def_d, S(1, "name"), RM(2, "input_arg", arg_def_d),
     RM(3, "output_arg", arg_def_d), RM(4, "attr", attr_def_d),
     S(5, "summary"), S(6, "description"),
     M(8, "deprecation", op_deprecation_d), T(16, "is_aggregate", F_BOOL),
     T(17, "is_stateful", F_BOOL), T(18, "is_commutative", F_BOOL),
     T(19, "allows_uninitialized_input", F_BOOL),
     RS(20, "control_output"),
     T(21, "is_distributed_communication", F_BOOL));
DESC(arg_attrs_d, MAP(1, "attr", attr_entry_d));
DESC(arg_attr_entry_d, T(1, "key", F_UINT32), M(2, "value", arg_attrs_d));
DESC(u32_entry_d, T(1, "key", F_UINT32), T(2, "value", F_UINT32));
DESC(str_entry_d, S(1, "key"), S(2, "value"));
DESC(function_def_d, M(1, "signature", op_def_d),
     RM(3, "node_def", node_def_d), MAP(4, "ret", str_entry_d),
     MAP(5, "attr", attr_entry_d), MAP(6, "control_ret", str_entry_d),
     MAP(7, "arg_attr", arg_attr_entry_d),
     MAP(8, "resource_arg_unique_id", u32_entry_d));
DESC(gradient_def_d, S(1, "function_name"), S(2, "gradient_func"));
DESC(registered_gradient_d, S(1, "gradient_func"),
     S(2, "registered_op_type"));
DESC(library_d, RM(1, "function", function_def_d),
     RM(2, "gradient", gradient_def_d),
     RM(3, "registered_gradients", registered_gradient_d));
DESC(versions_d, T(1, "producer", F_INT32), T(2, "min_consumer", F_INT32),
     RT(3, "bad_consumers", F_INT32));
DESC(file_line_col_d, T(1, "file_index", F_INT32), T(2, "line", F_INT32),
     T(3, "col", F_INT32), S(4, "func"), S(5, "code"));
DESC(stack_trace_d, RM(1, "file_line_cols", file_line_col_d),
     RT(2, "frame_id", F_FIXED64));
DESC(trace_entry_d, S(1, "key"), M(2, "value", stack_trace_d));
DESC(frame_entry_d, T(1, "key", F_FIXED64), M(2, "value", file_line_col_d));
DESC(trace_id_entry_d, T(1, "key", F_FIXED64), M(2, "value", stack_trace_d));
DESC(name_id_entry_d, S(1, "key"), T(2, "value", F_FIXED64));
DESC(debug_info_d, RS(1, "files"), MAP(2, "traces", trace_entry_d),
     MAP(4, "frames_by_id", frame_entry_d),
     MAP(5, "name_to_trace_id", name_id_entry_d),
     MAP(6, "traces_by_id", trace_id_entry_d));
DESC(graph_def_d, RM(1, "node", node_def_d), M(2, "library", library_d),
     T(3, "version", F_INT32), M(4, "versions", versions_d),
     M(5, "debug_info", debug_info_d));

/* RunMetadata (config.proto, step_stats.proto, cost_graph.proto). */
DESC(alloc_record_d, T(1, "alloc_micros", F_INT64),
     T(2, "alloc_bytes", F_INT64));
DESC(alloc_used_d, S(1, "allocator_name"), T(2, "total_bytes", F_INT64),
     T(3, "peak_bytes", F_INT64), T(4, "live_bytes", F_INT64),
     T(5, "allocator_bytes_in_use", F_INT64),
     RM(6, "allocation_records", alloc_record_d));
DESC(alloc_desc_d, T(1, "requested_bytes", F_INT64),
     T(2, "allocated_bytes", F_INT64), S(3, "allocator_name"),
     T(4, "allocation_id", F_INT64),
     T(5, "has_single_reference", F_BOOL), T(6, "ptr", F_UINT64));
DESC(tensor_desc_d, E(1, "dtype", dtype_name), M(2, "shape", shape_d),
     M(4, "allocation_description", alloc_desc_d));
DESC(node_output_d, T(1, "slot", F_INT32),
     M(3, "tensor_description", tensor_desc_d));
DESC(memory_stats_d, T(1, "temp_memory_size", F_INT64),
     T(2, "device_temp_memory_size", F_INT64),
     T(3, "persistent_memory_size", F_INT64),
     T(4, "device_persistent_memory_size", F_INT64),
     RT(5, "persistent_tensor_alloc_ids", F_INT64),
     RT(6, "device_persistent_tensor_alloc_ids", F_INT64));
DESC(node_exec_d, S(1, "node_name"), T(2, "all_start_micros", F_INT64),
     T(3, "op_start_rel_micros", F_INT64),
     T(4, "op_end_rel_micros", F_INT64),
     T(5, "all_end_rel_micros", F_INT64), RM(6, "memory", alloc_used_d),
     RM(7, "output", node_output_d), S(8, "timeline_label"),
     T(9, "scheduled_micros", F_INT64), T(10, "thread_id", F_UINT32),
     RM(11, "referenced_tensor", alloc_desc_d),
     M(12, "memory_stats", memory_stats_d),
     T(13, "all_start_nanos", F_INT64), T(14, "op_start_rel_nanos", F_INT64),
     T(15, "op_end_rel_nanos", F_INT64), T(16, "all_end_rel_nanos", F_INT64),
     T(17, "scheduled_nanos", F_INT64));
DESC(thread_entry_d, T(1, "key", F_UINT32), S(2, "value"));
DESC(dev_stats_d, S(1, "device"), RM(2, "node_stats", node_exec_d),
     MAP(3, "thread_names", thread_entry_d));
DESC(step_stats_d, RM(1, "dev_stats", dev_stats_d));
DESC(cost_input_d, T(1, "preceding_node", F_INT32),
     T(2, "preceding_port", F_INT32));
DESC(cost_output_d, T(1, "size", F_INT64), T(2, "alias_input_port", F_INT64),
     M(3, "shape", shape_d), E(4, "dtype", dtype_name));
DESC(cost_node_d, S(1, "name"), S(2, "device"), T(3, "id", F_INT32),
     RM(4, "input_info", cost_input_d), RM(5, "output_info", cost_output_d),
     T(6, "temporary_memory_size", F_INT64), T(7, "is_final", F_BOOL),
     RT(8, "control_input", F_INT32), T(9, "compute_cost", F_INT64),
     T(10, "host_temp_memory_size", F_INT64),
     T(11, "device_temp_memory_size", F_INT64),
     T(12, "persistent_memory_size", F_INT64),
     T(14, "compute_time", F_INT64), T(15, "memory_time", F_INT64),
     T(16, "device_persistent_memory_size", F_INT64),
     T(17, "inaccurate", F_BOOL));
DESC(agg_cost_d, T(1, "cost", F_FLOAT), S(2, "dimension"));
DESC(cost_graph_d, RM(1, "node", cost_node_d), RM(2, "cost", agg_cost_d));
DESC(function_graphs_d, RM(1, "partition_graphs", graph_def_d),
     M(2, "pre_optimization_graph", graph_def_d),
     M(3, "post_optimization_graph", graph_def_d));
DESC(session_md_d, S(1, "name"), T(2, "version", F_INT64));
DESC(run_metadata_d, M(1, "step_stats", step_stats_d),
     M(2, "cost_graph", cost_graph_d),
     RM(3, "partition_graphs", graph_def_d),
     RM(4, "function_graphs", function_graphs_d),
     M(5, "session_metadata", session_md_d));

/* ---- number text, as Python writes it ---- */

/* Python's repr of a finite double from its shortest round-trip digits:
 * fixed notation for a decimal point position in (-4, 16], else
 * d.ddde+XX. */
const char *tfb_pbtxt_double(double d, char *buf)
{
    if (isnan(d))
        return strcpy(buf, "nan");
    if (isinf(d))
        return strcpy(buf, d < 0 ? "-inf" : "inf");
    if (d == 0)
        return strcpy(buf, signbit(d) ? "-0.0" : "0.0");
    char e[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec, d);
        if (strtod(e, NULL) == d)
            break;
    }
    /* e: [-]D[.DDD]e[+-]XX */
    char digits[24];
    size_t nd = 0;
    const char *p = e;
    int neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < sizeof digits - 1)
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    int exp10 = atoi(p + 1);
    int decpt = exp10 + 1; /* digits are 0.D1D2... x 10^decpt */
    char *o = buf;
    if (neg)
        *o++ = '-';
    if (decpt <= -4 || decpt > 16) {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, nd - 1);
            o += nd - 1;
        }
        snprintf(o, 12, "e%c%02d", exp10 < 0 ? '-' : '+',
                 (exp10 < 0 ? -exp10 : exp10) % 1000);
        return buf;
    }
    if (decpt <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -decpt; i++)
            *o++ = '0';
        memcpy(o, digits, nd);
        o += nd;
    } else if ((size_t)decpt < nd) {
        memcpy(o, digits, (size_t)decpt);
        o += decpt;
        *o++ = '.';
        memcpy(o, digits + decpt, nd - (size_t)decpt);
        o += nd - (size_t)decpt;
    } else {
        memcpy(o, digits, nd);
        o += nd;
        for (size_t i = nd; i < (size_t)decpt; i++)
            *o++ = '0';
        *o++ = '.';
        *o++ = '0';
    }
    *o = 0;
    return buf;
}

/* type_checkers.ToShortestFloat: the fewest %g digits (from 6) that
 * read back as the same float32, then str() of that double. */
const char *tfb_pbtxt_float(float f, char *buf)
{
    if (isnan(f))
        return strcpy(buf, "nan");
    if (isinf(f))
        return tfb_pbtxt_double((double)f, buf);
    char g[40];
    double r = f;
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(g, sizeof g, "%.*g", prec, (double)f);
        r = strtod(g, NULL);
        if ((float)r == f)
            break;
    }
    return tfb_pbtxt_double(r, buf);
}

/* ---- the printer ---- */

typedef struct ctx {
    tfb_buf *out;
    const tfb_pbtxt_opts *o;
    const char *why;
    int err;
} ctx;

static void indent(ctx *c, int d)
{
    static const char sp[] = "                                        ";
    size_t n = (size_t)d * 2;
    while (n > 0) {
        size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
        tfb_buf_put(c->out, sp, k);
        n -= k;
    }
}

static void put_escaped(ctx *c, const uint8_t *p, size_t n)
{
    char tmp[256];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = p[i];
        if (k > sizeof tmp - 8) {
            tfb_buf_put(c->out, tmp, k);
            k = 0;
        }
        switch (b) {
        case '\n': tmp[k++] = '\\'; tmp[k++] = 'n'; break;
        case '\r': tmp[k++] = '\\'; tmp[k++] = 'r'; break;
        case '\t': tmp[k++] = '\\'; tmp[k++] = 't'; break;
        case '"': tmp[k++] = '\\'; tmp[k++] = '"'; break;
        case '\'': tmp[k++] = '\\'; tmp[k++] = '\''; break;
        case '\\': tmp[k++] = '\\'; tmp[k++] = '\\'; break;
        default:
            if (b < 32 || b >= 127) {
                tmp[k++] = '\\';
                tmp[k++] = (char)('0' + (b >> 6));
                tmp[k++] = (char)('0' + ((b >> 3) & 7));
                tmp[k++] = (char)('0' + (b & 7));
            } else {
                tmp[k++] = (char)b;
            }
        }
    }
    tfb_buf_put(c->out, tmp, k);
}

static int fail(ctx *c, const char *why)
{
    if (!c->err) {
        c->err = TFB_ECORRUPT;
        c->why = why;
    }
    return c->err;
}

static int print_msg(ctx *c, const msg_desc *d, const uint8_t *p, size_t n,
                     int depth, int top_node);

/* The scalar value u of type t (from a varint or fixed field). */
static void put_scalar(ctx *c, const fdesc *f, uint64_t u)
{
    char b[40];
    switch (f->type) {
    case F_INT32:
        snprintf(b, sizeof b, "%d", (int)(int32_t)(uint32_t)u);
        break;
    case F_INT64:
        snprintf(b, sizeof b, "%lld", (long long)(int64_t)u);
        break;
    case F_UINT32:
        snprintf(b, sizeof b, "%u", (unsigned)(uint32_t)u);
        break;
    case F_UINT64:
    case F_FIXED64:
        snprintf(b, sizeof b, "%llu", (unsigned long long)u);
        break;
    case F_BOOL:
        strcpy(b, u ? "true" : "false");
        break;
    case F_FLOAT: {
        uint32_t w = (uint32_t)u;
        float fl;
        memcpy(&fl, &w, 4);
        tfb_pbtxt_float(fl, b);
        break;
    }
    case F_DOUBLE: {
        double dd;
        memcpy(&dd, &u, 8);
        tfb_pbtxt_double(dd, b);
        break;
    }
    case F_ENUM: {
        const char *nm = f->en ? f->en((int64_t)(int32_t)(uint32_t)u) : NULL;
        if (nm)
            snprintf(b, sizeof b, "%s", nm);
        else
            snprintf(b, sizeof b, "%d", (int)(int32_t)(uint32_t)u);
        break;
    }
    default:
        b[0] = 0;
    }
    tfb_buf_puts(c->out, b);
}

static int is_varint_type(ftype t)
{
    return t == F_INT32 || t == F_INT64 || t == F_UINT32 || t == F_UINT64 ||
           t == F_BOOL || t == F_ENUM;
}

static unsigned wire_of(ftype t)
{
    if (is_varint_type(t))
        return PB_VARINT;
    if (t == F_FLOAT)
        return PB_I32;
    if (t == F_DOUBLE || t == F_FIXED64)
        return PB_I64;
    return PB_LEN;
}

static void line_scalar(ctx *c, const fdesc *f, uint64_t u, int depth)
{
    indent(c, depth);
    tfb_buf_puts(c->out, f->name);
    tfb_buf_puts(c->out, ": ");
    put_scalar(c, f, u);
    tfb_buf_put(c->out, "\n", 1);
}

static void line_string(ctx *c, const char *name, const uint8_t *p,
                        size_t n, const char *prefix, int depth)
{
    indent(c, depth);
    tfb_buf_puts(c->out, name);
    tfb_buf_puts(c->out, ": \"");
    if (prefix) {
        /* As merge_graph_defs does: "^" of a control input included. */
        put_escaped(c, (const uint8_t *)prefix, strlen(prefix));
        tfb_buf_put(c->out, "/", 1);
    }
    put_escaped(c, p, n);
    tfb_buf_put(c->out, "\"\n", 2);
}

static int open_msg(ctx *c, const char *name, int depth)
{
    indent(c, depth);
    tfb_buf_puts(c->out, name);
    tfb_buf_puts(c->out, " {\n");
    return 0;
}

static void close_msg(ctx *c, int depth)
{
    indent(c, depth);
    tfb_buf_put(c->out, "}\n", 2);
}

/* ---- maps: entries sorted by key, the last of equal keys kept ---- */

typedef struct map_ent {
    const uint8_t *key; /* string key, or NULL for integer keys */
    size_t key_len;
    uint64_t ikey;
    const uint8_t *val; /* the value's bytes (message or scalar field) */
    size_t val_len;
    const uint8_t *entry;
    size_t entry_len;
    size_t order;
} map_ent;

static int cmp_ent(const void *a, const void *b)
{
    const map_ent *x = a, *y = b;
    int r;
    if (x->key || y->key) {
        size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
        r = n ? memcmp(x->key, y->key, n) : 0;
        if (!r)
            r = (x->key_len > y->key_len) - (x->key_len < y->key_len);
    } else {
        r = (x->ikey > y->ikey) - (x->ikey < y->ikey);
    }
    if (!r)
        r = (x->order > y->order) - (x->order < y->order);
    return r;
}

static int print_map(ctx *c, const fdesc *f, const uint8_t *p, size_t n,
                     int depth, int top_node)
{
    const msg_desc *ed = f->msg;
    const uint8_t *q = p, *end = p + n;
    pb_field fl;
    size_t count = 0;
    int r;
    while ((r = pb_next(&q, end, &fl)) > 0)
        count += fl.num == f->num;
    if (!count)
        return 0;
    map_ent *v = calloc(count, sizeof *v);
    if (!v)
        return c->err = TFB_ENOMEM;
    size_t k = 0;
    q = p;
    while (pb_next(&q, end, &fl) > 0) {
        if (fl.num != f->num)
            continue;
        map_ent *e = &v[k];
        e->order = k++;
        e->entry = fl.p;
        e->entry_len = fl.len;
        e->key = ed->f[0].type == F_STRING ? (const uint8_t *)"" : NULL;
        const uint8_t *s = fl.p, *se = fl.p + fl.len;
        pb_field g;
        while ((r = pb_next(&s, se, &g)) > 0) {
            if (g.num == 1) {
                if (ed->f[0].type == F_STRING && g.wt == PB_LEN) {
                    e->key = g.p;
                    e->key_len = g.len;
                } else if (ed->f[0].type != F_STRING && g.wt != PB_LEN) {
                    e->ikey = g.u;
                }
            }
        }
        if (r < 0) {
            free(v);
            return fail(c, "a map entry is cut short");
        }
    }
    qsort(v, count, sizeof *v, cmp_ent);
    /* The large attributes of a top-level node: left out, and listed
     * under large_attrs_key (TensorBoard's process_graph.py). */
    const char *lk = top_node && c->o && c->o->limit_attr_size &&
                             c->o->large_attrs_key
                         ? c->o->large_attrs_key
                         : NULL;
    size_t lk_len = lk ? strlen(lk) : 0;
    /* Which entries are kept: the last of equal keys, and not over the
     * size limit. */
    unsigned char *keep = malloc(count);
    if (!keep) {
        free(v);
        return c->err = TFB_ENOMEM;
    }
    size_t n_large = 0;
    for (size_t i = 0; i < count; i++) {
        keep[i] = 1;
        if (i + 1 < count && v[i].key_len == v[i + 1].key_len &&
            v[i].ikey == v[i + 1].ikey &&
            (!v[i].key || !v[i].key_len ||
             !memcmp(v[i].key, v[i + 1].key, v[i].key_len))) {
            keep[i] = 0; /* a later entry of the same key wins */
            continue;
        }
        if (lk) {
            /* The AttrValue's size: its field's length in the entry. */
            const uint8_t *s = v[i].entry, *se = s + v[i].entry_len;
            pb_field g;
            uint64_t vsize = 0;
            while (pb_next(&s, se, &g) > 0)
                if (g.num == 2 && g.wt == PB_LEN)
                    vsize = g.len;
            if (vsize > c->o->limit_attr_size) {
                keep[i] = 2;
                n_large++;
            }
        }
    }
    int placed = n_large == 0;
    for (size_t i = 0; i <= count; i++) {
        if (!placed &&
            (i == count ||
             (keep[i] == 1 &&
              cmp_ent(&(map_ent){.key = (const uint8_t *)lk,
                                 .key_len = lk_len},
                      &(map_ent){.key = v[i].key, .key_len = v[i].key_len,
                                 .order = 0}) <= 0))) {
            /* key: large_attrs_key, value { list { s: each key } } */
            placed = 1;
            open_msg(c, f->name, depth);
            line_string(c, "key", (const uint8_t *)lk, lk_len, NULL,
                        depth + 1);
            open_msg(c, "value", depth + 1);
            open_msg(c, "list", depth + 2);
            for (size_t j = 0; j < count; j++)
                if (keep[j] == 2)
                    line_string(c, "s", v[j].key, v[j].key_len, NULL,
                                depth + 3);
            close_msg(c, depth + 2);
            close_msg(c, depth + 1);
            close_msg(c, depth);
        }
        if (i == count || keep[i] != 1)
            continue;
        open_msg(c, f->name, depth);
        if (print_msg(c, ed, v[i].entry, v[i].entry_len, depth + 1, 0) < 0)
            break;
        close_msg(c, depth);
    }
    free(keep);
    free(v);
    return c->err;
}

static int print_field(ctx *c, const fdesc *f, const uint8_t *p, size_t n,
                       int depth, int top_node)
{
    const uint8_t *q = p, *end = p + n;
    pb_field fl;
    int r;
    if (f->map)
        return print_map(c, f, p, n, depth, top_node);
    if (f->repeated) {
        while ((r = pb_next(&q, end, &fl)) > 0) {
            if (fl.num != f->num)
                continue;
            if (f->type == F_MSG) {
                open_msg(c, f->name, depth);
                if (print_msg(c, f->msg, fl.p, fl.len, depth + 1,
                              f->msg == &node_def_d && depth == 0) < 0)
                    return c->err;
                close_msg(c, depth);
            } else if (f->type == F_STRING) {
                const char *prefix =
                    top_node && f->num == 3 && c->o ? c->o->name_prefix
                                                    : NULL;
                line_string(c, f->name, fl.p, fl.len, prefix, depth);
            } else if (fl.wt == PB_LEN) {
                /* Packed. */
                const uint8_t *s = fl.p, *se = fl.p + fl.len;
                while (s < se) {
                    uint64_t u;
                    if (is_varint_type(f->type)) {
                        if (pb_get_varint(&s, se, &u) < 0)
                            return fail(c, "a packed list is cut short");
                    } else if (f->type == F_FLOAT) {
                        if (se - s < 4)
                            return fail(c, "a packed list is cut short");
                        u = pb_le32(s);
                        s += 4;
                    } else {
                        if (se - s < 8)
                            return fail(c, "a packed list is cut short");
                        u = pb_le64(s);
                        s += 8;
                    }
                    line_scalar(c, f, u, depth);
                }
            } else {
                line_scalar(c, f, fl.u, depth);
            }
            if (c->out->failed)
                return c->err = TFB_ENOMEM;
            if (c->o && c->o->max_out && c->out->n > c->o->max_out)
                return c->err = TFB_ETOOBIG;
        }
        return 0;
    }
    /* Singular: the last occurrence wins (messages: merged by protobuf;
     * the last is taken here). */
    const uint8_t *lp = NULL;
    size_t ll = 0;
    uint64_t lu = 0;
    int seen = 0;
    while ((r = pb_next(&q, end, &fl)) > 0)
        if (fl.num == f->num) {
            seen = 1;
            lp = fl.p;
            ll = fl.len;
            lu = fl.u;
        }
    if (!seen)
        return 0;
    if (f->type == F_MSG) {
        open_msg(c, f->name, depth);
        if (print_msg(c, f->msg, lp, ll, depth + 1, 0) < 0)
            return c->err;
        close_msg(c, depth);
        return 0;
    }
    if (f->type == F_STRING) {
        if (!ll && !f->oneof)
            return 0; /* proto3: a default is not printed */
        const char *prefix =
            top_node && f->num == 1 && c->o ? c->o->name_prefix : NULL;
        line_string(c, f->name, lp, ll, prefix, depth);
        return 0;
    }
    if (!lu && !f->oneof)
        return 0;
    if (f->type == F_FLOAT || f->type == F_DOUBLE) {
        /* proto3 leaves out +0.0 only. */
        if (!f->oneof && lu == 0)
            return 0;
    }
    line_scalar(c, f, lu, depth);
    return 0;
}

static int print_msg(ctx *c, const msg_desc *d, const uint8_t *p, size_t n,
                     int depth, int top_node)
{
    if (depth > TFB_PBTXT_MAX_DEPTH)
        return fail(c, "messages nest too deep");
    /* Well-formed, with the wire types the schema says (a repeated
     * number may come packed). */
    const uint8_t *q = p, *end = p + n;
    pb_field fl;
    int r;
    while ((r = pb_next(&q, end, &fl)) > 0) {
        for (size_t i = 0; i < d->n; i++) {
            const fdesc *f = &d->f[i];
            if (f->num != fl.num)
                continue;
            unsigned w = f->map ? PB_LEN : wire_of(f->type);
            if (fl.wt != w && !(f->repeated && fl.wt == PB_LEN))
                return fail(c, "a field has the wrong wire type");
            break;
        }
    }
    if (r < 0)
        return fail(c, "a message is cut short or malformed");
    for (size_t i = 0; i < d->n; i++) {
        /* The merge of several graphs prints their nodes, then the
         * first one's other fields. */
        if (depth == 0 && c->o && c->o->part &&
            (c->o->part == 1) != (d->f[i].num == 1 && d == &graph_def_d))
            continue;
        if (print_field(c, &d->f[i], p, n, depth, top_node) < 0)
            return c->err;
    }
    if (c->out->failed)
        return c->err = TFB_ENOMEM;
    if (c->o && c->o->max_out && c->out->n > c->o->max_out)
        return c->err = TFB_ETOOBIG;
    return 0;
}

int tfb_pbtxt(tfb_buf *out, tfb_pbtxt_type t, const uint8_t *p, size_t n,
              const tfb_pbtxt_opts *o, const char **why)
{
    ctx c = {out, o, NULL, 0};
    const msg_desc *d = t == TFB_PBTXT_RUN_METADATA ? &run_metadata_d
                                                     : &graph_def_d;
    int rc = print_msg(&c, d, p, n, 0, 0);
    if (why)
        *why = c.why;
    return rc < 0 ? rc : 0;
}
