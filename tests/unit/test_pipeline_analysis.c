/*
 * test_pipeline_analysis.c - the input-pipeline analysis on generated steps
 * with known input fractions: each verdict boundary, the step statistics,
 * the interval arithmetic of the trace figures, the recommendations and
 * the summary JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pipeline_analysis.h"
#include "analysis/pipeline_trace.h"

#define N 50

/* N steps of step_ms each, input_ms each. */
static tfb_pipeline_step *gen(double step_ms, double input_ms)
{
    tfb_pipeline_step *s = calloc(N, sizeof *s);
    assert_non_null(s);
    for (int i = 0; i < N; i++)
        s[i] = (tfb_pipeline_step){i, step_ms, input_ms, 0};
    return s;
}

static const char *verdict_of(double step_ms, double input_ms,
                              const tfb_pipeline_trace *tr)
{
    tfb_pipeline_step *s = gen(step_ms, input_ms);
    tfb_pipeline_summary sum;
    assert_int_equal(tfb_pipeline_summarize(s, N, tr, &sum), 0);
    free(s);
    assert_int_equal(sum.steps, N);
    return sum.verdict;
}

static void test_verdict_boundaries(void **state)
{
    (void)state;
    /* Σinput / Σstep lands exactly on each threshold. */
    assert_string_equal(verdict_of(100, 20, NULL), "highly");
    assert_string_equal(verdict_of(100, 19.99, NULL), "moderately");
    assert_string_equal(verdict_of(100, 5, NULL), "moderately");
    assert_string_equal(verdict_of(100, 4.99, NULL), "not");
    assert_string_equal(verdict_of(100, 0, NULL), "not");
    assert_string_equal(verdict_of(10, 10, NULL), "highly");

    /* "potentially" needs a trace that shows other host time >= 3 %. */
    tfb_pipeline_trace tr = {.has_trace = 1, .other_host_fraction = 0.03};
    assert_string_equal(verdict_of(100, 4.99, &tr), "potentially");
    tr.other_host_fraction = 0.0299;
    assert_string_equal(verdict_of(100, 4.99, &tr), "not");
    /* Input dominates the verdict even with a trace. */
    tr.other_host_fraction = 0.5;
    assert_string_equal(verdict_of(100, 5, &tr), "moderately");
    assert_string_equal(verdict_of(100, 25, &tr), "highly");
    /* A trace's figures are ignored when has_trace is 0. */
    tfb_pipeline_trace none = {.has_trace = 0, .other_host_fraction = 0.5};
    assert_string_equal(verdict_of(100, 1, &none), "not");

    assert_string_equal(tfb_pipeline_verdict(0.2, 0, 0), "highly");
    assert_string_equal(tfb_pipeline_verdict(0.05, 0, 0), "moderately");
    assert_string_equal(tfb_pipeline_verdict(0.049, 1, 0.03), "potentially");
    assert_string_equal(tfb_pipeline_verdict(0.049, 0, 0.03), "not");
}

/* The fraction is Σinput/Σstep, not the mean of per-step fractions. */
static void test_fraction_is_ratio_of_sums(void **state)
{
    (void)state;
    tfb_pipeline_step s[2] = {{0, 10, 10, 0}, {1, 90, 0, 0}};
    tfb_pipeline_summary sum;
    assert_int_equal(tfb_pipeline_summarize(s, 2, NULL, &sum), 0);
    assert_true(fabs(sum.input_fraction - 0.1) < 1e-12);
    assert_string_equal(sum.verdict, "moderately");
    assert_true(fabs(sum.mean_step_ms - 50) < 1e-12);
    assert_true(fabs(sum.mean_input_ms - 5) < 1e-12);
}

static void test_stats(void **state)
{
    (void)state;
    tfb_pipeline_step s[100];
    for (int i = 0; i < 100; i++) /* shuffled order: 1..100 */
        s[i] = (tfb_pipeline_step){i, (double)((i * 37) % 100 + 1), 0, 0};
    tfb_pipeline_summary sum;
    assert_int_equal(tfb_pipeline_summarize(s, 100, NULL, &sum), 0);
    assert_true(fabs(sum.step_ms.mean - 50.5) < 1e-9);
    assert_true(fabs(sum.step_ms.stddev - sqrt(9999.0 / 12.0)) < 1e-9);
    assert_true(sum.step_ms.min == 1 && sum.step_ms.max == 100);
    /* numpy.percentile(range(1, 101), [50, 90, 99]) */
    assert_true(fabs(sum.step_ms.p50 - 50.5) < 1e-9);
    assert_true(fabs(sum.step_ms.p90 - 90.1) < 1e-9);
    assert_true(fabs(sum.step_ms.p99 - 99.01) < 1e-9);

    tfb_pipeline_step one = {7, 3, 1, 0};
    assert_int_equal(tfb_pipeline_summarize(&one, 1, NULL, &sum), 0);
    assert_true(sum.step_ms.p99 == 3 && sum.step_ms.stddev == 0);
    assert_true(sum.input_ms.p50 == 1);
}

static void test_empty_and_bad(void **state)
{
    (void)state;
    tfb_pipeline_summary sum;
    assert_int_equal(tfb_pipeline_summarize(NULL, 0, NULL, &sum), 0);
    assert_int_equal(sum.steps, 0);
    assert_null(sum.verdict);
    assert_int_equal(tfb_pipeline_summarize(NULL, 3, NULL, &sum),
                     TFB_EINVAL);

    tfb_json j;
    tfb_json_init(&j);
    assert_int_equal(tfb_pipeline_summarize(NULL, 0, NULL, &sum), 0);
    tfb_pipeline_summary_json(&j, &sum);
    size_t len;
    char *txt = tfb_json_take(&j, &len);
    assert_non_null(txt);
    assert_non_null(strstr(txt, "\"steps\":0"));
    assert_non_null(strstr(txt, "\"verdict\":null"));
    assert_non_null(strstr(txt, "\"step_ms\":null"));
    assert_non_null(strstr(txt, "\"recommendations\":[]"));
    free(txt);
}

static void test_intervals(void **state)
{
    (void)state;
    tfb_interval v[] = {{50, 60}, {0, 10}, {5, 20}, {20, 30}, {40, 40},
                        {70, 65}};
    size_t n = tfb_intervals_normalize(v, 6);
    assert_int_equal(n, 2);
    assert_true(v[0].start == 0 && v[0].end == 30);
    assert_true(v[1].start == 50 && v[1].end == 60);
    assert_true(tfb_intervals_length(v, n) == 40);
    tfb_interval b[] = {{25, 55}};
    assert_true(tfb_intervals_overlap(v, n, b, 1) == 10);
    assert_int_equal(tfb_intervals_normalize(NULL, 0), 0);
}

static void test_trace_figures(void **state)
{
    (void)state;
    /* Two steps covering [0,200); input waits [0,30) and [100,150); the GPU
     * busy in [20,90), [160,190) and [195,260) (the last reaching past the
     * steps). Inside the steps: input 80, busy 10+50... worked out below. */
    tfb_interval steps[] = {{100, 200}, {0, 100}};
    tfb_interval inputs[] = {{100, 150}, {0, 30}};
    tfb_interval busy[] = {{160, 190}, {20, 90}, {195, 260}};
    tfb_pipeline_trace t;
    assert_int_equal(tfb_pipeline_trace_compute(steps, 2, inputs, 2, busy, 3,
                                                &t), 0);
    assert_int_equal(t.has_trace, 1);
    assert_true(t.step_ns == 200);
    assert_true(t.input_ns == 80);
    assert_true(t.gpu_busy_ns == 70 + 30 + 5);            /* 105 */
    assert_true(t.gpu_idle_ns == 95);
    assert_true(t.idle_in_input_ns == 80 - 10);            /* [20,30) busy */
    assert_true(fabs(t.gpu_idle_in_input_fraction - 70.0 / 95.0) < 1e-12);
    /* other = 200 - 80 - 105 + 10 = 25 */
    assert_true(fabs(t.other_host_fraction - 25.0 / 200.0) < 1e-12);

    /* A GPU busy through every step: no idle time, fraction 0. */
    tfb_interval s2[] = {{0, 100}}, i2[] = {{0, 10}}, b2[] = {{0, 100}};
    assert_int_equal(tfb_pipeline_trace_compute(s2, 1, i2, 1, b2, 1, &t), 0);
    assert_true(t.gpu_idle_ns == 0 && t.gpu_idle_in_input_fraction == 0);
    assert_true(t.other_host_fraction == 0);

    /* No steps: no trace. */
    assert_int_equal(tfb_pipeline_trace_compute(NULL, 0, NULL, 0, b2, 1, &t),
                     0);
    assert_int_equal(t.has_trace, 0);
}

typedef struct recs {
    char text[8][512];
    int n;
} recs;

static void collect_rec(void *user, const char *text)
{
    recs *r = user;
    assert_true(r->n < 8);
    snprintf(r->text[r->n++], sizeof r->text[0], "%s", text);
}

static int any_contains(const recs *r, const char *needle)
{
    for (int i = 0; i < r->n; i++)
        if (strstr(r->text[i], needle))
            return 1;
    return 0;
}

static void test_recommendations(void **state)
{
    (void)state;
    /* Steady waits: 12 ms steps, 9 ms waiting: loaders must be 4x faster;
     * a deeper queue does not help. */
    tfb_pipeline_step *s = gen(12, 9);
    tfb_pipeline_summary sum;
    assert_int_equal(tfb_pipeline_summarize(s, N, NULL, &sum), 0);
    recs r = {0};
    tfb_pipeline_recommend(&sum, collect_rec, &r);
    assert_true(r.n >= 2);
    assert_true(any_contains(&r, "75.0%"));
    assert_true(any_contains(&r, "4x"));
    assert_true(any_contains(&r, "loader threads"));
    assert_true(any_contains(&r, "steady"));
    assert_false(any_contains(&r, "not the bottleneck"));

    /* Bursty waits: most steps wait nothing, every tenth waits 50 ms. */
    for (int i = 0; i < N; i++)
        s[i].input_ms = i % 10 == 0 ? 50 : 0, s[i].step_ms = 10 + s[i].input_ms;
    assert_int_equal(tfb_pipeline_summarize(s, N, NULL, &sum), 0);
    memset(&r, 0, sizeof r);
    tfb_pipeline_recommend(&sum, collect_rec, &r);
    assert_true(any_contains(&r, "deeper prefetch"));
    assert_true(any_contains(&r, "uneven"));
    free(s);

    /* Not input-bound. */
    s = gen(10, 0.1);
    assert_int_equal(tfb_pipeline_summarize(s, N, NULL, &sum), 0);
    memset(&r, 0, sizeof r);
    tfb_pipeline_recommend(&sum, collect_rec, &r);
    assert_true(any_contains(&r, "not the bottleneck"));
    assert_true(any_contains(&r, "1.0%"));
    assert_false(any_contains(&r, "loader threads"));

    /* A trace whose GPU idles in input waits says so. */
    tfb_pipeline_trace tr = {.has_trace = 1, .other_host_fraction = 0.06,
                             .gpu_idle_in_input_fraction = 0.8,
                             .gpu_idle_ns = 10000000,
                             .idle_in_input_ns = 8000000};
    assert_int_equal(tfb_pipeline_summarize(s, N, &tr, &sum), 0);
    assert_string_equal(sum.verdict, "potentially");
    memset(&r, 0, sizeof r);
    tfb_pipeline_recommend(&sum, collect_rec, &r);
    assert_true(any_contains(&r, "80.0% of the GPU's idle time"));
    assert_true(any_contains(&r, "6.0% of step time"));
    free(s);
}

typedef struct advs {
    char title[8][64], advice[8][512], detail[8][256], sentence[8][512];
    int n;
} advs;

static void collect_adv(void *user, const tfb_pipeline_advice *a)
{
    advs *r = user;
    assert_true(r->n < 8);
    snprintf(r->title[r->n], sizeof r->title[0], "%s", a->title);
    snprintf(r->advice[r->n], sizeof r->advice[0], "%s", a->advice);
    snprintf(r->detail[r->n], sizeof r->detail[0], "%s", a->detail);
    snprintf(r->sentence[r->n], sizeof r->sentence[0], "%s", a->sentence);
    r->n++;
}

/* The advice of two runs that need the same change has the same title and
 * words (the report groups runs by them); only the detail quotes each run;
 * the sentences are tfb_pipeline_recommend's. */
static void test_advice_groups_across_runs(void **state)
{
    (void)state;
    tfb_pipeline_step *s1 = gen(12, 9), *s2 = gen(40, 20);
    tfb_pipeline_summary a, b;
    assert_int_equal(tfb_pipeline_summarize(s1, N, NULL, &a), 0);
    assert_int_equal(tfb_pipeline_summarize(s2, N, NULL, &b), 0);
    advs x = {0}, y = {0};
    tfb_pipeline_advise(&a, collect_adv, &x);
    tfb_pipeline_advise(&b, collect_adv, &y);
    recs r = {0};
    tfb_pipeline_recommend(&a, collect_rec, &r);
    assert_int_equal(x.n, r.n);
    assert_int_equal(x.n, y.n);
    for (int i = 0; i < x.n; i++) {
        assert_string_equal(x.sentence[i], r.text[i]);
        assert_string_equal(x.title[i], y.title[i]);
        assert_string_equal(x.advice[i], y.advice[i]);
        /* No figure of the run in the words shared across runs. */
        assert_null(strpbrk(x.title[i], "0123456789"));
        assert_null(strstr(x.advice[i], "ms"));
    }
    assert_string_equal(x.title[0], "Raise loader throughput");
    assert_string_not_equal(x.detail[0], y.detail[0]);
    assert_non_null(strstr(x.detail[0], "4x"));   /* 12 / (12 - 9) */
    assert_non_null(strstr(y.detail[0], "2x"));   /* 40 / (40 - 20) */
    free(s1);
    free(s2);
}

static void test_summary_json(void **state)
{
    (void)state;
    tfb_pipeline_step *s = gen(100, 20);
    tfb_pipeline_summary sum;
    assert_int_equal(tfb_pipeline_summarize(s, N, NULL, &sum), 0);
    tfb_json j;
    tfb_json_init(&j);
    tfb_pipeline_summary_json(&j, &sum);
    size_t len;
    char *txt = tfb_json_take(&j, &len);
    assert_non_null(txt);
    assert_non_null(strstr(txt, "{\"steps\":50,"));
    assert_non_null(strstr(txt, "\"mean_step_ms\":100,"));
    assert_non_null(strstr(txt, "\"mean_input_ms\":20,"));
    assert_non_null(strstr(txt, "\"input_fraction\":0.2,"));
    assert_non_null(strstr(txt, "\"verdict\":\"highly\""));
    assert_non_null(strstr(txt, "\"step_ms\":{\"mean\":100,\"stddev\":0,"
                                "\"min\":100,\"max\":100,\"p50\":100,"
                                "\"p90\":100,\"p99\":100}"));
    assert_non_null(strstr(txt, "\"gpu_idle_in_input_fraction\":null"));
    assert_non_null(strstr(txt, "\"recommendations\":[\""));
    free(txt);

    tfb_json_init(&j);
    tfb_pipeline_steps_json(&j, s, 2);
    txt = tfb_json_take(&j, &len);
    assert_string_equal(txt, "[[0,100,20],[1,100,20]]");
    free(txt);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_boundaries),
        cmocka_unit_test(test_fraction_is_ratio_of_sums),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_empty_and_bad),
        cmocka_unit_test(test_intervals),
        cmocka_unit_test(test_trace_figures),
        cmocka_unit_test(test_recommendations),
        cmocka_unit_test(test_advice_groups_across_runs),
        cmocka_unit_test(test_summary_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
