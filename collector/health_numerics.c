/*
 * health_numerics.c - counting NaN, +Inf and -Inf in float and double
 * arrays (tfb_count_nonfinite*, tfb_check_numerics*).
 *
 * The test looks at bit patterns, never at floating-point comparisons:
 * integer compares cannot raise FE_INVALID on a signalling NaN (a program
 * that enabled FP traps would otherwise get SIGFPE from us), and they let
 * the x86 paths use plain SSE2/AVX2 integer instructions.
 *
 * Arrays are scanned in fixed blocks. A quick vector pass asks only "is
 * anything in this block non-finite?"; the exact per-kind count runs only on
 * blocks that answer yes, so a healthy tensor costs one AND, one compare
 * and one OR per vector. AVX2 is chosen at run time (cpuid), so the library
 * needs no global -mavx2 and still runs on any x86-64.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "tfboard.h"
#include "collector/abi.h"
#include "collector/health_internal.h"
#include "collector/writer_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define TFB_NUMERICS_X86 1
#include <immintrin.h>
#endif

/* Elements per block: small enough that a flagged block is re-read from
 * L1, large enough that the per-block test is noise. */
#define BLOCK_F32 1024u
#define BLOCK_F64 512u

#define F32_ABS 0x7fffffffu
#define F32_PINF 0x7f800000u
#define F32_NINF 0xff800000u
#define F64_ABS UINT64_C(0x7fffffffffffffff)
#define F64_PINF UINT64_C(0x7ff0000000000000)
#define F64_NINF UINT64_C(0xfff0000000000000)

/* ---- exact counts, portable and branch-free ---------------------------- */

static void count_f32_scalar(const float *data, size_t len,
                             tfb_nonfinite_counts *c)
{
    uint64_t nan = 0, pinf = 0, ninf = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t u;
        memcpy(&u, &data[i], sizeof u);
        nan += (u & F32_ABS) > F32_PINF;
        pinf += u == F32_PINF;
        ninf += u == F32_NINF;
    }
    c->nan += nan;
    c->pos_inf += pinf;
    c->neg_inf += ninf;
}

static void count_f64_scalar(const double *data, size_t len,
                             tfb_nonfinite_counts *c)
{
    uint64_t nan = 0, pinf = 0, ninf = 0;
    for (size_t i = 0; i < len; i++) {
        uint64_t u;
        memcpy(&u, &data[i], sizeof u);
        nan += (u & F64_ABS) > F64_PINF;
        pinf += u == F64_PINF;
        ninf += u == F64_NINF;
    }
    c->nan += nan;
    c->pos_inf += pinf;
    c->neg_inf += ninf;
}

/* "Any non-finite in data[0..len)?", portable. */
static int any_f32_scalar(const float *data, size_t len)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t u;
        memcpy(&u, &data[i], sizeof u);
        bad |= (u & F32_ABS) >= F32_PINF;
    }
    return bad != 0;
}

static int any_f64_scalar(const double *data, size_t len)
{
    uint64_t bad = 0;
    for (size_t i = 0; i < len; i++) {
        uint64_t u;
        memcpy(&u, &data[i], sizeof u);
        bad |= (u & F64_ABS) >= F64_PINF;
    }
    return bad != 0;
}

#ifdef TFB_NUMERICS_X86

/* SSE2 is part of x86-64, so these need no dispatch. */

static int any_f32_sse2(const float *p, size_t n)
{
    const __m128i abs = _mm_set1_epi32((int)F32_ABS);
    const __m128i lim = _mm_set1_epi32((int)(F32_PINF - 1));
    __m128i acc = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 4));
        /* |bits| > largest finite pattern; signed compare is fine because
         * the AND leaves the sign bit clear. */
        acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_and_si128(a, abs), lim));
        acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_and_si128(b, abs), lim));
    }
    return _mm_movemask_epi8(acc) != 0 || any_f32_scalar(p + i, n - i);
}

/* The exponent of a double lies wholly in its high 32 bits, so "non-finite"
 * is (high & 0x7fffffff) >= 0x7ff00000: a 32-bit test SSE2 can do. The low
 * halves are masked to 0 and never pass the compare. */
static int any_f64_sse2(const double *p, size_t n)
{
    const __m128i abs = _mm_set_epi32((int)F32_ABS, 0, (int)F32_ABS, 0);
    const __m128i lim = _mm_set1_epi32(0x7fefffff);
    __m128i acc = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 2));
        acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_and_si128(a, abs), lim));
        acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_and_si128(b, abs), lim));
    }
    return _mm_movemask_epi8(acc) != 0 || any_f64_scalar(p + i, n - i);
}

/* Exact counts for at most BLOCK_F32 elements: lane counters (a compare
 * mask is -1, so subtracting it counts) cannot overflow within a block. */
static void count_f32_sse2(const float *p, size_t n, tfb_nonfinite_counts *c)
{
    const __m128i abs = _mm_set1_epi32((int)F32_ABS);
    const __m128i pinf = _mm_set1_epi32((int)F32_PINF);
    const __m128i ninf = _mm_set1_epi32((int)F32_NINF);
    __m128i cn = _mm_setzero_si128(), cp = cn, cm = cn;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128i u = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        cn = _mm_sub_epi32(cn, _mm_cmpgt_epi32(_mm_and_si128(u, abs), pinf));
        cp = _mm_sub_epi32(cp, _mm_cmpeq_epi32(u, pinf));
        cm = _mm_sub_epi32(cm, _mm_cmpeq_epi32(u, ninf));
    }
    uint32_t ln[4], lp[4], lm[4];
    _mm_storeu_si128((__m128i *)(void *)ln, cn);
    _mm_storeu_si128((__m128i *)(void *)lp, cp);
    _mm_storeu_si128((__m128i *)(void *)lm, cm);
    for (int k = 0; k < 4; k++) {
        c->nan += ln[k];
        c->pos_inf += lp[k];
        c->neg_inf += lm[k];
    }
    count_f32_scalar(p + i, n - i, c);
}

__attribute__((target("avx2"))) static int any_f32_avx2(const float *p,
                                                        size_t n)
{
    const __m256i abs = _mm256_set1_epi32((int)F32_ABS);
    const __m256i lim = _mm256_set1_epi32((int)(F32_PINF - 1));
    __m256i acc = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 8));
        acc = _mm256_or_si256(acc, _mm256_cmpgt_epi32(_mm256_and_si256(a, abs), lim));
        acc = _mm256_or_si256(acc, _mm256_cmpgt_epi32(_mm256_and_si256(b, abs), lim));
    }
    return !_mm256_testz_si256(acc, acc) || any_f32_scalar(p + i, n - i);
}

__attribute__((target("avx2"))) static int any_f64_avx2(const double *p,
                                                        size_t n)
{
    const __m256i abs = _mm256_set1_epi64x((long long)F64_ABS);
    const __m256i lim = _mm256_set1_epi64x((long long)(F64_PINF - 1));
    __m256i acc = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 4));
        acc = _mm256_or_si256(acc, _mm256_cmpgt_epi64(_mm256_and_si256(a, abs), lim));
        acc = _mm256_or_si256(acc, _mm256_cmpgt_epi64(_mm256_and_si256(b, abs), lim));
    }
    return !_mm256_testz_si256(acc, acc) || any_f64_scalar(p + i, n - i);
}

__attribute__((target("avx2"))) static void
count_f64_avx2(const double *p, size_t n, tfb_nonfinite_counts *c)
{
    const __m256i abs = _mm256_set1_epi64x((long long)F64_ABS);
    const __m256i pinf = _mm256_set1_epi64x((long long)F64_PINF);
    const __m256i ninf = _mm256_set1_epi64x((long long)F64_NINF);
    __m256i cn = _mm256_setzero_si256(), cp = cn, cm = cn;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
        cn = _mm256_sub_epi64(cn, _mm256_cmpgt_epi64(_mm256_and_si256(u, abs), pinf));
        cp = _mm256_sub_epi64(cp, _mm256_cmpeq_epi64(u, pinf));
        cm = _mm256_sub_epi64(cm, _mm256_cmpeq_epi64(u, ninf));
    }
    uint64_t ln[4], lp[4], lm[4];
    _mm256_storeu_si256((__m256i *)(void *)ln, cn);
    _mm256_storeu_si256((__m256i *)(void *)lp, cp);
    _mm256_storeu_si256((__m256i *)(void *)lm, cm);
    for (int k = 0; k < 4; k++) {
        c->nan += ln[k];
        c->pos_inf += lp[k];
        c->neg_inf += lm[k];
    }
    count_f64_scalar(p + i, n - i, c);
}

static int have_avx2(void)
{
    /* Cached; threads that race here all compute the same answer. */
    static atomic_int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") ? 1 : 0;
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}

#endif /* TFB_NUMERICS_X86 */

/* TFB_NUMERICS_AUTO in normal use; tests force the other paths. */
static atomic_int forced_path;

void tfb_numerics_force_path(int path)
{
    atomic_store_explicit(&forced_path, path, memory_order_relaxed);
}

int tfb_count_nonfinite(const float *data, size_t len,
                        tfb_nonfinite_counts *out)
{
    tfb_nonfinite_counts c = {.size = sizeof c};
    if (out == NULL || tfb_abi_size(out) == 0)
        return TFB_EINVAL;
    if (data == NULL)
        len = 0;
    int (*any)(const float *, size_t) = any_f32_scalar;
    void (*count)(const float *, size_t, tfb_nonfinite_counts *) =
        count_f32_scalar;
#ifdef TFB_NUMERICS_X86
    int path = atomic_load_explicit(&forced_path, memory_order_relaxed);
    if (path != TFB_NUMERICS_SCALAR) {
        any = path == TFB_NUMERICS_AUTO && have_avx2() ? any_f32_avx2
                                                      : any_f32_sse2;
        count = count_f32_sse2;
    }
#endif
    for (size_t i = 0; i < len; i += BLOCK_F32) {
        size_t n = len - i < BLOCK_F32 ? len - i : BLOCK_F32;
        if (any(data + i, n))
            count(data + i, n, &c);
    }
    /* As far as the caller's struct reaches (tfboard.h). */
    return tfb_abi_write(out, &c, sizeof c);
}

int tfb_count_nonfinite_f64(const double *data, size_t len,
                            tfb_nonfinite_counts *out)
{
    tfb_nonfinite_counts c = {.size = sizeof c};
    if (out == NULL || tfb_abi_size(out) == 0)
        return TFB_EINVAL;
    if (data == NULL)
        len = 0;
    int (*any)(const double *, size_t) = any_f64_scalar;
    void (*count)(const double *, size_t, tfb_nonfinite_counts *) =
        count_f64_scalar;
#ifdef TFB_NUMERICS_X86
    int path = atomic_load_explicit(&forced_path, memory_order_relaxed);
    if (path != TFB_NUMERICS_SCALAR) {
        if (path == TFB_NUMERICS_AUTO && have_avx2()) {
            any = any_f64_avx2;
            count = count_f64_avx2;
        } else {
            any = any_f64_sse2;
        }
    }
#endif
    for (size_t i = 0; i < len; i += BLOCK_F64) {
        size_t n = len - i < BLOCK_F64 ? len - i : BLOCK_F64;
        if (any(data + i, n))
            count(data + i, n, &c);
    }
    /* As far as the caller's struct reaches (tfboard.h). */
    return tfb_abi_write(out, &c, sizeof c);
}

/* Shared tail of the two check functions: record and report only when
 * something is wrong, so a healthy run adds nothing to the file. */
static int64_t report(tfb_writer *w, const char *tag, int64_t step,
                      const tfb_nonfinite_counts *c)
{
    uint64_t total = c->nan + c->pos_inf + c->neg_inf;
    int64_t ret = total > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)total;
    if (total == 0 || w == NULL)
        return ret;
    int rc = tfb_writer_numerics_record(w, tag, step, c);
    /* The callback fires even when the record could not be queued: the
     * program's chance to stop must not depend on the disk. */
    tfb_writer_report_nonfinite(w, tag, step, c);
    return rc < 0 ? rc : ret;
}

int64_t tfb_check_numerics(tfb_writer *w, const char *tag, const float *data,
                           size_t len, int64_t step)
{
    if ((data == NULL && len > 0) || (w != NULL && (tag == NULL || !*tag)))
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED; /* even for healthy data: see tfboard.h */
    tfb_nonfinite_counts c = {.size = sizeof c};
    (void)tfb_count_nonfinite(data, len, &c);
    return report(w, tag, step, &c);
}

int64_t tfb_check_numerics_f64(tfb_writer *w, const char *tag,
                               const double *data, size_t len, int64_t step)
{
    if ((data == NULL && len > 0) || (w != NULL && (tag == NULL || !*tag)))
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED; /* even for healthy data: see tfboard.h */
    tfb_nonfinite_counts c = {.size = sizeof c};
    (void)tfb_count_nonfinite_f64(data, len, &c);
    return report(w, tag, step, &c);
}
