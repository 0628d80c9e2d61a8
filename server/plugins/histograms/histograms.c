/*
 * histograms.c - the histograms dashboard: /data/plugin/histograms/
 * {tags,histograms}.
 */
#include "core/plugin.h"
#include "core/routes_core.h"

static int tfb_route_histogram_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_route_tags_of_kind(req, resp, TFB_SERIES_HISTOGRAM, 0);
}

/* A point's buckets as TensorBoard sends them: [[left, right, count]]. */
static void buckets_json(tfb_json *j, const tfb_series_view *v, size_t i)
{
    const tfb_hist_point *h = &v->hist[i];
    tfb_json_array_begin(j);
    for (uint32_t b = 0; b < h->n_buckets; b++) {
        const tfb_hist_bucket *bk = &v->buckets[h->bucket_off + b];
        tfb_json_array_begin(j);
        tfb_json_double(j, bk->left);
        tfb_json_double(j, bk->right);
        tfb_json_double(j, bk->count);
        tfb_json_array_end(j);
    }
    tfb_json_array_end(j);
}

static int tfb_route_histograms(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_route_histogram_points(req, resp, buckets_json);
}

static int has_histograms(tfb_store *s, tfb_run *r)
{
    return tfb_run_has_kind(s, r, TFB_SERIES_HISTOGRAM);
}

static const tfb_plugin_route routes[] = {
    {"tags", tfb_route_histogram_tags},
    {"histograms", tfb_route_histograms},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_histograms_assets[];

const tfb_plugin tfb_plugin_histograms = {
    TFB_PLUGIN_ABI,
    .name = "histograms",
    .title = "Histograms",
    .module = "js/pages/histograms.js",
    .assets = tfb_histograms_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_histograms,
};
