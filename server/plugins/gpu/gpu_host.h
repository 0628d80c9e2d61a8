/*
 * gpu_host.h - the host side of a run's profiler traces for the GPU page's
 * timeline: per CPU thread its ops (Kineto cpu_op, python_function) and
 * CUDA runtime/driver calls, and the NVTX-style ranges (Kineto
 * user_annotation / gpu_user_annotation), read from the run's
 * *.pt.trace.json(.gz) files; their top ops by self time. A CPU-only
 * torch.profiler trace (no kernel at all) has only this side, and the page
 * shows it instead of an empty GPU analysis.
 *
 * Times are integer ns on the same clock as the GPU trace model (Kineto µs
 * to ns digit by digit, plus baseTimeNanoseconds), so the host lanes line
 * up with the GPU streams and a kernel's launch_ns falls inside its runtime
 * call.
 *
 * Thread-safety: tfb_gpu_host_get may be called from any thread; the
 * returned object is immutable and shared (release it).
 */
#ifndef TFB_SERVER_GPU_HOST_H
#define TFB_SERVER_GPU_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "core/store.h"

typedef enum tfb_host_kind {
    TFB_HOST_OP = 0,      /* cpu_op, python_function */
    TFB_HOST_RUNTIME = 1, /* cuda_runtime, cuda_driver */
    TFB_HOST_RANGE = 2,   /* user_annotation (NVTX-style) */
} tfb_host_kind;

typedef struct tfb_host_span {
    int64_t start, end;
    uint32_t name;   /* index into strings */
    uint16_t lane;
    uint8_t kind;    /* tfb_host_kind */
    uint8_t depth;   /* nesting level within its lane (capped at 255) */
    int64_t self_ns; /* end - start less its direct children's time */
} tfb_host_span;

typedef struct tfb_host_lane {
    char label[96];
    int is_range;    /* the NVTX ranges lane of a thread */
    int depth;       /* rows: deepest nesting + 1 */
} tfb_host_lane;

typedef struct tfb_host_trace tfb_host_trace;

/* The host side of run r's Kineto files (loaded on first use, cached by
 * the files' signature). *out is NULL (and 0 returned) when the run has no
 * Kineto file. TFB_ENOMEM, TFB_ETOOBIG (a file past the size caps). */
int tfb_gpu_host_get(tfb_run *r, tfb_host_trace **out);
void tfb_gpu_host_release(tfb_host_trace *h);

/* {"start_ns", "end_ns", "total", "truncated", "lanes": [{"id", "kind":
 * "thread"|"nvtx", "label", "depth"}], "spans": [{"lane", "kind":
 * "op"|"runtime"|"range", "name", "start_ns", "end_ns", "depth"}],
 * "top_ops": [{"name", "count", "total_ns", "self_ns"}], "busy_ns",
 * "span_ns"}: the spans overlapping [w0, w1] (INT64_MIN / INT64_MAX: the
 * whole trace); past max of them, the longest max (truncated true). top_ops
 * (the 30 op names with the most self time) and busy_ns (each thread's
 * time under a top-level op, summed) cover the whole trace. h may be NULL
 * (an empty answer). */
int tfb_gpu_host_json(const tfb_host_trace *h, int64_t w0, int64_t w1,
                      size_t max, tfb_json *j);

#endif
