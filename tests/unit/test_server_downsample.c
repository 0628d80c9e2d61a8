/* test_server_downsample.c - display downsampling and smoothing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/downsample.h"
#include "tfboard.h"

static void test_ema_matches_tensorboard(void **state)
{
    (void)state;
    float v[6] = {1, 2, NAN, 4, INFINITY, 6};
    double out[6];
    double w = 0.6;
    tfb_smooth_ema(v, 6, w, out);
    double last = 0;
    int n = 0;
    for (int i = 0; i < 6; i++) {
        if (!isfinite(v[i])) {
            assert_true(isnan(v[i]) ? isnan(out[i]) : out[i] == v[i]);
            continue;
        }
        last = last * w + (1 - w) * v[i];
        n++;
        assert_true(fabs(out[i] - last / (1 - pow(w, n))) < 1e-12);
    }
    /* the first value is its own debiased average */
    assert_true(fabs(out[0] - 1.0) < 1e-12);
}

static void test_all_points_when_few(void **state)
{
    (void)state;
    int64_t st[5] = {0, 1, 2, 3, 4};
    float v[5] = {5, 4, 3, 2, 1};
    tfb_ds_opts o = {10, 0, 0, 0, 0};
    tfb_ds_point *p;
    size_t n;
    assert_int_equal(tfb_downsample(st, v, 5, &o, &p, &n), 0);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(p[i].index, i);
    free(p);
    o.samples = 0;
    assert_int_equal(tfb_downsample(st, v, 5, &o, &p, &n), 0);
    assert_int_equal(n, 5);
    free(p);
    o.smoothing = 1.0;
    assert_int_equal(tfb_downsample(st, v, 5, &o, &p, &n), TFB_EINVAL);
}

/* Random series: the result always holds the first and last point, the
 * global min and max, every non-finite point, is in order, and holds no
 * more than samples + non-finite points. */
static void test_keeps_extremes_random(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    for (int round = 0; round < 200; round++) {
        size_t count = 1 + (seed = seed * 1103515245u + 12345u) % 5000;
        size_t samples = 2 + (seed = seed * 1103515245u + 12345u) % 300;
        int64_t *st = malloc(count * sizeof *st);
        float *v = malloc(count * sizeof *v);
        size_t nonfinite = 0, imin = 0, imax = 0;
        for (size_t i = 0; i < count; i++) {
            seed = seed * 1103515245u + 12345u;
            st[i] = (int64_t)i;
            v[i] = (float)((seed >> 8) % 100000) / 7.0f;
            if (seed % 997 == 0) {
                v[i] = seed & 1 ? NAN : -INFINITY;
                nonfinite++;
            }
        }
        for (size_t i = 0; i < count; i++) {
            if (!isfinite(v[i]))
                continue;
            if (!isfinite(v[imin]) || v[i] < v[imin])
                imin = i;
            if (!isfinite(v[imax]) || v[i] > v[imax])
                imax = i;
        }
        tfb_ds_opts o = {samples, 0, 0, 0, 0};
        tfb_ds_point *p;
        size_t n;
        assert_int_equal(tfb_downsample(st, v, count, &o, &p, &n), 0);
        assert_true(n <= (count < samples ? count : samples) + nonfinite);
        assert_int_equal(p[0].index, 0);
        assert_int_equal(p[n - 1].index, count - 1);
        int has_min = 0, has_max = 0;
        size_t nf_seen = 0;
        for (size_t i = 0; i < n; i++) {
            if (i)
                assert_true(p[i].index > p[i - 1].index);
            has_min |= p[i].index == imin;
            has_max |= p[i].index == imax;
            nf_seen += !isfinite(v[p[i].index]);
        }
        assert_true(has_min && has_max);
        assert_int_equal(nf_seen, nonfinite);
        free(p);
        free(st);
        free(v);
    }
}

static void test_range_and_smoothing_before_sampling(void **state)
{
    (void)state;
    enum { N = 1000 };
    int64_t st[N];
    float v[N];
    for (int i = 0; i < N; i++) {
        st[i] = i * 2;
        v[i] = (float)(i % 17);
    }
    double sm[N];
    tfb_smooth_ema(v, N, 0.9, sm);
    tfb_ds_opts o = {50, 0.9, 1, 100, 299};
    tfb_ds_point *p;
    size_t n;
    assert_int_equal(tfb_downsample(st, v, N, &o, &p, &n), 0);
    assert_true(n <= 50 && n >= 2);
    assert_int_equal(st[p[0].index], 100);
    assert_int_equal(st[p[n - 1].index], 298);
    for (size_t i = 0; i < n; i++)
        assert_true(p[i].value == sm[p[i].index]); /* full-series EMA */
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ema_matches_tensorboard),
        cmocka_unit_test(test_all_points_when_few),
        cmocka_unit_test(test_keeps_extremes_random),
        cmocka_unit_test(test_range_and_smoothing_before_sampling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
