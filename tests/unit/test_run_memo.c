/*
 * test_run_memo.c - the run-memo cache (server/analysis/run_memo.h), where
 * the Ranks job view keeps its answers: an answer is given back for its
 * key only, a put replaces the run's previous answer, runs without trace
 * files have answers too, the 64 runs most recently used keep theirs (the
 * least recently used run loses its answer first), and bad arguments are
 * refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/run_memo.h"
#include "store/store.h"
#include "test_util.h"
#include "tfboard.h"

static tfb_store *g_store;
static char *g_dir;

static tfb_run *run_of(const char *name)
{
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(g_store, name, &r), 0);
    return r;
}

static char *memo_of(tfb_run *r, const char *key, size_t *len)
{
    char *body = NULL;
    int rc = tfb_run_memo_get(g_store, r, key, &body, len);
    assert_true(rc == 0 || rc == 1);
    assert_true(rc == 1 ? body != NULL : body == NULL);
    return body;
}

static void test_key_and_replace(void **state)
{
    (void)state;
    tfb_run *r = run_of("memo");
    size_t len = 0;
    assert_null(memo_of(r, "k1", &len));
    assert_int_equal(tfb_run_memo_put(g_store, r, "k1", "hello", 5), 0);
    char *b = memo_of(r, "k1", &len);
    assert_non_null(b);
    assert_int_equal(len, 5);
    assert_memory_equal(b, "hello", 5);
    free(b);
    /* Another key misses; a put under it replaces the first answer. */
    assert_null(memo_of(r, "k2", &len));
    assert_int_equal(tfb_run_memo_put(g_store, r, "k2", "", 0), 0);
    assert_null(memo_of(r, "k1", &len));
    b = memo_of(r, "k2", &len);
    assert_non_null(b);
    assert_int_equal(len, 0);
    free(b);
    /* Another run's answer is its own. */
    tfb_run *other = run_of("memo-other");
    assert_null(memo_of(other, "k2", &len));
    assert_int_equal(tfb_run_memo_put(g_store, other, "k2", "x", 1), 0);
    b = memo_of(r, "k2", &len);
    assert_non_null(b);
    assert_int_equal(len, 0);
    free(b);
}

/* Puts an answer for n runs named prefix0, prefix1, ... */
static void fill(const char *prefix, int n)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%d", prefix, i);
        assert_int_equal(tfb_run_memo_put(g_store, run_of(name), "f", "x", 1),
                         0);
    }
}

static void test_bounded(void **state)
{
    (void)state;
    tfb_run *r = run_of("kept");
    tfb_run *old = run_of("old");
    size_t len = 0;
    assert_int_equal(tfb_run_memo_put(g_store, old, "o", "1", 1), 0);
    assert_int_equal(tfb_run_memo_put(g_store, r, "k", "2", 1), 0);
    /* 63 other runs' answers: with r's, 64, so "old" loses its own. */
    fill("fill-a", 63);
    assert_null(memo_of(old, "o", &len));
    char *b = memo_of(r, "k", &len);
    assert_non_null(b); /* asked for: now the most recently used */
    free(b);
    /* 63 more: r, asked last, outlives the first 63. */
    fill("fill-b", 63);
    b = memo_of(r, "k", &len);
    assert_non_null(b);
    free(b);
    assert_null(memo_of(run_of("fill-a0"), "f", &len));
    /* 64 more: r goes too. */
    fill("fill-c", 64);
    assert_null(memo_of(r, "k", &len));
}

static void test_bad_arguments(void **state)
{
    (void)state;
    tfb_run *r = run_of("memo-bad");
    char *b = NULL;
    size_t len = 0;
    assert_int_equal(tfb_run_memo_get(g_store, r, NULL, &b, &len),
                     TFB_EINVAL);
    assert_int_equal(tfb_run_memo_put(g_store, r, "k", NULL, 3), TFB_EINVAL);
    assert_int_equal(tfb_run_memo_put(NULL, r, "k", "x", 1), TFB_EINVAL);
}

static int setup(void **state)
{
    (void)state;
    g_dir = tu_mkdtemp();
    return tfb_store_create(&g_store, g_dir) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tfb_store_destroy(g_store);
    tu_rmtree(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_and_replace),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
