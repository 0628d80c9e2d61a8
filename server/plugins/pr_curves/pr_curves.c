/*
 * pr_curves.c - the PR curves dashboard: TensorBoard's
 * /data/plugin/pr_curves/{tags, pr_curves, available_time_entries}. Every
 * step's curve is kept by the run's index (store/media_index.h: where its
 * tensor lies) and read from the event file when asked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/media_index.h"
#include "core/media_route.h"
#include "collector/event_decode.h"
#include "collector/pb.h"
#include "core/plugin.h"

enum { DT_FLOAT = 1 };

/* One curve: rows TP, FP, TN, FN, precision, recall of k thresholds. */
typedef struct pr_curve {
    int k;
    float *v; /* 6 * k */
} pr_curve;

/* Decodes a DT_FLOAT TensorProto of shape [6, k] (packed or unpacked
 * float_val, or tensor_content). 0, or TFB_ECORRUPT for anything else. */
static int decode_curve(const uint8_t *p, size_t n, pr_curve *c)
{
    tfb_tensor_shape sh;
    if (tfb_tensor_shape_parse(p, n, &sh) < 0 || sh.dtype != DT_FLOAT ||
        sh.rank != 2 || sh.dims[0] != 6 || sh.dims[1] < 1 ||
        sh.dims[1] > 100000)
        return TFB_ECORRUPT;
    /* float_val: one packed run (writers use one; the last is taken) or
     * one field per value */
    const uint8_t *end = p + n, *content = sh.content, *packed = NULL;
    size_t content_len = sh.content_len, packed_len = 0, n_single = 0;
    pb_field f;
    const uint8_t *start = p;
    while (pb_next(&p, end, &f) > 0) {
        if (f.num == 5 && f.wt == PB_LEN) {
            packed = f.p;
            packed_len = f.len;
        } else if (f.num == 5 && f.wt == PB_I32) {
            n_single++;
        }
    }
    int k = (int)sh.dims[1];
    size_t nf = (size_t)6 * (size_t)k;
    c->k = k;
    c->v = malloc(nf * sizeof *c->v);
    if (!c->v)
        return TFB_ENOMEM;
    if (content && content_len == nf * 4) {
        for (size_t i = 0; i < nf; i++)
            c->v[i] = pb_as_float(pb_le32(content + 4 * i));
        return 0;
    }
    if (packed && packed_len == nf * 4) {
        for (size_t i = 0; i < nf; i++)
            c->v[i] = pb_as_float(pb_le32(packed + 4 * i));
        return 0;
    }
    if (n_single == nf) {
        size_t i = 0;
        p = start;
        while (pb_next(&p, end, &f) > 0)
            if (f.num == 5 && f.wt == PB_I32)
                c->v[i++] = pb_as_float((uint32_t)f.u);
        return 0;
    }
    free(c->v);
    c->v = NULL;
    return TFB_ECORRUPT;
}

static int route_tags(const tfb_http_req *req, tfb_http_resp *resp)
{
    return tfb_media_route_tags(req, resp, TFB_MEDIA_PR_CURVE, 0);
}

/* A count stored as a float fits an int64 when it is finite and in
 * [-2^63, 2^63) (both ends exact in float): converting anything else is
 * undefined behaviour (x86 gives -9223372036854775808). */
static int count_fits(float v)
{
    return v >= -9223372036854775808.0f && v < 9223372036854775808.0f;
}

/* The row of k values under key: counts as integers (null for a count
 * that is NaN, infinite or past 2^63, each one added to *bad), the
 * ratios as numbers. */
static void put_floats(tfb_json *j, const char *key, const float *v, int k,
                       int as_int, uint64_t *bad)
{
    tfb_json_key(j, key);
    tfb_json_array_begin(j);
    for (int i = 0; i < k; i++) {
        if (!as_int) {
            tfb_json_double(j, (double)v[i]);
        } else if (count_fits(v[i])) {
            tfb_json_i64(j, (int64_t)v[i]);
        } else {
            tfb_json_null(j);
            (*bad)++;
        }
    }
    tfb_json_array_end(j);
}

/* {run: [{wall_time, step, precision, recall, true_positives,
 * false_positives, true_negatives, false_negatives, thresholds}]}: every
 * step, in file order (TensorBoard's shape). A curve whose record cannot
 * be read back or decoded is left out and counted in "skipped" (ours); a
 * count that is no int64 (NaN, +-Inf, past 2^63: a NaN weight gives
 * them) is null, counted in "null_counts" (ours). */
static int route_pr_curves(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *tag;
    tfb_run *run;
    if (!tfb_http_query(req, "run"))
        return tfb_http_error(resp, 400, "missing parameter 'run'");
    if (tfb_http_param_str(req, resp, "tag", 1, NULL, &tag) < 0 ||
        tfb_http_param_run(req, resp, &run) < 0)
        return 0;
    tfb_media_index *ix = tfb_run_media(run);
    tfb_media_entry *e;
    size_t n;
    int rc = tfb_media_entries(ix, TFB_MEDIA_PR_CURVE, tag, -1, &e, &n);
    if (rc == TFB_ENOENT)
        return tfb_http_error(resp, 404, "run '%s' has no PR curve tag '%s'",
                              tfb_run_name(run), tag);
    if (rc < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, tfb_run_name(run));
    tfb_json_array_begin(&j);
    uint64_t skipped = 0, bad_counts = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *bytes;
        size_t len;
        pr_curve c = {0, NULL};
        if (tfb_media_read(ix, &e[i], &bytes, &len) < 0) {
            skipped++;
            continue;
        }
        rc = decode_curve(bytes, len, &c);
        free(bytes);
        if (rc < 0) {
            skipped++;
            continue;
        }
        int k = c.k;
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "wall_time");
        tfb_json_double(&j, e[i].wall);
        tfb_json_key(&j, "step");
        tfb_json_i64(&j, e[i].step);
        put_floats(&j, "true_positives", c.v, k, 1, &bad_counts);
        put_floats(&j, "false_positives", c.v + k, k, 1, &bad_counts);
        put_floats(&j, "true_negatives", c.v + 2 * k, k, 1, &bad_counts);
        put_floats(&j, "false_negatives", c.v + 3 * k, k, 1, &bad_counts);
        put_floats(&j, "precision", c.v + 4 * k, k, 0, NULL);
        put_floats(&j, "recall", c.v + 5 * k, k, 0, NULL);
        tfb_json_key(&j, "thresholds");
        tfb_json_array_begin(&j);
        for (int t = 0; t < k; t++)
            tfb_json_double(&j, k > 1 ? 1.0 / (k - 1) * t : 0.0);
        tfb_json_array_end(&j);
        tfb_json_object_end(&j);
        free(c.v);
    }
    tfb_json_array_end(&j);
    if (skipped) {
        tfb_json_key(&j, "skipped");
        tfb_json_u64(&j, skipped);
    }
    if (bad_counts) {
        tfb_json_key(&j, "null_counts");
        tfb_json_u64(&j, bad_counts);
    }
    tfb_json_object_end(&j);
    free(e);
    return tfb_http_json(resp, &j);
}

/* {run: [{step, wall_time}]}: the steps of each run's PR curves (of its
 * first tag), for the step slider (TensorBoard's route). */
static int route_time_entries(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        tfb_media_index *ix = tfb_run_media(runs[i]);
        tfb_media_tag_info *t;
        size_t nt;
        if (tfb_media_tags(ix, TFB_MEDIA_PR_CURVE, &t, &nt) < 0)
            continue;
        tfb_media_entry *e = NULL;
        size_t n = 0;
        if (nt && tfb_media_entries(ix, TFB_MEDIA_PR_CURVE, t[0].tag, -1, &e,
                                    &n) == 0 && n) {
            tfb_json_key(&j, tfb_run_name(runs[i]));
            tfb_json_array_begin(&j);
            for (size_t k = 0; k < n; k++) {
                tfb_json_object_begin(&j);
                tfb_json_key(&j, "step");
                tfb_json_i64(&j, e[k].step);
                tfb_json_key(&j, "wall_time");
                tfb_json_double(&j, e[k].wall);
                tfb_json_object_end(&j);
            }
            tfb_json_array_end(&j);
        }
        free(e);
        tfb_media_tag_infos_free(t, nt);
    }
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

static int has_curves(tfb_store *s, tfb_run *r)
{
    (void)s;
    return tfb_media_count(tfb_run_media(r), TFB_MEDIA_PR_CURVE) > 0;
}

static const tfb_plugin_route routes[] = {
    {"tags", route_tags},
    {"pr_curves", route_pr_curves},
    {"available_time_entries", route_time_entries},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_pr_curves_assets[];

const tfb_plugin tfb_plugin_pr_curves = {
    TFB_PLUGIN_ABI,
    .name = "pr_curves",
    .title = "PR Curves",
    .module = "js/pages/pr_curves.js",
    .assets = tfb_pr_curves_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_curves,
};
