/*
 * test_alert_rules.c - the user alert rules (alerts_rules.h): the grammar
 * of the regress gates plus "for N steps" / "after N steps", malformed
 * rules refused with the rule named, and the streak logic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "plugins/alerts/alerts_rules.h"

static void parse_good(void **st)
{
    (void)st;
    tfb_alert_rule r;
    char err[512];
    assert_int_equal(tfb_alert_rule_parse("loss>5 for 100 steps", &r, err,
                                          sizeof err), 0);
    assert_string_equal(r.tag, "loss");
    assert_true(r.greater);
    assert_true(r.limit == 5);
    assert_int_equal(r.for_steps, 100);
    assert_int_equal(r.after_step, -1);
    assert_int_equal(tfb_alert_rule_parse("eval/accuracy<0.5 after 2000 "
                                          "steps", &r, err, sizeof err), 0);
    assert_string_equal(r.tag, "eval/accuracy");
    assert_false(r.greater);
    assert_int_equal(r.after_step, 2000);
    assert_int_equal(r.for_steps, 0);
    /* both clauses, either order; the last sign splits */
    assert_int_equal(tfb_alert_rule_parse("a>b<-1.5 after 10 steps for 3 "
                                          "steps", &r, err, sizeof err), 0);
    assert_string_equal(r.tag, "a>b");
    assert_true(r.limit == -1.5);
    assert_int_equal(r.for_steps, 3);
    assert_int_equal(r.after_step, 10);
    assert_int_equal(tfb_alert_rule_parse("loss > 5", &r, err, sizeof err),
                     0);
    assert_string_equal(r.tag, "loss");
}

static void parse_bad(void **st)
{
    (void)st;
    static const char *const bad[] = {
        "loss", "loss>>5", "loss<>5", ">5", "loss>", "loss>abc",
        "loss>nan", "loss>inf", "loss>5 for x steps", "loss>5 for -1 steps",
        "loss>5 for 10", "loss>5 after 10 stepz", "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tfb_alert_rule r;
        char err[512] = "";
        if (tfb_alert_rule_parse(bad[i], &r, err, sizeof err) == 0)
            fail_msg("accepted '%s'", bad[i]);
        if (bad[i][0] && !strstr(err, bad[i]))
            fail_msg("'%s': the message does not name it: %s", bad[i], err);
    }
}

static void streaks(void **st)
{
    (void)st;
    tfb_alert_rule r;
    char err[256];
    assert_int_equal(tfb_alert_rule_parse("loss>5 for 100 steps", &r, err,
                                          sizeof err), 0);
    tfb_rule_state s;
    memset(&s, 0, sizeof s);
    for (int t = 0; t < 50; t++)
        tfb_rule_feed(&r, &s, t, 1);
    for (int t = 50; t < 149; t++)
        tfb_rule_feed(&r, &s, t, 6);
    assert_false(s.holds);         /* 99 steps */
    tfb_rule_feed(&r, &s, 150, 7);
    assert_true(s.holds);          /* 100 steps */
    assert_int_equal(s.streak_from, 50);
    tfb_rule_feed(&r, &s, 151, 4); /* back below: clears */
    assert_false(s.holds);
    tfb_rule_feed(&r, &s, 152, 0.0 / 0.0); /* NaN never compares */
    assert_false(s.holds);

    assert_int_equal(tfb_alert_rule_parse("accuracy<0.5 after 2000 steps",
                                          &r, err, sizeof err), 0);
    memset(&s, 0, sizeof s);
    tfb_rule_feed(&r, &s, 1999, 0.1);
    assert_false(s.holds);
    tfb_rule_feed(&r, &s, 2000, 0.1);
    assert_true(s.holds);
    tfb_rule_feed(&r, &s, 2001, 0.9);
    assert_false(s.holds);
}

/* Steps at the ends of int64 (issue 32 item 13): a streak from -2^63 to
 * 2^63 - 1 is longer than any "for N steps" (its length saturates instead
 * of overflowing, which UBSan reports and which wrapped negative, so the
 * rule never fired); fed point by point and as a batch. */
static void extreme_steps(void **st)
{
    (void)st;
    static const char *const rules[] = {
        "loss>5 for 100 steps", "loss>5 for 9223372036854775807 steps",
        "loss>5 for 100 steps after 9223372036854775807 steps"};
    for (size_t q = 0; q < sizeof rules / sizeof rules[0]; q++) {
        tfb_alert_rule r;
        char err[256];
        assert_int_equal(tfb_alert_rule_parse(rules[q], &r, err, sizeof err),
                         0);
        tfb_rule_state s;
        memset(&s, 0, sizeof s);
        tfb_rule_feed(&r, &s, INT64_MIN, 9);
        assert_false(s.holds); /* a streak of one point */
        tfb_rule_feed(&r, &s, INT64_MAX, 9);
        if (!s.holds)
            fail_msg("'%s' does not hold over the whole int64 range",
                     rules[q]);
        const int64_t step[] = {INT64_MIN, -1, INT64_MAX};
        const float val[] = {9, 9, 9};
        memset(&s, 0, sizeof s);
        tfb_rule_feed_n(&r, &s, step, val, 3);
        assert_true(s.holds);
        assert_true(s.streak_from == INT64_MIN);
        /* a step that goes back the whole range is no streak's length */
        memset(&s, 0, sizeof s);
        tfb_rule_feed(&r, &s, INT64_MAX, 9);
        tfb_rule_feed(&r, &s, INT64_MIN, 9);
        assert_false(s.holds);
        memset(&s, 0, sizeof s);
        const int64_t back[] = {INT64_MAX, INT64_MIN};
        tfb_rule_feed_n(&r, &s, back, val, 2);
        assert_false(s.holds);
    }
}

/* tfb_rule_feed_n leaves the state that point-by-point feeds leave, for
 * batches of any size, on values that cross the limit often, sit on it,
 * and are NaN. */
static void batches_equal_points(void **st)
{
    (void)st;
    const char *rules[] = {"loss>5 for 20 steps", "acc<0.5 after 300 steps",
                           "x>0"};
    enum { N = 3000 };
    static int64_t step[N];
    static float val[N];
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        step[i] = i * 2;
        val[i] = (float)((x >> 40) % 1000) / 100.0f; /* 0 .. 10 */
        if (i % 97 == 0)
            val[i] = 0.0f / 0.0f;
        if (i % 89 == 0)
            val[i] = 5.0f;
        if (i > 1000 && i < 1100)
            val[i] = 9.0f; /* a long streak */
    }
    for (size_t q = 0; q < 3; q++) {
        tfb_alert_rule r;
        char err[256];
        assert_int_equal(tfb_alert_rule_parse(rules[q], &r, err, sizeof err),
                         0);
        const size_t batch[] = {1, 7, 256, N};
        for (size_t b = 0; b < 4; b++) {
            tfb_rule_state one, many;
            memset(&one, 0, sizeof one);
            memset(&many, 0, sizeof many);
            for (size_t at = 0; at < N; at += batch[b]) {
                size_t k = N - at < batch[b] ? N - at : batch[b];
                for (size_t i = at; i < at + k; i++)
                    tfb_rule_feed(&r, &one, step[i], val[i]);
                tfb_rule_feed_n(&r, &many, step + at, val + at, k);
                assert_int_equal(one.holds, many.holds);
                assert_int_equal(one.in_streak, many.in_streak);
                assert_true(one.streak_from == many.streak_from);
                assert_true(one.fed == many.fed &&
                            one.last_step == many.last_step);
                assert_memory_equal(&one.last_value, &many.last_value,
                                    sizeof one.last_value);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_good),
        cmocka_unit_test(parse_bad),
        cmocka_unit_test(streaks),
        cmocka_unit_test(extreme_steps),
        cmocka_unit_test(batches_equal_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
