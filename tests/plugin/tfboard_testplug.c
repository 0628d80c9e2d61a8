/*
 * tfboard_testplug.c - tfboard with one more dashboard, added from outside
 * the server's tree: a plugin descriptor, its route, its page module, and
 * a main() that registers it before the usual command line. This is the
 * whole cost of a dashboard (docs/ARCHITECTURE.md, "How to add a
 * dashboard"); tests/integration/test_plugins.py and the browser tests
 * check that it shows up in /data/plugins_listing and as a tab.
 *
 * The plugin "testplug" has data for runs that log a scalar tag starting
 * with "testplug/"; its route lists those runs with their tag counts. Its
 * own command-line option --testplug_min_tags N (declared in its
 * descriptor, accepted by `tfboard` and `tfboard report` alike) leaves out
 * runs with fewer tags. Its descriptor starts with TFB_PLUGIN_ABI (its
 * size and version), which tfb_plugin_register checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/plugin.h"

#define PREFIX "testplug/"

/* --testplug_min_tags N: set while the command line is parsed. */
static int min_tags = 1;

static const tfb_option options[] = {
    {.name = "testplug_min_tags", .arg = "N", .type = TFB_OPT_INT,
     .help = "runs with fewer testplug/ tags are left out", .def = "1",
     .min = 1, .max = 1000, .dest = &min_tags},
};

/* The run's testplug/ tags, or 0 when below --testplug_min_tags. */
static size_t count_tags(tfb_run *r)
{
    tfb_series **ser;
    size_t n, hits = 0;
    if (tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &n) < 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        hits += strncmp(tfb_series_tag(ser[i]), PREFIX, strlen(PREFIX)) == 0;
    free(ser);
    return hits >= (size_t)min_tags ? hits : 0;
}

static int has_data(tfb_store *s, tfb_run *r)
{
    (void)s;
    return count_tags(r) > 0;
}

/* {"runs": {run: tag count}} */
static int route_runs(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "runs");
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        size_t c = count_tags(runs[i]);
        if (c) {
            tfb_json_key(&j, tfb_run_name(runs[i]));
            tfb_json_u64(&j, c);
        }
    }
    tfb_json_object_end(&j);
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)s;
    (void)o;
    size_t c = count_tags(r);
    if (c)
        fprintf(f, markdown ? "\n### Test plugin\n\n%zu tags.\n"
                            : "  testplug: %zu tags\n", c);
    return 0;
}

/* The page module: the web UI's page contract (webui/README.md). */
static const char page_js[] =
    "import { h, clear } from '../core/dom.js';\n"
    "import { getJSON } from '../core/api.js';\n"
    "export default {\n"
    "  id: 'testplug',\n"
    "  mount(ctx) {\n"
    "    this.ctx = ctx;\n"
    "    this.body = h('div', { id: 'testplug-body' }, 'loading');\n"
    "    ctx.main.append(h('h2', { class: 'page-title' }, 'Test plugin'),"
    " this.body);\n"
    "    return this.update();\n"
    "  },\n"
    "  async update() {\n"
    "    const d = await getJSON('data/plugin/testplug/runs');\n"
    "    clear(this.body);\n"
    "    for (const [run, n] of Object.entries(d.runs))\n"
    "      this.body.append(h('p', { class: 'testplug-run' }, run + ': ' +"
    " n + ' tags'));\n"
    "  },\n"
    "  unmount() {},\n"
    "};\n";

static const tfb_plugin_route routes[] = {
    {"runs", route_runs},
};

static const tfb_plugin testplug = {
    TFB_PLUGIN_ABI,
    .name = "testplug",
    .title = "Test plugin",
    .module = "js/plugins/testplug.js",
    .module_source = page_js,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_data,
    .report_text = report_text,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
};

int main(int argc, char **argv)
{
    if (tfb_plugin_register(&testplug) < 0) {
        fprintf(stderr, "cannot register the test plugin\n");
        return 2;
    }
    return tfb_cli_main(argc, argv);
}
