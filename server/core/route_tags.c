/*
 * route_tags.c - TensorBoard's /tags answers for one kind of series, shared
 * by the scalars, histograms, distributions and text dashboards.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/strtab.h"
#include "base/vec.h"
#include "core/downsample.h"

#include "core/routes_core.h"

int tfb_route_tags_of_kind(const tfb_http_req *req, tfb_http_resp *resp,
                           tfb_series_kind kind, int names_only)
{
    tfb_store *st = tfb_server_store(req);
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(st, &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        tfb_series **ser;
        size_t ns;
        if (tfb_run_series(runs[i], kind, &ser, &ns) < 0)
            continue;
        if (ns && names_only) {
            tfb_json_key(&j, tfb_run_name(runs[i]));
            tfb_json_array_begin(&j);
            for (size_t k = 0; k < ns; k++)
                tfb_json_str(&j, tfb_series_tag(ser[k]));
            tfb_json_array_end(&j);
        } else if (ns) {
            tfb_json_key(&j, tfb_run_name(runs[i]));
            tfb_json_object_begin(&j);
            for (size_t k = 0; k < ns; k++) {
                tfb_json_key(&j, tfb_series_tag(ser[k]));
                tfb_json_object_begin(&j);
                tfb_json_key(&j, "displayName");
                tfb_json_str(&j, tfb_series_display_name(ser[k]));
                tfb_json_key(&j, "description");
                tfb_json_str(&j, tfb_series_description(ser[k]));
                tfb_json_object_end(&j);
            }
            tfb_json_object_end(&j);
        }
        free(ser);
    }
    tfb_json_object_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

/* One distinct tag set of tfb_route_tag_sets_of_kind: its names joined
 * with NUL bytes (the table's key: its address stays while the table
 * lives), in the order of the runs' first use. */
typedef struct {
    char *key;
    size_t len;
} tag_set;

/* Writes the set's names as a JSON array. */
static void tag_set_json(tfb_json *j, const tag_set *t)
{
    tfb_json_array_begin(j);
    for (size_t a = 0; a < t->len;) {
        size_t n = strlen(t->key + a);
        tfb_json_strn(j, t->key + a, n);
        a += n + 1;
    }
    tfb_json_array_end(j);
}

int tfb_route_tag_sets_of_kind(const tfb_http_req *req, tfb_http_resp *resp,
                               tfb_series_kind kind)
{
    tfb_store *st = tfb_server_store(req);
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(st, &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    tfb_strtab index = {0};
    TFB_VEC(tag_set) sets = {0};
    tfb_buf key = {0};
    int oom = 0;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "runs");
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < nr && !oom; i++) {
        tfb_series **ser;
        size_t ns;
        if (tfb_run_series(runs[i], kind, &ser, &ns) < 0)
            continue;
        key.n = 0;
        for (size_t k = 0; k < ns; k++) {
            const char *t = tfb_series_tag(ser[k]);
            /* the NUL too: it separates the names */
            tfb_buf_put(&key, t, strlen(t) + 1);
        }
        free(ser);
        if (!ns)
            continue;
        if (key.failed) {
            oom = 1;
            break;
        }
        uintptr_t id = (uintptr_t)tfb_strtab_get(&index, key.v, key.n);
        if (!id) {
            tag_set t = {malloc(key.n), key.n};
            if (!t.key || tfb_vec_push(&sets, t) < 0) {
                free(t.key);
                oom = 1;
                break;
            }
            memcpy(t.key, key.v, key.n);
            id = sets.n;
            if (tfb_strtab_put(&index, t.key, t.len, (void *)id) < 0) {
                oom = 1;
                break;
            }
        }
        tfb_json_key(&j, tfb_run_name(runs[i]));
        tfb_json_u64(&j, id - 1);
    }
    tfb_json_object_end(&j);
    tfb_json_key(&j, "tag_sets");
    tfb_json_array_begin(&j);
    for (size_t k = 0; k < sets.n; k++)
        tag_set_json(&j, &sets.v[k]);
    tfb_json_array_end(&j);
    tfb_json_object_end(&j);
    for (size_t k = 0; k < sets.n; k++)
        free(sets.v[k].key);
    tfb_vec_free(&sets);
    tfb_strtab_free(&index);
    tfb_buf_free(&key);
    free(runs);
    if (oom) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 500, "out of memory");
    }
    return tfb_http_json(resp, &j);
}

int tfb_run_has_kind(tfb_store *s, tfb_run *r, tfb_series_kind kind)
{
    (void)s;
    tfb_series **ser;
    size_t ns;
    if (tfb_run_series(r, kind, &ser, &ns) < 0)
        return 0;
    free(ser);
    return ns > 0;
}

int tfb_route_histogram_points(const tfb_http_req *req, tfb_http_resp *resp,
                               tfb_hist_point_fn fn)
{
    tfb_series *s;
    int64_t samples;
    if (tfb_http_param_series(req, resp, TFB_SERIES_HISTOGRAM, NULL, &s) < 0 ||
        tfb_http_param_i64(req, resp, "samples", 0, 0, 0, 100000000,
                           &samples) < 0)
        return 0;
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    size_t *idx = malloc((v.count ? v.count : 1) * sizeof *idx);
    tfb_json j;
    tfb_json_init(&j);
    if (idx) {
        size_t n = tfb_ds_pick_even(v.count, (size_t)samples, idx);
        tfb_json_array_begin(&j);
        for (size_t q = 0; q < n; q++) {
            size_t i = idx[q];
            tfb_json_array_begin(&j);
            tfb_json_double(&j, v.wall[i]);
            tfb_json_i64(&j, v.step[i]);
            fn(&j, &v, i);
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
