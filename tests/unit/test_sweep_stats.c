/* test_sweep_stats.c - the statistics behind the multirun bands: step
 * buckets, values at a step, and quantiles by selection against a sort. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/scalars/sweep_stats.h"

static int cmpf(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* numpy.percentile(x, 100*q), method "linear", over a sorted copy. */
static double ref_quantile(const float *sorted, size_t n, double q)
{
    double h = (double)(n - 1) * q;
    size_t k = (size_t)floor(h);
    if (k + 1 >= n)
        return sorted[n - 1];
    double a = sorted[k], b = sorted[k + 1], t = h - floor(h);
    return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

static void test_quantiles_match_sort(void **state)
{
    (void)state;
    static const double qs[] = {0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0};
    const size_t nq = sizeof qs / sizeof qs[0];
    srand(12345);
    for (int trial = 0; trial < 400; trial++) {
        size_t n = 1 + (size_t)(rand() % (trial < 100 ? 8 : 3000));
        float *x = malloc(n * sizeof *x), *s = malloc(n * sizeof *s);
        int few = trial % 3 == 0; /* many equal values */
        for (size_t i = 0; i < n; i++)
            x[i] = few ? (float)(rand() % 4)
                       : (float)rand() / (float)RAND_MAX * 100 - 50;
        if (trial % 7 == 0) /* sorted and reversed inputs */
            qsort(x, n, sizeof *x, cmpf);
        if (trial % 14 == 0)
            for (size_t i = 0; i < n / 2; i++) {
                float t = x[i];
                x[i] = x[n - 1 - i];
                x[n - 1 - i] = t;
            }
        memcpy(s, x, n * sizeof *s);
        qsort(s, n, sizeof *s, cmpf);
        double out[16];
        tfb_sweep_quantiles(x, n, qs, nq, out);
        for (size_t i = 0; i < nq; i++)
            assert_true(out[i] == ref_quantile(s, n, qs[i]));
        /* the same multiset is left */
        qsort(x, n, sizeof *x, cmpf);
        assert_memory_equal(x, s, n * sizeof *s);
        free(x);
        free(s);
    }
}

/* Rows of a large sweep (past 2,048 values the quantiles come from a
 * sample's brackets, sweep_stats.c `sampled`): every shape a bracket can
 * miss on (few distinct values, one value, sorted, reversed, periodic, a
 * far outlier block, heavy tails) against the sort, and quantiles close
 * together whose brackets merge. */
static void test_quantiles_sampled_match_sort(void **state)
{
    (void)state;
    static const double qs[] = {0.0,  0.05, 0.25, 0.5,   0.5001,
                                0.75, 0.95, 0.99, 0.999, 1.0};
    const size_t nq = sizeof qs / sizeof qs[0];
    srand(777);
    for (int trial = 0; trial < 120; trial++) {
        size_t n = 2048 + (size_t)(rand() % (trial < 60 ? 6000 : 120000));
        float *x = malloc(n * sizeof *x), *s = malloc(n * sizeof *s);
        int shape = trial % 8;
        for (size_t i = 0; i < n; i++) {
            float u = (float)rand() / (float)RAND_MAX;
            switch (shape) {
            case 0: x[i] = u * 100 - 50; break;
            case 1: x[i] = (float)(rand() % 3); break;            /* ties */
            case 2: x[i] = 1.5f; break;                           /* one */
            case 3: x[i] = (float)i; break;                       /* sorted */
            case 4: x[i] = (float)(n - i); break;                 /* reversed */
            case 5: x[i] = (float)(i % 97); break;                /* periodic */
            case 6: x[i] = i < n / 10 ? 1e30f : u; break;         /* block */
            default: x[i] = 1 / (u + 1e-6f) * (rand() % 2 ? 1 : -1); /* tails */
            }
        }
        memcpy(s, x, n * sizeof *s);
        qsort(s, n, sizeof *s, cmpf);
        double out[16];
        tfb_sweep_quantiles(x, n, qs, nq, out);
        for (size_t i = 0; i < nq; i++)
            assert_true(out[i] == ref_quantile(s, n, qs[i]));
        qsort(x, n, sizeof *x, cmpf);
        assert_memory_equal(x, s, n * sizeof *s);
        free(x);
        free(s);
    }
}

/* The five quantiles of a band over 100,000 runs: selection runs over the
 * values within the sample's brackets, not over the whole row (plain
 * selection ran over all of it, several times). */
static void test_quantiles_sampled_work(void **state)
{
    (void)state;
    static const double qs[] = {0.05, 0.25, 0.5, 0.75, 0.95};
    size_t n = 100000;
    float *x = malloc(n * sizeof *x), *s = malloc(n * sizeof *s);
    srand(99);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)rand() / (float)RAND_MAX;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmpf);
    double out[5];
    size_t work = tfb_sweep_quantiles(x, n, qs, 5, out);
    for (size_t i = 0; i < 5; i++)
        assert_true(out[i] == ref_quantile(s, n, qs[i]));
    assert_true(work > 0);
    assert_true(work < n / 2);
    /* a short row is plain selection over all of it */
    assert_int_equal(tfb_sweep_quantiles(x, 1000, qs, 5, out), 1000);
    free(x);
    free(s);
}

static void test_bucket_steps(void **state)
{
    (void)state;
    int64_t out[1000];
    assert_int_equal(tfb_sweep_bucket_steps(5, 5, 100, out), 1);
    assert_int_equal(out[0], 5);
    /* fewer steps than buckets: every step once */
    assert_int_equal(tfb_sweep_bucket_steps(10, 14, 100, out), 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(out[i], 10 + i);
    size_t n = tfb_sweep_bucket_steps(0, 999, 10, out);
    assert_int_equal(n, 10);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[9], 999);
    for (size_t i = 1; i < n; i++)
        assert_true(out[i] > out[i - 1]);
    /* the whole int64 range does not overflow */
    n = tfb_sweep_bucket_steps(INT64_MIN, INT64_MAX, 3, out);
    assert_int_equal(n, 3);
    assert_true(out[0] == INT64_MIN && out[2] == INT64_MAX);
    assert_true(out[1] > -2 && out[1] < 2);
}

static void test_value_at(void **state)
{
    (void)state;
    const int64_t steps[] = {10, 20, 20, 30};
    const float vals[] = {1, 2, 3, 4};
    tfb_sweep_series s = {steps, vals, 4};
    tfb_sweep_cursor c = {0};
    float v;
    size_t at;
    assert_int_equal(tfb_sweep_value_at(&s, &c, 9, &v, &at), 0);
    assert_int_equal(tfb_sweep_value_at(&s, &c, 10, &v, &at), 1);
    assert_true(v == 1 && at == 0);
    assert_int_equal(tfb_sweep_value_at(&s, &c, 25, &v, &at), 1);
    assert_true(v == 3 && at == 2); /* the last point at or before */
    assert_int_equal(tfb_sweep_value_at(&s, &c, 30, &v, &at), 1);
    assert_true(v == 4);
    assert_int_equal(tfb_sweep_value_at(&s, &c, 31, &v, &at), 0);
    tfb_sweep_series empty = {NULL, NULL, 0};
    tfb_sweep_cursor c2 = {0};
    assert_int_equal(tfb_sweep_value_at(&empty, &c2, 0, &v, &at), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantiles_match_sort),
        cmocka_unit_test(test_quantiles_sampled_match_sort),
        cmocka_unit_test(test_quantiles_sampled_work),
        cmocka_unit_test(test_bucket_steps),
        cmocka_unit_test(test_value_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
