/*
 * compare.c - the compare dashboard: two runs side by side
 * (/data/plugin/compare/compare?a=RUN&b=RUN), the same comparison and the
 * same JSON as `tfboard report --compare A B` (compare_analysis.h, here;
 * the report includes it). No report section of its own: the report compares
 * through --compare.
 */
#include <stdlib.h>

#include "core/plugin.h"
#include "plugins/compare/compare_analysis.h"

#define GPU_WAIT_MS 1000

static int run_param(const tfb_http_req *req, tfb_http_resp *resp,
                     const char *name, tfb_run **out)
{
    const char *v;
    int rc = tfb_http_param_str(req, resp, name, 1, NULL, &v);
    if (rc < 0)
        return rc;
    *out = tfb_store_find_run(tfb_server_store(req), v);
    if (!*out)
        return tfb_http_error(resp, 404, "%s: no run '%s'", name, v);
    return 0;
}

static int route_compare(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *a, *b;
    int rc = run_param(req, resp, "a", &a);
    if (rc == 0)
        rc = run_param(req, resp, "b", &b);
    if (rc < 0)
        return rc;
    tfb_store *s = tfb_server_store(req);
    tfb_compare c;
    /* A GPU trace loads in the background; an HTTP thread waits for it
     * briefly (as the pipeline route does) and the answer says "loading"
     * for a side still being read: the page asks again. */
    rc = tfb_compare_runs(s, a, NULL, s, b, NULL, GPU_WAIT_MS, &c);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_compare_json(&j, &c);
    tfb_compare_free(&c);
    return tfb_http_json(resp, &j);
}

/* Two runs make a comparison (the listing asks per run and stops at the
 * first yes, so this runs once per listing). */
static int two_runs(tfb_store *s, tfb_run *r)
{
    (void)r;
    tfb_run **runs;
    size_t n;
    if (tfb_store_runs(s, &runs, &n) < 0)
        return 0;
    free(runs);
    return n >= 2;
}

static const tfb_plugin_route routes[] = {
    {"compare", route_compare},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_compare_assets[];

const tfb_plugin tfb_plugin_compare = {
    TFB_PLUGIN_ABI,
    .name = "compare",
    .title = "Compare",
    .module = "js/pages/compare.js",
    .assets = tfb_compare_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = two_runs,
};
