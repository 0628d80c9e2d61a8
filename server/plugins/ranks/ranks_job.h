/*
 * ranks_job.h - the ranks plugin's side of a job: the GPU side of each
 * rank from its trace, and the JSON writers of the results (the routes
 * and `tfboard report --format json` write the same JSON). Jobs, the
 * step inputs and the analysis are in analysis/ranks_jobs.h.
 *
 * Ownership: area "ranks".
 *
 * Thread-safety: every function is reentrant.
 */
#ifndef TFB_SERVER_RANKS_JOB_H
#define TFB_SERVER_RANKS_JOB_H

#include "analysis/ranks_trace_straggler.h"
#include <stddef.h>
#include <stdint.h>

#include "analysis/ranks_jobs.h"
#include "core/json.h"
#include "store/store.h"
#include "trace/trace.h"

/* ---- the GPU side (ranks_gpu.c) ---------------------------------------- */

/* Where a rank's trace stands (the gpu plugin's loader). */
typedef enum {
    TFB_RANKS_TRACE_NONE = 0, /* no trace file */
    TFB_RANKS_TRACE_LOADING,  /* being read in the background */
    TFB_RANKS_TRACE_READY,
    TFB_RANKS_TRACE_FAILED    /* unreadable: see error */
} tfb_ranks_trace_state;

typedef struct tfb_ranks_gpu_rank {
    int32_t rank;
    const char *run_name;
    int state;             /* tfb_ranks_trace_state */
    double progress;       /* 0..1 while loading */
    char error[512];       /* FAILED: the gpu plugin's message */
    int has_trace;         /* READY: the figures below are set */
    tfb_ranks_gpu gpu;     /* tfb_ranks_gpu_breakdown of its trace */
    size_t bad_intervals;  /* left out (end < start) */
    size_t n_comm_kernels; /* kernels classed as communication */
    /* READY: the rank's trace (one reference, released with the view),
     * for what it says of itself: device names and properties, notes on
     * categories not understood, distributedInfo (trace.h). */
    struct tfb_trace *trace;
    /* READY: the step window its figures are of (trace.h; the trace above
     * stays whole: the cut is made per call and freed with it). */
    tfb_trace_window window;
} tfb_ranks_gpu_rank;

typedef struct tfb_ranks_gpu_view {
    tfb_ranks_gpu_rank *ranks; /* one per member, in member order */
    size_t n_ranks;
    size_t n_traced;       /* READY */
    size_t n_loading, n_failed;
    double progress;       /* over the ranks with trace files, 0..1 */
    /* Over the traced ranks: sums of the breakdown and of the overlap. */
    int64_t compute_ns, comm_ns, memory_ns, idle_ns;
    int64_t comm_union_ns, overlap_ns;
    double overlap;        /* overlap_ns / comm_union_ns; NaN when 0 */
    /* The straggler from the ready ranks' NCCL kernel starts
     * (analysis/ranks_trace_straggler.h), per_rank aligned with ranks. */
    tfb_ranks_trace_straggler trace_straggler;
    tfb_trace_window_mode window; /* the step window asked */
} tfb_ranks_gpu_view;

/* Each member's GPU trace (the gpu plugin's cache and background loader,
 * tfb_trace_get) and, for the ready ones, its breakdown and overlap:
 * kernels classed by tfb_ranks_classify_kernel, memcpy/memset as memory,
 * host spans left out. Every rank's load is started before any is waited
 * for; wait_ms bounds the whole wait (0: none; < 0: until every load
 * ended, for the report). No lock is held while a trace loads. The
 * figures and the trace straggler are of each rank's step window of mode
 * (tfb_trace_window_find over the rank's own host side and trace, then
 * tfb_trace_window_apply; "all" cuts nothing; a rank whose host side
 * cannot be read counts whole, with a note on its window). Returns 0 or
 * TFB_ENOMEM; free with tfb_ranks_gpu_view_free. */
int tfb_ranks_job_gpu(tfb_store *s, const tfb_ranks_job *job, int wait_ms,
                      tfb_trace_window_mode mode, tfb_ranks_gpu_view *out);
void tfb_ranks_gpu_view_free(tfb_ranks_gpu_view *v);
/* The job's world size as the ranks' traces say it (Kineto's
 * distributedInfo of the first rank that has one), -1 when none says it;
 * *backend (may be NULL) its backend or NULL, valid while v is. */
int64_t tfb_ranks_gpu_world_size(const tfb_ranks_gpu_view *v,
                                 const char **backend);

/* ---- JSON (ranks_json.c) ----------------------------------------------- */

/* The matrix metric the job JSON carries. */
typedef enum {
    TFB_RANKS_M_STEP = 0,
    TFB_RANKS_M_INPUT,
    TFB_RANKS_M_COMM,
    TFB_RANKS_M_COMPUTE
} tfb_ranks_metric;

/* "step_ms", "input_ms", "comm_ms", "compute_ms"; -1 for other names. */
int tfb_ranks_metric_parse(const char *s);

/* {"jobs": [{"job", "ranks", "world_size", "runs": [{"run", "rank"}],
 * "empty_dirs"}]} */
void tfb_ranks_jobs_json(tfb_json *j, const tfb_ranks_job *v, size_t n);

/* The job object (API.md, /data/plugin/ranks/job). with_matrix 0 leaves
 * out the matrix and the per-step skew (the report). */
void tfb_ranks_job_json(tfb_json *j, const tfb_ranks_job *job,
                        const tfb_ranks_result *res, const tfb_ranks_opts *o,
                        tfb_ranks_metric metric, int with_matrix);

/* ---- efficiency (ranks_eff.c) ------------------------------------------ */

/* Writes "efficiency": [{"rank", "run", "mfu_pct", "energy_j",
 * "busbw_gbps"}] (one per member, in member order; null unknown) into the
 * object being built: each rank's MFU and energy (analysis/efficiency.h)
 * and the time-weighted bus bandwidth of its collectives
 * (analysis/comm_bandwidth.h), with the efficiency flags. A rank whose
 * trace is still loading (trace.h, tfb_trace_get) has a null bandwidth
 * and sets *loading, so that the caller does not keep that answer. Returns
 * 0 or TFB_ENOMEM. */
int tfb_ranks_eff_json(tfb_json *j, tfb_store *s, const tfb_ranks_job *job,
                       int *loading);

/* The GPU object (API.md, /data/plugin/ranks/gpu). */
void tfb_ranks_gpu_json(tfb_json *j, const tfb_ranks_job *job,
                        const tfb_ranks_gpu_view *g);

#endif
