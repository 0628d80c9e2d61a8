/*
 * scalars.c - the scalars dashboard: /data/plugin/scalars/{tags,scalars,summary}.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "downsample.h"
#include "plugin.h"
#include "routes_core.h"

static int tfb_route_scalar_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_route_tags_of_kind(req, resp, TFB_SERIES_SCALAR);
}

/* Appends "<num>," / "<num>\n" pieces for CSV rows. */
static void csv_num(tfb_json *b, const char *txt, size_t n, char sep)
{
    tfb_json_append(b, txt, n);
    tfb_json_append(b, &sep, 1);
}

static int tfb_route_scalars(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_series *s;
    if (tfb_http_param_series(req, resp, TFB_SERIES_SCALAR, NULL, &s) < 0)
        return 0;
    const char *format;
    int64_t samples, min_step, max_step;
    double smoothing;
    if (tfb_http_param_str(req, resp, "format", 0, "json", &format) < 0 ||
        tfb_http_param_i64(req, resp, "samples", 0, 0, 0, 100000000,
                           &samples) < 0 ||
        tfb_http_param_double(req, resp, "smoothing", 0, 0, 0, 0.999999,
                              &smoothing) < 0 ||
        tfb_http_param_i64(req, resp, "min_step", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &min_step) < 0 ||
        tfb_http_param_i64(req, resp, "max_step", 0, INT64_MAX, INT64_MIN,
                           INT64_MAX, &max_step) < 0)
        return 0;
    int csv = strcmp(format, "csv") == 0;
    if (!csv && strcmp(format, "json") != 0)
        return tfb_http_error(resp, 400,
                              "parameter 'format' must be json or csv");
    tfb_ds_opts o = {(size_t)samples, smoothing,
                     min_step != INT64_MIN || max_step != INT64_MAX,
                     min_step, max_step};
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    tfb_ds_point *pts = NULL;
    size_t np = 0;
    int rc = tfb_downsample(v.step, v.value, v.count, &o, &pts, &np);
    tfb_json j;
    tfb_json_init(&j);
    if (rc == 0) {
        char num[40];
        if (csv) {
            static const char head[] = "Wall time,Step,Value\n";
            tfb_json_append(&j, head, sizeof head - 1);
        } else {
            tfb_json_array_begin(&j);
        }
        for (size_t i = 0; i < np; i++) {
            size_t k = pts[i].index;
            if (csv) {
                csv_num(&j, num, tfb_fmt_double(num, v.wall[k]), ',');
                csv_num(&j, num, tfb_fmt_i64(num, v.step[k]), ',');
                size_t n = smoothing > 0 ? tfb_fmt_double(num, pts[i].value)
                                         : tfb_fmt_float(num, v.value[k]);
                csv_num(&j, num, n, '\n');
                continue;
            }
            tfb_json_array_begin(&j);
            tfb_json_double(&j, v.wall[k]);
            tfb_json_i64(&j, v.step[k]);
            if (smoothing > 0)
                tfb_json_double(&j, pts[i].value);
            else
                tfb_json_float(&j, v.value[k]);
            tfb_json_array_end(&j);
        }
        if (!csv)
            tfb_json_array_end(&j);
    }
    tfb_series_read_end(s);
    free(pts);
    if (rc < 0) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 500, "%s", tfb_strerror(rc));
    }
    if (!csv)
        return tfb_http_json(resp, &j);
    size_t len;
    char *body = tfb_json_take(&j, &len);
    if (!body)
        return tfb_http_error(resp, 500, "out of memory");
    return tfb_http_body_take(resp, 200, "text/csv; charset=utf-8", body, len);
}

/* Per run, a summary of one scalar tag for the runs table:
 * {run: {"count", "first_step", "last_step", "first_wall", "last_wall",
 *        "last", "min", "max", "nan", "pos_inf", "neg_inf"}}.
 * Runs without the tag are left out. */
static int tfb_route_scalar_summary(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *tag;
    if (tfb_http_param_str(req, resp, "tag", 1, NULL, &tag) < 0)
        return 0;
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        tfb_series *s = tfb_run_find_series(runs[i], TFB_SERIES_SCALAR, tag);
        if (!s)
            continue;
        tfb_series_view v;
        tfb_series_read_begin(s, &v);
        double mn = INFINITY, mx = -INFINITY;
        for (size_t k = 0; k < v.count; k++) {
            double x = v.value[k];
            if (x < mn)
                mn = x;
            if (x > mx)
                mx = x;
        }
        tfb_json_key(&j, tfb_run_name(runs[i]));
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "count");
        tfb_json_u64(&j, v.count);
        if (v.count) {
            tfb_json_key(&j, "first_step");
            tfb_json_i64(&j, v.step[0]);
            tfb_json_key(&j, "last_step");
            tfb_json_i64(&j, v.step[v.count - 1]);
            tfb_json_key(&j, "first_wall");
            tfb_json_double(&j, v.wall[0]);
            tfb_json_key(&j, "last_wall");
            tfb_json_double(&j, v.wall[v.count - 1]);
            tfb_json_key(&j, "last");
            tfb_json_float(&j, v.value[v.count - 1]);
            tfb_json_key(&j, "min");
            if (mn <= mx)
                tfb_json_double(&j, mn);
            else
                tfb_json_null(&j);
            tfb_json_key(&j, "max");
            if (mn <= mx)
                tfb_json_double(&j, mx);
            else
                tfb_json_null(&j);
        }
        tfb_json_key(&j, "nan");
        tfb_json_u64(&j, v.nonfinite.nan);
        tfb_json_key(&j, "pos_inf");
        tfb_json_u64(&j, v.nonfinite.pos_inf);
        tfb_json_key(&j, "neg_inf");
        tfb_json_u64(&j, v.nonfinite.neg_inf);
        tfb_json_object_end(&j);
        tfb_series_read_end(s);
    }
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

static int has_scalars(tfb_store *s, tfb_run *r)
{
    return tfb_run_has_kind(s, r, TFB_SERIES_SCALAR);
}

static const tfb_plugin_route routes[] = {
    {"tags", tfb_route_scalar_tags},
    {"scalars", tfb_route_scalars},
    {"summary", tfb_route_scalar_summary},
};

const tfb_plugin tfb_plugin_scalars = {
    .name = "scalars",
    .title = "Scalars",
    .module = "js/pages/scalars.js",
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_scalars,
};
