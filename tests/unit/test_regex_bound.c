/*
 * test_regex_bound.c - a user's regex measured before regcomp
 * (base/regex_bound.h, issue 32 item 4): the copies counted repetitions
 * add (nested counts multiply, '+' copies once), the nesting depth and
 * back-references refused with their reason; realistic filters, brackets
 * holding braces and a 16 KiB alternation of names accepted and compiled.
 * The monsters are only measured, never compiled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/regex_bound.h"
#include "tfboard.h"

static void refused(const char *rx, const char *why)
{
    char err[300] = "x";
    int rc = tfb_regex_check(rx, err, sizeof err);
    if (rc != TFB_EINVAL || !strstr(err, why))
        fail_msg("[%.80s]: rc %d, err [%s], want [%s]", rx, rc, err, why);
}

static void accepted(const char *rx)
{
    char err[300] = "x";
    int rc = tfb_regex_check(rx, err, sizeof err);
    if (rc != 0 || err[0])
        fail_msg("[%.80s] refused: %s", rx, err);
}

static void costly(void **state)
{
    (void)state;
    /* The issue's: 26 bytes, a million copies (1.1 GB unbounded). */
    refused("((.{1,100}){1,100}){1,100}", "copies of its parts (at most 1000");
    refused("((.{1,100}){1,100}){1,100}", "make 1010097 copies");
    /* 8 GB unbounded. */
    refused("(.{1,32767})", "make 32766 copies");
    refused("(.{1,100}){1,100}", "make 10098 copies");
    /* Just past the bound, and just within it. */
    refused("a{1,1002}", "make 1001 copies");
    accepted("a{1,1001}");
    refused("a{1002}", "too costly");
    refused("a{1001,}", "too costly"); /* {m,} is m + 1 copies */
    refused("a{,1002}", "too costly"); /* glibc's {0,n} */
    /* Consecutive counts multiply (glibc accepts them). */
    refused("a{10}{200}", "make 1999 copies");
    /* '+' is compiled as two copies: ten nested ones are 2^10. */
    refused("((((((((((a+)+)+)+)+)+)+)+)+)+)+", "too costly");
    accepted("((((a+)+)+)+)+");
    /* Alternatives add up inside a counted group. */
    refused("(ab|cd|ef){1,200}", "too costly");
    accepted("(ab|cd|ef){1,100}");
    /* Saturation: no pattern overflows the count. */
    refused("((((((a{32767}){32767}){32767}){32767}){32767}){32767})",
            "more than 10^18");
}

static void depth_and_backrefs(void **state)
{
    (void)state;
    char deep[300];
    memset(deep, '(', 64);
    deep[64] = 'a';
    memset(deep + 65, ')', 64);
    deep[129] = 0;
    accepted(deep);
    char deeper[300];
    memset(deeper, '(', 65);
    deeper[65] = 'a';
    memset(deeper + 66, ')', 65);
    deeper[131] = 0;
    refused(deeper, "nested more than 64 deep");
    refused("(a)\\1", "back-references (\\1)");
    refused("(a*)*(b)\\2", "back-references (\\2)");
    accepted("a\\.b\\(c\\)\\\\");
    accepted("[\\1]"); /* in a bracket, '\' is itself */
}

static void realistic_and_brackets(void **state)
{
    (void)state;
    const char *ok[] = {
        "seed_1", "^lr_0\\.1/", "seed_(2|3)$", "0\\.0+1/seed_[0-9]*5$",
        "run_[0-9]{1,3}", "[Ll][Oo][Ss][Ss]", "(^|/)loss$",
        "^run[0-9]*00$", "[[:space:]]x{2,4}", ".*", "a|b|", "x{3}",
        /* braces and parens inside brackets are members, not counts */
        "[a{1,9999}]", "[]{1,9999}]", "[^]{1,9999}]", "[[:alpha:]{1,9999}]",
        "[(]{1,5}[)]",
        /* not an interval: glibc refuses it, we do not count it */
        "a{1,", "a{x}", "a{}",
        /* an unmatched ')' is an ordinary character */
        "a)b{1,3}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        accepted(ok[i]);
    /* Every realistic one compiles and matches as regcomp's own. */
    regex_t re;
    char err[300];
    assert_int_equal(tfb_regex_compile(&re, "run_[0-9]{1,3}$",
                                       REG_EXTENDED | REG_NOSUB, err,
                                       sizeof err),
                     0);
    assert_int_equal(regexec(&re, "lr/run_042", 0, NULL, 0), 0);
    assert_int_not_equal(regexec(&re, "lr/run_0421", 0, NULL, 0), 0);
    regfree(&re);
    /* The longest runs of optional copies the bound lets through compile
     * (a few MB; unbounded, .{1,32767} took 8 GB). */
    const char *edge[] = {".{1,1001}", "(.{1,31}){1,31}", "(a|b){0,250}"};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        assert_int_equal(tfb_regex_compile(&re, edge[i], REG_EXTENDED, err,
                                           sizeof err),
                         0);
        assert_int_equal(regexec(&re, "xxab", 0, NULL, 0), 0);
        regfree(&re);
    }
}

/* The page's selection of many runs: one anchored alternation of escaped
 * names, as long as the URI allows (16 KiB). Length is no cost. */
static void long_alternation(void **state)
{
    (void)state;
    size_t cap = 17000, n = 0;
    char *rx = malloc(cap);
    assert_non_null(rx);
    n += (size_t)snprintf(rx + n, cap - n, "^(");
    for (int i = 0; n < 16000; i++)
        n += (size_t)snprintf(rx + n, cap - n, "%slr_0\\.%04d/seed_%d",
                              i ? "|" : "", i, i % 7);
    snprintf(rx + n, cap - n, ")$");
    regex_t re;
    char err[300];
    assert_int_equal(tfb_regex_compile(&re, rx, REG_EXTENDED | REG_NOSUB,
                                       err, sizeof err),
                     0);
    assert_int_equal(regexec(&re, "lr_0.0042/seed_0", 0, NULL, 0), 0);
    assert_int_not_equal(regexec(&re, "lr_0.0042/seed_1", 0, NULL, 0), 0);
    regfree(&re);
    free(rx);
}

static void invalid_is_regcomps_message(void **state)
{
    (void)state;
    regex_t re;
    char err[300] = "";
    assert_int_equal(tfb_regex_compile(&re, "(", REG_EXTENDED, err,
                                       sizeof err),
                     TFB_EINVAL);
    assert_true(err[0] && !strstr(err, "too costly"));
    assert_int_equal(tfb_regex_compile(&re, "a{2,1}", REG_EXTENDED, err,
                                       sizeof err),
                     TFB_EINVAL);
    assert_int_equal(tfb_regex_compile(&re, "(a", REG_EXTENDED, NULL, 0),
                     TFB_EINVAL);
    assert_int_equal(tfb_regex_check(NULL, NULL, 0), TFB_EINVAL);
    /* A refusal never reaches regcomp, and err is optional. */
    assert_int_equal(tfb_regex_compile(&re, "(.{1,32767})", REG_EXTENDED,
                                       NULL, 0),
                     TFB_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(costly),
        cmocka_unit_test(depth_and_backrefs),
        cmocka_unit_test(realistic_and_brackets),
        cmocka_unit_test(long_alternation),
        cmocka_unit_test(invalid_is_regcomps_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
