/*
 * route_histograms.c - the histograms plugin routes, and the distributions
 * (compressed histograms) that TensorBoard derives from them.
 */
#include <math.h>
#include <stdlib.h>

#include "routes_core.h"

int tfb_route_histogram_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_route_tags_of_kind(req, resp, TFB_SERIES_HISTOGRAM);
}

/* Which points to send: all, or `samples` evenly spaced ones that always
 * include the first and the last. Returns the count written to idx. */
static size_t pick(size_t count, size_t samples, size_t *idx)
{
    if (samples == 0 || count <= samples) {
        for (size_t i = 0; i < count; i++)
            idx[i] = i;
        return count;
    }
    if (samples == 1) {
        idx[0] = count - 1;
        return 1;
    }
    size_t n = 0;
    for (size_t k = 0; k < samples; k++) {
        size_t i = (size_t)((double)k * (double)(count - 1) /
                            (double)(samples - 1) + 0.5);
        if (n == 0 || i > idx[n - 1])
            idx[n++] = i;
    }
    return n;
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

int tfb_route_histograms(const tfb_http_req *req, tfb_http_resp *resp)
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
        size_t n = pick(v.count, samples, idx);
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

/* TensorBoard's distribution basis points: the normal distribution's
 * -inf, -3σ..3σ, +inf cumulative shares in units of 1/10000. */
static const int BPS[9] = {0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000};

/* The value under which `bp`/10000 of the histogram's mass lies, for each
 * basis point, interpolating linearly inside the bucket where the
 * cumulative share crosses it (as TensorBoard's compressor does). */
static void compress(const tfb_bucket *b, size_t nb, double out[9])
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

int tfb_route_distributions(const tfb_http_req *req, tfb_http_resp *resp)
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
        size_t n = pick(v.count, samples, idx);
        tfb_json_array_begin(&j);
        for (size_t q = 0; q < n; q++) {
            size_t i = idx[q];
            const tfb_hist_point *h = &v.hist[i];
            double c[9];
            compress(v.buckets + h->bucket_off, h->n_buckets, c);
            tfb_json_array_begin(&j);
            tfb_json_double(&j, v.wall[i]);
            tfb_json_i64(&j, v.step[i]);
            tfb_json_array_begin(&j);
            for (int k = 0; k < 9; k++) {
                tfb_json_array_begin(&j);
                tfb_json_i64(&j, BPS[k]);
                tfb_json_double(&j, c[k]);
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
