/* test_plugin_table.c - the one plugin table: names, the routes built
 * from it, the "has data" tests on a real store, and registering a
 * plugin from outside the server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/plugin.h"
#include "core/routes_core.h"
#include "test_util.h"

static int dummy_route(const tfb_http_req *req, tfb_http_resp *resp)
{
    (void)req;
    (void)resp;
    return 0;
}

static void test_builtin_names_and_routes(void **state)
{
    (void)state;
    size_t n;
    const tfb_plugin *const *pl = tfb_plugins(&n);
    static const char *const want[] = {"scalars", "runs", "histograms",
                                       "distributions", "text", "health",
                                       "gradients", "gpu", "pipeline",
                                       "ranks"};
    assert_true(n >= 10);
    for (size_t i = 0; i < 10; i++)
        assert_string_equal(pl[i]->name, want[i]);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(pl[i]->title);
        assert_ptr_equal(tfb_plugin_find(pl[i]->name, strlen(pl[i]->name)),
                         pl[i]);
        for (size_t k = 0; k < pl[i]->n_routes; k++) {
            char path[256];
            snprintf(path, sizeof path, "/data/plugin/%s/%s", pl[i]->name,
                     pl[i]->routes[k].path);
            assert_ptr_equal(tfb_route_find(path), pl[i]->routes[k].handler);
        }
    }
    /* The routes of before the table, still answered. */
    static const char *const paths[] = {
        "/data/runs", "/data/runs_info", "/data/plugins_listing",
        "/data/plugin/core/progress", "/data/plugin/scalars/scalars",
        "/data/plugin/histograms/histograms",
        "/data/plugin/distributions/distributions",
        "/data/plugin/text/text", "/data/plugin/health/alerts",
        "/data/plugin/gradients/norms", "/data/plugin/gpu/trace.json",
        "/data/plugin/pipeline/steps", "/data/plugin/ranks/job"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        assert_non_null(tfb_route_find(paths[i]));
    assert_null(tfb_route_find("/data/plugin/scalars"));
    assert_null(tfb_route_find("/data/plugin/scalars/"));
    assert_null(tfb_route_find("/data/plugin/nope/tags"));
    assert_null(tfb_route_find("/data/plugin//tags"));
    assert_null(tfb_route_find("/data/plugin/scalars/tags/x"));
}

static const tfb_plugin_route test_routes[] = {{"hello", dummy_route}};

static int never(tfb_store *s, tfb_run *r)
{
    (void)s;
    (void)r;
    return 0;
}

static void test_register(void **state)
{
    (void)state;
    tfb_plugin bad = {.name = "Bad Name", .title = "x"};
    assert_int_equal(tfb_plugin_register(&bad), TFB_EINVAL);
    tfb_plugin untitled = {.name = "untitled"};
    assert_int_equal(tfb_plugin_register(&untitled), TFB_EINVAL);
    tfb_plugin dup = {.name = "scalars", .title = "Again"};
    assert_int_equal(tfb_plugin_register(&dup), TFB_EEXIST);
    assert_int_equal(tfb_plugin_register(NULL), TFB_EINVAL);

    static const tfb_plugin mine = {
        .name = "unit_plugin", .title = "Unit", .module = "js/unit.js",
        .routes = test_routes, .n_routes = 1, .has_data = never};
    size_t before;
    tfb_plugins(&before);
    assert_int_equal(tfb_plugin_register(&mine), 0);
    size_t after;
    const tfb_plugin *const *pl = tfb_plugins(&after);
    assert_int_equal(after, before + 1);
    assert_ptr_equal(pl[after - 1], &mine);
    assert_ptr_equal(tfb_route_find("/data/plugin/unit_plugin/hello"),
                     dummy_route);
    assert_int_equal(tfb_plugin_register(&mine), TFB_EEXIST);
}

/* has_data on a store with one run holding scalars only. */
static void test_enabled(void **state)
{
    (void)state;
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, "/nonexistent"), 0);
    const tfb_plugin *scal = tfb_plugin_find("scalars", 7);
    const tfb_plugin *hist = tfb_plugin_find("histograms", 10);
    const tfb_plugin *runs = tfb_plugin_find("runs", 4);
    const tfb_plugin *pipe = tfb_plugin_find("pipeline", 8);
    const tfb_plugin *grad = tfb_plugin_find("gradients", 9);
    assert_false(tfb_plugin_enabled(scal, s));
    assert_false(tfb_plugin_enabled(runs, s)); /* no run yet */
    tfb_run *r;
    assert_int_equal(tfb_store_get_run(s, "a", &r), 0);
    tfb_series *se;
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, "loss", 4, "",
                                        0, "", 0, "", 0, &se), 0);
    assert_int_equal(tfb_series_append_scalar(se, 1, 1.0, 0.5), 0);
    assert_true(tfb_plugin_enabled(scal, s));
    assert_true(tfb_plugin_enabled(runs, s));
    assert_false(tfb_plugin_enabled(hist, s));
    assert_false(tfb_plugin_enabled(pipe, s));
    assert_false(tfb_plugin_enabled(grad, s));
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, TFB_TAG_STEP_MS,
                                        strlen(TFB_TAG_STEP_MS), "", 0, "",
                                        0, "", 0, &se), 0);
    assert_int_equal(tfb_run_get_series(r, TFB_SERIES_SCALAR, "grad_norm/fc1",
                                        13, "", 0, "", 0, "", 0, &se), 0);
    assert_true(tfb_plugin_enabled(pipe, s));
    assert_true(tfb_plugin_enabled(grad, s));
    tfb_store_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_names_and_routes),
        cmocka_unit_test(test_register),
        cmocka_unit_test(test_enabled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
