/*
 * gpu_analysis.h - what the GPU dashboard writes from a trace's aggregates
 * (trace/trace.h): the JSON of /data/plugin/gpu/... (gpu_json.c), the
 * merged timeline and the Chrome trace export (gpu_timeline.c), the
 * timeline's host lanes (gpu_host_json.c).
 *
 * Thread-safety: pure functions of an immutable trace; thread-safe.
 */
#ifndef TFB_SERVER_GPU_ANALYSIS_H
#define TFB_SERVER_GPU_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "trace/trace.h"

/* JSON writers (gpu_json.c), the answers of /data/plugin/gpu/...:
 * summary: {"devices": [{"id", "name", "sm_count", "kernels", "kernel_ns",
 *   "busy_ns", "span_ns", "idle_ns", "start_ns", "end_ns",
 *   "busy_fraction", "compute_capability", "total_mem",
 *   "memcpy": {"HtoD": {"count", "bytes", "ns"}, ...},
 *   "memset": {"count", "bytes", "ns"},
 *   "idle": {"host_wait_ns", "kernel_wait_ns", "other_ns"},
 *   "streams": [{"stream", "events", "host_wait_ns", "kernel_wait_ns",
 *   "other_ns"}]}], "files", "notes": [...], "distributed": {...}|null}
 * (definitions in trace.h; notes and distributed: tfb_trace_notes_json,
 * tfb_trace_dist_json).
 * kernels: {"kernels": [{"name", "count", "total_ns", "mean_ns", "min_ns",
 *   "max_ns", "std_ns", "share", "grid", "block", "registers",
 *   "shared_mem"}], "total": distinct names, "total_ns"}
 * utilization: {"device", "start_ns", "bucket_ns", "busy": [...]} */
void tfb_gpu_devices_json(tfb_json *j, const tfb_trace_summary *s);
void tfb_gpu_summary_json(tfb_json *j, const tfb_trace_summary *s,
                          const tfb_trace *t);
/* "notes": [...], "distributed": ... into the object being built. */
void tfb_gpu_trace_meta_json(tfb_json *j, const tfb_trace *t);
void tfb_gpu_kernel_list_json(tfb_json *j, const tfb_trace_kernels *k);
void tfb_gpu_kernels_json(tfb_json *j, const tfb_trace_kernels *k);
void tfb_gpu_utilization_json(tfb_json *j,
                              const tfb_trace_utilization_buckets *u);

/* "window": {"mode", "requested", "start_ns", "end_ns", "duration_ns",
 * "steps" (null for "all"), "note"}: the step window in use
 * (trace/trace.h), into the object being built; tfb_gpu_add_window adds
 * it to a whole answer object already written. */
void tfb_gpu_window_json(tfb_json *j, const tfb_trace_window *w);
void tfb_gpu_add_window(tfb_json *j, const tfb_trace_window *w);

/* {"start_ns", "end_ns", "total", "merged", "resolution_ns",
 *   "lanes": [{"id", "kind": "gpu"|"host", "device", "stream"}],
 *   "spans": [{"lane", "kind", "name", "start_ns", "end_ns", "count",
 *              "busy_ns", ...}]}
 * Spans overlapping [start_ns, end_ns) (INT64_MIN/INT64_MAX = whole
 * trace). When there are more than max, the spans of a lane that start in
 * the same bin of resolution_ns (bins aligned at start_ns), or overlap, are
 * merged into one (count, busy_ns = their union); resolution_ns is the
 * smallest width found that leaves at most max spans. More lanes than max:
 * truncated = true and only the first lanes' spans are sent.
 * Cost: O(log n) per lane to find the window (the lane index), O(max log n)
 * per width tried, and one walk over the window's spans to write the
 * merged ones: never the whole trace. */
int tfb_gpu_timeline_json(const tfb_trace *t, int64_t start_ns,
                          int64_t end_ns, size_t max, tfb_json *j);

/* Chrome trace JSON (Perfetto, chrome://tracing): {"traceEvents": [...],
 * "displayTimeUnit": "ns", "otherData": {"base_time_ns", "generator",
 * "truncated", "events_total", "events", and "cut_at_ns" when truncated}};
 * ts/dur in µs relative to the trace's first event (base_time_ns, the same
 * for every window), written with exact ns decimals.
 * Events: the spans overlapping [start_ns, end_ns) (the timeline's rule)
 * and the runtime calls that start in it (INT64_MIN / INT64_MAX: no
 * bound), at most max_events of them: past that, the events that start
 * from the latest time keeping the count within max_events (cut_at_ns)
 * are left out, truncated is true and events_total says how many the
 * window holds. Flow arrows (launch -> kernel) and names are not counted. */
#define TFB_GPU_TRACE_JSON_MAX_EVENTS 1000000
#define TFB_GPU_TRACE_JSON_MAX_EVENTS_LIMIT 100000000
int tfb_gpu_chrome_trace_json(const tfb_trace *t, int64_t start_ns,
                              int64_t end_ns, size_t max_events,
                              tfb_json *j);

/* The host side (trace/trace.h) in a window, the answer of
 * /data/plugin/gpu/host: {"start_ns", "end_ns", "trace_start_ns",
 * "trace_end_ns", "total", "truncated", "lanes": [{"id", "kind":
 * "thread"|"nvtx", "label", "depth"}], "spans": [{"lane", "kind":
 * "op"|"runtime"|"range"|"mark", "name", "start_ns", "end_ns", "depth",
 * "correlation"?}], "top_ops": [{"name", "count", "total_ns", "self_ns"}],
 * "busy_ns", "span_ns"}: the spans overlapping [w0, w1] (INT64_MIN /
 * INT64_MAX: the whole trace); past max of them, the longest max
 * (truncated). A runtime call's correlation is in t's id space
 * (tfb_trace_host_link), the number its kernels carry in the timeline; absent
 * when t (may be NULL) holds no call of its file. top_ops (the 30 names
 * with the most self time) and busy_ns cover the whole trace, or, when
 * win (may be NULL) applies, the ops and calls that start in the step
 * window (the window's rule for host spans, trace.h). h may be NULL (an
 * empty answer). Cost: one pass over the host spans (and, with a window,
 * one table of h's names and a sort of the names found). */
int tfb_gpu_host_json(const tfb_trace_host *h, const tfb_trace *t,
                      int64_t w0, int64_t w1, size_t max,
                      const tfb_trace_window *win, tfb_json *j);

#endif
