/*
 * test_many_tags.c - a run with 200 k distinct tags loads (issue 10 item
 * 5: registering tags was quadratic) and every tag is listed once, in
 * order, and found with its own value. Also: the same tag under two kinds
 * stays two series, and a tag that was never written is not found. And
 * many runs, each found by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/loader.h"
#include "store/store.h"
#include "tfboard.h"
#include "test_util.h"

#define N_TAGS 200000

static void tag_name(char *out, size_t n, int i)
{
    /* Shared prefixes and suffixes, as real models' tags have. */
    snprintf(out, n, "model/layer%06d/%s", i / 4,
             (const char *[]){"grad_norm", "weight_norm", "loss", "lr"}[i % 4]);
}

static void many_tags(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char run[4096], tag[128];
    snprintf(run, sizeof run, "%s/big", dir);
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 16 << 20;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, run, &o), 0);
    for (int i = 0; i < N_TAGS; i++) {
        tag_name(tag, sizeof tag, i);
        assert_int_equal(tfb_scalar_at(w, tag, (double)i, i, 1e9 + i), 0);
    }
    /* "model/layer000000/loss" also as text: a second kind, same tag. */
    tag_name(tag, sizeof tag, 2);
    assert_int_equal(tfb_text(w, tag, "as text", 7), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 1, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &lo), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_run *r = tfb_store_find_run(st, "big");
    assert_non_null(r);

    tfb_series **v;
    size_t n;
    assert_int_equal(tfb_run_series(r, TFB_SERIES_SCALAR, &v, &n), 0);
    assert_int_equal(n, N_TAGS);
    for (int i = 0; i < N_TAGS; i++) {
        tag_name(tag, sizeof tag, i);
        /* listed in first-seen order, each once */
        assert_string_equal(tfb_series_tag(v[i]), tag);
        tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, tag);
        assert_ptr_equal(s, v[i]);
        tfb_series_view sv;
        tfb_series_read_begin(s, &sv);
        assert_int_equal(sv.count, 1);
        assert_int_equal(sv.step[0], i);
        assert_true(sv.value[0] == (float)i);
        tfb_series_read_end(s);
    }
    free(v);

    tag_name(tag, sizeof tag, 2);
    tfb_series *t = tfb_run_find_series(r, TFB_SERIES_TEXT, tag);
    assert_non_null(t);
    assert_ptr_not_equal(t, tfb_run_find_series(r, TFB_SERIES_SCALAR, tag));
    assert_int_equal(tfb_series_count(t), 1);
    assert_null(tfb_run_find_series(r, TFB_SERIES_TEXT, "model/layer000000/lr"));
    assert_null(tfb_run_find_series(r, TFB_SERIES_SCALAR, "model/layer"));
    assert_null(tfb_run_find_series(r, TFB_SERIES_SCALAR, ""));

    /* A second pass over the unchanged file adds nothing. */
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_int_equal(tfb_run_series(r, TFB_SERIES_SCALAR, &v, &n), 0);
    assert_int_equal(n, N_TAGS);
    free(v);

    tfb_loader_stop(l);
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

/* Runs are indexed by name too: each of many runs is found, with its own
 * series, and a second pass registers none twice. */
static void many_runs(void **state)
{
    (void)state;
    enum { RUNS = 300 };
    char *dir = tu_mkdtemp();
    char run[4096];
    for (int i = 0; i < RUNS; i++) {
        snprintf(run, sizeof run, "%s/g%d/r%03d", dir, i % 7, i);
        tfb_writer *w;
        assert_int_equal(tfb_writer_open(&w, run, NULL), 0);
        assert_int_equal(tfb_scalar(w, "x", (double)i, 0), 0);
        assert_int_equal(tfb_writer_close(w), 0);
    }
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, dir), 0);
    tfb_loader *l;
    tfb_loader_opts lo = {0, 2, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &lo), 0);
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(tfb_loader_pass(l), 0);
        tfb_run **v;
        size_t n;
        assert_int_equal(tfb_store_runs(st, &v, &n), 0);
        free(v);
        assert_int_equal(n, RUNS);
        for (int i = 0; i < RUNS; i++) {
            snprintf(run, sizeof run, "g%d/r%03d", i % 7, i);
            tfb_run *r = tfb_store_find_run(st, run);
            assert_non_null(r);
            assert_string_equal(tfb_run_name(r), run);
            tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, "x");
            assert_non_null(s);
            assert_int_equal(tfb_series_count(s), 1);
        }
    }
    assert_null(tfb_store_find_run(st, "g0"));
    assert_null(tfb_store_find_run(st, "g0/r00"));
    tfb_loader_stop(l);
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_tags),
        cmocka_unit_test(many_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
