/*
 * test_scalar_id.c - scalars by tag id (tfb_tag_id, tfb_scalar_id,
 * tfb_scalar_id_ffi; the Python binding's hot call): ids are dense and
 * stable, share the tag's metadata with tfb_scalar, refuse ids never given;
 * the FFI call reads the writer from its cell (NULL: closed) and never
 * waits: a full queue gives TFB_SCALAR_WOULD_WAIT with nothing written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tfboard.h"

typedef struct got {
    long n;
    int64_t step[64];
    double value[64];
    char tag[64][16];
    int meta[64];
} got;

/* The scalar values of the event file at path, in order (up to 64). */
static void read_values(const char *path, got *g)
{
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    memset(g, 0, sizeof *g);
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        assert_int_equal(tfb_summary_next(ev.summary, ev.summary_len, &pos, &v), 1);
        if (tu_is_run_end(&v) || v.kind != TFB_VALUE_SCALAR)
            continue;
        assert_true(g->n < 64);
        assert_true(v.tag.len < 16);
        g->step[g->n] = ev.step;
        g->value[g->n] = v.scalar;
        memcpy(g->tag[g->n], v.tag.ptr, v.tag.len);
        g->meta[g->n] = v.plugin_name.len == 7 &&
                        memcmp(v.plugin_name.ptr, "scalars", 7) == 0;
        g->n++;
    }
    tfb_reader_close(r);
}

static void ids_dense_stable_and_shared_with_tfb_scalar(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_tag_id(w, "a"), 0);
    assert_int_equal(tfb_tag_id(w, "b"), 1);
    assert_int_equal(tfb_tag_id(w, "a"), 0);
    /* A tag logged by name first: its id is the next one, and its
     * metadata is not written again by the id call. */
    assert_int_equal(tfb_scalar(w, "c", 1.0, 1), 0);
    assert_int_equal(tfb_tag_id(w, "c"), 2);
    assert_int_equal(tfb_scalar_id(w, 2, 2.0, 2), 0);
    assert_int_equal(tfb_scalar_id(w, 0, 3.5, 3), 0);
    assert_int_equal(tfb_scalar(w, "a", 4.0, 4), 0);
    tfb_writer *cell = w;
    assert_int_equal(tfb_scalar_id_ffi(0.25, &cell, 1, -7), 0);
    assert_int_equal(tfb_scalar_id_ffi(0.5, &cell, 1, INT32_MAX), 0);
    /* Ids never given, bad arguments. */
    assert_int_equal(tfb_scalar_id(w, 3, 1.0, 0), TFB_EINVAL);
    assert_int_equal(tfb_scalar_id(w, -1, 1.0, 0), TFB_EINVAL);
    assert_int_equal(tfb_scalar_id_ffi(1.0, &cell, 99, 0), TFB_EINVAL);
    assert_int_equal(tfb_scalar_id(NULL, 0, 1.0, 0), TFB_EINVAL);
    assert_int_equal(tfb_tag_id(NULL, "a"), TFB_EINVAL);
    assert_int_equal(tfb_tag_id(w, NULL), TFB_EINVAL);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    got g;
    read_values(path, &g);
    assert_int_equal(g.n, 6);
    static const struct {
        const char *tag;
        int64_t step;
        double value;
        int meta;
    } want[] = {{"c", 1, 1.0, 1},  {"c", 2, 2.0, 0},
                {"a", 3, 3.5, 1},  {"a", 4, 4.0, 0},
                {"b", -7, 0.25, 1}, {"b", INT32_MAX, 0.5, 0}};
    for (int i = 0; i < 6; i++) {
        assert_string_equal(g.tag[i], want[i].tag);
        assert_true(g.step[i] == want[i].step);
        assert_true(g.value[i] == want[i].value);
        assert_int_equal(g.meta[i], want[i].meta);
    }
    free(path);
    tu_rmtree(dir);
    free(dir);
}

static void ffi_cell_null_is_closed(void **state)
{
    (void)state;
    tfb_writer *cell = NULL;
    assert_int_equal(tfb_scalar_id_ffi(1.0, &cell, 0, 0), TFB_ECLOSED);
    assert_int_equal(tfb_scalar_id_ffi(1.0, NULL, 0, 0), TFB_EINVAL);
}

static int nonfinite_calls;

static void on_nonfinite(void *user, const char *tag, int64_t step,
                         uint64_t nan, uint64_t pos_inf, uint64_t neg_inf)
{
    (void)user;
    (void)step;
    (void)pos_inf;
    (void)neg_inf;
    assert_string_equal(tag, "x");
    assert_int_equal(nan, 1);
    nonfinite_calls++;
}

/* A queue of one small buffer and a flush period longer than the test:
 * the writer thread writes only when kicked, so logging in a loop fills the
 * queue before it is drained, many times over. Every step is logged once,
 * by the FFI call or, after TFB_SCALAR_WOULD_WAIT, by tfb_scalar_id. */
static void ffi_never_waits_and_loses_nothing(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 8192; /* 4 KiB a buffer: ~150 records */
    o.flush_interval_ms = 60000;
    o.on_nonfinite = on_nonfinite;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    int id = tfb_tag_id(w, "x");
    assert_true(id >= 0);
    tfb_writer *cell = w;
    /* 200,000 calls see the queue full ~2,000 times here; a sanitizer
     * build slows both threads, so the loop goes on (up to 4 M) until the
     * first. */
    enum { N = 200000, N_MAX = 4000000 };
    long would_wait = 0;
    int32_t total = 0;
    for (int32_t s = 0; s < N || (would_wait == 0 && s < N_MAX); s++) {
        total = s + 1;
        double v = s == 5 ? NAN : s * 0.5;
        int rc = tfb_scalar_id_ffi(v, &cell, id, s);
        if (rc == TFB_SCALAR_WOULD_WAIT) {
            would_wait++;
            rc = tfb_scalar_id(w, id, v, s);
        }
        assert_int_equal(rc, 0);
    }
    /* Reported once, whichever call wrote it. */
    assert_int_equal(nonfinite_calls, 1);
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    assert_int_equal(tfb_writer_get_stats(w, &st), 0);
    assert_int_equal(st.records_logged, total);
    assert_int_equal(st.records_dropped, 0);
    char *path = strdup(tfb_writer_path(w));
    assert_int_equal(tfb_writer_close(w), 0);
    printf("%ld of %d calls found the queue full\n", would_wait, (int)total);
    assert_true(would_wait > 0);
    tfb_reader *r;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    int64_t next = 0;
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        assert_int_equal(tfb_summary_next(ev.summary, ev.summary_len, &pos, &v), 1);
        if (tu_is_run_end(&v) || v.kind != TFB_VALUE_SCALAR)
            continue;
        assert_true(ev.step == next); /* no gap, no repeat, in order */
        if (next == 5)
            assert_true(isnan(v.scalar));
        else
            assert_true(v.scalar == next * 0.5);
        assert_int_equal(v.plugin_name.len != 0, next == 0);
        next++;
    }
    assert_true(next == total);
    tfb_reader_close(r);
    free(path);
    tu_rmtree(dir);
    free(dir);
}

/* In drop mode a full queue drops, as tfb_scalar does: no retry asked. */
static void ffi_drop_mode_drops(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 8192;
    o.drop_when_full = 1;
    o.flush_interval_ms = 60000;
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    int id = tfb_tag_id(w, "x");
    tfb_writer *cell = w;
    long ok = 0, dropped = 0;
    for (int32_t s = 0; s < 200000; s++) {
        int rc = tfb_scalar_id_ffi(s * 0.5, &cell, id, s);
        if (rc == 0)
            ok++;
        else if (rc == TFB_EDROPPED)
            dropped++;
        else
            fail_msg("unexpected %d", rc);
    }
    tfb_writer_stats st;
    tfb_writer_stats_init(&st);
    tfb_writer_get_stats(w, &st);
    assert_int_equal(st.records_logged, ok);
    assert_int_equal(st.records_dropped, dropped);
    assert_true(dropped > 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ids_dense_stable_and_shared_with_tfb_scalar),
        cmocka_unit_test(ffi_cell_null_is_closed),
        cmocka_unit_test(ffi_never_waits_and_loses_nothing),
        cmocka_unit_test(ffi_drop_mode_drops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
