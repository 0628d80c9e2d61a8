/*
 * gpu.c - the GPU dashboard: parse parameters, get the run's (cached)
 * trace, call the analyses, send their JSON (/data/plugin/gpu/...); the
 * report section from the same structs; the plugin descriptor.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/gpu/gpu_analysis.h"
#include "plugins/gpu/gpu_memory_routes.h"
#include "plugins/gpu/gpu_hta_routes.h"
#include "core/plugin.h"
#include "core/report_fmt.h"

#define REPORT_TOP_KERNELS 10

/* As tfb_gpu_route_trace; a run without a trace answers the JSON text
 * `none` (a negative code then), unless `none` is NULL. */
static int get_trace_full(const tfb_http_req *req, tfb_http_resp *resp,
                          const char *none, tfb_trace **t, tfb_trace **full,
                          tfb_trace_window *w)
{
    tfb_run *run;
    int rc = tfb_gpu_route_window(req, resp, &run, t, full, w);
    if (rc < 0 || *t || !none)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_raw(&j, none, strlen(none));
    tfb_gpu_add_window(&j, w);
    tfb_http_json(resp, &j);
    return TFB_ENOENT;
}

/* As get_trace_full, without the whole trace: *t is cut to the
 * request's window (tfb_gpu_route_window). */
static int get_trace(const tfb_http_req *req, tfb_http_resp *resp,
                     const char *none, tfb_trace **t, tfb_trace_window *w)
{
    return get_trace_full(req, resp, none, t, NULL, w);
}

/* Sends what the analysis wrote (500 when it failed: rc < 0), and
 * releases the route's trace. */
static int send(tfb_http_resp *resp, tfb_trace *t, tfb_json *j, int rc,
                const tfb_trace_window *w)
{
    tfb_trace_release(t);
    if (rc >= 0 && w)
        tfb_gpu_add_window(j, w);
    if (rc < 0) {
        tfb_json_free(j);
        return tfb_http_error(resp, 500, "GPU analysis failed: %s",
                              tfb_strerror(rc));
    }
    return tfb_http_json(resp, j);
}

static int route_summary(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_trace *t, *full;
    tfb_trace_window w;
    int rc = get_trace_full(req, resp,
                            "{\"devices\":[],\"files\":0,\"notes\":[],"
                            "\"distributed\":null}",
                            &t, &full, &w);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_trace_summary sum;
    rc = tfb_trace_summarize(t, &sum);
    /* notes and distributedInfo are the whole trace's */
    if (rc == 0)
        tfb_gpu_summary_json(&j, &sum, full ? full : t);
    tfb_trace_summary_free(&sum);
    tfb_trace_release(full);
    return send(resp, t, &j, rc, &w);
}

static int route_kernels(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t limit;
    if (tfb_http_param_i64(req, resp, "limit", 0, 100, 0, INT32_MAX, &limit) < 0)
        return TFB_EINVAL;
    tfb_trace *t;
    tfb_trace_window w;
    int rc = get_trace(req, resp,
                       "{\"kernels\":[],\"total\":0,\"total_ns\":0}", &t,
                       &w);
    if (rc < 0)
        return rc;
    tfb_json j;
    tfb_json_init(&j);
    tfb_trace_kernels k;
    rc = tfb_trace_kernel_stats(t, (size_t)limit, &k);
    if (rc == 0)
        tfb_gpu_kernels_json(&j, &k);
    tfb_trace_kernels_free(&k);
    return send(resp, t, &j, rc, &w);
}

static int route_utilization(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t buckets, device;
    if (tfb_http_param_i64(req, resp, "buckets", 0, 200, 1, 100000, &buckets) < 0 ||
        tfb_http_param_i64(req, resp, "device", 0, -1, -1, INT32_MAX, &device) < 0)
        return TFB_EINVAL;
    tfb_trace *t;
    tfb_trace_window w;
    int rc = get_trace(req, resp, NULL, &t, &w);
    if (rc < 0)
        return rc;
    if (!t)
        return tfb_http_error(resp, 404, "run has no GPU trace");
    if (device < 0 && t->agg) {
        /* The device that ran the first kernel. */
        int64_t first = INT64_MAX;
        for (size_t i = 0; i < t->ndevices; i++)
            if (t->agg->dev[i].has_events &&
                t->agg->dev[i].start_ns < first) {
                first = t->agg->dev[i].start_ns;
                device = t->agg->dev[i].id;
            }
    }
    tfb_json j;
    tfb_json_init(&j);
    tfb_trace_utilization_buckets u = {0};
    rc = device < 0
             ? TFB_ENOENT
             : tfb_trace_utilization(t, (int32_t)device, (size_t)buckets, &u);
    if (rc == 0)
        tfb_gpu_utilization_json(&j, &u);
    tfb_trace_utilization_free(&u);
    if (rc == TFB_ENOENT) {
        tfb_trace_release(t);
        tfb_json_free(&j);
        return tfb_http_error(resp, 404, "no kernels on device %lld",
                              (long long)device);
    }
    return send(resp, t, &j, rc, &w);
}

static int route_timeline(const tfb_http_req *req, tfb_http_resp *resp)
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
    tfb_trace *t;
    tfb_trace_window w;
    int rc = get_trace(req, resp, NULL, &t, &w);
    if (rc < 0)
        return rc;
    tfb_trace empty = {0};
    tfb_json j;
    tfb_json_init(&j);
    rc = tfb_gpu_timeline_json(t ? t : &empty, w0, w1, (size_t)max, &j);
    return send(resp, t, &j, rc, &w);
}

/* The host side of the run's traces (trace/trace.h): CPU threads'
 * ops and runtime calls, NVTX ranges and marks, top ops; an empty answer
 * for a run without host events. It waits for the run's GPU trace as the
 * other routes do (202 while it loads): runtime calls are linked to its
 * kernels by correlation. */
static int route_host(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t w0, w1, max;
    tfb_run *run;
    if (tfb_http_param_i64(req, resp, "start_ns", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &w0) < 0 ||
        tfb_http_param_i64(req, resp, "end_ns", 0, INT64_MAX, INT64_MIN,
                           INT64_MAX, &w1) < 0 ||
        tfb_http_param_i64(req, resp, "max", 0, 4000, 1, 100000, &max) < 0 ||
        tfb_http_param_run(req, resp, &run) < 0)
        return TFB_EINVAL;
    if (w1 < w0)
        return tfb_http_error(resp, 400, "end_ns is before start_ns");
    tfb_trace *t, *full;
    tfb_trace_window w;
    int rc = get_trace_full(req, resp, NULL, &t, &full, &w);
    if (rc < 0)
        return rc;
    /* Calls link to kernels through the whole trace's calls; the host
     * spans shown are those of the window's time range. */
    if (full) {
        tfb_trace_release(t);
        t = full;
    }
    if (w.applies) {
        if (w0 < w.start_ns)
            w0 = w.start_ns;
        if (w1 > w.end_ns)
            w1 = w.end_ns;
        if (w1 < w0)
            w1 = w0;
    }
    tfb_trace_host *h = NULL;
    char err[512];
    rc = tfb_trace_host_get(tfb_server_store(req), run, &h, err, sizeof err);
    if (rc < 0) {
        tfb_trace_release(t);
        return tfb_http_error(resp, 500, "cannot read the host trace: %s",
                              err[0] ? err : tfb_strerror(rc));
    }
    tfb_json j;
    tfb_json_init(&j);
    rc = tfb_gpu_host_json(h, t, w0, w1, (size_t)max, &w, &j);
    tfb_trace_host_release(h);
    return send(resp, t, &j, rc, &w);
}

static int route_trace_json(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t w0, w1, max;
    if (tfb_http_param_i64(req, resp, "start_ns", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &w0) < 0 ||
        tfb_http_param_i64(req, resp, "end_ns", 0, INT64_MAX, INT64_MIN,
                           INT64_MAX, &w1) < 0 ||
        tfb_http_param_i64(req, resp, "max_events", 0,
                           TFB_GPU_TRACE_JSON_MAX_EVENTS, 1,
                           TFB_GPU_TRACE_JSON_MAX_EVENTS_LIMIT, &max) < 0)
        return TFB_EINVAL;
    if (w1 < w0)
        return tfb_http_error(resp, 400, "end_ns is before start_ns");
    tfb_trace *t;
    tfb_trace_window w;
    int rc = get_trace(req, resp, NULL, &t, &w);
    if (rc < 0)
        return rc;
    if (!t)
        return tfb_http_error(resp, 404, "run has no GPU trace");
    tfb_json j;
    tfb_json_init(&j);
    rc = tfb_gpu_chrome_trace_json(t, w0, w1, (size_t)max, &j);
    /* Chrome's format: the window is not added to it */
    return send(resp, t, &j, rc, NULL);
}

/* ---- report --------------------------------------------------------------- */

static void put_ms(FILE *f, int64_t ns)
{
    tfb_report_put_num(f, (double)ns / 1e6);
}

/* "Tesla V100-SXM2-32GB, 80 SMs, 31.7 GiB, compute 7.0": what the trace
 * says of a device (parts it does not say are left out). */
static void device_props_text(FILE *f, const tfb_trace_device_summary *d)
{
    if (d->sm_count > 0)
        fprintf(f, ", %d SMs", (int)d->sm_count);
    if (d->total_mem >= 0)
        fprintf(f, ", %.1f GiB", (double)d->total_mem / (1024.0 * 1024 * 1024));
    if (d->cc_major >= 0 && d->cc_minor >= 0)
        fprintf(f, ", compute %d.%d", (int)d->cc_major, (int)d->cc_minor);
}

/* "window: steps_but_last (2 ProfilerSteps, 1.5 ms from ...)" */
static void window_text(FILE *f, const tfb_trace_window *w, int md)
{
    fputs(md ? "Window: " : "    window: ", f);
    fputs(w->mode, f);
    if (w->steps >= 0)
        fprintf(f, " (%lld ProfilerStep%s, ", (long long)w->steps,
                w->steps == 1 ? "" : "s");
    else
        fputs(" (the whole trace, ", f);
    put_ms(f, w->duration_ns);
    fprintf(f, " ms from %lld to %lld ns)", (long long)w->start_ns,
            (long long)w->end_ns);
    if (w->note) {
        fputs("; ", f);
        fputs(w->note, f);
    }
    fputs(md ? "\n\n" : "\n", f);
}

static void devices_text(FILE *f, const tfb_trace_summary *s,
                         const tfb_trace *t, const tfb_trace_window *w,
                         int md)
{
    if (md)
        fputs("| device | name | kernels | busy ms | span ms | utilization | "
              "host wait ms | kernel wait ms | other idle ms |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n", f);
    else
        fputs("  gpu:\n", f);
    if (!md)
        window_text(f, w, md);
    for (size_t i = 0; i < s->n_devices; i++) {
        const tfb_trace_device_summary *d = &s->devices[i];
        char fallback[32];
        snprintf(fallback, sizeof fallback, "GPU %d", (int)d->id);
        const char *name = d->name ? d->name : fallback;
        if (md) {
            fprintf(f, "| %d | ", (int)d->id);
            tfb_report_put_str(f, name, 1);
            device_props_text(f, d);
            fprintf(f, " | %lld | ", (long long)d->kernels);
        } else {
            fprintf(f, "    device %d (", (int)d->id);
            tfb_report_put_str(f, name, 0);
            device_props_text(f, d);
            fprintf(f, "): %lld kernels, busy ", (long long)d->kernels);
        }
        put_ms(f, d->busy_ns);
        fputs(md ? " | " : " ms of ", f);
        put_ms(f, d->span_ns);
        fprintf(f, md ? " | %.1f%% | " : " ms (utilization %.1f%%); idle: host "
                                         "wait ",
                100.0 * d->busy_fraction);
        put_ms(f, d->idle_host_wait_ns);
        fputs(md ? " | " : " ms, kernel wait ", f);
        put_ms(f, d->idle_kernel_wait_ns);
        fputs(md ? " | " : " ms, other ", f);
        put_ms(f, d->idle_other_ns);
        fputs(md ? " |\n" : " ms\n", f);
    }
    if (md && s->n_devices)
        fputs("\nBusy: kernels, copies and memsets (their union); idle "
              "parts: HTA's per-stream rule, summed over the device's "
              "streams.\n", f);
    if (t && t->dist.present) {
        fputs(md ? "\nDistributed: " : "    distributed: ", f);
        if (t->dist.rank >= 0)
            fprintf(f, "rank %lld", (long long)t->dist.rank);
        if (t->dist.world_size >= 0)
            fprintf(f, " of world size %lld", (long long)t->dist.world_size);
        const char *be = tfb_trace_str(t, t->dist.backend, NULL);
        if (be) {
            fputs(", backend ", f);
            tfb_report_put_str(f, be, md);
        }
        fprintf(f, ", %zu process group%s\n", t->npgs,
                t->npgs == 1 ? "" : "s");
    }
    size_t nn = tfb_trace_note_count(t);
    for (size_t i = 0; i < nn; i++) {
        char text[512];
        tfb_trace_note_text(t, i, text, sizeof text);
        fputs(md ? "\n**Trace note:** " : "    trace note: ", f);
        tfb_report_put_str(f, text, md);
        fputs("\n", f);
    }
}

static void kernels_text(FILE *f, const tfb_trace_kernels *k, int md)
{
    if (k->n == 0)
        return;
    /* times in the one number format (core/report_fmt.h): "353.9 µs" */
    if (md)
        fputs("\nTop kernels by total time:\n\n| kernel | count | total | "
              "mean | share |\n| --- | --- | --- | --- | --- |\n", f);
    else
        fprintf(f, "    top kernels by total time:\n    %-40s %8s %12s %10s "
                   "%7s\n", "kernel", "count", "total", "mean", "share");
    for (size_t i = 0; i < k->n; i++) {
        const tfb_trace_kernel_stat *s = &k->v[i];
        char total[TFB_FMT_MAX], mean[TFB_FMT_MAX];
        tfb_fmt_si(total, sizeof total, (double)s->total_ns / 1e9, "s");
        tfb_fmt_si(mean, sizeof mean, s->mean_ns / 1e9, "s");
        fputs(md ? "| " : "    ", f);
        if (md) {
            tfb_report_put_str(f, s->name, 1);
            fprintf(f, " | %lld | %s | %s | %.1f %% |\n", (long long)s->count,
                    total, mean, 100.0 * s->share);
            continue;
        }
        tfb_report_put_cell(f, s->name, 40);
        fprintf(f, " %8lld ", (long long)s->count);
        tfb_report_put_right(f, total, 12);
        fputc(' ', f);
        tfb_report_put_right(f, mean, 10);
        fprintf(f, " %5.1f %%\n", 100.0 * s->share);
    }
}

/* `--window all|steps|steps_but_last` (report): the step window of the
 * report's GPU section (trace/trace.h). serve and watch accept it and do
 * not use it (the routes take `window=` per request). */
static const char *opt_window = NULL;
static const tfb_option options[] = {
    {.name = "window", .arg = "MODE", .type = TFB_OPT_STRING,
     .help = "report: the GPU section's step window: all (default),\n"
             "steps (inside the ProfilerStep annotations), or\n"
             "steps_but_last (without the last step, as HTA)",
     .dest = &opt_window},
};

static int check_options(char *err, size_t err_len)
{
    tfb_trace_window_mode m;
    if (opt_window && tfb_trace_window_parse(opt_window, &m) < 0) {
        snprintf(err, err_len,
                 "--window must be all, steps or steps_but_last, not '%s'",
                 opt_window);
        return TFB_EINVAL;
    }
    return 0;
}

/* The run's summary and top kernels over the --window; *t NULL when it
 * has no trace or it could not be read (err then says why: the section
 * prints it, and the report goes on). *full: the whole trace when *t is a
 * cut (its notes and distributedInfo), else NULL. */
static int analyze(tfb_store *s, tfb_run *r, tfb_trace **t, tfb_trace **full,
                   tfb_trace_window *w, tfb_trace_summary *sum,
                   tfb_trace_kernels *k, char *err, size_t errcap)
{
    memset(sum, 0, sizeof *sum);
    memset(k, 0, sizeof *k);
    err[0] = '\0';
    *t = NULL;
    *full = NULL;
    tfb_trace_window_mode mode = TFB_TRACE_WINDOW_ALL;
    if (opt_window)
        tfb_trace_window_parse(opt_window, &mode);
    tfb_trace_window_find(NULL, NULL, TFB_TRACE_WINDOW_ALL, w);
    int rc = tfb_trace_of_run_err(s, r, t, err, errcap);
    if (rc == TFB_ENOMEM)
        return rc;
    if (rc < 0 || !*t) {
        if (rc < 0 && !err[0])
            snprintf(err, errcap, "%s", tfb_strerror(rc));
        *t = NULL;
        return 0;
    }
    tfb_trace_host *h = NULL;
    if (mode != TFB_TRACE_WINDOW_ALL &&
        (rc = tfb_trace_host_get(s, r, &h, err, errcap)) < 0) {
        if (!err[0])
            snprintf(err, errcap, "%s", tfb_strerror(rc));
        tfb_trace_release(*t);
        *t = NULL;
        return rc == TFB_ENOMEM ? rc : 0;
    }
    tfb_trace_window_find(h, *t, mode, w);
    tfb_trace_host_release(h);
    if (w->applies) {
        tfb_trace *cut;
        rc = tfb_trace_window_apply(*t, w, &cut);
        if (rc < 0)
            return rc;
        *full = *t;
        *t = cut;
    }
    rc = tfb_trace_summarize(*t, sum);
    if (rc == 0)
        rc = tfb_trace_kernel_stats(*t, REPORT_TOP_KERNELS, k);
    return rc;
}


static void done(tfb_trace *t, tfb_trace *full, tfb_trace_summary *sum,
                 tfb_trace_kernels *k)
{
    tfb_trace_summary_free(sum);
    tfb_trace_kernels_free(k);
    tfb_trace_release(t);
    tfb_trace_release(full);
}

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int md)
{
    (void)o;
    tfb_trace *t, *full;
    tfb_trace_window w;
    tfb_trace_summary sum;
    tfb_trace_kernels k;
    char err[512];
    int rc = analyze(s, r, &t, &full, &w, &sum, &k, err, sizeof err);
    if (md)
        fputs("\n### GPU\n\n", f);
    if (rc == 0 && !t && err[0]) {
        fputs(md ? "**Trace error:** " : "  gpu: error: ", f);
        tfb_report_put_str(f, err, md);
        fputs("\n", f);
    } else if (rc == 0 && !t) {
        fputs(md ? "Not traced.\n" : "  gpu: not traced\n", f);
    }
    if (rc == 0 && t) {
        if (md)
            window_text(f, &w, md);
        devices_text(f, &sum, full ? full : t, &w, md);
        kernels_text(f, &k, md);
    }
    done(t, full, &sum, &k);
    if (rc == 0)
        rc = tfb_gpu_memory_report_text(f, s, r, md);
    return rc;
}

/* "gpu": {"devices": [...summary...], "kernels": [top kernels], "window",
 * "kernel_names"}, {"error": "..."} when the trace could not be read, or
 * null when the run has no trace. */
static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    (void)o;
    tfb_trace *t, *full;
    tfb_trace_window w;
    tfb_trace_summary sum;
    tfb_trace_kernels k;
    char err[512];
    int rc = analyze(s, r, &t, &full, &w, &sum, &k, err, sizeof err);
    tfb_json_key(j, "gpu");
    if (rc == 0 && t) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "devices");
        tfb_gpu_devices_json(j, &sum);
        tfb_json_key(j, "kernels");
        tfb_gpu_kernel_list_json(j, &k);
        tfb_json_key(j, "kernel_names");
        tfb_json_u64(j, k.distinct);
        tfb_gpu_trace_meta_json(j, full ? full : t);
        tfb_gpu_window_json(j, &w);
        tfb_json_object_end(j);
    } else if (rc == 0 && err[0]) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "error");
        tfb_json_str(j, err);
        tfb_json_object_end(j);
    } else {
        tfb_json_null(j);
    }
    done(t, full, &sum, &k);
    if (rc == 0)
        rc = tfb_gpu_memory_report_json(j, s, r);
    return rc;
}

/* NVML metrics (tfb_gpu_metrics_start) of devices 0..NVML_DEVICES-1: a
 * few hash lookups, no walk over the run's tags. */
#define NVML_DEVICES 64

static int has_nvml(tfb_run *r)
{
    static const char *const metric[] = {TFB_TAG_GPU_SM_UTIL,
                                         TFB_TAG_GPU_MEM_USED};
    /* A run with fewer tags than the names asked for below: no tag under
     * the prefix, no NVML metric. The listing asks every run (128
     * formatted lookups a run were 30 us: 3 s at 100,000 runs, issue
     * 28). */
    tfb_series **ser;
    size_t n;
    if (tfb_run_series(r, TFB_SERIES_SCALAR, &ser, &n) == 0) {
        size_t plen = strlen(TFB_TAG_GPU_PREFIX);
        int few = n <= 2 * NVML_DEVICES, under = 0;
        for (size_t i = 0; few && i < n && !under; i++)
            under = strncmp(tfb_series_tag(ser[i]), TFB_TAG_GPU_PREFIX,
                            plen) == 0;
        free(ser);
        if (few && !under)
            return 0;
    }
    char tag[64];
    for (int d = 0; d < NVML_DEVICES; d++)
        for (size_t k = 0; k < 2; k++) {
            snprintf(tag, sizeof tag, TFB_TAG_GPU_PREFIX "%d/%s", d,
                     metric[k]);
            if (tfb_run_find_series(r, TFB_SERIES_SCALAR, tag))
                return 1;
        }
    return 0;
}

/* A trace file, or the always-on NVML metrics. */
static int has_gpu_data(tfb_store *s, tfb_run *r)
{
    (void)s;
    char **files;
    size_t n;
    if (tfb_run_trace_files(r, &files, &n) < 0)
        return has_nvml(r);
    tfb_strv_free(files, n);
    return n > 0 || has_nvml(r);
}

static const tfb_plugin_route routes[] = {
    {"summary", route_summary},
    {"kernels", route_kernels},
    {"utilization", route_utilization},
    {"timeline", route_timeline},
    {"host", route_host},
    {"trace.json", route_trace_json},
    {"memory", tfb_gpu_route_memory},
    {"launches", tfb_gpu_route_launches},
    {"queue", tfb_gpu_route_queue},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_gpu_assets[];

const tfb_plugin tfb_plugin_gpu = {
    TFB_PLUGIN_ABI,
    .name = "gpu",
    .title = "GPU",
    .module = "js/pages/gpu.js",
    .assets = tfb_gpu_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_gpu_data,
    .report_text = report_text,
    .report_json = report_json,
    .options = options,
    .n_options = sizeof options / sizeof options[0],
    .check_options = check_options,
};
