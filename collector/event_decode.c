/*
 * event_decode.c - zero-copy decoding of Event, Summary.Value,
 * HistogramProto and TensorProto, covering every variant TensorBoard reads:
 * simple_value, rank-0 tensors (float, double, half, bfloat16, int and
 * bool, in tensor_content or typed fields), HistogramProto, [k,3] histogram
 * tensors, text and image summaries.
 */
#include "collector/event_decode.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector/abi.h"
#include "collector/pb.h"
#include "base/vec.h"

enum {
    DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 5,
    DT_INT8 = 6, DT_STRING = 7, DT_INT64 = 9, DT_BOOL = 10, DT_BFLOAT16 = 14,
    DT_UINT16 = 17, DT_HALF = 19, DT_UINT32 = 22, DT_UINT64 = 23,
};

/* Reads a varint length at *pp that must fit in what is left. */
static inline int take_len(const uint8_t **pp, const uint8_t *end, size_t *len)
{
    uint64_t v;
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80)
        v = *p++;
    else if (pb_get_varint(&p, end, &v) < 0)
        return -1;
    if (v > (uint64_t)(end - p))
        return -1;
    *pp = p;
    *len = (size_t)v;
    return 0;
}

/* A length-delimited field's bytes, as a string view. */
static inline tfb_strview field_view(const pb_field *f)
{
    return (tfb_strview){(const char *)f->p, f->len};
}

int tfb_event_decode(const uint8_t *p, size_t n, tfb_event *ev)
{
    const uint8_t *end = p + n;
    pb_field f;
    int r;
    ev->wall_time = 0;
    ev->step = 0;
    ev->kind = TFB_EVENT_OTHER;
    ev->file_version.ptr = NULL;
    ev->file_version.len = 0;
    ev->summary = NULL;
    ev->summary_len = 0;
    ev->offset = 0;
    ev->blob = NULL;
    ev->blob_len = 0;
    ev->blob_field = 0;
    /* Fast path for what scalar-heavy files are made of: wall_time, step
     * and summary with one-byte keys, in any order. */
    while (p < end) {
        if (*p == 0x09 && end - p >= 9) { /* 1: wall_time, fixed64 */
            ev->wall_time = pb_as_double(pb_le64(p + 1));
            p += 9;
        } else if (*p == 0x10) { /* 2: step, varint */
            uint64_t u;
            p++;
            if (pb_get_varint(&p, end, &u) < 0)
                return TFB_ECORRUPT;
            ev->step = (int64_t)u;
        } else if (*p == 0x2a) { /* 5: summary */
            size_t len;
            p++;
            if (take_len(&p, end, &len) < 0)
                return TFB_ECORRUPT;
            ev->kind = TFB_EVENT_SUMMARY;
            ev->summary = p;
            ev->summary_len = len;
            p += len;
        } else {
            break;
        }
    }
    while ((r = pb_next(&p, end, &f)) > 0) {
        switch (f.num) {
        case 1:
            if (f.wt != PB_I64)
                return TFB_ECORRUPT;
            ev->wall_time = pb_as_double(f.u);
            break;
        case 2:
            if (f.wt != PB_VARINT)
                return TFB_ECORRUPT;
            ev->step = (int64_t)f.u;
            break;
        case 3:
            if (f.wt != PB_LEN)
                return TFB_ECORRUPT;
            ev->kind = TFB_EVENT_FILE_VERSION;
            ev->file_version = field_view(&f);
            break;
        case 5:
            if (f.wt != PB_LEN)
                return TFB_ECORRUPT;
            ev->kind = TFB_EVENT_SUMMARY;
            ev->summary = f.p;
            ev->summary_len = f.len;
            break;
        case 4:
        case 9:
        case 8:
            if (f.wt != PB_LEN)
                return TFB_ECORRUPT;
            ev->kind = f.num == 8 ? TFB_EVENT_RUN_METADATA : TFB_EVENT_GRAPH;
            ev->blob = f.p;
            ev->blob_len = f.len;
            ev->blob_field = (int)f.num;
            break;
        default: /* log_message, session_log, source_metadata, unknown */
            break;
        }
    }
    return r < 0 ? TFB_ECORRUPT : 0;
}

static void decode_metadata(const uint8_t *p, size_t n, tfb_value *v)
{
    const uint8_t *end = p + n;
    pb_field f;
    while (pb_next(&p, end, &f) > 0) {
        if (f.wt != PB_LEN)
            continue;
        if (f.num == 1) { /* plugin_data */
            const uint8_t *q = f.p, *qe = f.p + f.len;
            pb_field g;
            while (pb_next(&q, qe, &g) > 0)
                if (g.num == 1 && g.wt == PB_LEN)
                    v->plugin_name = field_view(&g);
                else if (g.num == 2 && g.wt == PB_LEN)
                    v->plugin_content = field_view(&g);
        } else if (f.num == 2) {
            v->display_name = field_view(&f);
        } else if (f.num == 3) {
            v->description = field_view(&f);
        }
    }
}

static void decode_image(const uint8_t *p, size_t n, tfb_value *v)
{
    const uint8_t *end = p + n;
    pb_field f;
    while (pb_next(&p, end, &f) > 0) {
        if (f.num == 1 && f.wt == PB_VARINT)
            v->image_height = (int32_t)f.u;
        else if (f.num == 2 && f.wt == PB_VARINT)
            v->image_width = (int32_t)f.u;
        else if (f.num == 3 && f.wt == PB_VARINT)
            v->image_colorspace = (int32_t)f.u;
        else if (f.num == 4 && f.wt == PB_LEN)
            v->image_data = field_view(&f);
    }
}

static int plugin_is(const tfb_strview *s, const char *name)
{
    size_t n = strlen(name);
    return s->len == n && memcmp(s->ptr, name, n) == 0;
}

/* ---- tensors ---- */

int tfb_tensor_shape_parse(const uint8_t *p, size_t n, tfb_tensor_shape *t)
{
    const uint8_t *end = p + n;
    pb_field f;
    int r;
    memset(t, 0, sizeof *t);
    t->elems = 1;
    while ((r = pb_next(&p, end, &f)) > 0) {
        if (f.num == 1 && f.wt == PB_VARINT) {
            t->dtype = (int)f.u;
        } else if (f.num == 2 && f.wt == PB_LEN) {
            const uint8_t *q = f.p, *qe = f.p + f.len;
            pb_field g;
            while (pb_next(&q, qe, &g) > 0) {
                if (g.num != 2 || g.wt != PB_LEN)
                    continue;
                int64_t size = 0;
                const uint8_t *d = g.p, *de = g.p + g.len;
                pb_field h;
                while (pb_next(&d, de, &h) > 0)
                    if (h.num == 1 && h.wt == PB_VARINT)
                        size = (int64_t)h.u;
                if (t->rank < TFB_TENSOR_MAX_DIMS)
                    t->dims[t->rank] = size;
                if (t->rank < INT_MAX)
                    t->rank++;
                /* A crafted shape may claim sizes whose product overflows
                 * int64 (undefined behaviour), or negative sizes: the
                 * element count is then unknown (-1, sticky). */
                int64_t prod;
                if (t->elems < 0 || size < 0 ||
                    __builtin_mul_overflow(t->elems, size, &prod))
                    t->elems = -1;
                else
                    t->elems = prod;
            }
        } else if (f.num == 4 && f.wt == PB_LEN) {
            t->content = f.p;
            t->content_len = f.len;
        }
    }
    return r < 0 ? TFB_ECORRUPT : 0;
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double bf16_to_double(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    return (double)pb_as_float(bits);
}

static int elem_size(int dtype)
{
    switch (dtype) {
    case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
    case DT_DOUBLE: case DT_INT64: case DT_UINT64: return 8;
    case DT_HALF: case DT_BFLOAT16: case DT_INT16: case DT_UINT16: return 2;
    case DT_UINT8: case DT_INT8: case DT_BOOL: return 1;
    default: return 0;
    }
}

/* Element i of tensor_content, as double. */
static double content_elem(const tfb_tensor_shape *t, size_t i)
{
    const uint8_t *p = t->content + i * (size_t)elem_size(t->dtype);
    switch (t->dtype) {
    case DT_FLOAT: return pb_as_float(pb_le32(p));
    case DT_DOUBLE: return pb_as_double(pb_le64(p));
    case DT_INT32: return (double)(int32_t)pb_le32(p);
    case DT_UINT32: return (double)pb_le32(p);
    case DT_INT64: return (double)(int64_t)pb_le64(p);
    case DT_UINT64: return (double)pb_le64(p);
    case DT_HALF: return half_to_double((uint16_t)(p[0] | p[1] << 8));
    case DT_BFLOAT16: return bf16_to_double((uint16_t)(p[0] | p[1] << 8));
    case DT_INT16: return (double)(int16_t)(p[0] | p[1] << 8);
    case DT_UINT16: return (double)(uint16_t)(p[0] | p[1] << 8);
    case DT_INT8: return (double)(int8_t)p[0];
    case DT_UINT8: case DT_BOOL: return (double)p[0];
    default: return NAN;
    }
}

/* Calls fn on each element of the typed repeated field that goes with the
 * dtype (float_val, double_val, int_val, int64_val, bool_val, half_val),
 * packed or not, in order. Stops early when fn returns nonzero. */
typedef int (*elem_fn)(void *ctx, double x);

static int typed_field_for(int dtype, unsigned *num, unsigned *wt)
{
    switch (dtype) {
    case DT_FLOAT: *num = 5; *wt = PB_I32; return 0;
    case DT_DOUBLE: *num = 6; *wt = PB_I64; return 0;
    case DT_INT32: case DT_INT16: case DT_INT8: case DT_UINT8:
    case DT_UINT16:
        *num = 7; *wt = PB_VARINT; return 0;
    case DT_INT64: *num = 10; *wt = PB_VARINT; return 0;
    case DT_BOOL: *num = 11; *wt = PB_VARINT; return 0;
    case DT_HALF: case DT_BFLOAT16: *num = 13; *wt = PB_VARINT; return 0;
    case DT_UINT32: *num = 16; *wt = PB_VARINT; return 0;
    case DT_UINT64: *num = 17; *wt = PB_VARINT; return 0;
    default: return -1;
    }
}

static double typed_value(int dtype, uint64_t u)
{
    switch (dtype) {
    case DT_FLOAT: return pb_as_float((uint32_t)u);
    case DT_DOUBLE: return pb_as_double(u);
    case DT_INT64: case DT_INT32: case DT_INT16: case DT_INT8:
        return (double)(int64_t)u;
    case DT_HALF: return half_to_double((uint16_t)u);
    case DT_BFLOAT16: return bf16_to_double((uint16_t)u);
    default: return (double)u;
    }
}

static int for_each_typed(const uint8_t *p, size_t n, int dtype, elem_fn fn,
                          void *ctx)
{
    unsigned num, wt;
    if (typed_field_for(dtype, &num, &wt) < 0)
        return TFB_EINVAL;
    const uint8_t *end = p + n;
    pb_field f;
    int r;
    while ((r = pb_next(&p, end, &f)) > 0) {
        if (f.num != num)
            continue;
        if (f.wt == wt) {
            if (fn(ctx, typed_value(dtype, f.u)))
                return 0;
        } else if (f.wt == PB_LEN) { /* packed */
            const uint8_t *q = f.p, *qe = f.p + f.len;
            while (q < qe) {
                uint64_t u;
                if (wt == PB_I32) {
                    if (qe - q < 4)
                        return TFB_ECORRUPT;
                    u = pb_le32(q);
                    q += 4;
                } else if (wt == PB_I64) {
                    if (qe - q < 8)
                        return TFB_ECORRUPT;
                    u = pb_le64(q);
                    q += 8;
                } else if (pb_get_varint(&q, qe, &u) < 0) {
                    return TFB_ECORRUPT;
                }
                if (fn(ctx, typed_value(dtype, u)))
                    return 0;
            }
        }
    }
    return r < 0 ? TFB_ECORRUPT : 0;
}

typedef struct collect_ctx {
    double *out;
    size_t cap, n;
} collect_ctx;

static int collect_elem(void *c, double x)
{
    collect_ctx *cc = c;
    if (cc->n < cc->cap)
        cc->out[cc->n] = x;
    cc->n++;
    return 0;
}

/* Up to cap elements of a numeric tensor into out; returns how many the
 * tensor holds (content or typed field), or a negative code. */
static int64_t tensor_elems(const uint8_t *p, size_t n, const tfb_tensor_shape *t,
                            double *out, size_t cap)
{
    int es = elem_size(t->dtype);
    if (!es)
        return TFB_EINVAL;
    if (t->content) {
        size_t cnt = t->content_len / (size_t)es;
        for (size_t i = 0; i < cnt && i < cap; i++)
            out[i] = content_elem(t, i);
        return (int64_t)cnt;
    }
    collect_ctx cc = {out, cap, 0};
    int rc = for_each_typed(p, n, t->dtype, collect_elem, &cc);
    return rc < 0 ? rc : (int64_t)cc.n;
}

/* The accessors below read the caller's tfb_value through its size
 * (abi.h): an older caller's smaller struct is seen with zeros past it. */

int tfb_value_tensor_scalar(const tfb_value *v, double *out)
{
    tfb_value whole;
    if (!v || !out || !(v = tfb_abi_view(&whole, sizeof whole, v)) ||
        !v->tensor)
        return TFB_EINVAL;
    tfb_tensor_shape t;
    if (tfb_tensor_shape_parse(v->tensor, v->tensor_len, &t) < 0 || t.elems != 1)
        return TFB_EINVAL;
    double x;
    int64_t n = tensor_elems(v->tensor, v->tensor_len, &t, &x, 1);
    if (n < 1)
        return TFB_EINVAL;
    *out = x;
    return 0;
}

int tfb_value_string(const tfb_value *v, size_t i, tfb_strview *out)
{
    tfb_value whole;
    if (!v || !out || !(v = tfb_abi_view(&whole, sizeof whole, v)) ||
        !v->tensor)
        return 0;
    const uint8_t *p = v->tensor, *end = p + v->tensor_len;
    pb_field f;
    size_t k = 0;
    while (pb_next(&p, end, &f) > 0) {
        if (f.num == 8 && f.wt == PB_LEN) {
            if (k++ == i) {
                *out = field_view(&f);
                return 1;
            }
        }
    }
    return 0;
}

/* A count stored as a float (a float/double tensor from another writer)
 * may be +Inf or beyond 2^64, where a plain cast is undefined behaviour.
 * Such a count saturates at UINT64_MAX: it is still a non-zero count, so
 * the record still says "non-finite values were seen". x >= 0 here. */
static uint64_t count_from_double(double x)
{
    /* 2^64 is exactly representable; every double below it converts. */
    if (x >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)x;
}

static int decode_numerics(tfb_value *v)
{
    tfb_tensor_shape t;
    double c[3] = {0, 0, 0};
    if (tfb_tensor_shape_parse(v->tensor, v->tensor_len, &t) < 0 ||
        tensor_elems(v->tensor, v->tensor_len, &t, c, 3) != 3)
        return -1;
    for (int i = 0; i < 3; i++)
        if (!(c[i] >= 0))
            return -1; /* negative or NaN: not a count */
    v->numerics.nan = count_from_double(c[0]);
    v->numerics.pos_inf = count_from_double(c[1]);
    v->numerics.neg_inf = count_from_double(c[2]);
    return 0;
}

static void apply_plugin(tfb_value *v, const char *plugin, size_t len);

void tfb_value_apply_plugin(tfb_value *v, const char *plugin, size_t len)
{
    if (!v || tfb_abi_size(v) < sizeof(size_t))
        return;
    if (tfb_abi_size(v) >= sizeof(tfb_value)) {
        apply_plugin(v, plugin, len);
        return;
    }
    /* An older caller's smaller struct: work on a whole copy and give
     * back only the fields it has. */
    tfb_value whole;
    tfb_abi_view(&whole, sizeof whole, v);
    whole.size = sizeof whole;
    apply_plugin(&whole, plugin, len);
    tfb_abi_write(v, &whole, sizeof whole);
}

static void apply_plugin(tfb_value *v, const char *plugin, size_t len)
{
    if (!v->tensor)
        return; /* simple_value, histo and image need no plugin */
    tfb_strview pl = {plugin ? plugin : "", plugin ? len : 0};
    if (plugin_is(&pl, "scalars")) {
        v->kind = tfb_value_tensor_scalar(v, &v->scalar) == 0
                      ? TFB_VALUE_SCALAR : TFB_VALUE_TENSOR;
    } else if (plugin_is(&pl, "histograms")) {
        v->kind = TFB_VALUE_HISTOGRAM;
    } else if (plugin_is(&pl, "text")) {
        v->kind = TFB_VALUE_TEXT;
    } else if (plugin_is(&pl, TFB_NUMERICS_PLUGIN)) {
        v->kind = decode_numerics(v) == 0 ? TFB_VALUE_NUMERICS
                                          : TFB_VALUE_TENSOR;
    } else {
        v->kind = pl.len ? TFB_VALUE_TENSOR : TFB_VALUE_UNKNOWN;
    }
}

/* memset(v, 0, sizeof *v), field by field: a memset of this size
 * compiles to `rep stos`, whose start-up cost was a quarter of the time
 * to decode a scalar value. Every field of tfb_value is set here: a field
 * added to tfb_value must be added here too, which the size check below
 * makes a build error rather than an uninitialised field (LP64 size).
 * v->size is the caller's and stays as it is. */
#if defined(__LP64__)
_Static_assert(sizeof(tfb_value) == 200,
               "tfb_value changed: set the new field in value_clear()");
#endif
static inline void value_clear(tfb_value *v)
{
    static const tfb_strview none = {NULL, 0};
    v->tag = none;
    v->plugin_name = none;
    v->display_name = none;
    v->description = none;
    v->kind = TFB_VALUE_UNKNOWN;
    v->scalar = 0;
    v->numerics.size = sizeof v->numerics;
    v->numerics.nan = v->numerics.pos_inf = v->numerics.neg_inf = 0;
    v->image_height = v->image_width = v->image_colorspace = 0;
    v->image_data = none;
    v->histo = NULL;
    v->histo_len = 0;
    v->tensor = NULL;
    v->tensor_len = 0;
    v->plugin_content = none;
}

static int decode_value(const uint8_t *p, size_t n, tfb_value *v)
{
    const uint8_t *end = p + n;
    pb_field f;
    int r, has_simple = 0;
    tfb_strview node_name = {NULL, 0};
    value_clear(v); /* v->size, the caller's, is kept */
    /* Fast path: tag, simple_value, metadata with one-byte keys. */
    while (p < end) {
        size_t len;
        if (*p == 0x0a) { /* 1: tag */
            p++;
            if (take_len(&p, end, &len) < 0)
                return TFB_ECORRUPT;
            v->tag.ptr = (const char *)p;
            v->tag.len = len;
            p += len;
        } else if (*p == 0x15 && end - p >= 5) { /* 2: simple_value */
            has_simple = 1;
            v->scalar = pb_as_float(pb_le32(p + 1));
            p += 5;
        } else if (*p == 0x4a) { /* 9: metadata */
            p++;
            if (take_len(&p, end, &len) < 0)
                return TFB_ECORRUPT;
            decode_metadata(p, len, v);
            p += len;
        } else {
            break;
        }
    }
    while ((r = pb_next(&p, end, &f)) > 0) {
        switch (f.num) {
        case 1:
            if (f.wt != PB_LEN)
                return TFB_ECORRUPT;
            v->tag = field_view(&f);
            break;
        case 2:
            if (f.wt != PB_I32)
                return TFB_ECORRUPT;
            has_simple = 1;
            v->scalar = pb_as_float((uint32_t)f.u);
            break;
        case 4:
            if (f.wt == PB_LEN)
                decode_image(f.p, f.len, v), v->kind = TFB_VALUE_IMAGE;
            break;
        case 5:
            if (f.wt == PB_LEN) {
                v->histo = f.p;
                v->histo_len = f.len;
            }
            break;
        case 7:
            if (f.wt == PB_LEN)
                node_name = field_view(&f);
            break;
        case 8:
            if (f.wt == PB_LEN) {
                v->tensor = f.p;
                v->tensor_len = f.len;
            }
            break;
        case 9:
            if (f.wt == PB_LEN)
                decode_metadata(f.p, f.len, v);
            break;
        default:
            break;
        }
    }
    if (r < 0)
        return TFB_ECORRUPT;
    if (!v->tag.len && node_name.len)
        v->tag = node_name;
    if (!v->tag.ptr)
        v->tag.ptr = "";
    if (!v->plugin_name.ptr)
        v->plugin_name.ptr = "";
    if (has_simple) {
        v->kind = TFB_VALUE_SCALAR;
        v->tensor = NULL;
    } else if (v->histo) {
        v->kind = TFB_VALUE_HISTOGRAM;
        v->tensor = NULL;
    } else if (v->kind != TFB_VALUE_IMAGE && v->tensor) {
        tfb_value_apply_plugin(v, v->plugin_name.ptr, v->plugin_name.len);
    }
    return 0;
}

/* decode_value into the caller's v: in place when v is as large as
 * ours; an older caller's smaller struct gets a whole value's fields as
 * far as its size reaches. 1, or TFB_ECORRUPT. */
static int decode_value_sized(const uint8_t *p, size_t n, tfb_value *v)
{
    if (tfb_abi_size(v) >= sizeof(tfb_value))
        return decode_value(p, n, v) < 0 ? TFB_ECORRUPT : 1;
    tfb_value whole;
    whole.size = sizeof whole;
    if (decode_value(p, n, &whole) < 0)
        return TFB_ECORRUPT;
    tfb_abi_write(v, &whole, sizeof whole);
    return 1;
}

int tfb_summary_next(const uint8_t *summary, size_t len, size_t *pos,
                     tfb_value *v)
{
    if (!pos || !v || (!summary && len) || tfb_abi_size(v) < sizeof(size_t))
        return TFB_EINVAL;
    if (*pos >= len)
        return 0;
    const uint8_t *p = summary + *pos, *end = summary + len;
    /* Fast path: a value field (1, LEN) with a one-byte key, as every
     * writer puts them; no pb_field on the stack (its two 32-bit halves,
     * compared as one 64-bit word, stalled store forwarding). */
    if (*p == 0x0a) {
        size_t n;
        p++;
        if (take_len(&p, end, &n) < 0) {
            *pos = len;
            return TFB_ECORRUPT;
        }
        *pos = (size_t)(p + n - summary);
        return decode_value_sized(p, n, v);
    }
    pb_field f;
    int r;
    while ((r = pb_next(&p, end, &f)) > 0) {
        if (f.num == 1 && f.wt == PB_LEN) {
            *pos = (size_t)(p - summary);
            return decode_value_sized(f.p, f.len, v);
        }
    }
    *pos = len;
    return r < 0 ? TFB_ECORRUPT : 0;
}

/* ---- histograms ---- */

typedef TFB_VEC(double) dvec;

/* Appends a repeated double field (packed, or one unpacked element). */
static int push_doubles(dvec *d, const pb_field *f)
{
    if (f->wt == PB_I64)
        return tfb_vec_push(d, pb_as_double(f->u));
    if (f->wt != PB_LEN || f->len % 8)
        return -1;
    if (tfb_vec_need(d, d->n + f->len / 8) < 0) /* one allocation */
        return -1;
    for (size_t i = 0; i < f->len; i += 8)
        if (tfb_vec_push(d, pb_as_double(pb_le64(f->p + i))) < 0)
            return -1;
    return 0;
}

/* The caller's bucket array (tfboard.h: walked with out[0].size; each
 * bucket written gets that size, and nothing past it is written). */
typedef struct bucket_out {
    char *p;
    size_t stride, cap;
} bucket_out;

static void put_bucket(const bucket_out *o, size_t i, double left,
                       double right, double count)
{
    tfb_bucket b = {sizeof b, left, right, count};
    char *dst = o->p + i * o->stride;
    memcpy(dst, &o->stride, sizeof o->stride);
    tfb_abi_write(dst, &b, sizeof b);
}

static int64_t histo_proto_buckets(const tfb_value *v, const bucket_out *out,
                                   double *pmin, double *pmax, double *pnum,
                                   double *psum)
{
    const uint8_t *p = v->histo, *end = p + v->histo_len;
    pb_field f;
    int r;
    double mn = 0, mx = 0, num = 0, sum = 0;
    dvec lim = {0}, cnt = {0};
    int64_t rc = 0;
    while ((r = pb_next(&p, end, &f)) > 0) {
        if (f.num >= 1 && f.num <= 4 && f.wt == PB_I64) {
            double x = pb_as_double(f.u);
            if (f.num == 1) mn = x;
            else if (f.num == 2) mx = x;
            else if (f.num == 3) num = x;
            else sum = x;
        } else if (f.num == 6 || f.num == 7) {
            if (push_doubles(f.num == 6 ? &lim : &cnt, &f) < 0) {
                rc = TFB_ECORRUPT;
                break;
            }
        }
    }
    if (r < 0)
        rc = TFB_ECORRUPT;
    if (rc == 0) {
        /* TensorBoard's reading (data_compat.py, 2.21): the empty buckets
         * at both ends go first, then min and max become the outer edges
         * of what is left. Keeping the empty ends would give edge buckets
         * running backwards ([min, limit] with limit < min). */
        size_t k = lim.n < cnt.n ? lim.n : cnt.n;
        size_t first = 0, last = k; /* kept: [first, last) */
        while (first < last && cnt.v[first] == 0)
            first++;
        while (last > first && cnt.v[last - 1] == 0)
            last--;
        size_t kept = last - first;
        for (size_t j = 0; j < kept && j < out->cap; j++) {
            size_t i = first + j;
            put_bucket(out, j, j == 0 ? mn : lim.v[i - 1],
                       j + 1 == kept ? mx : lim.v[i], cnt.v[i]);
        }
        rc = (int64_t)kept;
        if (pmin) *pmin = mn;
        if (pmax) *pmax = mx;
        if (pnum) *pnum = num;
        if (psum) *psum = sum;
    }
    tfb_vec_free(&lim);
    tfb_vec_free(&cnt);
    return rc;
}

static int64_t histo_tensor_buckets(const tfb_value *v,
                                    const bucket_out *out, double *pmin,
                                    double *pmax, double *pnum, double *psum)
{
    tfb_tensor_shape t;
    if (tfb_tensor_shape_parse(v->tensor, v->tensor_len, &t) < 0)
        return TFB_ECORRUPT;
    if (t.rank == 1 && t.dims[0] == 0)
        t.rank = 2, t.dims[1] = 3; /* empty histogram: shape [0] */
    if (t.rank != 2 || t.dims[1] != 3 || t.dims[0] < 0 ||
        t.dims[0] > (1 << 24))
        return TFB_ECORRUPT;
    size_t k = (size_t)t.dims[0];
    double *vals = malloc((3 * k + 1) * sizeof *vals);
    if (!vals)
        return TFB_ENOMEM;
    int64_t n = tensor_elems(v->tensor, v->tensor_len, &t, vals, 3 * k);
    if (n < 0 || (size_t)n < 3 * k) {
        free(vals);
        return TFB_ECORRUPT;
    }
    double num = 0, sum = 0;
    for (size_t i = 0; i < k; i++) {
        if (i < out->cap)
            put_bucket(out, i, vals[3 * i], vals[3 * i + 1], vals[3 * i + 2]);
        num += vals[3 * i + 2];
        sum += vals[3 * i + 2] * 0.5 * (vals[3 * i] + vals[3 * i + 1]);
    }
    if (pmin) *pmin = k ? vals[0] : 0;
    if (pmax) *pmax = k ? vals[3 * k - 2] : 0;
    if (pnum) *pnum = num;
    if (psum) *psum = sum;
    free(vals);
    return (int64_t)k;
}

int64_t tfb_value_histogram(const tfb_value *v, tfb_bucket *out, size_t cap,
                            double *min, double *max, double *num,
                            double *sum)
{
    tfb_value whole;
    if (!v || (cap && (!out || tfb_abi_size(out) < sizeof(size_t))) ||
        !(v = tfb_abi_view(&whole, sizeof whole, v)))
        return TFB_EINVAL;
    bucket_out o = {(char *)out, cap ? tfb_abi_size(out) : 0, cap};
    if (v->histo)
        return histo_proto_buckets(v, &o, min, max, num, sum);
    if (v->tensor)
        return histo_tensor_buckets(v, &o, min, max, num, sum);
    return TFB_EINVAL;
}
