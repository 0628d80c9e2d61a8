/*
 * gpu_memory_routes.c - /data/plugin/gpu/memory and the memory part of the
 * GPU report section: get the run's memory events (loaded in the
 * background, trace/trace_cache.c), analyse the asked window
 * (tfb_gpu_memory_analyze), apply the post-mortem rule (gpu_memory_routes.h),
 * and render the struct (JSON in gpu_memory_json.c, text here). The run's
 * trace comes first (the memory events' context), through the answer to a
 * load in progress that every GPU route gives (tfb_gpu_route_trace).
 */
#include "plugins/gpu/gpu_memory_routes.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/gpu/gpu_analysis.h"
#include "core/report_fmt.h"
#include "tfboard.h"

#define REPORT_TOP_LIVE 5
#define REPORT_LAST_ALLOCS 10

void tfb_gpu_memory_view_free(tfb_gpu_memory_view *v)
{
    if (!v)
        return;
    tfb_gpu_memory_result_free(v->res);
    free(v->post_mortem);
    free(v->last_is_alloc);
    tfb_trace_memory_release(v->hold);
    memset(v, 0, sizeof *v);
}

/* Index of the first event with t_ns > t. */
static size_t upper(const tfb_trace_memory_event *ev, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].t_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int tfb_gpu_memory_view_build(const tfb_trace_memory *m,
                              const tfb_gpu_memory_opts *opts,
                              tfb_gpu_memory_view *v)
{
    if (!m || !opts || !v)
        return TFB_EINVAL;
    memset(v, 0, sizeof *v);
    /* The analysis reads the run's arrays (borrowed from m). */
    tfb_gpu_memory_input in = {
        .events = m->events.v, .n_events = m->events.n,
        .kernels = m->kernels, .n_kernels = m->n_kernels,
        .ranges = m->ranges, .n_ranges = m->n_ranges,
        .steps = m->steps, .n_steps = m->n_steps,
    };
    int rc = tfb_gpu_memory_analyze(&in, opts, &v->res);
    if (rc)
        return rc;
    v->first_ns = m->first_ns;
    v->last_ns = m->last_ns;
    v->files = m->files;
    v->files_skipped = m->files_skipped;
    v->events = m->events.n;
    v->events_skipped = m->events.refused + v->res->events_skipped;
    v->has_trace = m->has_trace;
    v->kernels = m->n_kernels;
    v->ranges = m->n_ranges;
    v->steps = m->n_steps;
    size_t nd = v->res->n_devices;
    v->post_mortem = calloc(nd ? nd : 1, sizeof *v->post_mortem);
    v->last_is_alloc = calloc(nd ? nd : 1, sizeof *v->last_is_alloc);
    if (!v->post_mortem || !v->last_is_alloc) {
        tfb_gpu_memory_view_free(v);
        return TFB_ENOMEM;
    }
    /* The last event of each device in the window: one backward walk from
     * the window's end that stops once every device is seen. */
    size_t end = upper(m->events.v, m->events.n, opts->end_ns);
    size_t left = nd;
    int *seen = calloc(nd ? nd : 1, sizeof *seen);
    if (!seen) {
        tfb_gpu_memory_view_free(v);
        return TFB_ENOMEM;
    }
    for (size_t i = end; i > 0 && left; i--) {
        const tfb_trace_memory_event *e = &m->events.v[i - 1];
        if (e->t_ns < opts->start_ns)
            break;
        for (size_t d = 0; d < nd; d++)
            if (v->res->devices[d].device == e->device) {
                if (!seen[d]) {
                    seen[d] = 1;
                    v->last_is_alloc[d] = e->op == TFB_TRACE_MEMORY_ALLOC;
                    left--;
                }
                break;
            }
    }
    free(seen);
    for (size_t d = 0; d < nd; d++) {
        const tfb_gpu_memory_device *dv = &v->res->devices[d];
        v->post_mortem[d] =
            v->last_is_alloc[d] && dv->peak_bytes > 0 && dv->end_bytes > 0 &&
            (double)dv->end_bytes >=
                TFB_GPU_MEMORY_POST_MORTEM_FRACTION * (double)dv->peak_bytes;
    }
    return 0;
}

int tfb_gpu_route_trace(const tfb_http_req *req, tfb_http_resp *resp,
                        tfb_run **run, tfb_trace **t)
{
    *t = NULL;
    int rc = tfb_http_param_run(req, resp, run);
    if (rc < 0)
        return rc;
    tfb_trace_status st;
    rc = tfb_trace_get(tfb_server_store(req), *run, TFB_GPU_ROUTE_WAIT_MS, t,
                       &st);
    return tfb_gpu_trace_answer(resp, rc, &st, "GPU trace");
}

int tfb_gpu_route_window(const tfb_http_req *req, tfb_http_resp *resp,
                         tfb_run **run, tfb_trace **t, tfb_trace **full,
                         tfb_trace_window *w)
{
    *t = NULL;
    if (full)
        *full = NULL;
    const char *ws;
    tfb_trace_window_mode mode;
    int rc = tfb_http_param_str(req, resp, "window", 0, "all", &ws);
    if (rc < 0)
        return rc;
    if (tfb_trace_window_parse(ws, &mode) < 0) {
        tfb_http_error(resp, 400,
                       "window must be all, steps or steps_but_last");
        return TFB_EINVAL;
    }
    rc = tfb_gpu_route_trace(req, resp, run, t);
    if (rc < 0)
        return rc;
    tfb_trace_host *h = NULL;
    char err[512] = "";
    if (mode != TFB_TRACE_WINDOW_ALL && *t) {
        rc = tfb_trace_host_get(tfb_server_store(req), *run, &h, err,
                                sizeof err);
        if (rc < 0) {
            tfb_trace_release(*t);
            *t = NULL;
            return tfb_http_error(resp, 500, "cannot read the host trace: %s",
                                  err[0] ? err : tfb_strerror(rc));
        }
    }
    tfb_trace_window_find(h, *t, mode, w);
    tfb_trace_host_release(h);
    tfb_trace *cut = NULL;
    if (w->applies && (rc = tfb_trace_window_apply(*t, w, &cut)) < 0) {
        tfb_trace_release(*t);
        *t = NULL;
        return tfb_http_error(resp, 500, "cannot cut the trace: %s",
                              tfb_strerror(rc));
    }
    if (!cut)
        return 0;
    if (full)
        *full = *t;
    else
        tfb_trace_release(*t);
    *t = cut;
    return 0;
}

int tfb_gpu_trace_answer(tfb_http_resp *resp, int rc,
                         const tfb_trace_status *st, const char *what)
{
    if (rc < 0)
        return tfb_http_error(resp, 500, "cannot read the %s: %s", what,
                              tfb_strerror(rc));
    if (st->state == TFB_TRACE_FAILED)
        return tfb_http_error(resp, 500, "cannot read the %s: %s", what,
                              st->error);
    if (st->state == TFB_TRACE_LOADING) {
        char body[96];
        int n = snprintf(body, sizeof body,
                         "{\"loading\":true,\"progress\":%.3f}",
                         st->progress);
        tfb_http_text(resp, 202, "application/json", body, (size_t)n);
        return TFB_ESTATE;
    }
    return 0;
}

/* The run's memory events: 0 with *m (NULL when the run has none) and
 * *w, the step window of mode over the run's trace and host side, or a
 * negative code with the answer set (202 loading, 500 error). */
static int get_memory(const tfb_http_req *req, tfb_http_resp *resp,
                      tfb_trace_window_mode mode, tfb_trace_memory **m,
                      tfb_trace_window *w)
{
    *m = NULL;
    tfb_run *run;
    tfb_trace *t;
    /* The trace first: its kernels and steps are the allocations'
     * context, so the memory load starts once it is there. */
    int rc = tfb_gpu_route_trace(req, resp, &run, &t);
    if (rc < 0)
        return rc;
    tfb_trace_host *h = NULL;
    char err[512] = "";
    if (mode != TFB_TRACE_WINDOW_ALL && t &&
        (rc = tfb_trace_host_get(tfb_server_store(req), run, &h, err,
                                 sizeof err)) < 0) {
        tfb_trace_release(t);
        return tfb_http_error(resp, 500, "cannot read the host trace: %s",
                              err[0] ? err : tfb_strerror(rc));
    }
    tfb_trace_window_find(h, t, mode, w);
    tfb_trace_host_release(h);
    tfb_trace_status st;
    rc = tfb_trace_memory_get(tfb_server_store(req), run, &t,
                              TFB_GPU_ROUTE_WAIT_MS, m, &st);
    return tfb_gpu_trace_answer(resp, rc, &st, "GPU memory events");
}

int tfb_gpu_route_memory(const tfb_http_req *req, tfb_http_resp *resp)
{
    int64_t w0, w1, points, top, last;
    if (tfb_http_param_i64(req, resp, "start_ns", 0, INT64_MIN, INT64_MIN,
                           INT64_MAX, &w0) < 0 ||
        tfb_http_param_i64(req, resp, "end_ns", 0, INT64_MAX, INT64_MIN,
                           INT64_MAX, &w1) < 0 ||
        tfb_http_param_i64(req, resp, "points", 0, 1000, 4, 100000,
                           &points) < 0 ||
        tfb_http_param_i64(req, resp, "top", 0, 20, 1, 10000, &top) < 0 ||
        tfb_http_param_i64(req, resp, "last", 0, 20, 1, 10000, &last) < 0)
        return TFB_EINVAL;
    if (w1 < w0)
        return tfb_http_error(resp, 400, "end_ns is before start_ns");
    const char *ws;
    tfb_trace_window_mode mode;
    if (tfb_http_param_str(req, resp, "window", 0, "all", &ws) < 0)
        return TFB_EINVAL;
    if (tfb_trace_window_parse(ws, &mode) < 0)
        return tfb_http_error(resp, 400,
                              "window must be all, steps or steps_but_last");
    tfb_trace_memory *m;
    tfb_trace_window win;
    int rc = get_memory(req, resp, mode, &m, &win);
    if (rc < 0)
        return rc;
    /* The step window restricts the asked range ([start, end): the
     * analysis' end is inclusive). The events before it still set the
     * level at its start (tfb_gpu_memory_analyze replays them). */
    if (win.applies) {
        if (w0 < win.start_ns)
            w0 = win.start_ns;
        if (w1 > win.end_ns - 1)
            w1 = win.end_ns - 1;
        if (w1 < w0)
            w1 = w0;
    }
    tfb_trace_memory empty = {0};
    tfb_gpu_memory_opts o;
    tfb_gpu_memory_opts_init(&o);
    o.start_ns = w0;
    o.end_ns = w1;
    o.max_points = (size_t)points;
    o.top_live = (size_t)top;
    o.last_allocs = (size_t)last;
    tfb_gpu_memory_view v;
    rc = tfb_gpu_memory_view_build(m ? m : &empty, &o, &v);
    tfb_json j;
    tfb_json_init(&j);
    if (rc == 0) {
        tfb_gpu_memory_view_json(&j, &v);
        tfb_gpu_add_window(&j, &win);
    }
    tfb_gpu_memory_view_free(&v); /* before m: the result borrows its names */
    tfb_trace_memory_release(m);
    if (rc < 0) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 500, "GPU memory analysis failed: %s",
                              tfb_strerror(rc));
    }
    return tfb_http_json(resp, &j);
}

/* ---- report --------------------------------------------------------------- */

/* The report's view (whole trace): *have 0 when the run has no memory
 * events; err set when they could not be read. */
static int report_view(tfb_store *s, tfb_run *r, tfb_gpu_memory_view *v,
                       int *have, char *err, size_t errcap)
{
    *have = 0;
    err[0] = '\0';
    memset(v, 0, sizeof *v);
    tfb_trace *t = NULL;
    char terr[512] = "";
    int rc = tfb_trace_of_run_err(s, r, &t, terr, sizeof terr);
    if (rc == TFB_ENOMEM)
        return rc;
    if (rc < 0) {
        /* The trace section reports the error already. */
        return 0;
    }
    tfb_trace_memory *m = NULL;
    tfb_trace_status st;
    rc = tfb_trace_memory_get(s, r, &t, -1, &m, &st);
    if (rc < 0)
        return rc;
    if (st.state == TFB_TRACE_FAILED) {
        snprintf(err, errcap, "%s", st.error);
        return 0;
    }
    if (!m || m->events.n == 0) {
        tfb_trace_memory_release(m);
        return 0;
    }
    tfb_gpu_memory_opts o;
    tfb_gpu_memory_opts_init(&o);
    o.max_points = 4;
    o.top_live = REPORT_TOP_LIVE;
    o.last_allocs = REPORT_LAST_ALLOCS;
    rc = tfb_gpu_memory_view_build(m, &o, v);
    if (rc == 0) {
        v->hold = m; /* the result borrows m's names */
        *have = 1;
    } else {
        tfb_trace_memory_release(m);
    }
    return rc;
}

/* Bytes and times in the one number format (core/report_fmt.h): the
 * page's memory view writes the same "233 MiB at +155.8 µs". */
static void put_bytes(FILE *f, int64_t b)
{
    char buf[TFB_FMT_MAX];
    fputs(tfb_fmt_bytes(buf, sizeof buf, (double)b), f);
}

/* An offset from the first memory event, with the prefix that shows it. */
static void put_secs(FILE *f, int64_t ns)
{
    char buf[TFB_FMT_MAX];
    fputs(tfb_fmt_si(buf, sizeof buf, (double)ns / 1e9, "s"), f);
}

static void alloc_rows(FILE *f, const tfb_gpu_memory_alloc *a, size_t n,
                       int64_t t0, int md, int with_end)
{
    if (md)
        fprintf(f, "| bytes | at | stream | kernel | NVTX range |%s\n"
                   "| --- | --- | --- | --- | --- |%s\n",
                with_end ? " live at end |" : "", with_end ? " --- |" : "");
    for (size_t i = 0; i < n; i++) {
        fputs(md ? "| " : "      ", f);
        put_bytes(f, a[i].bytes);
        fputs(md ? " | +" : " at +", f);
        put_secs(f, a[i].t_ns - t0);
        if (a[i].stream >= 0)
            fprintf(f, md ? " | %lld | " : ", stream %lld",
                    (long long)a[i].stream);
        else
            fputs(md ? " | - | " : "", f);
        if (a[i].kernel) {
            fputs(md ? "" : ", kernel ", f);
            tfb_report_put_str(f, a[i].kernel, md);
        } else if (md) {
            fputs("-", f);
        }
        if (a[i].range) {
            fputs(md ? " | " : ", in ", f);
            tfb_report_put_str(f, a[i].range, md);
        } else if (md) {
            fputs(" | -", f);
        }
        if (with_end)
            fputs(md ? (a[i].live_at_end ? " | yes" : " | no")
                     : (a[i].live_at_end ? ", still live" : ", freed"),
                  f);
        fputs(md ? " |\n" : "\n", f);
    }
}

int tfb_gpu_memory_report_text(FILE *f, tfb_store *s, tfb_run *r, int md)
{
    tfb_gpu_memory_view v;
    int have;
    char err[512];
    int rc = report_view(s, r, &v, &have, err, sizeof err);
    if (rc < 0)
        return rc;
    if (err[0]) {
        fputs(md ? "\n**Memory events error:** " : "  gpu memory: error: ", f);
        tfb_report_put_str(f, err, md);
        fputs("\n", f);
    }
    if (!have)
        return 0;
    fputs(md ? "\nMemory (peak bytes in use per device; times from the "
               "first memory event):\n\n"
             : "  gpu memory (times from the first memory event):\n",
          f);
    for (size_t d = 0; d < v.res->n_devices; d++) {
        const tfb_gpu_memory_device *dv = &v.res->devices[d];
        fprintf(f, md ? "- GPU %d: peak " : "    GPU %d: peak ",
                (int)dv->device);
        put_bytes(f, dv->peak_bytes);
        fputs(" at +", f);
        put_secs(f, dv->peak_t_ns - v.first_ns);
        fprintf(f, ", %zu allocations live; at the end ",
                dv->live_at_peak_total);
        put_bytes(f, dv->end_bytes);
        fprintf(f, " in %zu allocations\n", dv->live_at_end);
        if (dv->n_live_at_peak) {
            fputs(md ? "\nLargest allocations live at the peak:\n\n"
                     : "    largest allocations live at the peak:\n",
                  f);
            alloc_rows(f, dv->live_at_peak, dv->n_live_at_peak, v.first_ns,
                       md, 0);
            if (md)
                fputs("\n", f);
        }
        if (v.post_mortem[d] && dv->n_last_allocs) {
            fputs(md ? "**OOM post-mortem** (the trace ends with memory "
                       "high, still allocating): the last allocations, "
                       "most recent first:\n\n"
                     : "    OOM post-mortem (the trace ends with memory "
                       "high, still allocating): last allocations, most "
                       "recent first:\n",
                  f);
            alloc_rows(f, dv->last_allocs, dv->n_last_allocs, v.first_ns,
                       md, 1);
            if (md)
                fputs("\n", f);
        }
    }
    tfb_gpu_memory_view_free(&v);
    return 0;
}

int tfb_gpu_memory_report_json(tfb_json *j, tfb_store *s, tfb_run *r)
{
    tfb_gpu_memory_view v;
    int have;
    char err[512];
    int rc = report_view(s, r, &v, &have, err, sizeof err);
    if (rc < 0)
        return rc;
    tfb_json_key(j, "gpu_memory");
    if (err[0]) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "error");
        tfb_json_str(j, err);
        tfb_json_object_end(j);
        return 0;
    }
    if (!have) {
        tfb_json_null(j);
        return 0;
    }
    tfb_json_object_begin(j);
    tfb_json_key(j, "first_ns");
    tfb_json_i64(j, v.first_ns);
    tfb_json_key(j, "devices");
    tfb_json_array_begin(j);
    for (size_t d = 0; d < v.res->n_devices; d++) {
        const tfb_gpu_memory_device *dv = &v.res->devices[d];
        tfb_json_object_begin(j);
        tfb_json_key(j, "device");
        tfb_json_i64(j, dv->device);
        tfb_json_key(j, "peak_bytes");
        tfb_json_i64(j, dv->peak_bytes);
        tfb_json_key(j, "peak_t_ns");
        tfb_json_i64(j, dv->peak_t_ns);
        tfb_json_key(j, "live_at_peak_total");
        tfb_json_u64(j, dv->live_at_peak_total);
        tfb_json_key(j, "end_bytes");
        tfb_json_i64(j, dv->end_bytes);
        tfb_gpu_memory_allocs_json(j, "live_at_peak", dv->live_at_peak,
                                   dv->n_live_at_peak, 0);
        tfb_json_key(j, "post_mortem");
        tfb_json_bool(j, v.post_mortem[d]);
        if (v.post_mortem[d])
            tfb_gpu_memory_allocs_json(j, "last_allocs", dv->last_allocs,
                                       dv->n_last_allocs, 1);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
    tfb_gpu_memory_view_free(&v);
    return 0;
}
