/*
 * gpu_hta_routes.c - /data/plugin/gpu/launches and /queue: get the run's
 * trace (cut to the request's step window), run the analysis over it,
 * write its struct through the field tables (formats in the plugin's
 * API.md).
 */
#include "plugins/gpu/gpu_hta_routes.h"

#include <string.h>

#include "analysis/trace_launch.h"
#include "analysis/trace_queue.h"
#include "plugins/gpu/gpu_analysis.h"
#include "plugins/gpu/gpu_memory_routes.h"
#include "core/json.h"
#include "tfboard.h"

static const tfb_json_field dist_fields[] = {
    TFB_JSON_FIELD(tfb_launch_dist, min_ns, DOUBLE),
    TFB_JSON_FIELD(tfb_launch_dist, p50_ns, DOUBLE),
    TFB_JSON_FIELD(tfb_launch_dist, p90_ns, DOUBLE),
    TFB_JSON_FIELD(tfb_launch_dist, p99_ns, DOUBLE),
    TFB_JSON_FIELD(tfb_launch_dist, max_ns, DOUBLE),
    TFB_JSON_FIELD(tfb_launch_dist, mean_ns, DOUBLE),
};

static const tfb_json_field launch_fields[] = {
    TFB_JSON_FIELD(tfb_launch_stats, launches, I64),
    TFB_JSON_FIELD(tfb_launch_stats, unmatched, I64),
    TFB_JSON_FIELD_OBJ("cpu", tfb_launch_stats, cpu, dist_fields),
    TFB_JSON_FIELD_OBJ("gpu", tfb_launch_stats, gpu, dist_fields),
    TFB_JSON_FIELD_OBJ("delay", tfb_launch_stats, delay, dist_fields),
    TFB_JSON_FIELD(tfb_launch_stats, runtime_outliers, I64),
    TFB_JSON_FIELD(tfb_launch_stats, delay_outliers, I64),
    TFB_JSON_FIELD(tfb_launch_stats, short_kernels, I64),
};

static const tfb_json_field outlier_fields[] = {
    TFB_JSON_FIELD(tfb_launch_outlier, correlation, I64),
    TFB_JSON_FIELD(tfb_launch_outlier, kind, STR),
    TFB_JSON_FIELD(tfb_launch_outlier, name, STR),
    TFB_JSON_FIELD(tfb_launch_outlier, call, STR),
    TFB_JSON_FIELD(tfb_launch_outlier, device, INT),
    TFB_JSON_FIELD(tfb_launch_outlier, stream, INT),
    TFB_JSON_FIELD(tfb_launch_outlier, start_ns, I64),
    TFB_JSON_FIELD(tfb_launch_outlier, cpu_ns, I64),
    TFB_JSON_FIELD(tfb_launch_outlier, gpu_ns, I64),
    TFB_JSON_FIELD(tfb_launch_outlier, delay_ns, I64),
    TFB_JSON_FIELD(tfb_launch_outlier, runtime_outlier, BOOL),
    TFB_JSON_FIELD(tfb_launch_outlier, delay_outlier, BOOL),
    TFB_JSON_FIELD(tfb_launch_outlier, short_kernel, BOOL),
};

static const tfb_json_field queue_fields[] = {
    TFB_JSON_FIELD(tfb_queue_stream, device, INT),
    TFB_JSON_FIELD(tfb_queue_stream, stream, INT),
    TFB_JSON_FIELD(tfb_queue_stream, ops, I64),
    TFB_JSON_FIELD(tfb_queue_stream, samples, I64),
    TFB_JSON_FIELD(tfb_queue_stream, p50, DOUBLE),
    TFB_JSON_FIELD(tfb_queue_stream, p90, DOUBLE),
    TFB_JSON_FIELD(tfb_queue_stream, p99, DOUBLE),
    TFB_JSON_FIELD(tfb_queue_stream, max, DOUBLE),
    TFB_JSON_FIELD(tfb_queue_stream, mean, DOUBLE),
    TFB_JSON_FIELD(tfb_queue_stream, at_limit_ns, I64),
    TFB_JSON_FIELD(tfb_queue_stream, at_limit_fraction, DOUBLE),
};

/* The cutoffs, as the answer states them (a page or script reads the rule
 * from the answer, not from a copy of the constants). */
static void launch_rule_json(tfb_json *j)
{
    tfb_json_key(j, "runtime_cutoff_ns");
    tfb_json_i64(j, TFB_LAUNCH_RUNTIME_CUTOFF_NS);
    tfb_json_key(j, "delay_cutoff_ns");
    tfb_json_i64(j, TFB_LAUNCH_DELAY_CUTOFF_NS);
    tfb_json_key(j, "outliers_max");
    tfb_json_i64(j, TFB_LAUNCH_OUTLIERS_MAX);
}

int tfb_gpu_route_launches(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    tfb_trace *t;
    tfb_trace_window w;
    int rc = tfb_gpu_route_window(req, resp, &run, &t, NULL, &w);
    if (rc < 0)
        return rc;
    tfb_launch_stats s;
    memset(&s, 0, sizeof s);
    if (t && (rc = tfb_launch_stats_compute(t, &s)) < 0) {
        tfb_trace_release(t);
        return tfb_http_error(resp, 500, "launch statistics failed: %s",
                              tfb_strerror(rc));
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    TFB_JSON_FIELDS(&j, &s, launch_fields);
    launch_rule_json(&j);
    tfb_json_key(&j, "outliers");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < s.n_outliers; i++)
        TFB_JSON_STRUCT(&j, &s.outliers[i], outlier_fields);
    tfb_json_array_end(&j);
    tfb_gpu_window_json(&j, &w);
    tfb_json_object_end(&j);
    tfb_launch_stats_free(&s);
    tfb_trace_release(t);
    return tfb_http_json(resp, &j);
}

int tfb_gpu_route_queue(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_run *run;
    tfb_trace *t;
    tfb_trace_window w;
    int rc = tfb_gpu_route_window(req, resp, &run, &t, NULL, &w);
    if (rc < 0)
        return rc;
    tfb_queue_summary q;
    memset(&q, 0, sizeof q);
    if (t && (rc = tfb_queue_summarize(t, &q)) < 0) {
        tfb_trace_release(t);
        return tfb_http_error(resp, 500, "queue length failed: %s",
                              tfb_strerror(rc));
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_object_begin(&j);
    tfb_json_key(&j, "limit");
    tfb_json_i64(&j, TFB_QUEUE_LIMIT);
    tfb_json_key(&j, "duration_ns");
    tfb_json_i64(&j, q.duration_ns);
    tfb_json_key(&j, "streams");
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < q.n; i++)
        TFB_JSON_STRUCT(&j, &q.streams[i], queue_fields);
    tfb_json_array_end(&j);
    tfb_gpu_window_json(&j, &w);
    tfb_json_object_end(&j);
    tfb_queue_summary_free(&q);
    tfb_trace_release(t);
    return tfb_http_json(resp, &j);
}
