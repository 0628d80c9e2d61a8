/*
 * pb.h - the protobuf wire codec: just enough for the fixed event schema.
 *
 * Encoding writes into a buffer the caller sized beforehand (the *_size
 * helpers compute exact sizes, so nested lengths are known before writing:
 * no back-patching, no allocation). Decoding reads views into the input
 * buffer (zero-copy). All functions are pure and thread-safe.
 */
#ifndef TFB_PB_H
#define TFB_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* ---- sizes ---- */
static inline size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Size of a length-delimited field with a one-byte key. */
static inline size_t pb_len_field_size(size_t len)
{
    return 1 + pb_varint_size(len) + len;
}

/* ---- encoding ---- */
static inline uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *pb_put_key(uint8_t *p, unsigned field, unsigned wt)
{
    return pb_put_varint(p, ((uint64_t)field << 3) | wt);
}

/* Little-endian hosts store the wire bytes with one move; others
 * assemble them byte by byte. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PB_HOST_LE 1
#endif

static inline uint8_t *pb_put_fixed32(uint8_t *p, uint32_t v)
{
#ifdef PB_HOST_LE
    memcpy(p, &v, 4);
#else
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
#endif
    return p + 4;
}

static inline uint8_t *pb_put_fixed64(uint8_t *p, uint64_t v)
{
#ifdef PB_HOST_LE
    memcpy(p, &v, 8);
    return p + 8;
#else
    p = pb_put_fixed32(p, (uint32_t)v);
    return pb_put_fixed32(p, (uint32_t)(v >> 32));
#endif
}

static inline uint8_t *pb_put_double(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    return pb_put_fixed64(p, v);
}

static inline uint8_t *pb_put_float(uint8_t *p, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    return pb_put_fixed32(p, v);
}

/* Key + length prefix of a length-delimited field; the caller writes the
 * len bytes of content next. */
static inline uint8_t *pb_put_len(uint8_t *p, unsigned field, size_t len)
{
    p = pb_put_key(p, field, PB_LEN);
    return pb_put_varint(p, len);
}

static inline uint8_t *pb_put_bytes(uint8_t *p, unsigned field,
                                    const void *data, size_t len)
{
    p = pb_put_len(p, field, len);
    if (len)
        memcpy(p, data, len);
    return p + len;
}

/* ---- decoding ---- */
typedef struct pb_field {
    unsigned num;
    unsigned wt;
    uint64_t u;        /* VARINT, I64, I32 payload */
    const uint8_t *p;  /* LEN payload */
    size_t len;
} pb_field;

static inline uint32_t pb_le32(const uint8_t *p)
{
#ifdef PB_HOST_LE
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
#endif
}

static inline uint64_t pb_le64(const uint8_t *p)
{
#ifdef PB_HOST_LE
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    return (uint64_t)pb_le32(p) | ((uint64_t)pb_le32(p + 4) << 32);
#endif
}

static inline int pb_get_varint(const uint8_t **pp, const uint8_t *end,
                                uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return -1;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* Reads the next field at *pp. Returns 1 with *f filled, 0 at end, -1 on a
 * malformed message. Groups (wire types 3, 4) are rejected: the event
 * schema never uses them. Always inlined, with one-byte fast paths for
 * keys and lengths: it is the inner loop of every reader. */
__attribute__((always_inline)) static inline int
pb_next(const uint8_t **pp, const uint8_t *end, pb_field *f)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return 0;
    f->u = 0; /* every member defined, whatever the wire type */
    f->p = NULL;
    f->len = 0;
    uint64_t key = *p;
    if (key < 0x80)
        p++;
    else if (pb_get_varint(&p, end, &key) < 0)
        return -1;
    f->num = (unsigned)(key >> 3);
    f->wt = (unsigned)(key & 7);
    if (f->num == 0)
        return -1;
    switch (f->wt) {
    case PB_VARINT:
        if (p < end && *p < 0x80)
            f->u = *p++;
        else if (pb_get_varint(&p, end, &f->u) < 0)
            return -1;
        break;
    case PB_I64:
        if (end - p < 8)
            return -1;
        f->u = pb_le64(p);
        p += 8;
        break;
    case PB_I32:
        if (end - p < 4)
            return -1;
        f->u = pb_le32(p);
        p += 4;
        break;
    case PB_LEN: {
        uint64_t len;
        if (p < end && *p < 0x80)
            len = *p++;
        else if (pb_get_varint(&p, end, &len) < 0)
            return -1;
        if (len > (uint64_t)(end - p))
            return -1;
        f->p = p;
        f->len = (size_t)len;
        p += len;
        break;
    }
    default:
        return -1;
    }
    *pp = p;
    return 1;
}

static inline double pb_as_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static inline float pb_as_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#endif
