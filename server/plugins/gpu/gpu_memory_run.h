/*
 * gpu_memory_run.h - a run's GPU memory events in memory, with what the
 * memory analysis (gpu_memory.h) needs around them: the kernels and NVTX
 * ranges running at allocation times, and the host steps. Loaded once per
 * run in the background and cached until a trace file changes; the routes
 * then run tfb_gmem_analyze on it for the window they are asked.
 *
 * Sources: the run's trace files (ours and nsys exports:
 * CUDA_GPU_MEMORY_USAGE_EVENTS and NVTX_EVENTS; Kineto JSON: `[memory]`
 * events), and the run's GPU trace (gpu_trace.h) for kernels and steps.
 * Only the kernels and NVTX ranges that hold some allocation's time are
 * kept (the analysis asks nothing else of them), with their names copied,
 * so a loaded run holds no reference to the trace.
 *
 * Thread-safety: all functions are thread-safe; a loaded run is immutable
 * and may be read by any number of threads.
 */
#ifndef TFB_SERVER_GPU_MEMORY_RUN_H
#define TFB_SERVER_GPU_MEMORY_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/gpu/gpu_memory.h"
#include "plugins/gpu/gpu_trace.h"

typedef struct tfb_gmem_run {
    tfb_gmem_events events;       /* sorted by time (ties: file order) */
    tfb_gmem_interval *kernels;   /* names owned (in names) */
    size_t n_kernels;
    tfb_gmem_interval *ranges;    /* NVTX ranges; names owned */
    size_t n_ranges;
    tfb_gmem_step *steps;
    size_t n_steps;
    char **names;
    size_t n_names;
    size_t files;             /* trace files that held memory events */
    size_t files_skipped;     /* unreadable (not SQLite, damaged JSON) */
    int64_t first_ns, last_ns; /* of the events (0, 0 when none) */
    int has_trace;            /* kernels/steps came from a trace */
    int refs;                 /* internal */
} tfb_gmem_run;

/* The run's memory events, without blocking on a load: starts the load in
 * the background when needed (first request, or a trace file changed),
 * waits at most wait_ms for it (< 0: until it ended) and answers as
 * tfb_gpu_trace_get does: READY with *out (one reference: release it; while
 * changed files are read again, the data read before), LOADING with
 * progress, FAILED with the message, or NONE (no trace file).
 *
 * *trace is the run's GPU trace as the caller got it from
 * tfb_gpu_trace_get (READY) or NULL (the run has none): its kernels and
 * steps go into a load that this call starts. The call takes the caller's
 * reference either way (*trace is set to NULL). Call it only once the
 * trace is READY or known to be absent, so the context is complete.
 * Returns 0, TFB_EINVAL or TFB_ENOMEM. */
int tfb_gmem_run_get(tfb_store *store, tfb_run *r, tfb_gpu_trace **trace,
                     int wait_ms, tfb_gmem_run **out, tfb_gpu_status *st);
void tfb_gmem_run_release(tfb_gmem_run *m);

/* The analysis input over m's arrays (borrowed from m). */
void tfb_gmem_run_input(const tfb_gmem_run *m, tfb_gmem_input *in);

/* Builds the data from explicit files and a trace (may be NULL) on the
 * calling thread (tests, tools; the background load calls it). ctl may be
 * NULL; its budgets bound the rows read (a file whose memory table is
 * larger than what is left of max_rows is refused before it is read) and
 * the NVTX reading time. Files that cannot be read (not SQLite, damaged
 * JSON) are skipped and counted. *out is never NULL on success (files ==
 * 0 when none held memory events). TFB_ETOOBIG (ctl's error names the
 * file), TFB_ENOMEM. */
int tfb_gmem_run_load_files(char *const *paths, size_t n,
                            const tfb_gpu_trace *trace,
                            tfb_gpu_load_ctl *ctl, tfb_gmem_run **out);
/* Frees data nobody references. NULL-safe. */
void tfb_gmem_run_free(tfb_gmem_run *m);

#endif
