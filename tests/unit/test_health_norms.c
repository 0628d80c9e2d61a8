/*
 * test_health_norms.c - tfb_l2_norm*, tfb_grad_norms* against an
 * independent reference (power-of-two scaling plus a compensated long
 * double sum), at the edges of the float and double ranges, and the
 * grad_norm/<name> scalars they log, read back from the file.
 */
#include <float.h>
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

#include "test_util.h"
#include "tfboard.h"

/* The tensors' leading size (tfboard.h's convention). */
#define TS sizeof(tfb_tensor)
#define TS64 sizeof(tfb_tensor_f64)

/* Reference: scale by the largest magnitude (a power of two, exact), then a
 * Kahan-compensated long double sum of squares. Independent of the code
 * under test (single pass order, different precision, different scaling). */
static double ref_norm(const double *x, size_t n)
{
    long double big = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            return NAN;
        if (fabsl((long double)x[i]) > big)
            big = fabsl((long double)x[i]);
    }
    if (big == 0)
        return 0.0;
    if (isinf(big))
        return INFINITY;
    int e;
    (void)frexpl(big, &e);
    long double sum = 0, comp = 0;
    for (size_t i = 0; i < n; i++) {
        long double v = ldexpl((long double)x[i], -e);
        long double y = v * v - comp;
        long double t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    return (double)ldexpl(sqrtl(sum), e);
}

static double ref_norm_f32(const float *x, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    double r = ref_norm(d, n);
    free(d);
    return r;
}

static void assert_rel(double got, double want, double tol)
{
    if (want == 0.0) {
        assert_true(got == 0.0);
        return;
    }
    double rel = fabs(got - want) / fabs(want);
    if (!(rel <= tol))
        fail_msg("got %.17g want %.17g (rel %.3g > %.3g)", got, want, rel, tol);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void) /* [0,1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1p-53;
}

static void test_random_float_lengths(void **st)
{
    (void)st;
    static const size_t lens[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 1000, 100003};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        size_t n = lens[k];
        float *x = malloc(n * sizeof *x);
        assert_non_null(x);
        for (size_t i = 0; i < n; i++)
            x[i] = (float)((urand() - 0.5) * 1e-3);
        assert_rel(tfb_l2_norm(x, n), ref_norm_f32(x, n), 1e-12);
        free(x);
    }
}

static void test_float_near_flt_max(void **st)
{
    (void)st;
    enum { N = 1000 };
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (i & 1) ? -FLT_MAX : FLT_MAX * 0.75f;
    double got = tfb_l2_norm(x, N);
    assert_true(isfinite(got));
    assert_true(got > FLT_MAX); /* the norm leaves the float range */
    assert_rel(got, ref_norm_f32(x, N), 1e-13);
}

static void test_float_denormals_and_zeros(void **st)
{
    (void)st;
    float x[33];
    for (int i = 0; i < 33; i++)
        x[i] = FLT_TRUE_MIN * (float)(i % 5); /* denormals and zeros */
    assert_rel(tfb_l2_norm(x, 33), ref_norm_f32(x, 33), 1e-13);
    /* every element the smallest denormal: exactly sqrt(n) * FLT_TRUE_MIN */
    for (int i = 0; i < 16; i++)
        x[i] = -FLT_TRUE_MIN;
    assert_rel(tfb_l2_norm(x, 16), 4.0 * (double)FLT_TRUE_MIN, 1e-15);
    memset(x, 0, sizeof x);
    assert_true(tfb_l2_norm(x, 33) == 0.0);
    assert_true(tfb_l2_norm(x, 0) == 0.0);
    assert_true(tfb_l2_norm(NULL, 0) == 0.0);
    assert_true(tfb_l2_norm_f64(NULL, 0) == 0.0);
}

static void test_nonfinite_propagates(void **st)
{
    (void)st;
    float f[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    f[3] = INFINITY;
    assert_true(isinf(tfb_l2_norm(f, 10)));
    f[3] = -INFINITY;
    assert_true(isinf(tfb_l2_norm(f, 10)));
    f[7] = NAN;
    assert_true(isnan(tfb_l2_norm(f, 10)));
    double d[5] = {1e300, 1e300, 1, 2, 3};
    d[4] = -INFINITY;
    assert_true(isinf(tfb_l2_norm_f64(d, 5)));
    d[0] = NAN;
    assert_true(isnan(tfb_l2_norm_f64(d, 5)));
}

static void test_double_near_dbl_max(void **st)
{
    (void)st;
    /* Four times DBL_MAX/2: the norm is exactly DBL_MAX, though every
     * square overflows. */
    double x[5] = {DBL_MAX / 2, -DBL_MAX / 2, DBL_MAX / 2, DBL_MAX / 2, 0};
    assert_rel(tfb_l2_norm_f64(x, 4), DBL_MAX, 1e-15);
    assert_rel(tfb_l2_norm_f64(x, 5), DBL_MAX, 1e-15);
    /* A fifth one: the true norm exceeds DBL_MAX, so Inf is right. */
    x[4] = DBL_MAX / 2;
    assert_true(isinf(tfb_l2_norm_f64(x, 5)));
    double y[3] = {1e200, -1e200, 3e199};
    assert_rel(tfb_l2_norm_f64(y, 3), ref_norm(y, 3), 1e-15);
    double z[2] = {1e300, 1e-300};
    assert_rel(tfb_l2_norm_f64(z, 2), 1e300, 1e-15);
}

static void test_double_tiny(void **st)
{
    (void)st;
    enum { N = 1001 };
    double x[N];
    /* Squares land in the subnormal range or flush to zero: the plain sum
     * would be 0 or badly rounded. */
    for (int i = 0; i < N; i++)
        x[i] = (1.0 + urand()) * 1e-170 * ((i & 1) ? -1 : 1);
    assert_rel(tfb_l2_norm_f64(x, N), ref_norm(x, N), 1e-13);
    for (int i = 0; i < N; i++)
        x[i] = DBL_TRUE_MIN * (double)(i % 7);
    assert_rel(tfb_l2_norm_f64(x, N), ref_norm(x, N), 1e-13);
    for (int i = 0; i < 9; i++)
        x[i] = DBL_TRUE_MIN;
    assert_rel(tfb_l2_norm_f64(x, 9), 3 * DBL_TRUE_MIN, 1e-15);
    /* mixed scales: the tiny ones must not disturb the result */
    x[0] = 3e-160;
    x[1] = 4e-160;
    assert_rel(tfb_l2_norm_f64(x, 2), 5e-160, 1e-15);
    memset(x, 0, sizeof x);
    assert_true(tfb_l2_norm_f64(x, N) == 0.0);
}

static void test_random_double_ranges(void **st)
{
    (void)st;
    static const double scales[] = {1e-300, 1e-160, 1e-20, 1, 1e20, 1e160, 1e300};
    enum { N = 4099 };
    double *x = malloc(N * sizeof *x);
    assert_non_null(x);
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
        for (int i = 0; i < N; i++)
            x[i] = (urand() - 0.5) * scales[s];
        assert_rel(tfb_l2_norm_f64(x, N), ref_norm(x, N), 1e-13);
    }
    free(x);
}

static void test_grad_norms_global_no_writer(void **st)
{
    (void)st;
    float a[3] = {3, 4, 0}, b[2] = {0, 12};
    tfb_tensor t[3] = {{TS, "a", a, 3}, {TS, "b", b, 2},
                       {TS, "empty", NULL, 0}};
    double g = -1;
    assert_int_equal(tfb_grad_norms(NULL, t, 3, 0, &g), 0);
    assert_rel(g, 13.0, 1e-15);
    assert_int_equal(tfb_grad_norms(NULL, t, 0, 0, &g), 0);
    assert_true(g == 0.0);

    double big[2] = {DBL_MAX / 2, 0};
    tfb_tensor_f64 d[2] = {{TS64, "x", big, 2}, {TS64, "y", big, 1}};
    assert_int_equal(tfb_grad_norms_f64(NULL, d, 2, 0, &g), 0);
    assert_rel(g, DBL_MAX / 2 * sqrt(2.0), 1e-15);

    /* more tensors than the stack arrays hold */
    enum { M = 200 };
    tfb_tensor_f64 many[M];
    double one = 1.0;
    char names[M][16];
    for (int i = 0; i < M; i++) {
        snprintf(names[i], sizeof names[i], "l%d", i);
        many[i] = (tfb_tensor_f64){TS64, names[i], &one, 1};
    }
    assert_int_equal(tfb_grad_norms_f64(NULL, many, M, 0, &g), 0);
    assert_rel(g, sqrt((double)M), 1e-15);
}

static void test_grad_norms_bad_input(void **st)
{
    (void)st;
    float a[2] = {1, 2};
    double g = 42;
    tfb_tensor noname[1] = {{TS, NULL, a, 2}};
    tfb_tensor nodata[1] = {{TS, "x", NULL, 2}};
    tfb_tensor empty[1] = {{TS, "", a, 2}};
    assert_int_equal(tfb_grad_norms(NULL, NULL, 1, 0, &g), TFB_EINVAL);
    assert_int_equal(tfb_grad_norms(NULL, noname, 1, 0, &g), TFB_EINVAL);
    assert_int_equal(tfb_grad_norms(NULL, nodata, 1, 0, &g), TFB_EINVAL);
    assert_int_equal(tfb_grad_norms(NULL, empty, 1, 0, &g), TFB_EINVAL);
    tfb_tensor_f64 dn[1] = {{TS64, "x", NULL, 3}};
    assert_int_equal(tfb_grad_norms_f64(NULL, dn, 1, 0, &g), TFB_EINVAL);
    tfb_tensor unsized[1] = {{.name = "x", .data = a, .len = 2}};
    assert_int_equal(tfb_grad_norms(NULL, unsized, 1, 0, &g), TFB_EINVAL);
    assert_true(g == 42); /* out-parameter untouched on failure */
}


static void test_grad_norms_logged(void **st)
{
    (void)st;
    char dir[] = "/tmp/tfb_health_normsXXXXXX";
    assert_non_null(mkdtemp(dir));
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    float a[2] = {3, 4};
    float b[1] = {-12};
    tfb_tensor t[2] = {{TS, "layer1/w", a, 2}, {TS, "layer2/b", b, 1}};
    double g = 0;
    for (int step = 0; step < 3; step++)
        assert_int_equal(tfb_grad_norms(w, t, 2, step, &g), 0);
    assert_rel(g, 13.0, 1e-15);
    assert_int_equal(tfb_writer_close(w), 0);

    char *path = tu_find_event_file(dir);
    tfb_reader *r = NULL;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int n_l1 = 0, n_l2 = 0, n_g = 0;
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            if (tu_is_run_end(&v))
                continue;
            assert_int_equal(v.kind, TFB_VALUE_SCALAR);
            assert_true(ev.step >= 0 && ev.step < 3);
            if (v.tag.len == 18 && memcmp(v.tag.ptr, "grad_norm/layer1/w", 18) == 0) {
                assert_rel(v.scalar, 5.0, 1e-7);
                n_l1++;
            } else if (v.tag.len == 18 &&
                       memcmp(v.tag.ptr, "grad_norm/layer2/b", 18) == 0) {
                assert_rel(v.scalar, 12.0, 1e-7);
                n_l2++;
            } else if (v.tag.len == 16 &&
                       memcmp(v.tag.ptr, "grad_norm/global", 16) == 0) {
                assert_rel(v.scalar, 13.0, 1e-7);
                n_g++;
            } else {
                fail_msg("unexpected tag %.*s", (int)v.tag.len, v.tag.ptr);
            }
        }
    }
    assert_int_equal(n_l1, 3);
    assert_int_equal(n_l2, 3);
    assert_int_equal(n_g, 3);
    tfb_reader_close(r);
    free(path);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_float_lengths),
        cmocka_unit_test(test_float_near_flt_max),
        cmocka_unit_test(test_float_denormals_and_zeros),
        cmocka_unit_test(test_nonfinite_propagates),
        cmocka_unit_test(test_double_near_dbl_max),
        cmocka_unit_test(test_double_tiny),
        cmocka_unit_test(test_random_double_ranges),
        cmocka_unit_test(test_grad_norms_global_no_writer),
        cmocka_unit_test(test_grad_norms_bad_input),
        cmocka_unit_test(test_grad_norms_logged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
