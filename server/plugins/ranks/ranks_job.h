/*
 * ranks_job.h - the ranks plugin between the store and the analysis
 * (ranks_analysis.h): which runs form a job, each rank run's step series
 * as the analysis's input, the GPU side of each rank from its trace, and
 * the JSON writers of the results (the routes and `tfboard report --format
 * json` write the same JSON).
 *
 * Ownership: area "ranks".
 *
 * Jobs. A run belongs to a job when
 *  - it holds a rank record (plugin "tfboard_rank", kept per run by the
 *    store, see tfb_run_records): the job is the record's job name, the
 *    rank and world size are the record's; or
 *  - it has no rank record but its directory is called rank-<digits>: it
 *    joins the job of a sibling run (same parent directory) that has a
 *    record, else the job named by its parent directory (relative to the
 *    logdir; "." for the logdir itself); the rank is the number in the
 *    name, the world size unknown.
 * Runs of one job may sit in different directories (the job name is what
 * joins them). rank-<digits> directories next to a job's rank runs that
 * hold no event file (so they are no run of the store) are listed as the
 * job's empty rank directories (a note on the page and in the report).
 *
 * Thread-safety: every function is reentrant and reads the store through
 * its thread-safe read side (series pinned one at a time, briefly).
 */
#ifndef TFB_SERVER_RANKS_JOB_H
#define TFB_SERVER_RANKS_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "plugins/ranks/ranks_analysis.h"
#include "core/store.h"

typedef struct tfb_ranks_member {
    tfb_run *run;
    const char *run_name;  /* the store's (stable) */
    int32_t rank;          /* -1: unknown */
    int32_t world_size;    /* 0: unknown */
    int has_record;
    char host[64];         /* from the record; "" when none */
} tfb_ranks_member;

typedef struct tfb_ranks_job {
    char *name;
    tfb_ranks_member *members; /* by rank, then run name */
    size_t n_members;
    char **empty_dirs;         /* relative to the logdir */
    size_t n_empty_dirs;
} tfb_ranks_job;

/* The run's membership, without scanning other runs (the cheap test of
 * the plugin's has_data): 1 when the run holds a rank record or its
 * directory is rank-<digits>. */
int tfb_ranks_run_is_rank(tfb_run *r);

/* Every job of the store, sorted by name. Returns 0 or TFB_ENOMEM. Free
 * with tfb_ranks_jobs_free (NULL-safe). */
int tfb_ranks_find_jobs(tfb_store *s, tfb_ranks_job **out, size_t *n);
void tfb_ranks_jobs_free(tfb_ranks_job *v, size_t n);

/* The job of that name in v, or NULL. */
const tfb_ranks_job *tfb_ranks_job_find(const tfb_ranks_job *v, size_t n,
                                        const char *name);

/* The job run r belongs to, or NULL. */
const tfb_ranks_job *tfb_ranks_job_of_run(const tfb_ranks_job *v, size_t n,
                                          const tfb_run *r);

/* One rank run's steps from its pipeline/step_ms (step time and wall end
 * time), pipeline/input_ms and comm/ms scalars, joined by step; one entry
 * per step_ms point, in file order (the analysis notes repeated steps).
 * input/comm: the last value logged for the step, NaN when none. O(n)
 * when the series are in step order (as the writer logs them), else
 * O(n log n). *out is malloc'd (NULL when n == 0). */
int tfb_ranks_collect(tfb_run *r, tfb_ranks_step **out, size_t *n);

/* Runs the analysis on the job's event-file data (no traces). */
int tfb_ranks_job_analyze(const tfb_ranks_job *job, const tfb_ranks_opts *o,
                          tfb_ranks_result **out);

/* The sentence for straggler k of res (index into res->stragglers):
 * "rank 3 is 23 % slower than the median rank; the other ranks spend 18 %
 * of each step waiting in communication". */
void tfb_ranks_straggler_sentence(const tfb_ranks_result *res, size_t k,
                                  char *buf, size_t len);

/* The note for the job's empty rank directory i. */
void tfb_ranks_empty_dir_note(const tfb_ranks_job *job, size_t i, char *buf,
                              size_t len);

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
} tfb_ranks_gpu_view;

/* Each member's GPU trace (the gpu plugin's cache and background loader,
 * tfb_gpu_trace_get) and, for the ready ones, its breakdown and overlap:
 * kernels classed by tfb_ranks_classify_kernel, memcpy/memset as memory,
 * host spans left out. Every rank's load is started before any is waited
 * for; wait_ms bounds the whole wait (0: none; < 0: until every load
 * ended, for the report). No lock is held while a trace loads. Returns 0
 * or TFB_ENOMEM; free with tfb_ranks_gpu_view_free. */
int tfb_ranks_job_gpu(tfb_store *s, const tfb_ranks_job *job, int wait_ms,
                      tfb_ranks_gpu_view *out);
void tfb_ranks_gpu_view_free(tfb_ranks_gpu_view *v);

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

/* The GPU object (API.md, /data/plugin/ranks/gpu). */
void tfb_ranks_gpu_json(tfb_json *j, const tfb_ranks_job *job,
                        const tfb_ranks_gpu_view *g);

#endif
