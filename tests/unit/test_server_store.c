/* test_server_store.c - the store's snapshots under concurrent appends,
 * its non-finite statistics, run resets, the loader on a real logdir, and
 * the HTTP parameter helpers. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/http_internal.h"
#include "store/loader.h"
#include "store/store.h"
#include "test_util.h"

enum { N_POINTS = 300000 };

typedef struct reader_arg {
    tfb_series *s;
    atomic_int stop;
    atomic_long snapshots;
    int bad;
} reader_arg;

/* Checks every pinned snapshot: point i has step i and value i/2. */
static void *reader_main(void *p)
{
    reader_arg *a = p;
    while (!atomic_load(&a->stop)) {
        tfb_series_view v;
        tfb_series_read_begin(a->s, &v);
        for (size_t i = 0; i < v.count; i += 1 + v.count / 64)
            if (v.step[i] != (int64_t)i || v.value[i] != (float)i / 2 ||
                v.wall[i] != 1000.0 + (double)i)
                a->bad = 1;
        if (v.count && v.step[v.count - 1] != (int64_t)v.count - 1)
            a->bad = 1;
        tfb_series_read_end(a->s);
        atomic_fetch_add(&a->snapshots, 1);
    }
    return NULL;
}

static void test_concurrent_snapshots(void **state)
{
    (void)state;
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(st, "a", &r), 0);
    tfb_series *s;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, "loss", 4,
                                        "scalars", 7, NULL, 0, NULL, 0, &s),
                     0);
    reader_arg a = {.s = s};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, reader_main, &a);
    for (int i = 0; i < N_POINTS; i++) {
        assert_int_equal(tfb_series_append_scalar(s, i, 1000.0 + i, i / 2.0),
                         0);
        /* Halfway, let the readers in: on a loaded machine they may not
         * have been scheduled yet, and the test is about snapshots taken
         * while appends go on. */
        if (i == N_POINTS / 2)
            while (atomic_load(&a.snapshots) < 2)
                sched_yield();
    }
    atomic_store(&a.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_false(a.bad);
    assert_true(a.snapshots > 0);
    assert_int_equal(tfb_series_count(s), N_POINTS);
    tfb_series_trim(s);
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    assert_int_equal(v.count, N_POINTS);
    assert_int_equal(v.step[N_POINTS - 1], N_POINTS - 1);
    tfb_series_read_end(s);
    assert_ptr_equal(tfb_run_find_series(r, TFB_SERIES_SCALAR, "loss"), s);
    assert_null(tfb_run_find_series(r, TFB_SERIES_HISTOGRAM, "loss"));
    assert_string_equal(tfb_series_plugin(s), "scalars");
    tfb_store_destroy(st);
}

static void test_nonfinite_stats_and_reset(void **state)
{
    (void)state;
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/x"), 0);
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(st, ".", &r), 0);
    assert_string_equal(tfb_run_dir(r), "/x");
    tfb_series *s, *h, *n;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, "x", 1, NULL,
                                        0, NULL, 0, NULL, 0, &s), 0);
    tfb_series_append_scalar(s, 1, 10, 1.0);
    tfb_series_append_scalar(s, 2, 11, NAN);
    tfb_series_append_scalar(s, 3, 12, INFINITY);
    tfb_series_append_scalar(s, 4, 13, -INFINITY);
    tfb_series_append_scalar(s, 5, 14, NAN);
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    assert_int_equal(v.nonfinite.nan, 2);
    assert_int_equal(v.nonfinite.pos_inf, 1);
    assert_int_equal(v.nonfinite.neg_inf, 1);
    assert_int_equal(v.nonfinite.points, 4);
    assert_true(v.nonfinite.has_first);
    assert_int_equal(v.nonfinite.first_step, 2);
    assert_true(v.nonfinite.first_wall == 11);
    tfb_series_read_end(s);

    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_HISTOGRAM, "h", 1, NULL,
                                        0, NULL, 0, NULL, 0, &h), 0);
    tfb_hist_bucket b[2] = {{0, 1, 3}, {1, 2, 4}};
    tfb_series_append_histogram(h, 7, 1, 0, 2, 7, 9, b, 2);
    tfb_series_append_histogram(h, 8, 2, 0, INFINITY, 7, INFINITY, b, 2);
    tfb_series_read_begin(h, &v);
    assert_int_equal(v.count, 2);
    assert_int_equal(v.hist[1].bucket_off, 2);
    assert_true(v.buckets[3].count == 4);
    assert_int_equal(v.nonfinite.pos_inf, 1);
    assert_int_equal(v.nonfinite.first_step, 8);
    tfb_series_read_end(h);

    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_NUMERICS, "g", 1, NULL,
                                        0, NULL, 0, NULL, 0, &n), 0);
    tfb_numerics_point c = {2, 1, 0}, z = {0, 0, 0};
    tfb_series_append_numerics(n, 3, 5, &z);
    tfb_series_append_numerics(n, 4, 6, &c);
    tfb_series_read_begin(n, &v);
    assert_int_equal(v.count, 2);
    assert_int_equal(v.numerics[1].nan, 2);
    assert_int_equal(v.nonfinite.nan, 2);
    assert_int_equal(v.nonfinite.points, 1);
    assert_int_equal(v.nonfinite.first_step, 4);
    tfb_series_read_end(n);

    /* a wrong kind is refused */
    assert_int_equal(tfb_series_append_text(s, 1, 1, "a", 1), TFB_EINVAL);

    tfb_run_reset(r);
    assert_int_equal(tfb_series_count(s), 0);
    assert_int_equal(tfb_series_count(h), 0);
    tfb_series_read_begin(s, &v);
    assert_int_equal(v.nonfinite.nan, 0);
    assert_false(v.nonfinite.has_first);
    tfb_series_read_end(s);
    tfb_series_append_scalar(s, 9, 1, 2.0);
    assert_int_equal(tfb_series_count(s), 1);
    tfb_store_destroy(st);
}

static void test_loader_pass(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/b/run", dir);
    tfb_writer *w;
    assert_int_equal(tfb_writer_open(&w, path, NULL), 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tfb_scalar_at(w, "loss", i * 0.5, i, 50.0 + i), 0);
    float vals[3] = {1, 2, 3};
    assert_int_equal(tfb_histogram(w, "w", vals, 3, 1), 0);
    assert_int_equal(tfb_text(w, "t", "hello", 2), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    snprintf(path, sizeof path, "%s/a", dir);
    assert_int_equal(tfb_writer_open(&w, path, NULL), 0);
    assert_int_equal(tfb_scalar_at(w, "loss", 1, 0, 10.0), 0);
    assert_int_equal(tfb_writer_close(w), 0);

    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, dir), 0);
    tfb_loader *l;
    tfb_loader_opts o = {0, 2, NULL};
    assert_int_equal(tfb_loader_create(&l, st, &o), 0);
    assert_int_equal(tfb_loader_pass(l), 0);
    tfb_run **runs;
    size_t nr;
    assert_int_equal(tfb_store_runs(st, &runs, &nr), 0);
    assert_int_equal(nr, 2);
    /* ordered by first wall time: "a" started at 10, "b/run" at 50 */
    assert_string_equal(tfb_run_name(runs[0]), "a");
    assert_string_equal(tfb_run_name(runs[1]), "b/run");
    tfb_run *r = runs[1];
    free(runs);
    assert_true(tfb_run_first_wall(r) == 50.0);
    tfb_series *s = tfb_run_find_series(r, TFB_SERIES_SCALAR, "loss");
    assert_non_null(s);
    assert_int_equal(tfb_series_count(s), 1000);
    assert_int_equal(tfb_series_count(
                         tfb_run_find_series(r, TFB_SERIES_HISTOGRAM, "w")), 1);
    tfb_series *t = tfb_run_find_series(r, TFB_SERIES_TEXT, "t");
    tfb_series_view v;
    tfb_series_read_begin(t, &v);
    assert_int_equal(v.count, 1);
    assert_int_equal(v.text_len[0], 5);
    assert_memory_equal(v.text_data + v.text_off[0], "hello", 5);
    tfb_series_read_end(t);
    tfb_load_progress p;
    tfb_store_progress(st, &p);
    assert_true(p.done);
    assert_int_equal(p.files_total, 2);
    assert_int_equal(p.files_done, 2);
    assert_int_equal(p.bytes_done, p.bytes_total);
    assert_int_equal(p.points, 1005); /* + two end-of-run records */
    /* a second pass over unchanged files adds nothing */
    assert_int_equal(tfb_loader_pass(l), 0);
    assert_int_equal(tfb_series_count(s), 1000);
    tfb_loader_stop(l);
    tfb_store_destroy(st);
    tu_rmtree(dir);
    free(dir);
}

/* ---- parameter helpers, through the transport-independent request ---- */

static const char *const *g_params;

static const char *table_query(void *ctx, const char *name)
{
    (void)ctx;
    for (size_t i = 0; g_params[i]; i += 2)
        if (strcmp(g_params[i], name) == 0)
            return g_params[i + 1];
    return NULL;
}

static void test_params(void **state)
{
    (void)state;
    static const char *const params[] = {"n", "12", "bad", "1x", "big",
                                         "99999999999999999999", "d", "0.5",
                                         "e", "", "b", "true", NULL};
    g_params = params;
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/x"), 0);
    tfb_http_req req = {"/data/x", table_query, NULL, st,   NULL,
                        NULL,      NULL,        0,    NULL, NULL, NULL};
    tfb_http_resp resp = {0};
    int64_t i64;
    assert_int_equal(tfb_http_param_i64(&req, &resp, "n", 1, 0, 0, 100, &i64),
                     0);
    assert_int_equal(i64, 12);
    assert_false(tfb_http_resp_is_set(&resp));
    assert_int_equal(tfb_http_param_i64(&req, &resp, "n", 1, 0, 0, 10, &i64),
                     TFB_EINVAL);
    assert_int_equal(resp.status, 400);
    assert_non_null(strstr(resp.body, "\"error\""));
    tfb_http_resp_clear(&resp);
    assert_int_equal(tfb_http_param_i64(&req, &resp, "bad", 1, 0, 0, 10,
                                        &i64), TFB_EINVAL);
    tfb_http_resp_clear(&resp);
    assert_int_equal(tfb_http_param_i64(&req, &resp, "big", 1, 0, INT64_MIN,
                                        INT64_MAX, &i64), TFB_EINVAL);
    tfb_http_resp_clear(&resp);
    assert_int_equal(tfb_http_param_i64(&req, &resp, "absent", 0, 7, 0, 10,
                                        &i64), 0);
    assert_int_equal(i64, 7);
    assert_int_equal(tfb_http_param_i64(&req, &resp, "absent", 1, 7, 0, 10,
                                        &i64), TFB_EINVAL);
    assert_non_null(strstr(resp.body, "absent"));
    tfb_http_resp_clear(&resp);
    double d;
    assert_int_equal(tfb_http_param_double(&req, &resp, "d", 1, 0, 0, 1, &d),
                     0);
    assert_true(d == 0.5);
    assert_int_equal(tfb_http_param_double(&req, &resp, "e", 0, 0, 0, 1, &d),
                     TFB_EINVAL);
    tfb_http_resp_clear(&resp);
    int bv;
    assert_int_equal(tfb_http_param_bool(&req, &resp, "b", 0, &bv), 0);
    assert_true(bv);
    tfb_run *r;
    assert_int_equal(tfb_http_param_run(&req, &resp, &r), TFB_EINVAL);
    assert_int_equal(resp.status, 400);
    tfb_http_resp_clear(&resp);
    /* dispatch: unknown /data route is a JSON 404 */
    req.path = "/data/definitely/not";
    tfb_http_dispatch(&req, &resp);
    assert_int_equal(resp.status, 404);
    tfb_http_resp_clear(&resp);
    req.path = "/data/runs";
    tfb_http_dispatch(&req, &resp);
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.body, "[]");
    tfb_http_resp_clear(&resp);
    tfb_store_destroy(st);
}

/* Many scalar series share the store's locks (store.c, lock_of): while
 * one thread appends to all of them, sealing and trimming (write locks),
 * readers hold a histogram pin (its own read lock) and pin two scalar
 * series inside it, released out of order, and read pieces of a third:
 * store.h allows it, so it must neither deadlock nor show a torn
 * point. */
enum { SHARED_SERIES = 64, SHARED_POINTS = 3000 };

typedef struct shared_arg {
    tfb_series **s;
    tfb_series *hist;
    atomic_int stop;
    atomic_long rounds;
    int bad;
    unsigned seed;
} shared_arg;

/* Point k of every series: step k, wall 1000 + k, value k / 2. */
static int scalar_view_ok(const tfb_series_view *v)
{
    for (size_t k = 0; k < v->count; k++)
        if (v->step[k] != (int64_t)k || v->wall[k] != 1000.0 + (double)k ||
            v->value[k] != (float)k / 2)
            return 0;
    return 1;
}

static void *shared_reader(void *p)
{
    shared_arg *a = p;
    unsigned x = a->seed;
    while (!atomic_load(&a->stop)) {
        x = x * 1103515245u + 12345u;
        tfb_series *s1 = a->s[(x >> 8) % SHARED_SERIES];
        tfb_series *s2 = a->s[(x >> 16) % SHARED_SERIES];
        tfb_series *s3 = a->s[(x >> 4) % SHARED_SERIES];
        if (s2 == s1) /* never the same series twice on a thread */
            s2 = a->s[((x >> 16) + 1) % SHARED_SERIES];
        tfb_series_view hv, v1, v2;
        tfb_series_read_begin(a->hist, &hv);
        tfb_series_read_begin(s1, &v1);
        tfb_series_read_begin(s2, &v2);
        if (!scalar_view_ok(&v1) || !scalar_view_ok(&v2))
            a->bad = 1;
        int64_t step[16];
        double wall[16];
        size_t n = tfb_series_scalar_range(s3, 250, 16, step, wall, NULL,
                                           NULL);
        for (size_t k = 0; k < n; k++)
            if (step[k] != (int64_t)(250 + k) ||
                wall[k] != 1000.0 + (double)(250 + k))
                a->bad = 1;
        tfb_series_read_end(s1);
        tfb_series_read_end(a->hist);
        tfb_series_read_end(s2);
        atomic_fetch_add(&a->rounds, 1);
    }
    return NULL;
}

static void test_shared_locks_nested_pins(void **state)
{
    (void)state;
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(st, "a", &r), 0);
    tfb_series *s[SHARED_SERIES], *hist;
    char tag[16];
    for (int i = 0; i < SHARED_SERIES; i++) {
        snprintf(tag, sizeof tag, "t%02d", i);
        assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, tag,
                                            strlen(tag), NULL, 0, NULL, 0,
                                            NULL, 0, &s[i]), 0);
    }
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_HISTOGRAM, "h", 1,
                                        NULL, 0, NULL, 0, NULL, 0, &hist),
                     0);
    shared_arg a[2] = {{.s = s, .hist = hist, .seed = 1},
                       {.s = s, .hist = hist, .seed = 2}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, shared_reader, &a[i]);
    for (int k = 0; k < SHARED_POINTS; k++) {
        for (int i = 0; i < SHARED_SERIES; i++)
            assert_int_equal(tfb_series_append_scalar(s[i], k, 1000.0 + k,
                                                      k / 2.0), 0);
        if (k % 700 == 699) /* a pass ends: short last blocks, re-sealed */
            for (int i = 0; i < SHARED_SERIES; i++)
                tfb_series_trim(s[i]);
        if (k == SHARED_POINTS / 2) /* the readers in, on a loaded box */
            while (atomic_load(&a[0].rounds) < 2 ||
                   atomic_load(&a[1].rounds) < 2)
                sched_yield();
    }
    for (int i = 0; i < 2; i++) {
        atomic_store(&a[i].stop, 1);
        pthread_join(th[i], NULL);
        assert_false(a[i].bad);
    }
    for (int i = 0; i < SHARED_SERIES; i++) {
        tfb_series_trim(s[i]);
        tfb_series_view v;
        tfb_series_read_begin(s[i], &v);
        assert_int_equal(v.count, SHARED_POINTS);
        assert_true(scalar_view_ok(&v));
        tfb_series_read_end(s[i]);
    }
    tfb_store_destroy(st);
}

/* Series are found by kind and exact tag while a run's kinds grow past
 * the few that are searched without a table (store.c, SERIES_SCAN_MAX):
 * tags that are prefixes of each other, or equal but of another kind,
 * are told apart, and every series stays found once the table is
 * built. */
static void test_series_lookup_grows(void **state)
{
    (void)state;
    tfb_store *st;
    assert_int_equal(tfb_store_create(&st, "/nonexistent"), 0);
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(st, "run", &r), 0);
    enum { N = 40 };
    tfb_series *made[N];
    char tag[N + 1];
    for (int i = 0; i < N; i++) {
        /* "a", "aa", "aaa", ...: each a prefix of the next */
        memset(tag, 'a', (size_t)i + 1);
        tag[i + 1] = 0;
        assert_null(tfb_run_find_series(r, TFB_SERIES_SCALAR, tag));
        assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, tag,
                                            (size_t)i + 1, "scalars", 7,
                                            NULL, 0, NULL, 0, &made[i]), 0);
        assert_string_equal(tfb_series_tag(made[i]), tag);
        assert_string_equal(tfb_series_plugin(made[i]), "scalars");
        for (int k = 0; k <= i; k++) {
            tag[k + 1] = 0;
            assert_ptr_equal(tfb_run_find_series(r, TFB_SERIES_SCALAR, tag),
                             made[k]);
            tag[k + 1] = 'a';
        }
        tag[i + 1] = 0;
        /* the same tag of another kind is another series */
        assert_null(tfb_run_find_series(r, TFB_SERIES_TEXT, tag));
        tfb_series *again;
        assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, tag,
                                            (size_t)i + 1, NULL, 0, NULL, 0,
                                            NULL, 0, &again), 0);
        assert_ptr_equal(again, made[i]);
    }
    tfb_series *t;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_TEXT, "a", 1, "text",
                                        4, "shown", 5, "said", 4, &t), 0);
    assert_ptr_not_equal(t, made[0]);
    assert_string_equal(tfb_series_display_name(t), "shown");
    assert_string_equal(tfb_series_description(t), "said");
    assert_ptr_equal(tfb_run_find_series(r, TFB_SERIES_TEXT, "a"), t);
    assert_ptr_equal(tfb_run_find_series(r, TFB_SERIES_SCALAR, "a"),
                     made[0]);
    assert_null(tfb_run_find_series(r, TFB_SERIES_SCALAR, ""));
    tfb_series **v;
    size_t n;
    assert_int_equal(tfb_run_series(r, TFB_SERIES_SCALAR, &v, &n), 0);
    assert_int_equal(n, N);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(v[i], made[i]);
    free(v);
    tfb_store_destroy(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_snapshots),
        cmocka_unit_test(test_nonfinite_stats_and_reset),
        cmocka_unit_test(test_loader_pass),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_series_lookup_grows),
        cmocka_unit_test(test_shared_locks_nested_pins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
