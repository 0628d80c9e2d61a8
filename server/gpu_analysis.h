/*
 * gpu_analysis.h - the GPU analyses behind /data/plugin/gpu/... and
 * `tfboard report`: device summary (busy time, memcpy breakdown, HTA idle
 * breakdown), kernel statistics, utilization over time, the merged
 * timeline, the Chrome trace export, and GPU busy/idle intervals for the
 * input-pipeline analysis. Each *_json function writes one JSON value into
 * the caller's builder.
 *
 * Definitions (times in ns):
 *  - busy_ns: length of the union of the device's kernel intervals;
 *    span_ns: last kernel end - first kernel start; busy_fraction =
 *    busy_ns / span_ns (0 when span_ns is 0).
 *  - idle (HTA's rule on the device timeline): each gap g > 0 in which no
 *    kernel runs on any stream of the device is "host_wait" when the kernel
 *    ending it was launched (runtime record with the same correlation id)
 *    after the GPU fell idle, else "kernel_wait" when g <
 *    TFB_GPU_KERNEL_WAIT_NS, else "other"; the three add up to
 *    span_ns - busy_ns.
 *  - kernel stats group by name: count, total/mean/min/max, population
 *    std, share = total / Σ total over all kernels; grid/block/registers/
 *    shared_mem from the name's first launch.
 *
 * Ownership: area "gpu". Thread-safety: pure functions of an immutable
 * trace; thread-safe.
 */
#ifndef TFB_SERVER_GPU_ANALYSIS_H
#define TFB_SERVER_GPU_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_trace.h"
#include "json.h"
#include "store.h"

#define TFB_GPU_KERNEL_WAIT_NS 30

/* {"devices": [{"id", "name", "kernels", "kernel_ns", "busy_ns", "span_ns",
 *   "busy_fraction", "memcpy": {"HtoD": {"count", "bytes", "ns"}, ...},
 *   "memset": {"count", "bytes", "ns"},
 *   "idle": {"host_wait_ns", "kernel_wait_ns", "other_ns"}}]} */
int tfb_gpu_summary_json(const tfb_gpu_trace *t, tfb_json *j);

/* {"kernels": [...], "total": distinct names} by total_ns descending, at
 * most limit entries (limit 0 = all). */
int tfb_gpu_kernels_json(const tfb_gpu_trace *t, size_t limit, tfb_json *j);

/* {"device", "start_ns", "bucket_ns", "busy": [fraction per bucket]} over
 * the device's kernel span cut into `buckets` equal buckets (the last may
 * reach past the span end; it is measured over its full width). Returns
 * TFB_ENOENT when the device has no kernel. */
int tfb_gpu_utilization_json(const tfb_gpu_trace *t, int32_t device,
                             size_t buckets, tfb_json *j);

/* {"start_ns", "end_ns", "total", "merged", "resolution_ns",
 *   "lanes": [{"id", "kind": "gpu"|"host", "device", "stream"}],
 *   "spans": [{"lane", "kind", "name", "start_ns", "end_ns", "count",
 *              "busy_ns", ...}]}
 * Spans overlapping [start_ns, end_ns) (INT64_MIN/INT64_MAX = whole
 * trace). When there are more than max, the spans of a lane that start in
 * the same bin of resolution_ns (bins aligned at start_ns), or overlap, are
 * merged into one (count, busy_ns = their union); resolution_ns is the
 * smallest width found that leaves at most max spans. More lanes than max:
 * truncated = true and only the first lanes' spans are sent. */
int tfb_gpu_timeline_json(const tfb_gpu_trace *t, int64_t start_ns,
                          int64_t end_ns, size_t max, tfb_json *j);

/* Chrome trace JSON (Perfetto, chrome://tracing): {"traceEvents": [...],
 * "displayTimeUnit": "ns", "otherData": {"base_time_ns"}}; ts/dur in µs
 * relative to the first event, written with exact ns decimals. */
int tfb_gpu_chrome_trace_json(const tfb_gpu_trace *t, tfb_json *j);

/* The report's GPU section: {"devices": [...summary...], "kernels": [top
 * `top` kernels]}; null when the run has no GPU trace. */
int tfb_gpu_report_json(tfb_store *store, tfb_run *run, size_t top,
                        tfb_json *j);

/* GPU busy intervals: the union of kernel intervals of `device` (-1 = all
 * devices), sorted and disjoint, as (start, end) pairs in *out (malloc'd,
 * caller frees; NULL when n is 0). */
int tfb_gpu_busy_intervals(const tfb_gpu_trace *t, int32_t device,
                           int64_t **out, size_t *n);

/* Of the GPU idle time inside the window [w0, w1) (device -1 = idle when
 * no device is busy), the ns that fall inside the given intervals (pairs,
 * any order, may overlap) and the total idle ns. */
int tfb_gpu_idle_within(const tfb_gpu_trace *t, int32_t device, int64_t w0,
                        int64_t w1, const int64_t *pairs, size_t npairs,
                        int64_t *idle_inside, int64_t *idle_total);

#endif
