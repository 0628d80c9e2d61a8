/*
 * gpu_memory.h - GPU memory analysis (issue 13): typed C, no JSON. The
 * routes, page and report sections are built on top of this.
 *
 * Input: a time-ordered list of memory events (allocations and frees, per
 * device), optionally kernel intervals, NVTX ranges and step intervals.
 * Output, per device: bytes in use over time as a step line (downsampled
 * to a bounded number of points, keeping the peak), the peak and when it
 * happened, the allocations live at the peak (largest first, with stream,
 * the kernel and the NVTX range running when each was allocated), the
 * "OOM post-mortem" (the last allocations before the end, bytes in use at
 * the end); and allocation churn per step.
 *
 * Rules (times in ns):
 *  - Bytes in use = bytes allocated since the first event and not freed
 *    yet. The window [start_ns, end_ns] only selects what is reported:
 *    events before it are replayed so the state on entry is exact, events
 *    after it are ignored.
 *  - A free is matched to the live allocation at the same device and
 *    address and removes that allocation's bytes (the free's own byte
 *    count is not trusted: Kineto writes it negative, CUPTI repeats it).
 *    A free with no live allocation - its allocation happened before the
 *    trace started, or its record was lost - is counted in
 *    unmatched_frees / unmatched_free_bytes (its own |bytes|) and changes
 *    nothing: bytes in use never go negative and are relative to the
 *    trace start.
 *  - An allocation at an address that is still live (its free was lost)
 *    replaces the old one, which is counted in `replaced`.
 *  - Pools: a pool-backed allocation (cudaMallocAsync from a memory pool,
 *    or a caching allocator's block as Kineto reports them) counts with its
 *    own bytes in `bytes` (what the program holds). `reserved` is what the
 *    device has given away: bytes of allocations outside pools, plus for
 *    each pool max(pool's last reported reserved size, bytes live in it).
 *    A pool whose reserved size is never reported counts its live bytes.
 *  - Peak: the largest `bytes` in the window (the state on entry
 *    included); on a tie the earliest time that reached it.
 *  - Downsampling: when the window holds more than max_points change
 *    points, it is cut into equal time buckets and each bucket keeps its
 *    lowest and highest point (in time order), after the entry point and
 *    before the end point; the peak is always kept exactly.
 *  - Context of an allocation: the kernel on the same device whose
 *    [start, end) holds the allocation time (several: the one on the same
 *    stream, else the latest started); the NVTX range (device -1 or the
 *    same device) holding it that started last (the innermost one).
 *  - Churn: events in the window whose time falls in a step's
 *    [start, end); one row per (step, device) with any event.
 *
 * Ownership: the result borrows the input's strings (kernel and range
 * names); it must not outlive them. Thread-safety: pure function of its
 * input; thread-safe.
 */
#ifndef TFB_SERVER_GPU_MEMORY_H
#define TFB_SERVER_GPU_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The event, interval and step types are the trace layer's. */
#include "trace/trace.h"

typedef struct tfb_gpu_memory_input {
    /* sorted by t_ns (ties: given order) */
    const tfb_trace_memory_event *events;
    size_t n_events;
    const tfb_trace_memory_interval *kernels; /* any order */
    size_t n_kernels;
    const tfb_trace_memory_interval *ranges; /* NVTX; any order */
    size_t n_ranges;
    const tfb_trace_memory_step *steps; /* any order; should not overlap */
    size_t n_steps;
} tfb_gpu_memory_input;

typedef struct tfb_gpu_memory_opts {
    int64_t start_ns, end_ns; /* window; INT64_MIN / INT64_MAX = all */
    size_t max_points;        /* per device, >= 4; 0 = 1000 */
    size_t top_live;          /* allocations live at the peak; 0 = 20 */
    size_t last_allocs;       /* OOM post-mortem; 0 = 20 */
} tfb_gpu_memory_opts;

void tfb_gpu_memory_opts_init(tfb_gpu_memory_opts *o);

typedef struct tfb_gpu_memory_point {
    int64_t t_ns;     /* the value holds from here to the next point */
    int64_t bytes;    /* in use */
    int64_t reserved; /* see the pool rule */
} tfb_gpu_memory_point;

typedef struct tfb_gpu_memory_alloc {
    uint64_t address;
    int64_t bytes;
    int64_t t_ns;        /* allocation time */
    int64_t stream;      /* -1 = unknown */
    uint64_t pool;       /* 0 = not pool-backed */
    int live_at_end;     /* post-mortem list: still live at the end */
    const char *kernel;  /* running at allocation time, or NULL */
    const char *range;   /* innermost NVTX range then, or NULL */
} tfb_gpu_memory_alloc;

typedef struct tfb_gpu_memory_device {
    int32_t device;
    tfb_gpu_memory_point *points; /* time order; first = state on entry at the
                               window start, last = state at its end */
    size_t n_points;
    size_t n_changes;       /* change points before downsampling */
    int64_t peak_bytes, peak_t_ns;
    int64_t peak_reserved;  /* highest `reserved` in the window */
    tfb_gpu_memory_alloc *live_at_peak; /* largest first (ties: earlier, then
                                     lower address); at most top_live */
    size_t n_live_at_peak;
    size_t live_at_peak_total; /* allocations live at the peak */
    int64_t end_bytes, end_reserved; /* at the window end */
    size_t live_at_end;              /* allocations live then */
    tfb_gpu_memory_alloc *last_allocs;     /* most recent first */
    size_t n_last_allocs;
    /* In the window. */
    uint64_t allocs, frees, replaced, unmatched_frees;
    int64_t alloc_bytes, free_bytes, unmatched_free_bytes;
    uint64_t pool_allocs; /* allocations that were pool-backed */
} tfb_gpu_memory_device;

typedef struct tfb_gpu_memory_churn {
    int64_t step;
    int32_t device;
    uint64_t allocs, frees;
    int64_t alloc_bytes, free_bytes; /* free bytes: the matched allocation's
                                        (unmatched frees: their own) */
} tfb_gpu_memory_churn;

typedef struct tfb_gpu_memory_result {
    tfb_gpu_memory_device *devices; /* by device id */
    size_t n_devices;
    tfb_gpu_memory_churn *churn; /* by step, then device */
    size_t n_churn;
    uint64_t events_outside_steps; /* window events in no step (when steps
                                      were given) */
    /* Events skipped for an impossible size: a byte count or pool size
     * beyond 2^50 (or below -2^50), or sizes whose sum would pass int64.
     * Every figure above is then exact for the events kept. */
    uint64_t events_skipped;
} tfb_gpu_memory_result;

/* Runs the analysis. Returns 0 and *out (free with tfb_gpu_memory_result_free),
 * TFB_EINVAL (NULL argument, events out of time order, max_points < 4,
 * start_ns > end_ns) or TFB_ENOMEM. */
int tfb_gpu_memory_analyze(const tfb_gpu_memory_input *in,
                           const tfb_gpu_memory_opts *opts,
                           tfb_gpu_memory_result **out);
void tfb_gpu_memory_result_free(tfb_gpu_memory_result *r);

#endif
