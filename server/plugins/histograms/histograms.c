/*
 * histograms.c - the histograms dashboard: /data/plugin/histograms/
 * {tags,histograms}.
 */
#include <math.h>
#include <stdlib.h>

#include "downsample.h"
#include "plugin.h"
#include "routes_core.h"

static int tfb_route_histogram_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_route_tags_of_kind(req, resp, TFB_SERIES_HISTOGRAM);
}

/* Parses run/tag/samples and pins the series; 0 on success. */
static int open_series(const tfb_http_req *req, tfb_http_resp *resp,
                       tfb_series **s, size_t *samples)
{
    int64_t sm;
    if (tfb_http_param_series(req, resp, TFB_SERIES_HISTOGRAM, NULL, s) < 0 ||
        tfb_http_param_i64(req, resp, "samples", 0, 0, 0, 100000000, &sm) < 0)
        return -1;
    *samples = (size_t)sm;
    return 0;
}

static int tfb_route_histograms(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_series *s;
    size_t samples;
    if (open_series(req, resp, &s, &samples) < 0)
        return 0;
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    size_t *idx = malloc((v.count ? v.count : 1) * sizeof *idx);
    tfb_json j;
    tfb_json_init(&j);
    if (idx) {
        size_t n = tfb_ds_pick_even(v.count, samples, idx);
        tfb_json_array_begin(&j);
        for (size_t q = 0; q < n; q++) {
            size_t i = idx[q];
            const tfb_hist_point *h = &v.hist[i];
            tfb_json_array_begin(&j);
            tfb_json_double(&j, v.wall[i]);
            tfb_json_i64(&j, v.step[i]);
            tfb_json_array_begin(&j);
            for (uint32_t b = 0; b < h->n_buckets; b++) {
                const tfb_bucket *bk = &v.buckets[h->bucket_off + b];
                tfb_json_array_begin(&j);
                tfb_json_double(&j, bk->left);
                tfb_json_double(&j, bk->right);
                tfb_json_double(&j, bk->count);
                tfb_json_array_end(&j);
            }
            tfb_json_array_end(&j);
            tfb_json_array_end(&j);
        }
        tfb_json_array_end(&j);
    }
    tfb_series_read_end(s);
    free(idx);
    if (!idx) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 500, "out of memory");
    }
    return tfb_http_json(resp, &j);
}

static int has_histograms(tfb_store *s, tfb_run *r)
{
    return tfb_run_has_kind(s, r, TFB_SERIES_HISTOGRAM);
}

static const tfb_plugin_route routes[] = {
    {"tags", tfb_route_histogram_tags},
    {"histograms", tfb_route_histograms},
};

const tfb_plugin tfb_plugin_histograms = {
    .name = "histograms",
    .title = "Histograms",
    .module = "js/pages/histograms.js",
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_histograms,
};
