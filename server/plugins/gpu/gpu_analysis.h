/*
 * gpu_analysis.h - the GPU analyses behind /data/plugin/gpu/... and
 * `tfboard report`: device summary (busy time, memcpy breakdown, HTA idle
 * breakdown), kernel statistics, utilization over time, the merged
 * timeline, the Chrome trace export, and GPU busy/idle intervals for the
 * input-pipeline analysis. The analyses return structs; gpu_json.c writes
 * them as the routes' JSON; gpu.c renders them in the report.
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
 * The summary, kernel statistics and busy intervals are computed once,
 * when the trace is built (tfb_gpu_aggregate, one merged pass over the
 * spans in start order); the functions below copy or scan those.
 *
 * Thread-safety: pure functions of an immutable trace; thread-safe.
 */
#ifndef TFB_SERVER_GPU_ANALYSIS_H
#define TFB_SERVER_GPU_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/gpu/gpu_trace.h"
#include "core/json.h"
#include "core/store.h"

#define TFB_GPU_KERNEL_WAIT_NS 30

/* Bytes, count and time of one kind of copy (or of memsets). */
typedef struct tfb_gpu_copy_stat {
    int64_t count, bytes, ns;
} tfb_gpu_copy_stat;

/* One device's figures over the whole trace (definitions above). name is
 * the trace's string (NULL when unknown): valid while the trace is held. */
typedef struct tfb_gpu_device_summary {
    int32_t id;
    const char *name;
    int32_t sm_count;          /* <= 0 when unknown */
    int64_t kernels, kernel_ns, busy_ns, span_ns;
    int has_kernels;           /* start_ns/end_ns are set */
    int64_t start_ns, end_ns;
    double busy_fraction;
    tfb_gpu_copy_stat memcpy[256]; /* by CUPTI copy kind */
    tfb_gpu_copy_stat memset;
    int64_t idle_host_wait_ns, idle_kernel_wait_ns, idle_other_ns;
} tfb_gpu_device_summary;

typedef struct tfb_gpu_summary {
    tfb_gpu_device_summary *devices; /* by device id */
    size_t n_devices;
    size_t files;                    /* trace files read */
} tfb_gpu_summary;

int tfb_gpu_summarize(const tfb_gpu_trace *t, tfb_gpu_summary *out);

/* What a trace carries, computed once (gpu_builder.c calls
 * tfb_gpu_aggregate when it finishes a trace). */
typedef struct tfb_gpu_kernel_stat tfb_gpu_kernel_stat;
typedef struct tfb_gpu_aggregates {
    struct tfb_gpu_device_summary *dev; /* aligned with t->devices */
    size_t ndev;
    int64_t **busy;  /* per device: merged kernel intervals, (start, end) */
    size_t *nbusy;   /* pairs per device */
    tfb_gpu_kernel_stat *kstats; /* every name, by total desc then name */
    size_t nkstats;
    int64_t ktotal;  /* Σ kernel time */
} tfb_gpu_aggregates;

int tfb_gpu_aggregate(tfb_gpu_trace *t);
void tfb_gpu_aggregates_free(tfb_gpu_aggregates *a);
void tfb_gpu_summary_free(tfb_gpu_summary *s);

/* Statistics of one kernel name; launch geometry from its first launch.
 * name is the trace's string (valid while the trace is held). */
struct tfb_gpu_kernel_stat {
    const char *name;
    int64_t count, total_ns, min_ns, max_ns;
    double mean_ns, std_ns, share;
    int32_t grid[3], block[3];
    int32_t registers, shared_mem;
};

typedef struct tfb_gpu_kernels {
    tfb_gpu_kernel_stat *v; /* by total_ns descending, then name */
    size_t n;               /* shown: at most the limit */
    size_t distinct;        /* kernel names in the trace */
    int64_t total_ns;       /* Σ total over all names */
} tfb_gpu_kernels;

/* At most limit names (0 = all). */
int tfb_gpu_kernel_stats(const tfb_gpu_trace *t, size_t limit,
                         tfb_gpu_kernels *out);
void tfb_gpu_kernels_free(tfb_gpu_kernels *k);

/* Busy share per bucket over the device's kernel span cut into n equal
 * buckets (the last may reach past the span end; it is measured over its
 * full width). TFB_ENOENT when the device has no kernel. */
typedef struct tfb_gpu_util {
    int32_t device;
    int64_t start_ns, bucket_ns;
    double *busy;
    size_t n;
} tfb_gpu_util;

int tfb_gpu_utilization(const tfb_gpu_trace *t, int32_t device,
                        size_t buckets, tfb_gpu_util *out);
void tfb_gpu_util_free(tfb_gpu_util *u);

/* JSON writers (gpu_json.c), the answers of /data/plugin/gpu/...:
 * summary: {"devices": [{"id", "name", "sm_count", "kernels", "kernel_ns",
 *   "busy_ns", "span_ns", "start_ns", "end_ns", "busy_fraction",
 *   "memcpy": {"HtoD": {"count", "bytes", "ns"}, ...},
 *   "memset": {"count", "bytes", "ns"},
 *   "idle": {"host_wait_ns", "kernel_wait_ns", "other_ns"}}], "files"}
 * kernels: {"kernels": [{"name", "count", "total_ns", "mean_ns", "min_ns",
 *   "max_ns", "std_ns", "share", "grid", "block", "registers",
 *   "shared_mem"}], "total": distinct names, "total_ns"}
 * utilization: {"device", "start_ns", "bucket_ns", "busy": [...]} */
void tfb_gpu_devices_json(tfb_json *j, const tfb_gpu_summary *s);
void tfb_gpu_summary_json(tfb_json *j, const tfb_gpu_summary *s);
void tfb_gpu_kernel_list_json(tfb_json *j, const tfb_gpu_kernels *k);
void tfb_gpu_kernels_json(tfb_json *j, const tfb_gpu_kernels *k);
void tfb_gpu_utilization_json(tfb_json *j, const tfb_gpu_util *u);

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
int tfb_gpu_timeline_json(const tfb_gpu_trace *t, int64_t start_ns,
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
int tfb_gpu_chrome_trace_json(const tfb_gpu_trace *t, int64_t start_ns,
                              int64_t end_ns, size_t max_events,
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
