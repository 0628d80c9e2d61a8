/*
 * json.c - the JSON text builder (see json.h).
 */
#include "core/json.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

void tfb_json_init(tfb_json *j)
{
    memset(j, 0, sizeof *j);
}

void tfb_json_free(tfb_json *j)
{
    if (!j)
        return;
    tfb_vec_free(&j->out);
    tfb_json_init(j);
}

int tfb_json_failed(const tfb_json *j)
{
    return j->failed;
}

char *tfb_json_take(tfb_json *j, size_t *len)
{
    if (j->failed || j->depth != 0) {
        tfb_json_free(j);
        return NULL;
    }
    if (!j->out.v) {
        j->out.v = malloc(1);
        if (!j->out.v)
            return NULL;
        j->out.v[0] = 0;
    }
    char *b = j->out.v;
    if (len)
        *len = j->out.n;
    tfb_json_init(j);
    return b;
}

/* Makes room for n more bytes plus a NUL. */
static int reserve(tfb_json *j, size_t n)
{
    if (j->failed)
        return -1;
    if (n >= SIZE_MAX - j->out.n || /* n + 1 more would wrap */
        tfb_vec_need(&j->out, j->out.n + n + 1) < 0) {
        j->failed = 1;
        return -1;
    }
    return 0;
}

static void put(tfb_json *j, const char *s, size_t n)
{
    if (reserve(j, n) < 0)
        return;
    memcpy(j->out.v + j->out.n, s, n);
    j->out.n += n;
    j->out.v[j->out.n] = 0;
}

static void putc_(tfb_json *j, char c)
{
    if (reserve(j, 1) < 0)
        return;
    j->out.v[j->out.n++] = c;
    j->out.v[j->out.n] = 0;
}

/* Writes the comma that separates this value from the previous one. */
static void pre_value(tfb_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->comma[j->depth])
        putc_(j, ',');
    j->comma[j->depth] = 1;
}

static void open_(tfb_json *j, char c)
{
    pre_value(j);
    if (j->depth >= TFB_JSON_MAX_DEPTH) {
        j->failed = 1;
        return;
    }
    putc_(j, c);
    j->depth++;
    j->comma[j->depth] = 0;
}

static void close_(tfb_json *j, char c)
{
    if (j->depth <= 0) {
        j->failed = 1;
        return;
    }
    j->depth--;
    putc_(j, c);
}

void tfb_json_object_begin(tfb_json *j) { open_(j, '{'); }
void tfb_json_object_end(tfb_json *j) { close_(j, '}'); }
void tfb_json_array_begin(tfb_json *j) { open_(j, '['); }

int tfb_json_object_reopen(tfb_json *j)
{
    /* Only a whole top-level object: its closing brace is the last byte. */
    if (j->failed || j->depth != 0 || j->after_key || j->out.n < 2 ||
        j->out.v[j->out.n - 1] != '}')
        return -1;
    j->out.n--;
    j->out.v[j->out.n] = '\0';
    j->depth = 1;
    j->comma[1] = j->out.v[j->out.n - 1] != '{';
    return 0;
}
void tfb_json_array_end(tfb_json *j) { close_(j, ']'); }

void tfb_json_escape_into(tfb_json *j, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        /* copy the longest run of bytes that need no escaping at once */
        size_t k = i;
        while (k < n && s[k] >= 0x20 && s[k] < 0x80 && s[k] != '"' &&
               s[k] != '\\' && s[k] != '<' && s[k] != '>' && s[k] != '&')
            k++;
        if (k > i) {
            put(j, (const char *)s + i, k - i);
            i = k;
            continue;
        }
        unsigned c = s[i];
        if (c == '"') {
            put(j, "\\\"", 2);
            i++;
        } else if (c == '\\') {
            put(j, "\\\\", 2);
            i++;
        } else if (c == '\n') {
            put(j, "\\n", 2);
            i++;
        } else if (c == '\t') {
            put(j, "\\t", 2);
            i++;
        } else if (c == '\r') {
            put(j, "\\r", 2);
            i++;
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(j, u, 6);
            i++;
        } else {
            size_t l = tfb_utf8_seq(s + i, n - i);
            if (l == 0) {
                put(j, "\\ufffd", 6);
                i++;
            } else {
                put(j, (const char *)s + i, l);
                i += l;
            }
        }
    }
}

void tfb_json_keyn(tfb_json *j, const char *key, size_t len)
{
    pre_value(j);
    putc_(j, '"');
    tfb_json_escape_into(j, key, len);
    put(j, "\":", 2);
    j->after_key = 1;
}

void tfb_json_key(tfb_json *j, const char *key)
{
    tfb_json_keyn(j, key, strlen(key));
}

void tfb_json_strn(tfb_json *j, const char *s, size_t len)
{
    pre_value(j);
    putc_(j, '"');
    tfb_json_escape_into(j, s, len);
    putc_(j, '"');
}

void tfb_json_str(tfb_json *j, const char *s)
{
    if (!s) {
        tfb_json_null(j);
        return;
    }
    tfb_json_strn(j, s, strlen(s));
}

static size_t fmt_nonfinite(char *buf, double v)
{
    const char *t = isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    size_t n = strlen(t);
    memcpy(buf, t, n + 1);
    return n;
}

size_t tfb_fmt_i64(char *buf, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t o = 0;
    if (v < 0)
        buf[o++] = '-';
    while (n)
        buf[o++] = tmp[--n];
    buf[o] = 0;
    return o;
}

static const double POW10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Writes digits (an integer of nd digits, no trailing zeros) times
 * 10^(e10 - nd + 1) as JSON number text, in fixed notation for
 * 1e-5 <= |x| < 1e16 and scientific otherwise (as Python's repr). */
static size_t emit(char *buf, int neg, uint64_t digits, int nd, int e10)
{
    char d[24];
    for (int i = nd - 1; i >= 0; i--) {
        d[i] = (char)('0' + digits % 10);
        digits /= 10;
    }
    size_t o = 0;
    if (neg)
        buf[o++] = '-';
    if (e10 >= -5 && e10 < 16) {
        if (e10 < 0) {
            buf[o++] = '0';
            buf[o++] = '.';
            for (int i = -1; i > e10; i--)
                buf[o++] = '0';
            for (int i = 0; i < nd; i++)
                buf[o++] = d[i];
        } else {
            for (int i = 0; i <= e10; i++)
                buf[o++] = i < nd ? d[i] : '0';
            if (nd > e10 + 1) {
                buf[o++] = '.';
                for (int i = e10 + 1; i < nd; i++)
                    buf[o++] = d[i];
            }
        }
    } else {
        buf[o++] = d[0];
        if (nd > 1) {
            buf[o++] = '.';
            for (int i = 1; i < nd; i++)
                buf[o++] = d[i];
        }
        o += (size_t)sprintf(buf + o, "e%c%02d", e10 < 0 ? '-' : '+',
                             e10 < 0 ? -e10 : e10);
    }
    buf[o] = 0;
    return o;
}

__extension__ typedef unsigned __int128 tfb_u128;

/* a > 0 as M * 2^E, where 2^E is a's ulp in a type of mbits mantissa bits
 * and minimum exponent emin (subnormals included). */
static void decompose(double a, int mbits, int emin, uint64_t *M, int *E)
{
    int ex;
    (void)frexp(a, &ex);
    int e = ex - mbits;
    if (e < emin)
        e = emin;
    *E = e;
    *M = (uint64_t)ldexp(a, -e);
}

/* Does the decimal m * 10^-k round to a (= M * 2^E, mantissa of mbits)
 * and to nothing else? Ties count as no (the caller then uses more digits,
 * which is never wrong). Returns 1 yes, 0 no, -1 when this exact check
 * cannot be done in 128 bits. */
static int names_value(uint64_t m, int k, uint64_t M, int E, int mbits,
                       int emin)
{
    if (k < 0 || k > 19 || E > 0 || -E > 64 || m >= (1ull << 60))
        return -1;
    static const uint64_t P10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
        10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
        100000000000ull, 1000000000000ull, 10000000000000ull,
        100000000000000ull, 1000000000000000ull, 10000000000000000ull,
        100000000000000000ull, 1000000000000000000ull,
        10000000000000000000ull};
    tfb_u128 p10 = P10[k];
    /* Scaled by 10^k * 2^-E: X = D, Y = a; half an ulp is 10^k / 2. */
    tfb_u128 X = (tfb_u128)m << (-E);
    tfb_u128 Y = (tfb_u128)M * p10;
    tfb_u128 d = X > Y ? X - Y : Y - X;
    /* Below a power of two (not subnormal) the gap is half as wide. */
    int narrow = X < Y && M == (1ull << (mbits - 1)) && E > emin;
    return (narrow ? 4 * d : 2 * d) < p10;
}

/* The nearest p-significant-digit decimal to a (> 0), as m * 10^-k, when
 * it names a; returns 1 and sets m, k, else 0. Returns -1 when p digits
 * cannot be checked here. */
static int candidate(double a, int e10, int p, int mbits, int emin,
                     uint64_t M, int E, uint64_t *m_out, int *k_out)
{
    int k = p - 1 - e10; /* scale: m = a * 10^k */
    if (k > 22 || k < -22)
        return -1;
    double scaled = k >= 0 ? a * POW10[k] : a / POW10[-k];
    double r = nearbyint(scaled);
    if (!(r >= 1) || r >= 1e18)
        return -1;
    uint64_t m = (uint64_t)r;
    int ok = names_value(m, k, M, E, mbits, emin);
    if (ok < 0) {
        /* Integers and large values: m * 10^-k in one correctly rounded
         * IEEE operation when both operands are exact. */
        if (m >= (1ull << 53))
            return -1;
        double cand = k >= 0 ? (double)m / POW10[k] : (double)m * POW10[-k];
        if (mbits == 53) {
            ok = cand == a;
        } else {
            /* double rounding to float: refuse exact float midpoints */
            float f = (float)cand;
            double mid = ((double)nextafterf(f, INFINITY) + (double)f) / 2;
            double mid2 = ((double)nextafterf(f, 0.0f) + (double)f) / 2;
            ok = (double)f == a && cand != mid && cand != mid2;
        }
    }
    if (!ok)
        return 0;
    *m_out = m;
    *k_out = k;
    return 1;
}

/* Finds the fewest significant digits (up to maxp) whose decimal reads
 * back as v (a double, or a float widened when mbits is 24), checking
 * candidates with exact integer arithmetic. More digits never make the
 * nearest decimal worse, so a binary search over the digit count finds
 * the fewest. Returns the length, or 0 when no fast answer was found (the
 * caller falls back to the C library). */
static size_t shortest(char *buf, double v, int maxp, int mbits, int emin)
{
    int neg = v < 0;
    double a = neg ? -v : v;
    int e10 = (int)floor(log10(a));
    uint64_t M, m;
    int E, k;
    decompose(a, mbits, emin, &M, &E);
    if (candidate(a, e10, maxp, mbits, emin, M, E, &m, &k) != 1)
        return 0;
    int lo = 1, hi = maxp; /* m, k: the accepted candidate of hi */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        uint64_t mm;
        int kk;
        if (candidate(a, e10, mid, mbits, emin, M, E, &mm, &kk) == 1) {
            hi = mid;
            m = mm;
            k = kk;
        } else {
            lo = mid + 1;
        }
    }
    /* m has nd digits and means m * 10^-k: its leading digit sits at
     * 10^(nd - 1 - k). Trailing zeros do not move it. */
    int nd = 1;
    for (uint64_t t = m; t >= 10; t /= 10)
        nd++;
    int e = nd - 1 - k;
    while (nd > 1 && m % 10 == 0) {
        m /= 10;
        nd--;
    }
    return emit(buf, neg, m, nd, e);
}

/* A double (mbits 53: up to 17 digits, emin -1074) or a float widened
 * (24: 9 digits, -149) as the shortest decimal that reads back as it;
 * past what shortest() finds (extreme exponents, the most digits), the C
 * library's, from `from` digits up. */
static size_t fmt_real(char *buf, double v, int maxp, int mbits, int emin,
                       int from)
{
    if (!isfinite(v))
        return fmt_nonfinite(buf, v);
    if (v == 0) {
        memcpy(buf, signbit(v) ? "-0.0" : "0", signbit(v) ? 5 : 2);
        return signbit(v) ? 4 : 1;
    }
    size_t n = shortest(buf, v, maxp, mbits, emin);
    if (n)
        return n;
    char t[40];
    int len = snprintf(t, sizeof t, "%.*g", from, v);
    for (int p = from + 1;
         p <= maxp &&
         (mbits == 24 ? strtof(t, NULL) : strtod(t, NULL)) != v;
         p++)
        len = snprintf(t, sizeof t, "%.*g", p, v);
    memcpy(buf, t, (size_t)len + 1);
    return (size_t)len;
}

size_t tfb_fmt_double(char *buf, double v)
{
    return fmt_real(buf, v, 17, 53, -1074, 15);
}

size_t tfb_fmt_float(char *buf, float v)
{
    return fmt_real(buf, v, 9, 24, -149, 6);
}

static void num_text(tfb_json *j, const char *b, size_t n, int quoted)
{
    pre_value(j);
    if (quoted)
        putc_(j, '"');
    put(j, b, n);
    if (quoted)
        putc_(j, '"');
}

void tfb_json_double(tfb_json *j, double v)
{
    char b[40];
    size_t n = tfb_fmt_double(b, v);
    num_text(j, b, n, !isfinite(v));
}

void tfb_json_float(tfb_json *j, float v)
{
    char b[40];
    size_t n = tfb_fmt_float(b, v);
    num_text(j, b, n, !isfinite(v));
}

void tfb_json_i64(tfb_json *j, int64_t v)
{
    char b[24];
    size_t n = tfb_fmt_i64(b, v);
    num_text(j, b, n, 0);
}

void tfb_json_u64(tfb_json *j, uint64_t v)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    num_text(j, b, (size_t)n, 0);
}

void tfb_json_bool(tfb_json *j, int v)
{
    pre_value(j);
    if (v)
        put(j, "true", 4);
    else
        put(j, "false", 5);
}

void tfb_json_null(tfb_json *j)
{
    pre_value(j);
    put(j, "null", 4);
}

void tfb_json_raw(tfb_json *j, const char *text, size_t len)
{
    pre_value(j);
    put(j, text, len);
}

void tfb_json_append(tfb_json *j, const char *text, size_t len)
{
    put(j, text, len);
}

/* ---- structs as objects ---- */

static void field_value(tfb_json *j, const char *m, const tfb_json_field *f)
{
    tfb_json_type type = f->type;
    switch (type) {
    case TFB_JSON_OBJECT:
        tfb_json_struct(j, m, f->sub, f->n_sub);
        return;
    case TFB_JSON_STR: {
        const char *s;
        memcpy(&s, m, sizeof s);
        tfb_json_str(j, s);
        return;
    }
    case TFB_JSON_TEXT:
        if (*m)
            tfb_json_str(j, m);
        else
            tfb_json_null(j);
        return;
    case TFB_JSON_CHARS:
        tfb_json_str(j, m);
        return;
    case TFB_JSON_I64:
    case TFB_JSON_STEP: {
        int64_t v;
        memcpy(&v, m, sizeof v);
        if (type == TFB_JSON_STEP && v < 0)
            tfb_json_null(j);
        else
            tfb_json_i64(j, v);
        return;
    }
    case TFB_JSON_U64: {
        uint64_t v;
        memcpy(&v, m, sizeof v);
        tfb_json_u64(j, v);
        return;
    }
    case TFB_JSON_SIZE: {
        size_t v;
        memcpy(&v, m, sizeof v);
        tfb_json_u64(j, v);
        return;
    }
    case TFB_JSON_INT:
    case TFB_JSON_POS:
    case TFB_JSON_BOOL: {
        int v;
        memcpy(&v, m, sizeof v);
        if (type == TFB_JSON_BOOL)
            tfb_json_bool(j, v);
        else if (type == TFB_JSON_POS && v <= 0)
            tfb_json_null(j);
        else
            tfb_json_i64(j, v);
        return;
    }
    case TFB_JSON_INT3: {
        int32_t v[3];
        memcpy(v, m, sizeof v);
        tfb_json_array_begin(j);
        for (int i = 0; i < 3; i++)
            tfb_json_i64(j, v[i]);
        tfb_json_array_end(j);
        return;
    }
    case TFB_JSON_U32: {
        uint32_t v;
        memcpy(&v, m, sizeof v);
        tfb_json_u64(j, v);
        return;
    }
    case TFB_JSON_DOUBLE:
    case TFB_JSON_NUM:
    case TFB_JSON_FIN: {
        double v;
        memcpy(&v, m, sizeof v);
        if ((type == TFB_JSON_NUM && isnan(v)) ||
            (type == TFB_JSON_FIN && !isfinite(v)))
            tfb_json_null(j);
        else
            tfb_json_double(j, v);
        return;
    }
    case TFB_JSON_FLOAT: {
        float v;
        memcpy(&v, m, sizeof v);
        tfb_json_float(j, v);
        return;
    }
    }
    tfb_json_null(j);
}

/* The member size a type reads (0: any, the char arrays and structs). */
static size_t type_size(tfb_json_type t)
{
    switch (t) {
    case TFB_JSON_STR:
        return sizeof(const char *);
    case TFB_JSON_I64:
    case TFB_JSON_STEP:
    case TFB_JSON_U64:
        return 8;
    case TFB_JSON_SIZE:
        return sizeof(size_t);
    case TFB_JSON_INT:
    case TFB_JSON_POS:
    case TFB_JSON_BOOL:
        return sizeof(int);
    case TFB_JSON_U32:
        return 4;
    case TFB_JSON_INT3:
        return 12;
    case TFB_JSON_DOUBLE:
    case TFB_JSON_NUM:
    case TFB_JSON_FIN:
        return sizeof(double);
    case TFB_JSON_FLOAT:
        return sizeof(float);
    default:
        return 0;
    }
}

void tfb_json_fields(tfb_json *j, const void *obj, const tfb_json_field *f,
                     size_t n)
{
    const char *base = obj;
    for (size_t i = 0; i < n; i++) {
        tfb_json_key(j, f[i].key);
        size_t want = type_size(f[i].type);
        int set = !want || f[i].size == want;
        assert(set && "a JSON field table names the wrong type");
        if (set && f[i].if_set)
            memcpy(&set, base + f[i].if_set - 1, sizeof set);
        if (set)
            field_value(j, base + f[i].off, &f[i]);
        else
            tfb_json_null(j);
    }
}

void tfb_json_struct(tfb_json *j, const void *obj, const tfb_json_field *f,
                     size_t n)
{
    tfb_json_object_begin(j);
    tfb_json_fields(j, obj, f, n);
    tfb_json_object_end(j);
}
