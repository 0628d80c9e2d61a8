/*
 * scalar_codec.c - block encoding of scalar points (see scalar_codec.h).
 *
 * The encoder tries the narrow form of each column and checks, point by
 * point, that the decoder's own arithmetic gives back the identical bits;
 * only then is the form used. So no rounding rule has to be argued about:
 * whatever decodes differently falls back to the raw form.
 */
#include "store/scalar_codec.h"

#include <string.h>

enum {
    STEP_STRIDE = 0,
    STEP_DELTA = 1,
    WALL_TICK_STRIDE = 0,
    WALL_TICK_DELTA = 1,
    WALL_RAW = 2,
    WALL_TICK_DOD = 3,
    VALUE_F32 = 0,
    VALUE_F64 = 1,
};

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static uint64_t zz(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

static uint64_t unzz(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static const uint8_t *get_varint(const uint8_t *p, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    *out = v;
    return p;
}

/* Exponent of the lowest set bit of a finite nonzero double: d is an odd
 * integer times 2^result. */
static int low_exp(double d)
{
    uint64_t b = dbits(d);
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t m = b & ((UINT64_C(1) << 52) - 1);
    if (e == 0)
        return -1074 + __builtin_ctzll(m); /* subnormal: m != 0 */
    return e - 1075 + __builtin_ctzll(m | (UINT64_C(1) << 52));
}

/* The unit 2^e, or 0 when e is outside the normal range. */
static double pow2(int e)
{
    if (e < -1022 || e > 1023)
        return 0;
    uint64_t b = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* Ticks of walls as offsets from wall[0] in units of 2^*e, when every
 * wall decodes back exactly; 0 when they do not. */
static int wall_ticks(const double *wall, size_t n, int64_t *k, int *e_out)
{
    double w0 = wall[0];
    int e = 1023;
    for (size_t i = 1; i < n; i++) {
        double d = wall[i] - w0;
        if (d != d || d - d != 0) /* NaN or infinite */
            return 0;
        if (d != 0) {
            int le = low_exp(d);
            if (le < e)
                e = le;
        }
    }
    if (n == 1 || e == 1023)
        e = 0; /* all equal: any unit */
    double unit = pow2(e), inv = pow2(-e);
    if (unit == 0 || inv == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        double kd = (wall[i] - w0) * inv;
        if (!(kd > -0x1p62 && kd < 0x1p62))
            return 0;
        k[i] = (int64_t)kd;
        if (dbits(w0 + (double)k[i] * unit) != dbits(wall[i]))
            return 0;
    }
    *e_out = e;
    return 1;
}

/* Writes an int64 column as STRIDE or DELTA; returns the form. */
static int put_ints(uint8_t **pp, const int64_t *v, size_t n, int first)
{
    uint8_t *p = *pp;
    uint64_t stride = n > 1 ? (uint64_t)v[1] - (uint64_t)v[0] : 0;
    int form = STEP_STRIDE;
    for (size_t i = 2; i < n; i++)
        if ((uint64_t)v[i] - (uint64_t)v[i - 1] != stride) {
            form = STEP_DELTA;
            break;
        }
    if (first)
        p = put_varint(p, zz((uint64_t)v[0]));
    if (form == STEP_STRIDE) {
        p = put_varint(p, zz(stride));
    } else {
        for (size_t i = 1; i < n; i++)
            p = put_varint(p, zz((uint64_t)v[i] - (uint64_t)v[i - 1]));
    }
    *pp = p;
    return form;
}

/* Reads n ints written by put_ints in the given form, from first. */
static const uint8_t *get_ints(const uint8_t *p, int form, uint64_t first,
                               int64_t *out, size_t n)
{
    uint64_t cur = first, z;
    if (form == STEP_STRIDE) {
        p = get_varint(p, &z);
        uint64_t d = unzz(z);
        if (out)
            for (size_t i = 0; i < n; i++, cur += d)
                out[i] = (int64_t)cur;
        return p;
    }
    if (out)
        out[0] = (int64_t)cur;
    for (size_t i = 1; i < n; i++) {
        p = get_varint(p, &z);
        cur += unzz(z);
        if (out)
            out[i] = (int64_t)cur;
    }
    return p;
}

/* Bytes put_varint writes for v: one per 7 significant bits (no loop:
 * the encoder counts two of these a wall). */
static size_t varint_len(uint64_t v)
{
    return (size_t)(63 - __builtin_clzll(v | 1)) / 7 + 1;
}

/* Writes a wall column's ticks k (k[0] == 0, so it is not written) in the
 * narrowest of three forms; returns the wall form. A clock at a fixed
 * rate whose period is no multiple of the tick (0.01 s at epoch seconds
 * is 41943.04 ticks of 2^-22 s) has deltas of 3 bytes that differ by a
 * tick or two: their differences (DOD) are 1 byte each. Jittered walls
 * can make the differences wider than the deltas, so both are counted
 * and the smaller is written. */
static int put_wall_ticks(uint8_t **pp, const int64_t *k, size_t n)
{
    uint64_t d1 = n > 1 ? (uint64_t)k[1] - (uint64_t)k[0] : 0;
    size_t delta_len = n > 1 ? varint_len(zz(d1)) : 0;
    size_t dod_len = delta_len;
    int stride = 1;
    for (size_t i = 2; i < n; i++) {
        uint64_t d = (uint64_t)k[i] - (uint64_t)k[i - 1];
        uint64_t prev = (uint64_t)k[i - 1] - (uint64_t)k[i - 2];
        delta_len += varint_len(zz(d));
        dod_len += varint_len(zz(d - prev));
        stride &= d == d1;
    }
    if (stride || delta_len <= dod_len)
        return put_ints(pp, k, n, 0) == STEP_STRIDE ? WALL_TICK_STRIDE
                                                    : WALL_TICK_DELTA;
    uint8_t *p = put_varint(*pp, zz(d1));
    for (size_t i = 2; i < n; i++)
        p = put_varint(p, zz(((uint64_t)k[i] - (uint64_t)k[i - 1]) -
                             ((uint64_t)k[i - 1] - (uint64_t)k[i - 2])));
    *pp = p;
    return WALL_TICK_DOD;
}

/* Reads the ticks of a WALL_TICK_DOD column (n of them, k[0] = 0). */
static void get_dod_ticks(const uint8_t *p, int64_t *k, size_t n)
{
    uint64_t cur = 0, d = 0, z;
    k[0] = 0;
    for (size_t i = 1; i < n; i++) {
        p = get_varint(p, &z);
        d = i == 1 ? unzz(z) : d + unzz(z);
        cur += d;
        k[i] = (int64_t)cur;
    }
}

/* Past n varints without decoding them: each ends at its one byte with
 * the top bit clear. */
static const uint8_t *skip_varints(const uint8_t *p, size_t n)
{
    while (n)
        n -= !(*p++ & 0x80);
    return p;
}

size_t tfb_scalar_block_encode(uint8_t *out, const int64_t *step,
                               const double *wall, const double *value,
                               size_t n)
{
    /* The body goes 11 bytes in (room for n and its length), then moves
     * back behind the header once its length is known. */
    uint8_t *body = out + 11;
    uint8_t *p = body;
    uint8_t *form = p++;
    int step_form = put_ints(&p, step, n, 1);

    int value_form = VALUE_F32;
    for (size_t i = 0; i < n; i++) {
        double back = (double)(float)value[i];
        if (dbits(back) != dbits(value[i])) {
            value_form = VALUE_F64;
            break;
        }
    }
    if (value_form == VALUE_F32) {
        for (size_t i = 0; i < n; i++) {
            float f = (float)value[i];
            memcpy(p, &f, 4);
            p += 4;
        }
    } else {
        memcpy(p, value, n * 8);
        p += n * 8;
    }

    int64_t k[TFB_SCALAR_BLOCK];
    int e;
    int wall_form = WALL_RAW;
    if (wall_ticks(wall, n, k, &e)) {
        memcpy(p, &wall[0], 8);
        p += 8;
        p = put_varint(p, zz((uint64_t)(int64_t)e));
        wall_form = put_wall_ticks(&p, k, n);
    } else {
        memcpy(p, wall, n * 8);
        p += n * 8;
    }
    *form = (uint8_t)(step_form | wall_form << 1 | value_form << 3);
    size_t body_len = (size_t)(p - body);
    uint8_t *h = put_varint(out, n);
    h = put_varint(h, body_len);
    memmove(h, body, body_len);
    return (size_t)(h - out) + body_len;
}

size_t tfb_scalar_block_count(const uint8_t *p)
{
    uint64_t n;
    (void)get_varint(p, &n);
    return (size_t)n;
}

const uint8_t *tfb_scalar_block_next(const uint8_t *p)
{
    uint64_t n, len;
    p = get_varint(p, &n);
    p = get_varint(p, &len);
    return p + len;
}

int tfb_scalar_block_step_span(const uint8_t *p, int64_t *lo, int64_t *hi)
{
    uint64_t n64, len, first, z;
    p = get_varint(p, &n64);
    p = get_varint(p, &len);
    int form = *p++;
    if ((form & 1) != STEP_STRIDE || n64 == 0)
        return 0;
    p = get_varint(p, &first);
    (void)get_varint(p, &z);
    int64_t a = (int64_t)unzz(first), d = (int64_t)unzz(z), span, b;
    /* a stride that wraps around int64 is no monotone run: say nothing */
    if (__builtin_mul_overflow(d, (int64_t)(n64 - 1), &span) ||
        __builtin_add_overflow(a, span, &b))
        return 0;
    *lo = a < b ? a : b;
    *hi = a < b ? b : a;
    return 1;
}

int64_t tfb_scalar_block_first_step(const uint8_t *p)
{
    uint64_t n64, len, first;
    p = get_varint(p, &n64);
    p = get_varint(p, &len);
    p++; /* form */
    (void)get_varint(p, &first);
    return (int64_t)unzz(first);
}

size_t tfb_scalar_block_steps(const uint8_t *p, int64_t *step)
{
    uint64_t n64, len, first;
    p = get_varint(p, &n64);
    p = get_varint(p, &len);
    int form = *p++;
    p = get_varint(p, &first);
    (void)get_ints(p, form & 1, unzz(first), step, (size_t)n64);
    return (size_t)n64;
}

/* Values [from, from + n) of a block's value column at p (F32 or F64),
 * into value32 (rounded to float) and value64 (exact), either may be
 * NULL. The one reader of the column: a whole block's decode and a range
 * of it alike. */
static void read_values(const uint8_t *p, int value_form, size_t from,
                        size_t n, float *value32, double *value64)
{
    if (value_form == VALUE_F32) {
        p += from * 4;
        if (value32)
            memcpy(value32, p, n * 4);
        if (value64)
            for (size_t i = 0; i < n; i++) {
                float f;
                memcpy(&f, p + i * 4, 4);
                value64[i] = f;
            }
    } else {
        p += from * 8;
        if (value64)
            memcpy(value64, p, n * 8);
        if (value32)
            for (size_t i = 0; i < n; i++) {
                double d;
                memcpy(&d, p + i * 8, 8);
                value32[i] = (float)d;
            }
    }
}

size_t tfb_scalar_block_values(const uint8_t *p, size_t from, size_t n,
                               float *out)
{
    uint64_t n64, len, first;
    p = get_varint(p, &n64);
    p = get_varint(p, &len);
    int form = *p++;
    if (from >= n64)
        return 0;
    if (n > n64 - from)
        n = (size_t)(n64 - from);
    p = get_varint(p, &first);
    p = (form & 1) == STEP_STRIDE ? skip_varints(p, 1)
                                  : skip_varints(p, n64 > 1 ? n64 - 1 : 0);
    read_values(p, (form >> 3) & 1, from, n, out, NULL);
    return n;
}

const uint8_t *tfb_scalar_block_decode(const uint8_t *p, int64_t *step,
                                       double *wall, float *value32,
                                       double *value64)
{
    uint64_t n64, len, first;
    p = get_varint(p, &n64);
    p = get_varint(p, &len);
    const uint8_t *end = p + len;
    size_t n = (size_t)n64;
    int form = *p++;
    int step_form = form & 1, wall_form = (form >> 1) & 3,
        value_form = (form >> 3) & 1;

    p = get_varint(p, &first);
    if (step || step_form == STEP_STRIDE)
        p = get_ints(p, step_form, unzz(first), step, n);
    else /* deltas nobody asked for: found, not decoded */
        p = skip_varints(p, n > 1 ? n - 1 : 0);
    if (!wall && !value32 && !value64)
        return end;

    read_values(p, value_form, 0, n, value32, value64);
    p += n * (value_form == VALUE_F32 ? 4 : 8);
    /* the walls last: only the charts read them, and skipping the
     * values before them is one addition */
    if (!wall)
        return end;
    if (wall_form == WALL_RAW) {
        memcpy(wall, p, n * 8);
    } else {
        double w0;
        uint64_t ez;
        memcpy(&w0, p, 8);
        p += 8;
        p = get_varint(p, &ez);
        double unit = pow2((int)(int64_t)unzz(ez));
        int64_t k[TFB_SCALAR_BLOCK];
        if (wall_form == WALL_TICK_DOD)
            get_dod_ticks(p, k, n);
        else
            (void)get_ints(p, wall_form == WALL_TICK_STRIDE ? STEP_STRIDE
                                                            : STEP_DELTA,
                           0, k, n);
        for (size_t i = 0; i < n; i++)
            wall[i] = w0 + (double)k[i] * unit;
    }
    return end;
}
