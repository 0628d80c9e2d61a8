/*
 * trace_launch.h - HTA's CUDA launch statistics over a whole trace, on the
 * server: for every GPU op (kernel, memcpy, memset) whose runtime call is
 * in the trace (same correlation id), the CPU duration of the call, the
 * GPU duration of the op and the launch delay = max(0, GPU start -
 * runtime call end), summarised and with HTA's outliers. No span limit:
 * /data/plugin/gpu/host stops at 100,000 spans, this reads the trace's
 * own arrays (t->spans, t->calls).
 *
 * Outliers (HTA hta/analyzers/cuda_kernel_analysis.py, checked in its
 * code): fixed cutoffs, not percentiles nor mean + k sd:
 *   - runtime outlier: CPU duration > TFB_LAUNCH_RUNTIME_CUTOFF_NS
 *     (HTA's runtime_cutoff, 50 µs);
 *   - launch delay outlier: delay > TFB_LAUNCH_DELAY_CUTOFF_NS (HTA's
 *     launch_delay_cutoff, 100 µs);
 *   - short kernel: CPU duration <= the runtime cutoff and GPU duration <
 *     CPU duration (the launch costs more than the work).
 * HTA's code computes the delay as gpu_ts - cpu_ts + cpu_dur (a sign
 * slip); we use the documented definition, GPU start - call end, and
 * clamp it at 0 (clock skew between host and device).
 * HTA keeps only calls named cudaLaunchKernel / cudaMemcpyAsync /
 * cudaMemsetAsync; we keep every runtime/driver call correlated with a GPU
 * op (cuLaunchKernel, cudaLaunchKernelExC... launch kernels too).
 *
 * Ownership: the result owns its outlier array; names are the trace's
 * strings (valid while the trace is held). Thread-safety: any thread,
 * the trace is read only.
 */
#ifndef TFB_SERVER_TRACE_LAUNCH_H
#define TFB_SERVER_TRACE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define TFB_LAUNCH_RUNTIME_CUTOFF_NS 50000  /* HTA runtime_cutoff: 50 µs */
#define TFB_LAUNCH_DELAY_CUTOFF_NS 100000   /* HTA launch_delay_cutoff */
/* Outliers listed (largest launch delay first, then CPU duration): the
 * GPU page's table; the counts above cover all of them. */
#define TFB_LAUNCH_OUTLIERS_MAX 100

/* A distribution of durations in ns: percentiles by linear interpolation
 * between order statistics (h = q (n - 1), pandas' rule, which HTA's
 * describe() uses). All 0 when n is 0. */
typedef struct tfb_launch_dist {
    double min_ns, p50_ns, p90_ns, p99_ns, max_ns, mean_ns;
} tfb_launch_dist;

typedef struct tfb_launch_outlier {
    int64_t correlation;
    const char *name; /* the GPU op's name (kernel; NULL for copies) */
    const char *call; /* the runtime call's name, NULL when unknown */
    const char *kind; /* "kernel", "memcpy" or "memset" */
    int32_t device, stream;
    int64_t start_ns; /* GPU op start */
    int64_t cpu_ns, gpu_ns, delay_ns;
    int runtime_outlier, delay_outlier, short_kernel;
} tfb_launch_outlier;

typedef struct tfb_launch_stats {
    int64_t launches;  /* GPU ops paired with their runtime call */
    int64_t unmatched; /* GPU ops without a call in the trace */
    tfb_launch_dist cpu, gpu, delay;
    int64_t runtime_outliers, delay_outliers, short_kernels;
    tfb_launch_outlier *outliers; /* at most TFB_LAUNCH_OUTLIERS_MAX */
    size_t n_outliers;
} tfb_launch_stats;

/* Fills *out (zeroed first). 0, TFB_ENOMEM. */
int tfb_launch_stats_compute(const tfb_trace *t, tfb_launch_stats *out);
void tfb_launch_stats_free(tfb_launch_stats *s);

/* The percentiles of v[0..n) (reordered) as above; shared with the queue
 * length analysis. */
void tfb_launch_dist_of(double *v, size_t n, tfb_launch_dist *out);

#endif
