/*
 * gpu_memory_routes.h - the GPU memory view: route /data/plugin/gpu/memory
 * and the memory part of the GPU report section, both rendering one typed
 * struct (tfb_gpu_memory_view) built from the run's memory events
 * (trace/trace.h, the trace layer) by the analysis (gpu_memory.h); and
 * the run's trace with the answer to a load in progress, which every GPU
 * route (gpu.c) gives.
 *
 * OOM post-mortem rule: a device's post-mortem is shown when the trace
 * ends with its memory high - bytes in use at the window's end are at
 * least 90 % of the window's peak (and not 0), and the device's last
 * memory event in the window is an allocation, i.e. memory was still
 * growing when the trace stopped, as it is when a process dies of an
 * out-of-memory error (a run that ends normally frees or stays flat
 * after its last step).
 *
 * Thread-safety: all functions are thread-safe.
 */
#ifndef TFB_SERVER_GPU_MEMORY_ROUTES_H
#define TFB_SERVER_GPU_MEMORY_ROUTES_H

#include <stdio.h>

#include "plugins/gpu/gpu_memory.h"
#include "trace/trace.h"
#include "core/http_api.h"
#include "core/json.h"
#include "core/plugin.h"

#define TFB_GPU_MEMORY_POST_MORTEM_FRACTION 0.9

typedef struct tfb_gpu_memory_view {
    tfb_gpu_memory_result *res;
    /* Per device of res (same order): the post-mortem rule holds; the
     * last event in the window was an allocation. */
    int *post_mortem;
    int *last_is_alloc;
    /* The events' extent (the run's, not the window's), files read, events
     * in all, whether kernels/steps came from a trace. */
    int64_t first_ns, last_ns;
    size_t files, files_skipped, events;
    /* Events left out: refused by the loaders (a device id outside
     * int32) or skipped by the analysis (an impossible size). */
    uint64_t events_skipped;
    int has_trace;
    size_t kernels, ranges, steps; /* context kept (see trace/trace.h) */
    /* The data whose names the result borrows, when the view holds a
     * reference to it (released by tfb_gpu_memory_view_free); may be NULL. */
    tfb_trace_memory *hold;
} tfb_gpu_memory_view;

/* Analyses m over the window of opts (v->hold stays NULL: m must outlive
 * v unless the caller sets it). 0, TFB_EINVAL, TFB_ENOMEM. */
int tfb_gpu_memory_view_build(const tfb_trace_memory *m,
                              const tfb_gpu_memory_opts *opts,
                              tfb_gpu_memory_view *v);
void tfb_gpu_memory_view_free(tfb_gpu_memory_view *v);

/* JSON (gpu_memory_json.c): the route's body; see server/API.md. */
void tfb_gpu_memory_view_json(tfb_json *j, const tfb_gpu_memory_view *v);
/* "key": [a[0..n)], the allocation rows of the route and of the report
 * (each with "live_at_end" when with_end). */
void tfb_gpu_memory_allocs_json(tfb_json *j, const char *key,
                                const tfb_gpu_memory_alloc *a, size_t n,
                                int with_end);

/* The GPU routes (gpu.c, and the memory route) wait this long for a
 * run's load before they answer 202 "loading" (the page asks again). */
#define TFB_GPU_ROUTE_WAIT_MS 1000
/* The request's run and its trace (*t: release it; NULL when the run has
 * none), 0; or a negative code with the answer set (as below; 400/404 for
 * a bad `run`). */
int tfb_gpu_route_trace(const tfb_http_req *req, tfb_http_resp *resp,
                        tfb_run **run, tfb_trace **t);
/* As tfb_gpu_route_trace, with the request's step window (`window=all|
 * steps|steps_but_last`, default all; another value: 400): *w the window
 * in use, *t the trace cut down to it (tfb_trace_window_apply) when it
 * cuts anything, else the run's trace. full (may be NULL): the run's
 * whole trace when *t is a cut (release it too), else NULL. The
 * host side is read only for a mode other than all. */
int tfb_gpu_route_window(const tfb_http_req *req, tfb_http_resp *resp,
                         tfb_run **run, tfb_trace **t, tfb_trace **full,
                         tfb_trace_window *w);
/* The answer to a load not ready, `what` naming its data: 500 "cannot
 * read the <what>: ..." (rc < 0, or the load failed), 202 {"loading":
 * true, "progress"}; a negative code then, else 0 and nothing set. */
int tfb_gpu_trace_answer(tfb_http_resp *resp, int rc,
                         const tfb_trace_status *st, const char *what);

/* GET /data/plugin/gpu/memory. */
int tfb_gpu_route_memory(const tfb_http_req *req, tfb_http_resp *resp);

/* The memory part of the GPU report section: peak per device, top live
 * allocations at the peak, the post-mortem when its rule holds. Text
 * writes nothing when the run has no memory events; JSON writes the
 * member "gpu_memory" (null when none; {"error"} when unreadable). */
int tfb_gpu_memory_report_text(FILE *f, tfb_store *s, tfb_run *r, int md);
int tfb_gpu_memory_report_json(tfb_json *j, tfb_store *s, tfb_run *r);

#endif
