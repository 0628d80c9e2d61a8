/*
 * test_report_compare.c - the regression gate of `tfboard report
 * --compare` (report_compare.h): its syntax, its direction rule, relative
 * and absolute limits, and the cases it must not pass silently; and the
 * change rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "report/report_compare.h"
#include "tfboard.h"

static void change_rule(void **st)
{
    (void)st;
    assert_true(tfb_compare_change(2.0, 3.0) == 0.5);
    assert_true(tfb_compare_change(-2.0, -1.0) == 0.5); /* over |A| */
    assert_true(tfb_compare_change(0.0, 0.0) == 0.0);
    assert_true(isinf(tfb_compare_change(0.0, 1.0)) &&
                tfb_compare_change(0.0, 1.0) > 0);
    assert_true(isinf(tfb_compare_change(0.0, -1.0)) &&
                tfb_compare_change(0.0, -1.0) < 0);
    assert_true(isnan(tfb_compare_change(NAN, 1.0)));
    assert_true(isnan(tfb_compare_change(1.0, INFINITY)));
}

static void parse_good(void **st)
{
    (void)st;
    tfb_compare_gate g;
    char err[256];
    assert_int_equal(tfb_compare_gate_parse("loss>2%", &g, err, sizeof err),
                     0);
    assert_int_equal(g.metric, TFB_GATE_SCALAR);
    assert_string_equal(g.tag, "loss");
    assert_true(g.higher_is_worse && g.relative);
    assert_true(fabs(g.limit - 0.02) < 1e-12);

    assert_int_equal(
        tfb_compare_gate_parse("eval/accuracy<0.01", &g, err, sizeof err), 0);
    assert_string_equal(g.tag, "eval/accuracy");
    assert_true(!g.higher_is_worse && !g.relative && g.limit == 0.01);

    assert_int_equal(tfb_compare_gate_parse("step_ms>5%", &g, err,
                                            sizeof err), 0);
    assert_int_equal(g.metric, TFB_GATE_STEP_MS);
    assert_int_equal(tfb_compare_gate_parse("kernel_ms>0%", &g, err,
                                            sizeof err), 0);
    assert_int_equal(g.metric, TFB_GATE_KERNEL_MS);
    assert_int_equal(tfb_compare_gate_parse("input_share>0.05", &g, err,
                                            sizeof err), 0);
    assert_int_equal(g.metric, TFB_GATE_INPUT_SHARE);
    /* tag: names a scalar spelled like a built-in metric. */
    assert_int_equal(tfb_compare_gate_parse("tag:step_ms>5%", &g, err,
                                            sizeof err), 0);
    assert_int_equal(g.metric, TFB_GATE_SCALAR);
    assert_string_equal(g.tag, "step_ms");
    /* The last sign splits: a tag may hold '>' itself. */
    assert_int_equal(tfb_compare_gate_parse("a>b<1", &g, err, sizeof err), 0);
    assert_string_equal(g.tag, "a>b");
    assert_false(g.higher_is_worse);
}

static void parse_bad(void **st)
{
    (void)st;
    static const char *const bad[] = {
        "loss", "loss>", ">2%", "loss>abc", "loss>-1%", "loss>%", "loss>2%%",
        "loss>2 %", "loss>nan", "loss>inf", "loss=2%", "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tfb_compare_gate g;
        char err[256] = "";
        assert_int_equal(tfb_compare_gate_parse(bad[i], &g, err, sizeof err),
                         TFB_EINVAL);
        assert_true(strlen(err) > 10); /* a reason, naming the spec */
    }
    char longtag[400];
    memset(longtag, 'x', sizeof longtag);
    strcpy(longtag + 300, ">1%");
    tfb_compare_gate g;
    char err[256];
    assert_int_equal(tfb_compare_gate_parse(longtag, &g, err, sizeof err),
                     TFB_EINVAL);
}

/* A comparison of one scalar tag and step timings, built by hand. */
static tfb_compare_scalar sc;
static tfb_compare cmp;

static void setup_cmp(double loss_a, double loss_b)
{
    memset(&cmp, 0, sizeof cmp);
    memset(&sc, 0, sizeof sc);
    sc.tag = (char *)"loss";
    sc.last_a = loss_a;
    sc.last_b = loss_b;
    cmp.scalars = &sc;
    cmp.n_scalars = 1;
    cmp.pipeline.steps_a = cmp.pipeline.steps_b = 10;
    cmp.pipeline.step_ms_a = 100.0;
    cmp.pipeline.step_ms_b = 104.0;
}

static int check(const char *spec)
{
    tfb_compare_gate g;
    char err[256], why[512];
    assert_int_equal(tfb_compare_gate_parse(spec, &g, err, sizeof err), 0);
    int r = tfb_compare_gate_check(&cmp, &g, why, sizeof why);
    assert_true(strstr(why, r ? "" : "passed") != NULL);
    return r;
}

static void gate_directions(void **st)
{
    (void)st;
    setup_cmp(1.0, 1.03); /* loss +3% */
    assert_int_equal(check("loss>2%"), 1);
    assert_int_equal(check("loss>3.5%"), 0);
    assert_int_equal(check("loss<1%"), 0); /* higher is better: it rose */
    assert_int_equal(check("loss>0.02"), 1); /* absolute */
    assert_int_equal(check("loss>0.04"), 0);
    setup_cmp(1.0, 0.97); /* -3% */
    assert_int_equal(check("loss>0%"), 0);
    assert_int_equal(check("loss<2%"), 1);
    assert_int_equal(check("loss<5%"), 0);
    /* step_ms +4%. */
    assert_int_equal(check("step_ms>5%"), 0);
    assert_int_equal(check("step_ms>3%"), 1);
    /* Exactly at the limit passes. */
    setup_cmp(2.0, 3.0);
    assert_int_equal(check("loss>50%"), 0);
    assert_int_equal(check("loss>49.9%"), 1);
}

static void gate_edges(void **st)
{
    (void)st;
    /* A at 0: any worsening fails a relative limit. */
    setup_cmp(0.0, 0.001);
    assert_int_equal(check("loss>1000%"), 1);
    setup_cmp(0.0, 0.0);
    assert_int_equal(check("loss>0%"), 0);
    /* NaN in B is a regression either way; NaN in A cannot be checked. */
    setup_cmp(1.0, NAN);
    assert_int_equal(check("loss>100%"), 1);
    assert_int_equal(check("loss<100%"), 1);
    setup_cmp(NAN, 1.0);
    assert_int_equal(check("loss>100%"), 1);
    /* Missing metrics fail: an unknown tag, no GPU trace, no steps. */
    setup_cmp(1.0, 1.0);
    assert_int_equal(check("acc<1%"), 1);
    assert_int_equal(check("kernel_ms>5%"), 1);
    cmp.pipeline.steps_b = 0;
    assert_int_equal(check("step_ms>5%"), 1);
    tfb_compare_gate g;
    char err[256], why[512];
    assert_int_equal(tfb_compare_gate_parse("input_ms>5%", &g, err,
                                            sizeof err), 0);
    assert_int_equal(tfb_compare_gate_check(&cmp, &g, why, sizeof why), 1);
    assert_non_null(strstr(why, "run B has no step timings"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(change_rule),
        cmocka_unit_test(parse_good),
        cmocka_unit_test(parse_bad),
        cmocka_unit_test(gate_directions),
        cmocka_unit_test(gate_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
