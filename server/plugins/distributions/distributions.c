/*
 * distributions.c - the distributions dashboard: TensorBoard's compressed
 * histograms (nine quantile lines per step), derived from the histogram
 * series: /data/plugin/distributions/{tags,distributions}.
 */
#include <math.h>

#include "core/plugin.h"
#include "core/routes_core.h"

static int tfb_route_distribution_tags(const tfb_http_req *req,
                                       tfb_http_resp *resp)
{
    return tfb_route_tags_of_kind(req, resp, TFB_SERIES_HISTOGRAM, 0);
}

/* TensorBoard's distribution basis points: the normal distribution's
 * -inf, -3σ..3σ, +inf cumulative shares in units of 1/10000. */
static const int BPS[9] = {0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000};

/* The value under which `bp`/10000 of the histogram's mass lies, for each
 * basis point, interpolating linearly inside the bucket where the
 * cumulative share crosses it (as TensorBoard's compressor does). */
static void compress(const tfb_hist_bucket *b, size_t nb, double out[9])
{
    if (nb == 0) {
        for (int k = 0; k < 9; k++)
            out[k] = 0;
        return;
    }
    double lo = b[0].left, hi = b[nb - 1].right, total = 0;
    for (size_t i = 0; i < nb; i++)
        total += b[i].count;
    if (total == 0)
        total = 1;
    int k = 0;
    double cum_prev = 0;
    size_t i = 0;
    while (k < 9 && i < nb) {
        double cum = cum_prev + b[i].count * 10000.0 / total;
        /* the first bucket whose cumulative share passes the basis point
         * (strictly, as a right-sided search does) */
        if (cum <= BPS[k] || cum == cum_prev) {
            cum_prev = cum;
            i++;
            continue;
        }
        double l = (i == 0 || cum_prev == 0) ? lo
                   : (b[i - 1].right > lo ? b[i - 1].right : lo);
        double r = b[i].right < hi ? b[i].right : hi;
        out[k] = l + (BPS[k] - cum_prev) * (r - l) / (cum - cum_prev);
        k++;
    }
    for (; k < 9; k++)
        out[k] = hi;
}

/* A point as its nine [basis_point, value] pairs. */
static void quantiles_json(tfb_json *j, const tfb_series_view *v, size_t i)
{
    const tfb_hist_point *h = &v->hist[i];
    double c[9];
    compress(v->buckets + h->bucket_off, h->n_buckets, c);
    tfb_json_array_begin(j);
    for (int k = 0; k < 9; k++) {
        tfb_json_array_begin(j);
        tfb_json_i64(j, BPS[k]);
        tfb_json_double(j, c[k]);
        tfb_json_array_end(j);
    }
    tfb_json_array_end(j);
}

static int tfb_route_distributions(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_route_histogram_points(req, resp, quantiles_json);
}

static int has_histograms(tfb_store *s, tfb_run *r)
{
    return tfb_run_has_kind(s, r, TFB_SERIES_HISTOGRAM);
}

static const tfb_plugin_route routes[] = {
    {"tags", tfb_route_distribution_tags},
    {"distributions", tfb_route_distributions},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_distributions_assets[];

const tfb_plugin tfb_plugin_distributions = {
    TFB_PLUGIN_ABI,
    .name = "distributions",
    .title = "Distributions",
    .module = "js/pages/distributions.js",
    .assets = tfb_distributions_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_histograms,
};
