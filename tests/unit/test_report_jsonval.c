/*
 * test_report_jsonval.c - the report's small JSON reader: valid documents
 * (escapes, surrogate pairs, nesting, numbers) read back exactly, and
 * every kind of malformed text is refused without a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "../../server/report_jsonval.h"

static tfb_jv *parse(const char *s)
{
    return tfb_jv_parse(s, strlen(s));
}

static void test_document(void **state)
{
    (void)state;
    tfb_jv *v = parse(" {\"devices\": [{\"id\": 0, \"name\": \"H200\\u00e9\","
                      " \"busy_fraction\": 0.891, \"idle\": {\"other_ns\": 1.08e8}}],"
                      " \"kernels\": [], \"ok\": true, \"no\": false, \"z\": null,"
                      " \"s\": \"a\\\"b\\\\c\\n\\ud83d\\ude00\", \"neg\": -12.5e-1} ");
    assert_non_null(v);
    assert_int_equal(v->type, TFB_JV_OBJECT);
    const tfb_jv *devs = tfb_jv_get(v, "devices");
    assert_non_null(devs);
    assert_int_equal(devs->type, TFB_JV_ARRAY);
    assert_int_equal(devs->n, 1);
    const tfb_jv *d = &devs->items[0];
    assert_true(tfb_jv_num(tfb_jv_get(d, "id"), -1) == 0);
    assert_string_equal(tfb_jv_str(tfb_jv_get(d, "name"), ""), "H200\xc3\xa9");
    assert_true(tfb_jv_num(tfb_jv_get(d, "busy_fraction"), 0) == 0.891);
    assert_true(tfb_jv_num(tfb_jv_get(tfb_jv_get(d, "idle"), "other_ns"), 0) ==
                1.08e8);
    assert_int_equal(tfb_jv_get(v, "kernels")->n, 0);
    assert_int_equal(tfb_jv_get(v, "ok")->type, TFB_JV_BOOL);
    assert_true(tfb_jv_get(v, "ok")->num == 1 && tfb_jv_get(v, "no")->num == 0);
    assert_int_equal(tfb_jv_get(v, "z")->type, TFB_JV_NULL);
    assert_string_equal(tfb_jv_get(v, "s")->str,
                        "a\"b\\c\n\xf0\x9f\x98\x80");
    assert_true(tfb_jv_num(tfb_jv_get(v, "neg"), 0) == -1.25);
    /* Lookups on the wrong type fall back. */
    assert_null(tfb_jv_get(devs, "id"));
    assert_true(tfb_jv_num(tfb_jv_get(v, "s"), 7) == 7);
    assert_string_equal(tfb_jv_str(tfb_jv_get(v, "neg"), "fb"), "fb");
    assert_null(tfb_jv_get(v, "missing"));
    tfb_jv_free(v);

    /* The non-finite strings our JSON writer uses stay strings. */
    v = parse("[\"NaN\", \"Infinity\"]");
    assert_non_null(v);
    assert_int_equal(v->items[0].type, TFB_JV_STRING);
    tfb_jv_free(v);
    tfb_jv_free(NULL);
}

static void test_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {
        "", " ", "{", "}", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{a:1}",
        "\"unterminated", "\"bad \\x escape\"", "\"ctl \x01\"", "tru", "nul",
        "-", "1.2.3", "[1] x", "{\"a\":1,}", "\"\\u12G4\"", "+", "{\"k\":[{]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tfb_jv *v = parse(bad[i]);
        if (v)
            fail_msg("accepted: %s", bad[i]);
    }
    assert_null(tfb_jv_parse(NULL, 0));
    /* Nesting deeper than the limit is refused, not a stack overflow. */
    char deep[300];
    memset(deep, '[', 200);
    memset(deep + 200, ']', 99);
    deep[299] = 0;
    assert_null(parse(deep));
    /* A lone surrogate becomes U+FFFD. */
    tfb_jv *v = parse("\"\\ud800x\"");
    assert_non_null(v);
    assert_string_equal(v->str, "\xef\xbf\xbdx");
    tfb_jv_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
