/*
 * route_runs.c - the run list, run details for the runs table, load
 * progress, and TensorBoard's environment and plugins listing routes (the
 * listing comes from the plugin table, plugin.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/natural.h"
#include "core/plugin.h"
#include "core/routes_core.h"
#include "store/storage.h"

/* A file of /data/runs_info, but for its corruption offsets and error. */
static const tfb_json_field file_fields[] = {
    TFB_JSON_FIELD(tfb_file_info, path, STR),
    TFB_JSON_FIELD_AS("records", tfb_file_info, stats.records, U64),
    TFB_JSON_FIELD_AS("bytes", tfb_file_info, stats.offset, U64),
    TFB_JSON_FIELD_AS("corrupt_records", tfb_file_info, stats.corrupt_records,
                      U64),
    TFB_JSON_FIELD_AS("resyncs", tfb_file_info, stats.resyncs, U64),
    TFB_JSON_FIELD_AS("bytes_skipped", tfb_file_info, stats.bytes_skipped,
                      U64),
};
static const tfb_json_field file_tail_fields[] = {
    TFB_JSON_FIELD_AS("truncated_tail", tfb_file_info, stats.truncated_tail,
                      BOOL),
    TFB_JSON_FIELD(tfb_file_info, requests, U64),
    TFB_JSON_FIELD(tfb_file_info, request_bytes, U64),
};

/* The loader's per-file cost (store.h, tfb_load_profile). */
static const tfb_json_field profile_fields[] = {
    TFB_JSON_FIELD(tfb_load_profile, files, U64),
    TFB_JSON_FIELD(tfb_load_profile, runs, U64),
    TFB_JSON_FIELD(tfb_load_profile, passes, U64),
    TFB_JSON_FIELD(tfb_load_profile, scan_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, runs_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, stat_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, open_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, read_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, parse_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, index_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, tags_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, series_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, finish_ns, U64),
    TFB_JSON_FIELD(tfb_load_profile, progress_ns, U64),
};

static const tfb_json_field progress_fields[] = {
    TFB_JSON_FIELD(tfb_load_progress, files_total, U64),
    TFB_JSON_FIELD(tfb_load_progress, files_done, U64),
    TFB_JSON_FIELD(tfb_load_progress, bytes_total, U64),
    TFB_JSON_FIELD(tfb_load_progress, bytes_done, U64),
    TFB_JSON_FIELD(tfb_load_progress, points, U64),
    TFB_JSON_FIELD(tfb_load_progress, reloads, U64),
    TFB_JSON_FIELD(tfb_load_progress, done, BOOL),
};

static int by_natural_name(const void *a, const void *b)
{
    return tfb_natural_cmp(tfb_run_name(*(tfb_run *const *)a),
                           tfb_run_name(*(tfb_run *const *)b));
}

/* The run names by first wall time, or with order=natural in natural
 * order (base/natural.h, the web UI's): sorting 100,000 names in the
 * browser took seconds, here tens of milliseconds (issue 28). */
int tfb_route_runs(const tfb_http_req *req, tfb_http_resp *resp)
{
    const char *order = tfb_http_query(req, "order");
    if (order && strcmp(order, "natural") != 0)
        return tfb_http_error(resp, 400, "order: natural or nothing");
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    if (order)
        qsort(runs, nr, sizeof *runs, by_natural_name);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < nr; i++)
        tfb_json_str(&j, tfb_run_name(runs[i]));
    tfb_json_array_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

static void number_or_null(tfb_json *j, double v)
{
    if (isnan(v))
        tfb_json_null(j);
    else
        tfb_json_double(j, v);
}

/* "key": [the strings get gives for run r] ([] when it fails). */
static void strings_json(tfb_json *j, const char *key, tfb_run *r,
                         int (*get)(tfb_run *, char ***, size_t *))
{
    tfb_json_key(j, key);
    tfb_json_array_begin(j);
    char **v;
    size_t n;
    if (get(r, &v, &n) == 0) {
        for (size_t q = 0; q < n; q++)
            tfb_json_str(j, v[q]);
        tfb_strv_free(v, n);
    }
    tfb_json_array_end(j);
}

/* [{"name", "dir", "first_wall", "last_wall", "max_step", "tags":
 *   {"scalars": n, "histograms": n, "text": n, "numerics": n},
 *   "points", then each plugin's own members (the runs plugin's "status"),
 *   "notes", "files": [{"path", "records", "bytes", "corrupt_records",
 *   "resyncs", "bytes_skipped", "corruption_offsets", "truncated_tail",
 *   "requests", "request_bytes", "error"}], "trace_files": [...]}] in
 *   /data/runs order. */
int tfb_route_runs_info(const tfb_http_req *req, tfb_http_resp *resp)
{
    static const char *const kind_names[TFB_SERIES_KIND_COUNT] = {
        "scalars", "histograms", "text", "numerics"};
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(tfb_server_store(req), &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double now = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < nr; i++) {
        tfb_run *r = runs[i];
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "name");
        tfb_json_str(&j, tfb_run_name(r));
        tfb_json_key(&j, "first_wall");
        number_or_null(&j, tfb_run_first_wall(r));
        tfb_json_key(&j, "last_wall");
        number_or_null(&j, tfb_run_last_wall(r));
        tfb_json_key(&j, "max_step");
        int64_t ms = tfb_run_max_step(r);
        if (ms == INT64_MIN)
            tfb_json_null(&j);
        else
            tfb_json_i64(&j, ms);
        uint64_t points = 0;
        tfb_json_key(&j, "tags");
        tfb_json_object_begin(&j);
        for (int k = 0; k < TFB_SERIES_KIND_COUNT; k++) {
            tfb_series **ser;
            size_t ns = 0;
            if (tfb_run_series(r, (tfb_series_kind)k, &ser, &ns) == 0) {
                for (size_t q = 0; q < ns; q++)
                    points += tfb_series_count(ser[q]);
                free(ser);
            }
            tfb_json_key(&j, kind_names[k]);
            tfb_json_u64(&j, ns);
        }
        tfb_json_object_end(&j);
        tfb_json_key(&j, "points");
        tfb_json_u64(&j, points);
        size_t np;
        const tfb_plugin *const *pl = tfb_plugins(&np);
        for (size_t k = 0; k < np; k++)
            if (pl[k]->run_info)
                pl[k]->run_info(&j, tfb_server_store(req), r, now);
        strings_json(&j, "notes", r, tfb_run_notes);
        tfb_json_key(&j, "files");
        tfb_json_array_begin(&j);
        tfb_file_info *fi;
        size_t nf;
        if (tfb_run_files(r, &fi, &nf) == 0) {
            for (size_t q = 0; q < nf; q++) {
                tfb_json_object_begin(&j);
                TFB_JSON_FIELDS(&j, &fi[q], file_fields);
                tfb_json_key(&j, "corruption_offsets");
                tfb_json_array_begin(&j);
                for (unsigned o = 0; o < fi[q].stats.n_offsets &&
                                     o < TFB_READER_MAX_CORRUPTIONS; o++)
                    tfb_json_u64(&j, fi[q].stats.corruption_offsets[o]);
                tfb_json_array_end(&j);
                TFB_JSON_FIELDS(&j, &fi[q], file_tail_fields);
                tfb_json_key(&j, "error");
                if (fi[q].error)
                    tfb_json_str(&j, tfb_strerror(fi[q].error));
                else
                    tfb_json_null(&j);
                tfb_json_object_end(&j);
            }
            tfb_file_infos_free(fi, nf);
        }
        tfb_json_array_end(&j);
        strings_json(&j, "trace_files", r, tfb_run_trace_files);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    free(runs);
    return tfb_http_json(resp, &j);
}

int tfb_route_progress(const tfb_http_req *req, tfb_http_resp *resp)
{
    int profile;
    if (tfb_http_param_bool(req, resp, "profile", 0, &profile) < 0)
        return 0;
    tfb_load_progress p;
    tfb_store_progress(tfb_server_store(req), &p);
    tfb_json j;
    tfb_json_init(&j);
    /* The profile only when asked: its times differ from one server (or
     * replica) to the next, the rest of the answer does not. */
    tfb_json_object_begin(&j);
    TFB_JSON_FIELDS(&j, &p, progress_fields);
    if (profile) {
        tfb_json_key(&j, "profile");
        TFB_JSON_STRUCT(&j, &p.profile, profile_fields);
    }
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

/* /data/environment's "storage": a bucket's backend, its requests and
 * its last fault (storage.h), every string through the JSON writer. */
static const tfb_json_field storage_count_fields[] = {
    TFB_JSON_FIELD(tfb_storage_counts, requests, U64),
    TFB_JSON_FIELD(tfb_storage_counts, lists, U64),
    TFB_JSON_FIELD(tfb_storage_counts, gets, U64),
    TFB_JSON_FIELD(tfb_storage_counts, heads, U64),
    TFB_JSON_FIELD(tfb_storage_counts, bytes, U64),
    TFB_JSON_FIELD(tfb_storage_counts, retries, U64),
    TFB_JSON_FIELD(tfb_storage_counts, failures, U64),
    TFB_JSON_FIELD(tfb_storage_counts, skipped_keys, U64),
};
static const tfb_json_field storage_fields[] = {
    TFB_JSON_FIELD(tfb_storage_status, backend, CHARS),
    TFB_JSON_FIELD(tfb_storage_status, anonymous, BOOL),
    TFB_JSON_FIELD(tfb_storage_status, reloads, U64),
    TFB_JSON_FIELD_OBJ("last_reload", tfb_storage_status, last_reload,
                       storage_count_fields),
    TFB_JSON_FIELD_OBJ("total", tfb_storage_status, total,
                       storage_count_fields),
    TFB_JSON_FIELD(tfb_storage_status, errors, U64),
    TFB_JSON_FIELD(tfb_storage_status, last_error, TEXT), /* "": null */
};

int tfb_route_environment(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "data_location");
    tfb_json_str(&j, tfb_store_logdir(tfb_server_store(req)));
    tfb_json_key(&j, "window_title");
    tfb_json_str(&j, "tfboard");
    tfb_json_key(&j, "version");
    tfb_json_str(&j, tfb_version());
    /* The tag names the library writes and the dashboards recognise runs
     * by (tfboard.h), so the web UI never spells them itself. */
    static const char *const tag_names[][2] = {
        {"grad_norm_prefix", TFB_TAG_GRAD_NORM_PREFIX},
        {"grad_norm_global", TFB_TAG_GRAD_NORM_GLOBAL},
        {"step_ms", TFB_TAG_STEP_MS},
        {"input_ms", TFB_TAG_INPUT_MS},
        {"comm_ms", TFB_TAG_COMM_MS},
        {"gpu_prefix", TFB_TAG_GPU_PREFIX},
        {"gpu_utilization", TFB_TAG_GPU_UTILIZATION},
        {"gpu_sm_util", TFB_TAG_GPU_SM_UTIL},
        {"gpu_mem_util", TFB_TAG_GPU_MEM_UTIL},
        {"gpu_mem_used", TFB_TAG_GPU_MEM_USED},
        {"gpu_mem_total", TFB_TAG_GPU_MEM_TOTAL},
        {"gpu_power", TFB_TAG_GPU_POWER},
        {"gpu_temp", TFB_TAG_GPU_TEMP},
        {"gpu_sm_clock", TFB_TAG_GPU_SM_CLOCK},
        {"gpu_name", TFB_TAG_GPU_NAME},
    };
    tfb_json_key(&j, "tag_names");
    tfb_json_object_begin(&j);
    for (size_t i = 0; i < sizeof tag_names / sizeof tag_names[0]; i++) {
        tfb_json_key(&j, tag_names[i][0]);
        tfb_json_str(&j, tag_names[i][1]);
    }
    tfb_json_object_end(&j);
    /* An s3:// or gs:// logdir: the backend, the requests the last
     * reload made, and the last fault (the page's banner); null for
     * local files. */
    tfb_json_key(&j, "storage");
    tfb_storage_status info;
    if (tfb_store_storage_info(tfb_server_store(req), &info) == 0)
        TFB_JSON_STRUCT(&j, &info, storage_fields);
    else
        tfb_json_null(&j);
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

/* POST (or GET) /data/reload: the loader reloads now instead of at its
 * next interval. {"reload": true}, or 409 when no reloading loader runs. */
int tfb_route_reload(const tfb_http_req *req, tfb_http_resp *resp)
{
    if (tfb_store_request_reload(tfb_server_store(req)) < 0)
        return tfb_http_error(resp, 409, "no reloading loader");
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "reload");
    tfb_json_bool(&j, 1);
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}

/* TensorBoard's listing shape, one entry per plugin in table order (the
 * tab order): {name: {"enabled", "tab_name", "disable_reload",
 * "remove_dom", "loading_mechanism": {"type": "JS_MODULE",
 * "module_path"}}}; a plugin without a page has type "NONE". */
int tfb_route_plugins_listing(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_store *st = tfb_server_store(req);
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    for (size_t k = 0; k < np; k++) {
        const tfb_plugin *p = pl[k];
        tfb_json_key(&j, p->name);
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "enabled");
        tfb_json_bool(&j, tfb_plugin_enabled(p, st));
        tfb_json_key(&j, "tab_name");
        tfb_json_str(&j, p->title);
        tfb_json_key(&j, "disable_reload");
        tfb_json_bool(&j, 0);
        tfb_json_key(&j, "remove_dom");
        tfb_json_bool(&j, 0);
        tfb_json_key(&j, "loading_mechanism");
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "type");
        tfb_json_str(&j, p->module ? "JS_MODULE" : "NONE");
        if (p->module) {
            tfb_json_key(&j, "module_path");
            tfb_json_str(&j, p->module);
        }
        tfb_json_object_end(&j);
        tfb_json_object_end(&j);
    }
    tfb_json_object_end(&j);
    return tfb_http_json(resp, &j);
}
