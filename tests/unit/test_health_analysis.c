/*
 * test_health_analysis.c - the server's health alerts and gradient-norm
 * table (server/health_analysis.c, server/gradients_analysis.c) on stores
 * filled through the store's own API: merging of a histogram and its
 * numerics record, ordering, per-run filtering, null cells, duplicate
 * steps, computed global norms, thresholds, bad thresholds, and the JSON.
 * Built with the server sources it needs (see tests/unit/meson.build).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/gradients/gradients_analysis.h"
#include "plugins/health/health_analysis.h"
#include "store/store.h"

static tfb_series *series(tfb_run *r, tfb_series_kind k, const char *tag)
{
    tfb_series *s = NULL;
    const char *plugin = k == TFB_SERIES_NUMERICS ? TFB_NUMERICS_PLUGIN : "";
    assert_int_equal(tfb_run_get_series(r, k, tag, strlen(tag), plugin,
                                        strlen(plugin), "", 0, "", 0, &s),
                     0);
    assert_non_null(s);
    return s;
}

static void scalar(tfb_run *r, const char *tag, int64_t step, double wall,
                   double v)
{
    tfb_run_note_event(r, wall, step);
    assert_int_equal(
        tfb_series_append_scalar(series(r, TFB_SERIES_SCALAR, tag), step, wall, v),
        0);
}

static void histo(tfb_run *r, const char *tag, int64_t step, double wall,
                  double mn, double mx)
{
    tfb_hist_bucket b[1] = {{mn, mx, 3}};
    tfb_run_note_event(r, wall, step);
    assert_int_equal(tfb_series_append_histogram(
                         series(r, TFB_SERIES_HISTOGRAM, tag), step, wall, mn,
                         mx, 3, 1.0, b, 1),
                     0);
}

static void numerics(tfb_run *r, const char *tag, int64_t step, double wall,
                     uint64_t nan, uint64_t pinf, uint64_t ninf)
{
    tfb_numerics_point c = {nan, pinf, ninf};
    assert_int_equal(tfb_series_append_numerics(
                         series(r, TFB_SERIES_NUMERICS, tag), step, wall, &c),
                     0);
}

static tfb_run *run(tfb_store *s, const char *name)
{
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(s, name, &r), 0);
    return r;
}

static const tfb_health_alert *find(const tfb_health_alert *a, size_t n,
                                    const char *run_name, const char *tag)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].run, run_name) == 0 && strcmp(a[i].tag, tag) == 0)
            return &a[i];
    return NULL;
}

static void test_alerts(void **st)
{
    (void)st;
    tfb_store *s = NULL;
    assert_int_equal(tfb_store_create(&s, "/nonexistent-logdir"), 0);
    tfb_run *a = run(s, "a"), *b = run(s, "b"), *c = run(s, "clean");
    /* run a: loss goes NaN at step 5 (wall 105), then Inf at step 6 */
    for (int i = 0; i < 8; i++)
        scalar(a, "loss", i, 100 + i, i == 5 ? NAN : (i == 6 ? INFINITY : 1.0));
    /* run a: histogram of a libtfboard tensor that held NaN at step 3:
     * min/max finite (non-finite values are kept out), numerics record
     * with the element counts; plus a foreign histogram with max = -Inf */
    histo(a, "grads/w", 3, 103, -1, 1);
    numerics(a, "grads/w", 3, 103, 7, 2, 0);
    numerics(a, "grads/w", 4, 104, 1, 0, 0);
    histo(b, "weights", 2, 50, -1, -INFINITY);
    histo(b, "weights", 3, 51, NAN, 1);
    /* run b: scalar at the same wall time as the histogram, later step */
    scalar(b, "acc", 9, 50, NAN);
    for (int i = 0; i < 5; i++)
        scalar(c, "loss", i, 10 + i, 0.5);

    tfb_health_alert *al = NULL;
    size_t n = 0;
    assert_int_equal(tfb_health_alerts(s, NULL, &al, &n), 0);
    assert_int_equal(n, 4);
    /* order: wall time, then step */
    assert_string_equal(al[0].run, "b");
    assert_string_equal(al[0].tag, "weights");
    assert_string_equal(al[1].tag, "acc");
    assert_string_equal(al[2].tag, "grads/w");
    assert_string_equal(al[3].tag, "loss");
    const tfb_health_alert *x = find(al, n, "a", "loss");
    assert_non_null(x);
    assert_int_equal(x->first_step, 5);
    assert_true(x->first_wall_time == 105);
    assert_int_equal(x->nan, 1);
    assert_int_equal(x->pos_inf, 1);
    assert_int_equal(x->neg_inf, 0);
    assert_int_equal(x->events, 2);
    x = find(al, n, "a", "grads/w");
    assert_non_null(x);
    assert_int_equal(x->first_step, 3);
    assert_int_equal(x->nan, 8); /* the numerics element counts */
    assert_int_equal(x->pos_inf, 2);
    assert_int_equal(x->events, 2);
    x = find(al, n, "b", "weights");
    assert_non_null(x);
    assert_int_equal(x->first_step, 2);
    assert_int_equal(x->nan, 1);
    assert_int_equal(x->neg_inf, 1);
    assert_int_equal(x->events, 2);
    assert_null(find(al, n, "clean", "loss"));
    free(al);

    assert_int_equal(tfb_health_alerts(s, a, &al, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(al[0].tag, "grads/w");
    tfb_json j;
    tfb_json_init(&j);
    tfb_health_alerts_json(&j, al, n);
    size_t len;
    char *text = tfb_json_take(&j, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "{\"alerts\":[{\"run\":\"a\",\"tag\":\"grads/w\","
                                 "\"first_step\":3,\"first_wall_time\":103,"
                                 "\"nan\":8,\"pos_inf\":2,\"neg_inf\":0,"
                                 "\"events\":2,\"explain\":\"NaN at 3\"}"));
    /* only the run's first alert says what came before it */
    assert_non_null(strstr(text, "\"explain\":null}"));
    free(text);
    tfb_json_free(&j);
    free(al);

    assert_int_equal(tfb_health_alerts(s, c, &al, &n), 0);
    assert_int_equal(n, 0);
    free(al);
    tfb_store_destroy(s);
}

static void test_gradients_table(void **st)
{
    (void)st;
    tfb_store *s = NULL;
    assert_int_equal(tfb_store_create(&s, "/nonexistent-logdir"), 0);
    tfb_run *r = run(s, "r");
    scalar(r, "loss", 0, 1, 1.0); /* not a norm: ignored */
    scalar(r, "grad_norm/b", 0, 1, 2.0);
    scalar(r, "grad_norm/a", 0, 1, 1e-9);   /* vanishing */
    scalar(r, "grad_norm/global", 0, 1, 3.0);
    scalar(r, "grad_norm/a", 2, 3, 500.0);  /* exploding; b missing */
    scalar(r, "grad_norm/global", 2, 3, 500.0);
    scalar(r, "grad_norm/b", 1, 2, 4.0);
    scalar(r, "grad_norm/b", 1, 2.5, NAN);  /* step 1 again: last wins */

    tfb_gradients *g = NULL;
    assert_int_equal(tfb_gradients_analyze(r, 1e-6, 1e2, &g), 0);
    assert_int_equal(g->n_layers, 2);
    assert_string_equal(g->layers[0], "b"); /* first-seen order */
    assert_string_equal(g->layers[1], "a");
    assert_int_equal(g->n_steps, 3);
    assert_int_equal(g->steps[0], 0);
    assert_int_equal(g->steps[2], 2);
    assert_false(g->global_computed);

    tfb_json j;
    tfb_json_init(&j);
    tfb_gradients_json(&j, g);
    size_t len;
    char *text = tfb_json_take(&j, &len);
    assert_non_null(text);
    assert_string_equal(
        text,
        "{\"layers\":[\"b\",\"a\"],\"steps\":[0,1,2],"
        "\"norms\":[[2,\"NaN\",null],[1e-09,null,500]],"
        "\"global\":[3,null,500],\"global_computed\":false,"
        "\"flags\":[{\"layer\":\"a\",\"step\":0,\"kind\":\"vanishing\"},"
        "{\"layer\":\"b\",\"step\":1,\"kind\":\"nonfinite\"},"
        "{\"layer\":\"a\",\"step\":2,\"kind\":\"exploding\"},"
        "{\"layer\":\"global\",\"step\":2,\"kind\":\"exploding\"}]}");
    free(text);
    tfb_json_free(&j);
    tfb_gradients_free(g);

    /* other thresholds: nothing vanishes below 0, 500 is not above 1000 */
    assert_int_equal(tfb_gradients_analyze(r, 0, 1000, &g), 0);
    assert_int_equal(g->n_flags, 1);
    assert_int_equal(g->flags[0].kind, TFB_GRAD_FLAG_NONFINITE);
    tfb_gradients_free(g);

    static tfb_gradients sentinel;
    g = &sentinel; /* must stay untouched on failure */
    assert_int_equal(tfb_gradients_analyze(r, 1, 1, &g), TFB_EINVAL);
    assert_int_equal(tfb_gradients_analyze(r, -1, 1, &g), TFB_EINVAL);
    assert_int_equal(tfb_gradients_analyze(r, NAN, 1, &g), TFB_EINVAL);
    assert_ptr_equal(g, &sentinel);
    tfb_store_destroy(s);
}

static void test_gradients_global_computed_and_empty(void **st)
{
    (void)st;
    tfb_store *s = NULL;
    assert_int_equal(tfb_store_create(&s, "/nonexistent-logdir"), 0);
    tfb_run *r = run(s, "r"), *e = run(s, "empty");
    scalar(r, "grad_norm/x", 0, 1, 3.0);
    scalar(r, "grad_norm/y", 0, 1, 4.0);
    scalar(r, "grad_norm/x", 1, 2, 1.0); /* y missing: no global */
    scalar(e, "loss", 0, 1, 1.0);

    tfb_gradients *g = NULL;
    assert_int_equal(tfb_gradients_analyze(r, 1e-6, 1e2, &g), 0);
    assert_true(g->global_computed);
    assert_true(g->global_present[0]);
    assert_true(fabsf(g->global[0] - 5.0f) < 1e-6f);
    assert_false(g->global_present[1]);
    tfb_gradients_free(g);

    assert_int_equal(tfb_gradients_analyze(e, 1e-6, 1e2, &g), 0);
    tfb_json j;
    tfb_json_init(&j);
    tfb_gradients_json(&j, g);
    size_t len;
    char *text = tfb_json_take(&j, &len);
    assert_string_equal(text, "{\"layers\":[],\"steps\":[],\"norms\":[],"
                              "\"global\":[],\"global_computed\":false,"
                              "\"flags\":[]}");
    free(text);
    tfb_json_free(&j);
    tfb_gradients_free(g);
    tfb_store_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alerts),
        cmocka_unit_test(test_gradients_table),
        cmocka_unit_test(test_gradients_global_computed_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
