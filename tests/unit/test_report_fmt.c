/*
 * test_report_fmt.c - the report's plain-text table cells
 * (core/report_fmt.h): a long name is cut with an ellipsis at a character
 * boundary so the columns after it stay aligned; a short one is padded;
 * control characters never reach the terminal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/report_fmt.h"

static char *cell(const char *s, size_t width)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    tfb_report_put_cell(f, s, width);
    fclose(f);
    return buf;
}

static void expect(const char *s, size_t width, const char *want)
{
    char *got = cell(s, width);
    if (strcmp(got, want) != 0)
        fail_msg("cell(%s, %zu): got [%s], want [%s]", s ? s : "NULL", width,
                 got, want);
    free(got);
}

static void short_is_padded(void **state)
{
    (void)state;
    expect("ab", 5, "ab   ");
    expect("abcde", 5, "abcde");
    expect(NULL, 3, "   ");
    expect("a\tb", 4, "a?b ");
}

static void long_is_cut_with_ellipsis(void **state)
{
    (void)state;
    expect("abcdef", 5, "abcd\xe2\x80\xa6");
    expect("sm80_xmma_dgrad_implicit_gemm_tf32f32_128x128", 12,
           "sm80_xmma_d\xe2\x80\xa6");
}

static void utf8_counts_characters(void **state)
{
    (void)state;
    /* "é" is two bytes and one column: not cut, padded by columns. */
    expect("caf\xc3\xa9", 5, "caf\xc3\xa9 ");
    /* Cut after 3 characters, never inside one. */
    expect("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4,
           "\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_is_padded),
        cmocka_unit_test(long_is_cut_with_ellipsis),
        cmocka_unit_test(utf8_counts_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
