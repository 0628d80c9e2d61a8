/*
 * test_health_numerics.c - tfb_count_nonfinite*, tfb_check_numerics*:
 * counts on every kind of NaN payload, ±Inf, denormals, odd lengths and
 * unaligned starts, on every code path (AVX2, SSE2, portable C); a healthy
 * check writes nothing; an unhealthy one writes a readable numerics record;
 * on_nonfinite fires once per tag.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/health_internal.h"
#include "test_util.h"
#include "tfboard.h"

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double f64_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Counts as the library fills them: the struct starts with its size. */
#define NF(a, b, c)                                                          \
    ((tfb_nonfinite_counts){sizeof(tfb_nonfinite_counts), (a), (b), (c)})

/* Reference counts by fpclassify/signbit, one element at a time. */
static tfb_nonfinite_counts ref_f32(const float *x, size_t n)
{
    tfb_nonfinite_counts c = NF(0, 0, 0);
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            c.nan++;
        else if (isinf(x[i]))
            *(signbit(x[i]) ? &c.neg_inf : &c.pos_inf) += 1;
    }
    return c;
}

static tfb_nonfinite_counts ref_f64(const double *x, size_t n)
{
    tfb_nonfinite_counts c = NF(0, 0, 0);
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            c.nan++;
        else if (isinf(x[i]))
            *(signbit(x[i]) ? &c.neg_inf : &c.pos_inf) += 1;
    }
    return c;
}

static void assert_counts(tfb_nonfinite_counts got, tfb_nonfinite_counts want)
{
    if (got.nan != want.nan || got.pos_inf != want.pos_inf ||
        got.neg_inf != want.neg_inf)
        fail_msg("got nan=%llu +inf=%llu -inf=%llu, want %llu %llu %llu",
                 (unsigned long long)got.nan, (unsigned long long)got.pos_inf,
                 (unsigned long long)got.neg_inf,
                 (unsigned long long)want.nan,
                 (unsigned long long)want.pos_inf,
                 (unsigned long long)want.neg_inf);
}

/* Bit patterns at and around the finite/non-finite boundary. */
static const uint32_t special32[] = {
    0x7fc00000u, /* quiet NaN */
    0x7f800001u, /* signalling NaN, smallest payload */
    0x7fbfffffu, /* signalling NaN, largest payload */
    0xffc00000u, /* negative quiet NaN */
    0xff800001u, /* negative signalling NaN */
    0xffffffffu, /* all ones */
    0x7f800000u, /* +Inf */
    0xff800000u, /* -Inf */
    0x7f7fffffu, /* FLT_MAX: finite */
    0xff7fffffu, /* -FLT_MAX */
    0x00000001u, /* smallest denormal */
    0x807fffffu, /* largest negative denormal */
    0x80000000u, /* -0 */
    0x00000000u,
    0x3f800000u, /* 1 */
};

static const uint64_t special64[] = {
    UINT64_C(0x7ff8000000000000), /* quiet NaN */
    UINT64_C(0x7ff0000000000001), /* sNaN, payload in the low word only */
    UINT64_C(0x7ff7ffffffffffff),
    UINT64_C(0xfff8000000000000), /* negative NaN */
    UINT64_C(0xfff0000000000001),
    UINT64_C(0xffffffffffffffff),
    UINT64_C(0x7ff0000000000000), /* +Inf */
    UINT64_C(0xfff0000000000000), /* -Inf */
    UINT64_C(0x7fefffffffffffff), /* DBL_MAX */
    UINT64_C(0xffefffffffffffff),
    UINT64_C(0x0000000000000001), /* denormal */
    UINT64_C(0x800fffffffffffff),
    UINT64_C(0x8000000000000000),
    UINT64_C(0x0000000000000000),
    UINT64_C(0x3ff0000000000000),
    UINT64_C(0x7fef0000ffffffff), /* finite, low word all ones */
};

#define NSPECIAL32 (sizeof special32 / sizeof special32[0])
#define NSPECIAL64 (sizeof special64 / sizeof special64[0])

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void fill32(float *x, size_t n, unsigned bad_every)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_rand();
        if (bad_every && r % bad_every == 0)
            x[i] = f32_bits(special32[(r >> 20) % NSPECIAL32]);
        else
            x[i] = (float)((double)(r >> 11) * 0x1p-53 - 0.5);
    }
}

static void fill64(double *x, size_t n, unsigned bad_every)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_rand();
        if (bad_every && r % bad_every == 0)
            x[i] = f64_bits(special64[(r >> 20) % NSPECIAL64]);
        else
            x[i] = (double)(r >> 11) * 0x1p-53 - 0.5;
    }
}

static void check_both_paths32(const float *x, size_t n)
{
    tfb_nonfinite_counts want = ref_f32(x, n), got = NF(0, 0, 0);
    for (int path = TFB_NUMERICS_AUTO; path <= TFB_NUMERICS_SSE2; path++) {
        tfb_numerics_force_path(path);
        tfb_count_nonfinite(x, n, &got);
        assert_counts(got, want);
        assert_int_equal(tfb_check_numerics(NULL, "t", x, n, 0),
                         (int64_t)(want.nan + want.pos_inf + want.neg_inf));
    }
    tfb_numerics_force_path(TFB_NUMERICS_AUTO);
}

static void check_both_paths64(const double *x, size_t n)
{
    tfb_nonfinite_counts want = ref_f64(x, n), got = NF(0, 0, 0);
    for (int path = TFB_NUMERICS_AUTO; path <= TFB_NUMERICS_SSE2; path++) {
        tfb_numerics_force_path(path);
        tfb_count_nonfinite_f64(x, n, &got);
        assert_counts(got, want);
        assert_int_equal(tfb_check_numerics_f64(NULL, "t", x, n, 0),
                         (int64_t)(want.nan + want.pos_inf + want.neg_inf));
    }
    tfb_numerics_force_path(TFB_NUMERICS_AUTO);
}

static void test_each_special_at_each_position(void **st)
{
    (void)st;
    /* One special value at every position of every length up to 70, from
     * every start offset: covers vector bodies, tails and misalignment. */
    float buf[80];
    double dbuf[80];
    for (size_t off = 0; off < 4; off++)
        for (size_t n = 0; n <= 70; n++)
            for (size_t pos = 0; pos < n; pos++)
                for (size_t s = 0; s < NSPECIAL32; s += 1) {
                    for (size_t i = 0; i < 80; i++)
                        buf[i] = 1.0f;
                    buf[off + pos] = f32_bits(special32[s]);
                    check_both_paths32(buf + off, n);
                }
    for (size_t off = 0; off < 3; off++)
        for (size_t n = 0; n <= 40; n++)
            for (size_t pos = 0; pos < n; pos++)
                for (size_t s = 0; s < NSPECIAL64; s++) {
                    for (size_t i = 0; i < 80; i++)
                        dbuf[i] = 1.0;
                    dbuf[off + pos] = f64_bits(special64[s]);
                    check_both_paths64(dbuf + off, n);
                }
}

static void test_values_outside_the_checked_range_are_ignored(void **st)
{
    (void)st;
    /* A NaN just before the start and just after the end must not count. */
    float buf[40];
    for (int i = 0; i < 40; i++)
        buf[i] = 2.0f;
    buf[0] = NAN;
    buf[38] = INFINITY;
    tfb_nonfinite_counts c = NF(0, 0, 0);
    tfb_count_nonfinite(buf + 1, 37, &c);
    assert_counts(c, NF(0, 0, 0));
    tfb_count_nonfinite(buf, 39, &c);
    assert_counts(c, NF(1, 1, 0));
}

static void test_large_random_arrays(void **st)
{
    (void)st;
    /* Lengths that straddle the internal block sizes. */
    static const size_t lens[] = {511, 512, 513, 1023, 1024, 1025, 4097, 100003};
    static const unsigned rates[] = {0, 3, 97, 5000};
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
            size_t n = lens[l];
            float *x = malloc(n * sizeof *x + 16);
            double *d = malloc(n * sizeof *d + 16);
            assert_non_null(x);
            assert_non_null(d);
            fill32(x, n, rates[r]);
            fill64(d, n, rates[r]);
            check_both_paths32(x, n);
            check_both_paths64(d, n);
            free(x);
            free(d);
        }
}

static void test_all_nonfinite(void **st)
{
    (void)st;
    enum { N = 3001 };
    float *x = malloc(N * sizeof *x);
    double *d = malloc(N * sizeof *d);
    assert_non_null(x);
    assert_non_null(d);
    for (int i = 0; i < N; i++) {
        x[i] = i % 3 == 0 ? NAN : (i % 3 == 1 ? INFINITY : -INFINITY);
        d[i] = x[i];
    }
    tfb_nonfinite_counts c = NF(0, 0, 0);
    tfb_count_nonfinite(x, N, &c);
    assert_counts(c, NF(1001, 1000, 1000));
    tfb_count_nonfinite_f64(d, N, &c);
    assert_counts(c, NF(1001, 1000, 1000));
    free(x);
    free(d);
}

static void test_bad_arguments(void **st)
{
    (void)st;
    float x[2] = {NAN, 1};
    tfb_nonfinite_counts c = NF(7, 7, 7);
    assert_int_equal(tfb_count_nonfinite(NULL, 0, &c), 0);
    assert_counts(c, NF(0, 0, 0));
    assert_int_equal(tfb_count_nonfinite(x, 2, NULL), TFB_EINVAL);
    /* A size of 0 (not set) is refused, and nothing is written. */
    tfb_nonfinite_counts unset = {.nan = 7};
    assert_int_equal(tfb_count_nonfinite(x, 2, &unset), TFB_EINVAL);
    assert_int_equal(tfb_count_nonfinite_f64(NULL, 0, &unset), TFB_EINVAL);
    assert_int_equal(unset.nan, 7);
    assert_int_equal(tfb_check_numerics(NULL, "t", NULL, 3, 0), TFB_EINVAL);
    assert_int_equal(tfb_check_numerics_f64(NULL, "t", NULL, 3, 0), TFB_EINVAL);
    assert_int_equal(tfb_check_numerics(NULL, "t", NULL, 0, 0), 0);
    assert_int_equal(tfb_check_numerics(NULL, NULL, x, 2, 0), 1);
}

/* ---- with a writer --------------------------------------------------- */

typedef struct seen {
    char tag[64];
    int64_t step;
    tfb_nonfinite_counts c;
} seen;

typedef struct calls {
    int n;
    seen s[16];
} calls;

static void on_nonfinite(void *user, const char *tag, int64_t step,
                         uint64_t nan, uint64_t pos_inf, uint64_t neg_inf)
{
    calls *k = user;
    if (k->n < 16) {
        snprintf(k->s[k->n].tag, sizeof k->s[k->n].tag, "%s", tag);
        k->s[k->n].step = step;
        k->s[k->n].c = NF(nan, pos_inf, neg_inf);
    }
    k->n++;
}

/* Reads every summary value of the file; counts the numerics records of
 * `tag` and keeps the last one's step and counts. Returns the number of
 * summary values of any kind. */
static int read_back(const char *path, const char *tag, int *n_numerics,
                     int64_t *step, tfb_nonfinite_counts *c)
{
    tfb_reader *r = NULL;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int values = 0;
    int plugin_known = 0;
    *n_numerics = 0;
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (tu_is_run_end(&v))
                continue;
            values++;
            if (v.tag.len != strlen(tag) || memcmp(v.tag.ptr, tag, v.tag.len))
                continue;
            /* Writers may put plugin metadata on a tag's first value only;
             * remember it, as every reader must. */
            if (v.plugin_name.len)
                plugin_known = v.plugin_name.len == strlen(TFB_NUMERICS_PLUGIN) &&
                    memcmp(v.plugin_name.ptr, TFB_NUMERICS_PLUGIN,
                           v.plugin_name.len) == 0;
            else if (plugin_known)
                tfb_value_apply_plugin(&v, TFB_NUMERICS_PLUGIN,
                                       strlen(TFB_NUMERICS_PLUGIN));
            assert_int_equal(v.kind, TFB_VALUE_NUMERICS);
            (*n_numerics)++;
            *step = ev.step;
            *c = v.numerics;
        }
    }
    tfb_reader_close(r);
    return values;
}

static void test_healthy_check_writes_nothing(void **st)
{
    (void)st;
    char dir[] = "/tmp/tfb_health_numXXXXXX";
    assert_non_null(mkdtemp(dir));
    calls k = {0};
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.on_nonfinite = on_nonfinite;
    o.on_nonfinite_user = &k;
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    float x[100];
    double d[100];
    for (int i = 0; i < 100; i++) {
        x[i] = (float)i * 1e-30f;
        d[i] = i * 1e300;
    }
    for (int step = 0; step < 50; step++) {
        assert_int_equal(tfb_check_numerics(w, "grads/w", x, 100, step), 0);
        assert_int_equal(tfb_check_numerics_f64(w, "grads/d", d, 100, step), 0);
    }
    assert_int_equal(tfb_flush(w), 0);
    char *path = tu_find_event_file(dir);
    int n_num;
    int64_t step = -1;
    tfb_nonfinite_counts c;
    assert_int_equal(read_back(path, "grads/w", &n_num, &step, &c), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    assert_int_equal(read_back(path, "grads/w", &n_num, &step, &c), 0);
    assert_int_equal(n_num, 0);
    assert_int_equal(k.n, 0);
    free(path);
    tu_rmtree(dir);
}

static void test_unhealthy_check_writes_record_and_calls_once(void **st)
{
    (void)st;
    char dir[] = "/tmp/tfb_health_numXXXXXX";
    assert_non_null(mkdtemp(dir));
    calls k = {0};
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.on_nonfinite = on_nonfinite;
    o.on_nonfinite_user = &k;
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);

    float x[37];
    for (int i = 0; i < 37; i++)
        x[i] = 1.0f;
    assert_int_equal(tfb_check_numerics(w, "grads/w", x, 37, 0), 0);
    x[5] = f32_bits(0x7f800001u); /* signalling NaN */
    x[6] = f32_bits(0xffc00000u); /* negative NaN */
    x[30] = -INFINITY;
    assert_int_equal(tfb_check_numerics(w, "grads/w", x, 37, 7), 3);
    x[31] = INFINITY;
    assert_int_equal(tfb_check_numerics(w, "grads/w", x, 37, 8), 4);
    double d[3] = {1, INFINITY, 2};
    assert_int_equal(tfb_check_numerics_f64(w, "grads/b", d, 3, 9), 1);
    assert_int_equal(tfb_check_numerics_f64(w, "grads/b", d, 3, 10), 1);
    assert_int_equal(tfb_writer_close(w), 0);

    /* once per tag, with the first step and that call's counts */
    assert_int_equal(k.n, 2);
    assert_string_equal(k.s[0].tag, "grads/w");
    assert_int_equal(k.s[0].step, 7);
    assert_counts(k.s[0].c, NF(2, 0, 1));
    assert_string_equal(k.s[1].tag, "grads/b");
    assert_int_equal(k.s[1].step, 9);
    assert_counts(k.s[1].c, NF(0, 1, 0));

    char *path = tu_find_event_file(dir);
    int n_num = 0;
    int64_t step = -1;
    tfb_nonfinite_counts c = NF(0, 0, 0);
    (void)read_back(path, "grads/w", &n_num, &step, &c);
    assert_int_equal(n_num, 2); /* the healthy call at step 0 wrote nothing */
    assert_int_equal(step, 8);
    assert_counts(c, NF(2, 1, 1));
    (void)read_back(path, "grads/b", &n_num, &step, &c);
    assert_int_equal(n_num, 2);
    assert_int_equal(step, 10);
    assert_counts(c, NF(0, 1, 0));
    free(path);
    tu_rmtree(dir);
}

static void test_check_with_writer_needs_tag(void **st)
{
    (void)st;
    char dir[] = "/tmp/tfb_health_numXXXXXX";
    assert_non_null(mkdtemp(dir));
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    float x[1] = {NAN};
    assert_int_equal(tfb_check_numerics(w, NULL, x, 1, 0), TFB_EINVAL);
    assert_int_equal(tfb_check_numerics(w, "", x, 1, 0), TFB_EINVAL);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_special_at_each_position),
        cmocka_unit_test(test_values_outside_the_checked_range_are_ignored),
        cmocka_unit_test(test_large_random_arrays),
        cmocka_unit_test(test_all_nonfinite),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_healthy_check_writes_nothing),
        cmocka_unit_test(test_unhealthy_check_writes_record_and_calls_once),
        cmocka_unit_test(test_check_with_writer_needs_tag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
