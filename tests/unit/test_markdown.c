/*
 * test_markdown.c - text summaries' Markdown rendering (markdown.h): raw
 * HTML becomes text, unsafe links lose their link, images their request,
 * pipe tables become <table> (outside fenced code only).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/text/markdown.h"

static char *md(const char *s)
{
    size_t n;
    char *h = tfb_markdown_html(s, strlen(s), &n);
    assert_non_null(h);
    assert_int_equal(strlen(h), n);
    return h;
}

static void expect(const char *src, const char *want)
{
    char *h = md(src);
    if (strcmp(h, want) != 0)
        fail_msg("markdown of [%s]:\n got [%s]\nwant [%s]", src, h, want);
    free(h);
}

static void absent(const char *src, const char *bad)
{
    char *h = md(src);
    if (strstr(h, bad))
        fail_msg("markdown of [%s] holds [%s]: %s", src, bad, h);
    free(h);
}

static void basics(void **state)
{
    (void)state;
    expect("# T\n\n**b** `c` [l](https://x.org/a?b=1)",
           "<h1>T</h1>\n<p><strong>b</strong> <code>c</code> "
           "<a href=\"https://x.org/a?b=1\">l</a></p>\n");
    expect("- a\n- b\n", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n");
    expect("", "");
}

static void raw_html_is_text(void **state)
{
    (void)state;
    expect("<script>alert(1)</script>",
           "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n");
    expect("a <b onclick=x>b</b>",
           "<p>a &lt;b onclick=x&gt;b&lt;/b&gt;</p>\n");
    absent("<img src=x onerror=alert(1)>", "<img");
    /* An HTML block's Markdown is still rendered, its tags as text. */
    expect("<div>[x](javascript:y) **b** [ok](https://a.b)</div>",
           "<p>&lt;div&gt;x <strong>b</strong> <a href=\"https://a.b\">ok</a>"
           "&lt;/div&gt;</p>\n");
    expect("<script>alert('x')</script> [bad](javascript:alert(1))",
           "<p>&lt;script&gt;alert('x')&lt;/script&gt; bad</p>\n");
    absent("<div>\n<iframe src=//evil></iframe>\n</div>", "<iframe");
}

static void unsafe_links(void **state)
{
    (void)state;
    expect("[bad](javascript:alert(1))", "<p>bad</p>\n");
    expect("[bad](JaVaScRiPt:alert(1))", "<p>bad</p>\n");
    expect("[bad](java&#9;script:alert(1))", "<p>bad</p>\n");
    expect("[d](data:text/html,x) [v](vbscript:x)", "<p>d v</p>\n");
    expect("[rel](a/b) [m](mailto:x@y.z)",
           "<p><a href=\"a/b\">rel</a> <a href=\"mailto:x@y.z\">m</a></p>\n");
    expect("![alt *t*](https://x.org/p.png)", "<p>alt <em>t</em></p>\n");
    absent("<https://x.org>", "javascript");
}

static void tables(void **state)
{
    (void)state;
    expect("| a | b |\n| --- | :-: |\n| 1 | **2** |\n| x \\| y | |\n\nafter",
           "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n"
           "</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td><strong>2</strong>"
           "</td>\n</tr>\n<tr>\n<td>x | y</td>\n<td></td>\n</tr>\n</tbody>\n"
           "</table>\n<p>after</p>\n");
    expect("before\n\na|b\n-|-\n", "<p>before</p>\n<table>\n<thead>\n<tr>\n"
           "<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n</table>\n");
    /* In fenced code, or with a header that does not match: no table. */
    absent("```\n| a | b |\n| - | - |\n```", "<table>");
    absent("| a | b | c |\n| - | - |\n", "<table>");
    /* Cells are made safe too. */
    absent("| <script>x</script> | [j](javascript:x) |\n| - | - |",
           "<script");
    absent("| <script>x</script> | [j](javascript:x) |\n| - | - |",
           "href");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(basics),
        cmocka_unit_test(raw_html_is_text),
        cmocka_unit_test(unsafe_links),
        cmocka_unit_test(tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
