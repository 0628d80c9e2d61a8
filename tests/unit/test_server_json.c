/* test_server_json.c - the JSON builder: escaping, numbers, structure,
 * structs written from field tables. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/json.h"

static char *build_str(const char *s, size_t n)
{
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_strn(&j, s, n);
    return tfb_json_take(&j, NULL);
}

static void test_escapes(void **state)
{
    (void)state;
    char *o = build_str("a\"b\\c\n\t\r\x01<>&/", 13);
    assert_string_equal(o, "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u003c\\u003e\\u0026/\"");
    free(o);
    /* </script> can never appear in the output */
    o = build_str("</script><img src=x onerror=alert(1)>", 37);
    assert_null(strstr(o, "<"));
    assert_null(strstr(o, ">"));
    free(o);
    /* valid UTF-8 kept, invalid bytes replaced */
    o = build_str("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9);
    assert_string_equal(o, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    free(o);
    o = build_str("a\xff" "b\xc3" "\xed\xa0\x80", 7);
    assert_string_equal(o, "\"a\\ufffdb\\ufffd\\ufffd\\ufffd\\ufffd\"");
    free(o);
    /* embedded NUL is escaped, not a terminator */
    o = build_str("a\0b", 3);
    assert_string_equal(o, "\"a\\u0000b\"");
    free(o);
}

static void test_numbers(void **state)
{
    (void)state;
    char b[48];
    tfb_fmt_double(b, NAN);
    assert_string_equal(b, "NaN");
    tfb_fmt_double(b, -INFINITY);
    assert_string_equal(b, "-Infinity");
    tfb_fmt_double(b, 0.1);
    assert_string_equal(b, "0.1");
    tfb_fmt_double(b, 1700000000.5);
    assert_string_equal(b, "1700000000.5");
    tfb_fmt_double(b, 3);
    assert_string_equal(b, "3");
    tfb_fmt_float(b, 0.1f);
    assert_string_equal(b, "0.1");
    tfb_fmt_double(b, 1e-7);
    assert_string_equal(b, "1e-07");
    tfb_fmt_double(b, 1.5e300);
    assert_string_equal(b, "1.5e+300");
    tfb_fmt_double(b, 123456.789);
    assert_string_equal(b, "123456.789");
    tfb_fmt_double(b, -0.00123);
    assert_string_equal(b, "-0.00123");
    tfb_fmt_double(b, 1e16);
    assert_string_equal(b, "1e+16");
    tfb_fmt_float(b, 1.0f / 3.0f);
    assert_string_equal(b, "0.33333334");
    tfb_fmt_float(b, 16777216.0f);
    assert_string_equal(b, "16777216");
    tfb_fmt_float(b, 3e-42f); /* subnormal */
    assert_true(strtof(b, NULL) == 3e-42f);
    tfb_fmt_i64(b, INT64_MIN);
    assert_string_equal(b, "-9223372036854775808");
    tfb_fmt_i64(b, INT64_MAX);
    assert_string_equal(b, "9223372036854775807");
    /* every formatted double and float reads back exactly */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d))
            continue;
        tfb_fmt_double(b, d);
        assert_true(strtod(b, NULL) == d);
        float f = (float)(d * 1e-300);
        if (isfinite(f)) {
            tfb_fmt_float(b, f);
            assert_true(strtof(b, NULL) == f);
        }
    }
}

/* Every type of a field table, with its null rule, a has-flag and a
 * nested struct. */
typedef struct inner {
    int64_t a;
    double b;
} inner;
typedef struct every {
    const char *str, *none;
    char text[8], empty[8];
    int64_t i64, step, no_step;
    uint64_t u64;
    size_t size;
    int i, pos, not_pos, flag, unset_flag;
    int32_t grid[3];
    uint32_t u32;
    double d, nan_d, num, nan_num, fin, inf_fin;
    float f;
    inner in;
} every;

static void test_field_tables(void **state)
{
    (void)state;
    static const tfb_json_field inner_fields[] = {
        TFB_JSON_FIELD(inner, a, I64),
        TFB_JSON_FIELD(inner, b, DOUBLE),
    };
    static const tfb_json_field fields[] = {
        TFB_JSON_FIELD(every, str, STR),
        TFB_JSON_FIELD(every, none, STR),
        TFB_JSON_FIELD(every, text, TEXT),
        TFB_JSON_FIELD(every, empty, TEXT),
        TFB_JSON_FIELD_AS("chars", every, empty, CHARS),
        TFB_JSON_FIELD(every, i64, I64),
        TFB_JSON_FIELD(every, step, STEP),
        TFB_JSON_FIELD(every, no_step, STEP),
        TFB_JSON_FIELD(every, u64, U64),
        TFB_JSON_FIELD(every, size, SIZE),
        TFB_JSON_FIELD(every, i, INT),
        TFB_JSON_FIELD(every, pos, POS),
        TFB_JSON_FIELD(every, not_pos, POS),
        TFB_JSON_FIELD(every, grid, INT3),
        TFB_JSON_FIELD(every, u32, U32),
        TFB_JSON_FIELD(every, d, DOUBLE),
        TFB_JSON_FIELD(every, nan_d, DOUBLE),
        TFB_JSON_FIELD(every, num, NUM),
        TFB_JSON_FIELD(every, nan_num, NUM),
        TFB_JSON_FIELD(every, fin, FIN),
        TFB_JSON_FIELD(every, inf_fin, FIN),
        TFB_JSON_FIELD(every, f, FLOAT),
        TFB_JSON_FIELD(every, flag, BOOL),
        TFB_JSON_FIELD_IF("if_set", every, i64, I64, flag),
        TFB_JSON_FIELD_IF("if_unset", every, i64, I64, unset_flag),
        TFB_JSON_FIELD_OBJ("in", every, in, inner_fields),
    };
    every e = {
        .str = "s<", .text = "t", .i64 = -5, .step = 7, .no_step = -1,
        .u64 = UINT64_MAX, .size = 3, .i = -2, .pos = 4, .not_pos = 0,
        .flag = 1, .grid = {64, 2, 1}, .u32 = 9, .d = 0.5, .nan_d = NAN,
        .num = INFINITY, .nan_num = NAN, .fin = 1.25, .inf_fin = -INFINITY,
        .f = 0.1f, .in = {11, 2.5},
    };
    tfb_json j;
    tfb_json_init(&j);
    TFB_JSON_STRUCT(&j, &e, fields);
    char *o = tfb_json_take(&j, NULL);
    assert_string_equal(o,
        "{\"str\":\"s\\u003c\",\"none\":null,\"text\":\"t\",\"empty\":null,"
        "\"chars\":\"\",\"i64\":-5,\"step\":7,\"no_step\":null,"
        "\"u64\":18446744073709551615,\"size\":3,\"i\":-2,\"pos\":4,"
        "\"not_pos\":null,\"grid\":[64,2,1],\"u32\":9,\"d\":0.5,"
        "\"nan_d\":\"NaN\",\"num\":\"Infinity\",\"nan_num\":null,"
        "\"fin\":1.25,\"inf_fin\":null,\"f\":0.1,\"flag\":true,"
        "\"if_set\":-5,\"if_unset\":null,\"in\":{\"a\":11,\"b\":2.5}}");
    free(o);
}

static void test_structure(void **state)
{
    (void)state;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "a");
    tfb_json_array_begin(&j);
    tfb_json_i64(&j, 1);
    tfb_json_double(&j, NAN);
    tfb_json_float(&j, INFINITY);
    tfb_json_null(&j);
    tfb_json_bool(&j, 1);
    tfb_json_array_begin(&j);
    tfb_json_array_end(&j);
    tfb_json_array_end(&j);
    tfb_json_key(&j, "b<");
    tfb_json_object_begin(&j);
    tfb_json_object_end(&j);
    tfb_json_key(&j, "c");
    tfb_json_u64(&j, UINT64_MAX);
    tfb_json_object_end(&j);
    size_t len;
    char *o = tfb_json_take(&j, &len);
    assert_non_null(o);
    assert_string_equal(o, "{\"a\":[1,\"NaN\",\"Infinity\",null,true,[]],"
                           "\"b\\u003c\":{},\"c\":18446744073709551615}");
    assert_int_equal(len, strlen(o));
    free(o);
    /* unbalanced or over-closed output is refused */
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    assert_null(tfb_json_take(&j, NULL));
    tfb_json_init(&j);
    tfb_json_array_end(&j);
    assert_true(tfb_json_failed(&j));
    assert_null(tfb_json_take(&j, NULL));
    /* too deep is a sticky failure, not an overflow */
    tfb_json_init(&j);
    for (int i = 0; i < TFB_JSON_MAX_DEPTH + 5; i++)
        tfb_json_array_begin(&j);
    assert_true(tfb_json_failed(&j));
    tfb_json_free(&j);
}

/* tfb_json_object_reopen: keys added to a whole object (the GPU routes'
 * step window), after other keys or into an empty one; anything else is
 * refused and left as it was. */
static void test_reopen(void **state)
{
    (void)state;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "a");
    tfb_json_i64(&j, 1);
    tfb_json_object_end(&j);
    assert_int_equal(tfb_json_object_reopen(&j), 0);
    tfb_json_key(&j, "w");
    tfb_json_str(&j, "x");
    tfb_json_object_end(&j);
    char *o = tfb_json_take(&j, NULL);
    assert_string_equal(o, "{\"a\":1,\"w\":\"x\"}");
    free(o);
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_object_end(&j);
    assert_int_equal(tfb_json_object_reopen(&j), 0);
    tfb_json_key(&j, "w");
    tfb_json_null(&j);
    tfb_json_object_end(&j);
    o = tfb_json_take(&j, NULL);
    assert_string_equal(o, "{\"w\":null}");
    free(o);
    /* an array, an open object, nothing: refused, unchanged */
    tfb_json_init(&j);
    assert_int_equal(tfb_json_object_reopen(&j), -1);
    tfb_json_array_begin(&j);
    tfb_json_array_end(&j);
    assert_int_equal(tfb_json_object_reopen(&j), -1);
    o = tfb_json_take(&j, NULL);
    assert_string_equal(o, "[]");
    free(o);
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    assert_int_equal(tfb_json_object_reopen(&j), -1);
    tfb_json_free(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_field_tables),
        cmocka_unit_test(test_reopen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
