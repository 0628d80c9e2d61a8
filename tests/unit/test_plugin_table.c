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

#include "cli.h"
#include "core/plugin.h"
#include "plugins/registry.h"
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
                                       "distributions", "images", "text",
                                       "health", "gradients", "gpu",
                                       "pipeline", "ranks", "hparams"};
    size_t nb;
    tfb_builtin_plugins(&nb);
    assert_true(n >= 12);
    for (size_t i = 0; i < 12; i++)
        assert_string_equal(pl[i]->name, want[i]);
    assert_true(n > nb);
    assert_string_equal(pl[nb]->name, "early");
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
        "/data/plugin/images/individualImage",
        "/data/plugin/audio/individualAudio",
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
    tfb_plugin bad = {TFB_PLUGIN_ABI, .name = "Bad Name", .title = "x"};
    assert_int_equal(tfb_plugin_register(&bad), TFB_EINVAL);
    tfb_plugin untitled = {TFB_PLUGIN_ABI, .name = "untitled"};
    assert_int_equal(tfb_plugin_register(&untitled), TFB_EINVAL);
    tfb_plugin dup = {TFB_PLUGIN_ABI, .name = "scalars", .title = "Again"};
    assert_int_equal(tfb_plugin_register(&dup), TFB_EEXIST);
    assert_int_equal(tfb_plugin_register(NULL), TFB_EINVAL);
    /* No size or version, a size below the first layout, a version from
     * the future: refused. */
    tfb_plugin unsized = {.name = "unsized", .title = "x"};
    assert_int_equal(tfb_plugin_register(&unsized), TFB_EINVAL);
    tfb_plugin tiny = {.size = TFB_PLUGIN_SIZE_V1 - 1, .version = 1,
                       .name = "tiny", .title = "x"};
    assert_int_equal(tfb_plugin_register(&tiny), TFB_EINVAL);
    tfb_plugin future = {.size = sizeof(tfb_plugin),
                         .version = TFB_PLUGIN_VERSION + 1,
                         .name = "future", .title = "x"};
    assert_int_equal(tfb_plugin_register(&future), TFB_EINVAL);

    static const tfb_plugin mine = {
        TFB_PLUGIN_ABI, .name = "unit_plugin", .title = "Unit",
        .module = "js/unit.js", .routes = test_routes, .n_routes = 1,
        .has_data = never};
    size_t before;
    tfb_plugins(&before);
    assert_int_equal(tfb_plugin_register(&mine), 0);
    size_t after;
    const tfb_plugin *const *pl = tfb_plugins(&after);
    assert_int_equal(after, before + 1);
    /* The table holds a copy of the descriptor. */
    assert_string_equal(pl[after - 1]->name, "unit_plugin");
    assert_ptr_equal(pl[after - 1]->routes, test_routes);
    assert_ptr_equal(tfb_route_find("/data/plugin/unit_plugin/hello"),
                     dummy_route);
    assert_int_equal(tfb_plugin_register(&mine), TFB_EEXIST);
}

/* A plugin built against the first, smaller tfb_plugin (its size ends at
 * report_json): core reads nothing past that size, so whatever lies in
 * memory behind it (here: fields set to garbage in a bigger buffer) is
 * never taken for put routes or options. */
static void test_register_older_size(void **state)
{
    (void)state;
    static tfb_plugin buf;
    memset(&buf, 0xA5, sizeof buf);
    buf.size = TFB_PLUGIN_SIZE_V1;
    buf.version = 1;
    buf.name = "old_plugin";
    buf.title = "Old";
    buf.module = NULL;
    buf.module_source = NULL;
    buf.routes = test_routes;
    buf.n_routes = 1;
    buf.has_data = never;
    buf.report_text = NULL;
    buf.report_json = NULL;
    assert_int_equal(tfb_plugin_register(&buf), 0);
    const tfb_plugin *p = tfb_plugin_find("old_plugin", 10);
    assert_non_null(p);
    assert_ptr_not_equal(p, &buf);
    assert_null(p->put_routes);
    assert_int_equal(p->n_put_routes, 0);
    assert_null(p->options);
    assert_int_equal(p->n_options, 0);
    assert_ptr_equal(tfb_route_find("/data/plugin/old_plugin/hello"),
                     dummy_route);
}

/* A plugin's own options: declared in its descriptor, parsed by core's
 * command line into the plugin's variables, listed in --help; a name
 * another plugin's option has is refused. */
static int opt_level = 3;
static int opt_flag;
static const char *opt_name = "none";
static const tfb_option unit_options[] = {
    {.name = "unit_level", .arg = "N", .help = "a level", .type = TFB_OPT_INT,
     .def = "3", .min = 0, .max = 9, .dest = &opt_level},
    {.name = "unit_flag", .help = "a flag", .type = TFB_OPT_FLAG,
     .dest = &opt_flag},
    {.name = "unit_name", .arg = "S", .help = "a name",
     .type = TFB_OPT_STRING, .dest = &opt_name},
};

static void test_plugin_options(void **state)
{
    (void)state;
    static const tfb_plugin withopts = {
        TFB_PLUGIN_ABI, .name = "unit_opts", .title = "Opts",
        .options = unit_options,
        .n_options = sizeof unit_options / sizeof unit_options[0]};
    assert_int_equal(tfb_plugin_register(&withopts), 0);
    tfb_option bad_opt = {.name = "Bad", .help = "x",
                                 .type = TFB_OPT_INT, .dest = &opt_level};
    tfb_plugin clash_bad = {TFB_PLUGIN_ABI, .name = "unit_badopt",
                            .title = "x", .options = &bad_opt,
                            .n_options = 1};
    assert_int_equal(tfb_plugin_register(&clash_bad), TFB_EINVAL);
    tfb_plugin clash = {TFB_PLUGIN_ABI, .name = "unit_clash", .title = "x",
                        .options = unit_options, .n_options = 1};
    assert_int_equal(tfb_plugin_register(&clash), TFB_EEXIST);

    char *argv[] = {"tfboard", "--logdir", "/x", "--unit-level", "7",
                    "--unit_flag", "--unit-name=abc", "--grad-vanish", "0.5"};
    tfb_config cfg;
    FILE *null = fopen("/dev/null", "w");
    assert_non_null(null);
    assert_int_equal(tfb_cli_parse_serve(&cfg, 9, argv, null, null), 0);
    assert_int_equal(opt_level, 7);
    assert_int_equal(opt_flag, 1);
    assert_string_equal(opt_name, "abc");
    /* Out of range, not a number, a value for a flag: usage errors, the
     * variable keeps its value. */
    char *bad1[] = {"tfboard", "--logdir", "/x", "--unit-level", "10"};
    assert_int_equal(tfb_cli_parse_serve(&cfg, 5, bad1, null, null),
                     TFB_EINVAL);
    char *bad2[] = {"tfboard", "--logdir", "/x", "--unit-level=x"};
    assert_int_equal(tfb_cli_parse_serve(&cfg, 4, bad2, null, null),
                     TFB_EINVAL);
    char *bad3[] = {"tfboard", "--logdir", "/x", "--unit-flag=1"};
    assert_int_equal(tfb_cli_parse_serve(&cfg, 4, bad3, null, null),
                     TFB_EINVAL);
    assert_int_equal(opt_level, 7);

    /* --help lists them after core's, spelled with '_'. */
    char *help = NULL;
    size_t help_len = 0;
    FILE *mem = open_memstream(&help, &help_len);
    assert_non_null(mem);
    char *help_argv[] = {"tfboard", "--help"};
    assert_int_equal(tfb_cli_parse_serve(&cfg, 2, help_argv, mem, null), 1);
    fclose(mem);
    assert_non_null(strstr(help, "--logdir DIR"));
    assert_non_null(strstr(help, "--unit_level N"));
    assert_non_null(strstr(help, "(default 3) [unit_opts]"));
    assert_non_null(strstr(help, "--grad_vanish X"));
    assert_true(strstr(help, "--logdir DIR") < strstr(help, "--unit_level"));
    free(help);
    fclose(null);
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

static const tfb_plugin early = {TFB_PLUGIN_ABI, .name = "early",
                                  .title = "Early", .has_data = never};

int main(void)
{
    /* As tests/plugin/ does: a plugin registered before the command line
     * hands the built-in list to core still comes after the built-ins
     * (test_builtin_names_and_routes checks the order), and core holds
     * the list from then on. */
    if (tfb_plugin_register(&early) != 0 || tfb_builtin_plugins_init() != 0 ||
        tfb_builtin_plugins_init() != TFB_EEXIST)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_names_and_routes),
        cmocka_unit_test(test_register),
        cmocka_unit_test(test_register_older_size),
        cmocka_unit_test(test_plugin_options),
        cmocka_unit_test(test_enabled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
