/* test_server_auth.c - the access token (core/http_auth.h): credentials,
 * the cookie, the wrong-token limiter on an injected clock, addresses. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/http_auth.h"
#include "tfboard.h"

#define SEC 1000000000LL
static const char TOKEN[] = "correct-horse-battery";

static struct sockaddr_in v4(const char *a)
{
    struct sockaddr_in s;
    memset(&s, 0, sizeof s);
    s.sin_family = AF_INET;
    inet_pton(AF_INET, a, &s.sin_addr);
    return s;
}

static struct sockaddr_in6 v6(const char *a)
{
    struct sockaddr_in6 s;
    memset(&s, 0, sizeof s);
    s.sin6_family = AF_INET6;
    inet_pton(AF_INET6, a, &s.sin6_addr);
    return s;
}

static tfb_auth_verdict try_token(tfb_auth *a, const void *addr,
                                  const char *tok, int64_t now,
                                  unsigned *retry)
{
    tfb_auth_creds c = {NULL, NULL, NULL};
    char h[300];
    snprintf(h, sizeof h, "Bearer %s", tok);
    c.authorization = h;
    return tfb_auth_check(a, addr, &c, now, retry);
}

static void test_no_token_allows_all(void **state)
{
    (void)state;
    tfb_auth *a;
    assert_int_equal(tfb_auth_create(&a, NULL, 6006, 0), 0);
    assert_false(tfb_auth_required(a));
    struct sockaddr_in c = v4("10.0.0.1");
    tfb_auth_creds none = {NULL, NULL, NULL};
    unsigned r;
    assert_int_equal(tfb_auth_check(a, (void *)&c, &none, 0, &r),
                     TFB_AUTH_OK);
    tfb_auth_destroy(a);
}

static void test_credentials(void **state)
{
    (void)state;
    tfb_auth *a;
    assert_int_equal(tfb_auth_create(&a, TOKEN, 6006, 1), 0);
    assert_true(tfb_auth_required(a));
    struct sockaddr_in c = v4("10.0.0.1");
    unsigned r;
    tfb_auth_creds cr = {NULL, NULL, NULL};
    assert_int_equal(tfb_auth_check(a, (void *)&c, &cr, 0, &r),
                     TFB_AUTH_MISSING);
    cr.query_token = TOKEN;
    assert_int_equal(tfb_auth_check(a, (void *)&c, &cr, 0, &r),
                     TFB_AUTH_OK_QUERY);
    cr.query_token = NULL;
    cr.authorization = "token correct-horse-battery";
    assert_int_equal(tfb_auth_check(a, (void *)&c, &cr, 0, &r), TFB_AUTH_OK);
    cr.authorization = "Basic correct-horse-battery";
    assert_int_equal(tfb_auth_check(a, (void *)&c, &cr, 0, &r),
                     TFB_AUTH_MISSING);
    /* a prefix or an extension of the token is wrong */
    assert_int_equal(try_token(a, &c, "correct-horse", 0, &r),
                     TFB_AUTH_WRONG);
    assert_int_equal(try_token(a, &c, "correct-horse-battery-staple", 0, &r),
                     TFB_AUTH_WRONG);

    /* the cookie: its secret, never the token; Secure with TLS */
    char ck[200];
    assert_true(tfb_auth_set_cookie(a, ck, sizeof ck) > 0);
    assert_null(strstr(ck, TOKEN));
    assert_non_null(strstr(ck, "; HttpOnly; SameSite=Strict; Secure"));
    assert_int_equal(strncmp(ck, "tfboard_6006=", 13), 0);
    char pair[120];
    snprintf(pair, sizeof pair, "%.*s", (int)strcspn(ck, ";"), ck);
    char jar[300];
    snprintf(jar, sizeof jar, "a=1; %s; b=2", pair);
    tfb_auth_creds cc = {NULL, jar, NULL};
    assert_int_equal(tfb_auth_check(a, (void *)&c, &cc, 0, &r), TFB_AUTH_OK);
    /* signed in and visiting the URL with the token again: the token is
     * still taken out of the address */
    cc.query_token = TOKEN;
    assert_int_equal(tfb_auth_check(a, (void *)&c, &cc, 0, &r),
                     TFB_AUTH_OK_QUERY);
    cc.query_token = NULL;
    /* another port's cookie, or a stale secret: not ours, and no guess */
    jar[5 + 8] = '7'; /* tfboard_7006 */
    assert_int_equal(tfb_auth_check(a, (void *)&c, &cc, 0, &r),
                     TFB_AUTH_MISSING);
    cc.cookie = "tfboard_6006=00";
    for (int i = 0; i < 10; i++)
        assert_int_equal(tfb_auth_check(a, (void *)&c, &cc, 0, &r),
                         TFB_AUTH_MISSING);
    assert_int_equal(try_token(a, &c, TOKEN, 0, &r), TFB_AUTH_OK);
    tfb_auth_destroy(a);
}

static void test_limiter_backs_off(void **state)
{
    (void)state;
    tfb_auth *a;
    assert_int_equal(tfb_auth_create(&a, TOKEN, 6006, 0), 0);
    struct sockaddr_in c = v4("192.0.2.7"), other = v4("192.0.2.8");
    unsigned r = 0;
    int64_t t = 100 * SEC;
    for (int i = 0; i < TFB_AUTH_FREE_FAILURES; i++)
        assert_int_equal(try_token(a, &c, "guess-guess", t, &r),
                         TFB_AUTH_WRONG);
    /* locked for 1 s: not even the right token is compared */
    assert_int_equal(try_token(a, &c, TOKEN, t, &r), TFB_AUTH_LIMITED);
    assert_int_equal(r, 1);
    assert_int_equal(try_token(a, &other, TOKEN, t, &r), TFB_AUTH_OK);
    /* a query token too */
    tfb_auth_creds q = {TOKEN, NULL, NULL};
    assert_int_equal(tfb_auth_check(a, (void *)&c, &q, t, &r),
                     TFB_AUTH_LIMITED);
    /* each further wrong token doubles the wait */
    t += SEC;
    assert_int_equal(try_token(a, &c, "guess-guess", t, &r), TFB_AUTH_WRONG);
    assert_int_equal(try_token(a, &c, TOKEN, t + SEC, &r), TFB_AUTH_LIMITED);
    assert_int_equal(r, 1);
    t += 2 * SEC;
    assert_int_equal(try_token(a, &c, "guess-guess", t, &r), TFB_AUTH_WRONG);
    assert_int_equal(try_token(a, &c, TOKEN, t, &r), TFB_AUTH_LIMITED);
    assert_int_equal(r, 4);
    /* capped at 5 minutes */
    for (int i = 0; i < 20; i++) {
        t += 301 * SEC;
        assert_int_equal(try_token(a, &c, "guess-guess", t, &r),
                         TFB_AUTH_WRONG);
    }
    assert_int_equal(try_token(a, &c, TOKEN, t, &r), TFB_AUTH_LIMITED);
    assert_int_equal(r, 300);
    /* after the wait, the right token clears the slate */
    t += 300 * SEC;
    assert_int_equal(try_token(a, &c, TOKEN, t, &r), TFB_AUTH_OK);
    for (int i = 0; i < TFB_AUTH_FREE_FAILURES - 1; i++)
        assert_int_equal(try_token(a, &c, "guess-guess", t, &r),
                         TFB_AUTH_WRONG);
    assert_int_equal(try_token(a, &c, TOKEN, t, &r), TFB_AUTH_OK);
    tfb_auth_destroy(a);
}

static void test_limiter_forgets_and_groups_ipv6(void **state)
{
    (void)state;
    tfb_auth *a;
    assert_int_equal(tfb_auth_create(&a, TOKEN, 6006, 0), 0);
    unsigned r;
    /* four guesses, then 15 minutes of quiet: five more are free again */
    struct sockaddr_in c = v4("198.51.100.1");
    for (int i = 0; i < TFB_AUTH_FREE_FAILURES - 1; i++)
        try_token(a, &c, "guess-guess", 0, &r);
    for (int i = 0; i < TFB_AUTH_FREE_FAILURES - 1; i++)
        assert_int_equal(try_token(a, &c, "guess-guess", 16 * 60 * SEC, &r),
                         TFB_AUTH_WRONG);
    assert_int_equal(try_token(a, &c, TOKEN, 16 * 60 * SEC, &r), TFB_AUTH_OK);
    /* addresses of one IPv6 /64 share a count; another /64 does not */
    char addr[64];
    for (int i = 0; i < TFB_AUTH_FREE_FAILURES; i++) {
        snprintf(addr, sizeof addr, "2001:db8:1:2::%x", i + 1);
        struct sockaddr_in6 s6 = v6(addr);
        assert_int_equal(try_token(a, &s6, "guess-guess", 0, &r),
                         TFB_AUTH_WRONG);
    }
    struct sockaddr_in6 same = v6("2001:db8:1:2:ffff::1");
    struct sockaddr_in6 next = v6("2001:db8:1:3::1");
    assert_int_equal(try_token(a, &same, TOKEN, 0, &r), TFB_AUTH_LIMITED);
    assert_int_equal(try_token(a, &next, TOKEN, 0, &r), TFB_AUTH_OK);
    /* a v4-mapped client counts as its IPv4 address */
    for (int i = 0; i < TFB_AUTH_FREE_FAILURES; i++)
        try_token(a, &c, "guess-guess", 20 * 60 * SEC, &r);
    struct sockaddr_in6 mapped = v6("::ffff:198.51.100.1");
    assert_int_equal(try_token(a, &mapped, TOKEN, 20 * 60 * SEC, &r),
                     TFB_AUTH_LIMITED);
    tfb_auth_destroy(a);
}

static void test_tokens_and_addresses(void **state)
{
    (void)state;
    char t1[TFB_AUTH_GEN_LEN + 1], t2[TFB_AUTH_GEN_LEN + 1], why[128];
    assert_int_equal(tfb_auth_token_generate(t1), 0);
    assert_int_equal(tfb_auth_token_generate(t2), 0);
    assert_int_equal(strlen(t1), TFB_AUTH_GEN_LEN);
    assert_int_equal(strspn(t1, "0123456789abcdef"), TFB_AUTH_GEN_LEN);
    assert_string_not_equal(t1, t2);
    assert_int_equal(tfb_auth_token_valid(t1, why, sizeof why), 0);
    assert_int_equal(tfb_auth_token_valid("short", why, sizeof why),
                     TFB_EINVAL);
    assert_null(strstr(why, "short"));
    assert_int_equal(tfb_auth_token_valid("has a-blank", why, sizeof why),
                     TFB_EINVAL);
    assert_null(strstr(why, "blank"));

    assert_true(tfb_auth_equal("abc", "abc"));
    assert_false(tfb_auth_equal("abd", "abc"));
    assert_false(tfb_auth_equal("ab", "abc"));
    assert_false(tfb_auth_equal("abcd", "abc"));
    assert_false(tfb_auth_equal("", "abc"));

    struct sockaddr_in l4 = v4("127.0.0.1"), l4b = v4("127.1.2.3"),
                       o4 = v4("10.1.1.1"), any4 = v4("0.0.0.0");
    struct sockaddr_in6 l6 = v6("::1"), m6 = v6("::ffff:127.0.0.1"),
                        any6 = v6("::");
    assert_true(tfb_auth_is_loopback((void *)&l4));
    assert_true(tfb_auth_is_loopback((void *)&l4b));
    assert_true(tfb_auth_is_loopback((void *)&l6));
    assert_true(tfb_auth_is_loopback((void *)&m6));
    assert_false(tfb_auth_is_loopback((void *)&o4));
    assert_false(tfb_auth_is_loopback((void *)&any4));
    assert_false(tfb_auth_is_loopback((void *)&any6));
}

static void check_location(const char *raw, const char *want)
{
    char *got = tfb_auth_location(raw);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_location_and_hop_page(void **state)
{
    (void)state;
    check_location("/?token=abc", "/");
    check_location("/index.html?token=abc&run=a%20b&tag=x",
                   "/index.html?run=a%20b&tag=x");
    check_location("/?run=a&token=abc&token=def&tokens=1&token",
                   "/?run=a&tokens=1");
    check_location(NULL, "/");
    /* never another host */
    check_location("//evil.example/?token=abc", "/");
    check_location("/\\evil.example/?token=abc&x=1", "/?x=1");
    check_location("http://evil.example/?token=abc", "/");

    size_t len = 0;
    char *page = tfb_auth_hop_page("/?q=\"><script>&x='1'", &len);
    assert_non_null(page);
    assert_int_equal(strlen(page), len);
    assert_null(strstr(page, "<script>"));
    assert_non_null(strstr(page, "content=\"0;url=/?q=&quot;&gt;&lt;script"
                                 "&gt;&amp;x=&#39;1&#39;\""));
    free(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_token_allows_all),
        cmocka_unit_test(test_credentials),
        cmocka_unit_test(test_limiter_backs_off),
        cmocka_unit_test(test_limiter_forgets_and_groups_ipv6),
        cmocka_unit_test(test_tokens_and_addresses),
        cmocka_unit_test(test_location_and_hop_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
