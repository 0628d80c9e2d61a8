/*
 * gpu_routes.c - the HTTP layer of the GPU plugin: parse parameters, get
 * the run's (cached) trace, call the analysis, send its JSON.
 */
#include "gpu_routes.h"

#include <limits.h>
#include <string.h>

#include "gpu_analysis.h"

/* The run's trace; *t stays NULL (and 0 is returned) for a run without
 * one. A negative return means the answer is set. */
static int get_trace(const tfb_http_req *req, tfb_http_resp *resp,
                     tfb_gpu_trace **t)
{
    tfb_run *run;
    *t = NULL;
    int rc = tfb_http_param_run(req, resp, &run);
    if (rc < 0)
        return rc;
    rc = tfb_gpu_trace_of_run(tfb_server_store(req), run, t);
    if (rc < 0)
        return tfb_http_error(resp, 500, "cannot read the GPU trace: %s",
                              tfb_strerror(rc));
    return 0;
}

static int send(tfb_http_resp *resp, tfb_json *j, int rc)
{
    if (rc < 0) {
        tfb_json_free(j);
        return tfb_http_error(resp, 500, "GPU analysis failed: %s",
                              tfb_strerror(rc));
    }
    return tfb_http_json(resp, j);
}

int tfb_route_gpu_summary(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_gpu_trace *t;
    int rc = get_trace(req, resp, &t);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    if (!t) {
        const char *e = "{\"devices\":[],\"files\":0}";
        tfb_json_raw(&j, e, strlen(e));
        return tfb_http_json(resp, &j);
    }
    rc = tfb_gpu_summary_json(t, &j);
    tfb_gpu_trace_release(t);
    return send(resp, &j, rc);
}

int tfb_route_gpu_kernels(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t limit;
    if (tfb_http_param_i64(req, resp, "limit", 0, 100, 0, INT32_MAX, &limit) < 0)
        return TFB_EINVAL;
    tfb_gpu_trace *t;
    int rc = get_trace(req, resp, &t);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    if (!t) {
        const char *e = "{\"kernels\":[],\"total\":0,\"total_ns\":0}";
        tfb_json_raw(&j, e, strlen(e));
        return tfb_http_json(resp, &j);
    }
    rc = tfb_gpu_kernels_json(t, (size_t)limit, &j);
    tfb_gpu_trace_release(t);
    return send(resp, &j, rc);
}

int tfb_route_gpu_utilization(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t buckets, device;
    if (tfb_http_param_i64(req, resp, "buckets", 0, 200, 1, 100000, &buckets) < 0 ||
        tfb_http_param_i64(req, resp, "device", 0, -1, -1, INT32_MAX, &device) < 0)
        return TFB_EINVAL;
    tfb_gpu_trace *t;
    int rc = get_trace(req, resp, &t);
    if (rc < 0)
        return rc;
    if (!t)
        return tfb_http_error(resp, 404, "run has no GPU trace");
    if (device < 0) {
        /* The first device that ran a kernel. */
        for (size_t i = 0; i < t->nspans && device < 0; i++)
            if (t->spans[i].kind == TFB_GPU_KERNEL)
                device = t->spans[i].device;
    }
    tfb_json j;
    tfb_json_init(&j);
    rc = device < 0 ? TFB_ENOENT
                    : tfb_gpu_utilization_json(t, (int32_t)device,
                                               (size_t)buckets, &j);
    tfb_gpu_trace_release(t);
    if (rc == TFB_ENOENT) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 404, "no kernels on device %lld",
                              (long long)device);
    }
    return send(resp, &j, rc);
}

int tfb_route_gpu_timeline(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t w0, w1, max;
    if (tfb_http_param_i64(req, resp, "start_ns", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &w0) < 0 ||
        tfb_http_param_i64(req, resp, "end_ns", 0, INT64_MAX, INT64_MIN,
                           INT64_MAX, &w1) < 0 ||
        tfb_http_param_i64(req, resp, "max", 0, 2000, 1, 100000, &max) < 0)
        return TFB_EINVAL;
    if (w1 < w0)
        return tfb_http_error(resp, 400, "end_ns is before start_ns");
    tfb_gpu_trace *t;
    int rc = get_trace(req, resp, &t);
    if (rc < 0)
        return rc;
    tfb_gpu_trace empty = {0};
    tfb_json j;
    tfb_json_init(&j);
    rc = tfb_gpu_timeline_json(t ? t : &empty, w0, w1, (size_t)max, &j);
    tfb_gpu_trace_release(t);
    return send(resp, &j, rc);
}

int tfb_route_gpu_trace_json(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_gpu_trace *t;
    int rc = get_trace(req, resp, &t);
    if (rc < 0)
        return rc;
    if (!t)
        return tfb_http_error(resp, 404, "run has no GPU trace");
    tfb_json j;
    tfb_json_init(&j);
    rc = tfb_gpu_chrome_trace_json(t, &j);
    tfb_gpu_trace_release(t);
    return send(resp, &j, rc);
}
