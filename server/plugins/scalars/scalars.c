/*
 * scalars.c - the scalars dashboard: /data/plugin/scalars/{tags,scalars,summary}
 * (multirun and nearest: scalars_multirun.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/downsample.h"
#include "core/plugin.h"
#include "core/routes_core.h"
#include "plugins/scalars/scalars_layout.h"
#include "plugins/scalars/scalars_multirun.h"

/* TensorBoard's {run: {tag: {displayName, description}}}, or with
 * format=sets each distinct tag set once (routes_core.h; the web UI's
 * catalog asks for that). */
static int tfb_route_scalar_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *f = tfb_http_query(req, "format");
    if (f && strcmp(f, "sets") == 0)
        return tfb_route_tag_sets_of_kind(req, resp, TFB_SERIES_SCALAR);
    if (f)
        return tfb_http_error(resp, 400, "format: sets or nothing");
    return tfb_route_tags_of_kind(req, resp, TFB_SERIES_SCALAR, 0);
}

/* Appends "<num>," / "<num>\n" pieces for CSV rows. */
static void csv_num(tfb_json *b, const char *txt, size_t n, char sep)
{
    tfb_json_append(b, txt, n);
    tfb_json_append(b, &sep, 1);
}


/* Full-resolution answers of more points than this are streamed (built a
 * block at a time on the HTTP event loop), so forty clients downloading a
 * 2 M-point series hold forty 64 KiB blocks, not forty 60 MB answers, and
 * small requests are answered between the blocks. */
#define STREAM_MIN_POINTS 50000

typedef struct scalar_stream {
    tfb_series *s;
    size_t count;      /* points when the request came: the answer's end */
    size_t next;       /* next point to write */
    int csv, phase;    /* phase 0: header, 1: points, 2: closing, 3: end */
    double w, ema, wn; /* the EMA runs over every point, as downsample.c */
    tfb_ds_opts o;
    int ema_first;     /* no row written yet (JSON commas) */
    char pending[128]; /* a row that did not fit the last block */
    size_t pending_len;
} scalar_stream;

/* A number as JSON: non-finite values are TensorBoard's quoted strings. */
static size_t json_num(char *out, double v, int as_float)
{
    if (isfinite(v))
        return as_float ? tfb_fmt_float(out, (float)v) : tfb_fmt_double(out, v);
    out[0] = '"';
    size_t n = 1 + tfb_fmt_double(out + 1, v);
    out[n++] = '"';
    return n;
}

static size_t format_row(const scalar_stream *st, const tfb_series_view *v,
                         size_t k, double shown, int first, char *out)
{
    size_t n = 0;
    if (st->csv) {
        n += tfb_fmt_double(out + n, v->wall[k]);
        out[n++] = ',';
        n += tfb_fmt_i64(out + n, v->step[k]);
        out[n++] = ',';
        n += st->w > 0 ? tfb_fmt_double(out + n, shown)
                       : tfb_fmt_float(out + n, v->value[k]);
        out[n++] = '\n';
        return n;
    }
    if (!first)
        out[n++] = ',';
    out[n++] = '[';
    n += json_num(out + n, v->wall[k], 0);
    out[n++] = ',';
    n += tfb_fmt_i64(out + n, v->step[k]);
    out[n++] = ',';
    n += st->w > 0 ? json_num(out + n, shown, 0)
                   : json_num(out + n, v->value[k], 1);
    out[n++] = ']';
    return n;
}

static long scalar_stream_next(void *ctx, char *buf, size_t max)
{
    scalar_stream *st = ctx;
    size_t n = 0;
    if (st->phase == 0) {
        static const char head[] = "Wall time,Step,Value\n";
        if (st->csv) {
            memcpy(buf, head, sizeof head - 1);
            n = sizeof head - 1;
        } else {
            buf[n++] = '[';
        }
        st->phase = 1;
    }
    if (st->pending_len && n + st->pending_len <= max) {
        memcpy(buf + n, st->pending, st->pending_len);
        n += st->pending_len;
        st->pending_len = 0;
    }
    if (st->phase == 1 && !st->pending_len) {
        /* Points are decoded a piece at a time into the stack (no pin
         * held, no copy of the series kept while a client is slow). A
         * file replaced meanwhile empties the series: end early. */
        enum { PIECE = 256 };
        int64_t step[PIECE];
        double wall[PIECE];
        float value[PIECE];
        tfb_series_view v = {.kind = TFB_SERIES_SCALAR, .step = step,
                             .wall = wall, .value = value};
        int ended = 0;
        while (st->next < st->count && !st->pending_len) {
            size_t base = st->next;
            size_t got = tfb_series_scalar_range(
                st->s, base, st->count - base < PIECE ? st->count - base
                                                      : PIECE,
                step, wall, value, NULL);
            if (!got) {
                ended = 1;
                break;
            }
            v.count = got;
            while (st->next < base + got) {
                size_t k = st->next - base;
                double x = value[k], shown = x;
                if (st->w > 0 && isfinite(x)) {
                    st->ema = st->ema * st->w + (1 - st->w) * x;
                    st->wn *= st->w;
                    shown = st->ema / (1 - st->wn);
                }
                st->next++;
                if (st->o.has_range &&
                    (step[k] < st->o.min_step || step[k] > st->o.max_step))
                    continue;
                char row[128];
                size_t len = format_row(st, &v, k, shown, st->ema_first,
                                        row);
                st->ema_first = 0;
                if (n + len > max) {
                    memcpy(st->pending, row, len);
                    st->pending_len = len;
                    break;
                }
                memcpy(buf + n, row, len);
                n += len;
            }
        }
        if ((ended || st->next >= st->count) && !st->pending_len)
            st->phase = 2;
    }
    if (st->phase == 2 && n < max) {
        if (!st->csv)
            buf[n++] = ']';
        st->phase = 3;
    }
    return (long)n;
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
    size_t count = tfb_series_count(s);
    if (count > STREAM_MIN_POINTS && (samples == 0 || count <= (size_t)samples)) {
        scalar_stream *st = calloc(1, sizeof *st);
        if (!st)
            return tfb_http_error(resp, 500, "out of memory");
        st->s = s;
        st->count = count;
        st->csv = csv;
        st->w = smoothing;
        st->wn = 1;
        st->o = o;
        st->ema_first = 1;
        return tfb_http_stream(resp, 200,
                               csv ? "text/csv; charset=utf-8"
                                   : "application/json; charset=utf-8",
                               scalar_stream_next, st, free);
    }
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
    {"multirun", tfb_route_scalars_multirun},
    {"nearest", tfb_route_scalars_nearest},
    {"layout", tfb_route_scalars_layout},
};

/* The shared layout file: the one route that accepts PUT. */
static const tfb_plugin_route put_routes[] = {
    {"layout", tfb_route_scalars_layout},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_scalars_assets[];

const tfb_plugin tfb_plugin_scalars = {
    TFB_PLUGIN_ABI,
    .name = "scalars",
    .title = "Scalars",
    .module = "js/pages/scalars.js",
    .assets = tfb_scalars_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_scalars,
    .put_routes = put_routes,
    .n_put_routes = sizeof put_routes / sizeof put_routes[0],
};
