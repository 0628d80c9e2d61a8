/*
 * ranks_analysis.h - "many ranks, one view": the typed analysis of a
 * distributed job (issue 11), shared by the ranks plugin's routes, page and
 * report section (built on top of it). No JSON, no store: the caller hands
 * in plain arrays per rank and gets plain structs back.
 *
 * Ownership: area "ranks".
 *
 * Inputs, per rank: its step series (pipeline/step_ms, pipeline/input_ms,
 * comm/ms and the step's wall end time, as tfb_step_end and tfb_comm_end
 * write them) and, when the rank has a GPU trace, its device intervals
 * (kernels classed with tfb_ranks_classify_kernel, memcpy/memset as
 * TFB_RANKS_MEMORY).
 *
 * Figures and rules (REFERENCE.md, "Distributed training"):
 *  - Per rank: mean / p50 / p90 (linear interpolation between order
 *    statistics) of step, input wait, communication and compute time,
 *    where compute = step - input - comm (floored at 0; comm or input
 *    missing counts as 0).
 *  - Temporal breakdown (HTA): over the rank's trace span [first interval
 *    start, last interval end], each instant of each device counts once:
 *    compute if a compute kernel runs, else communication if an NCCL
 *    kernel runs, else memory if a memcpy/memset runs, else idle. The four
 *    sum to span x devices; GPU busy % = 100 x (1 - idle / that).
 *  - Overlap = (time during which a communication kernel and a compute
 *    kernel run at once on the same device) / (time during which a
 *    communication kernel runs), both as unions over streams, so
 *    overlapping streams count each instant once. NaN without comm kernels.
 *  - Straggler rule. The rank's "own time" per step is step - comm (the
 *    time it is not waiting for the others in a collective; step time when
 *    comm/ms is not logged): in a synchronous job every rank's step time is
 *    about the same, since the fast ranks wait for the slow one inside the
 *    all-reduce, so step time alone cannot name the slow rank. A rank is a
 *    straggler when BOTH
 *      slowdown = median_steps(own) / median over the other ranks of
 *                 their median_steps(own) - 1  >  opts.straggler_excess
 *                 (default 0.05), and
 *      slower_share = share of its steps (those at least 2 ranks logged)
 *                 in which its own time is above that step's median over
 *                 ranks  >=  opts.straggler_share (default 0.75),
 *    with at least 2 ranks holding steps. The figures for the sentence
 *    "rank 3 is 23 % slower than the median rank; the other ranks spend
 *    18 % of each step waiting in all-reduce" are slowdown and
 *    others_comm_share (over the non-straggler ranks: sum comm / sum step).
 *  - Skew of a step = latest - earliest wall end time of the ranks that
 *    logged it (ms; needs 2 such ranks). The ranks' clocks are taken as
 *    they are (NTP-synced hosts: ms-level accuracy).
 *  - The rank x step matrix has one row per rank (in rank order) and at most
 *    opts.max_columns columns: with more steps (the union over ranks) than
 *    that, column c covers the union's steps [c*n/cols, (c+1)*n/cols) and
 *    each cell is the mean over the rank's steps in it (NaN: none).
 *
 * Bad input is never a failure: it is reported in notes (a rank with no
 * steps, a rank number repeated, world sizes that disagree, ranks missing
 * from the world, a rank without a trace while others have one, a rank
 * without a rank number, steps logged twice, unusable values).
 *
 * Cost: O(total steps) (a rank's steps are copied and sorted only when
 * they are out of order, repeated or unusable; the union of step numbers
 * is radix-sorted only when the ranks logged different steps; quantiles by
 * bucket selection), and O(intervals) plus radix sorts of their times.
 * Measured by tests/bench/bench_ranks.c (release build, one core of a
 * loaded 2-core VM): 256 ranks x 20 k steps in about 0.5 s of CPU,
 * 8 ranks x 1 M kernels in about 1 s.
 *
 * Thread-safety: every function is reentrant; inputs are only read.
 */
#ifndef TFB_SERVER_RANKS_ANALYSIS_H
#define TFB_SERVER_RANKS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ input */

/* One step of one rank. Unknown values are NaN. */
typedef struct tfb_ranks_step {
    int64_t step;
    double step_ms;  /* pipeline/step_ms; NaN or < 0: the step is unusable */
    double input_ms; /* pipeline/input_ms */
    double comm_ms;  /* comm/ms */
    double wall_end; /* the step's wall time (s since the Unix epoch) */
} tfb_ranks_step;

/* Classes of device intervals. */
typedef enum {
    TFB_RANKS_COMPUTE = 0, /* any kernel that is not communication */
    TFB_RANKS_COMM = 1,    /* NCCL kernels */
    TFB_RANKS_MEMORY = 2   /* memcpy and memset */
} tfb_ranks_class;

/* One device interval (ns on any one clock per rank). */
typedef struct tfb_ranks_interval {
    int64_t start, end;
    int32_t device;
    int32_t stream;
    int32_t cls; /* tfb_ranks_class */
} tfb_ranks_interval;

typedef struct tfb_ranks_input {
    int32_t rank;        /* from the rank record; < 0 = unknown */
    int32_t world_size;  /* 0 = unknown */
    const char *label;   /* the run's name, for notes; may be NULL */
    const tfb_ranks_step *steps; /* any order */
    size_t n_steps;
    int has_trace;       /* the rank has a GPU trace (even an empty one) */
    const tfb_ranks_interval *intervals; /* any order */
    size_t n_intervals;
} tfb_ranks_input;

/* The kernel classifier: communication when `nccl` appears anywhere in the
 * name in any case (ncclKernel_AllReduce_..., ncclDevKernel_...: NCCL
 * renamed its kernels, which broke exact-prefix matching), else compute.
 * NULL is compute. Pure. */
tfb_ranks_class tfb_ranks_classify_kernel(const char *name);

typedef struct tfb_ranks_opts {
    size_t size;              /* sizeof(tfb_ranks_opts), set by _init */
    double straggler_excess;  /* default 0.05 */
    double straggler_share;   /* default 0.75 */
    size_t max_columns;       /* matrix columns; default 500, >= 1 */
} tfb_ranks_opts;

void tfb_ranks_opts_init(tfb_ranks_opts *opts);

/* ----------------------------------------------------------------- output */

typedef struct tfb_ranks_dist {
    double mean, p50, p90; /* NaN when n == 0 */
    size_t n;
} tfb_ranks_dist;

/* The GPU side of one rank (has_trace == 0: all zero / NaN). */
typedef struct tfb_ranks_gpu {
    int has_trace;
    int n_devices;
    int64_t span_ns;      /* last end - first start */
    /* Temporal breakdown (see the rules above); sums over devices. */
    int64_t compute_ns, comm_ns, memory_ns, idle_ns;
    double busy_pct;      /* NaN without intervals */
    /* Overlap: comm_union_ns = time a comm kernel runs; overlap_ns = of it,
     * time a compute kernel runs too (same device). */
    int64_t comm_union_ns, overlap_ns;
    double overlap;       /* overlap_ns / comm_union_ns; NaN when 0 */
    size_t n_intervals;   /* used (bad ones are left out, see notes) */
} tfb_ranks_gpu;

typedef struct tfb_ranks_rank {
    int32_t rank;
    size_t input_index;   /* index into the caller's array */
    size_t n_steps;       /* usable steps */
    tfb_ranks_dist step_ms, input_ms, comm_ms, compute_ms, own_ms;
    double comm_share;    /* sum comm / sum step over its steps */
    double input_share;   /* sum input / sum step */
    double slowdown;      /* see the rule above; NaN with < 2 ranks */
    double slower_share;  /* see the rule above; NaN with no shared step */
    int straggler;
    tfb_ranks_gpu gpu;
} tfb_ranks_rank;

typedef enum {
    TFB_RANKS_NOTE_NO_STEPS = 1,   /* rank: no usable step */
    TFB_RANKS_NOTE_DUP_RANK,       /* rank: number repeated; later left out */
    TFB_RANKS_NOTE_WORLD_SIZE,     /* world sizes disagree */
    TFB_RANKS_NOTE_MISSING_RANKS,  /* fewer ranks than the world size */
    TFB_RANKS_NOTE_NO_TRACE,       /* rank: no trace while others have one */
    TFB_RANKS_NOTE_NO_RANK,        /* input without a rank number: left out */
    TFB_RANKS_NOTE_DUP_STEP,       /* rank: a step logged twice (last kept) */
    TFB_RANKS_NOTE_BAD_VALUES,     /* rank: unusable steps or intervals */
    TFB_RANKS_NOTE_RANK_OUT_OF_WORLD /* rank >= the world size */
} tfb_ranks_note_kind;

typedef struct tfb_ranks_note {
    tfb_ranks_note_kind kind;
    int32_t rank;        /* the rank concerned, or -1 */
    int64_t count;       /* how many (steps, ranks, ...), or 0 */
    char text[192];      /* one sentence, for people */
} tfb_ranks_note;

/* The rank x step matrix, row r = ranks[r]. Cells NaN when empty. */
typedef struct tfb_ranks_matrix {
    size_t n_rows, n_cols;
    int64_t *col_first, *col_last; /* step range of each column */
    double *step_ms, *input_ms, *comm_ms, *compute_ms; /* [row * n_cols + c] */
} tfb_ranks_matrix;

typedef struct tfb_ranks_result {
    size_t n_ranks;
    tfb_ranks_rank *ranks;    /* sorted by rank number */
    int32_t world_size;       /* agreed (most common) world size, or 0 */
    double job_median_own_ms; /* median over ranks of median own time */
    /* Stragglers (indexes into ranks), worst (largest slowdown) first. */
    size_t n_stragglers;
    size_t *stragglers;
    /* Over the ranks that are not stragglers: sum comm / sum step; NaN
     * without such ranks or without comm/ms. */
    double others_comm_share;
    /* Per step of the union over ranks, ascending: the skew (NaN where
     * fewer than 2 ranks have a wall time). */
    size_t n_steps;
    int64_t *steps;
    double *skew_ms;
    tfb_ranks_dist skew;      /* over the steps with a skew */
    double skew_max_ms;
    int64_t skew_max_step;    /* -1 when none */
    tfb_ranks_matrix matrix;
    size_t n_notes;
    tfb_ranks_note *notes;
} tfb_ranks_result;

/* Analyses n ranks. opts may be NULL (defaults). Returns 0 and *out (free
 * with tfb_ranks_result_free), TFB_EINVAL (out NULL, inputs NULL with
 * n > 0, a NULL steps/intervals array with a count) or TFB_ENOMEM. n == 0
 * gives an empty result. */
int tfb_ranks_analyze(const tfb_ranks_input *inputs, size_t n,
                      const tfb_ranks_opts *opts, tfb_ranks_result **out);

/* NULL-safe. */
void tfb_ranks_result_free(tfb_ranks_result *r);

/* The GPU side of one rank alone (what tfb_ranks_analyze does per rank).
 * Returns 0, TFB_EINVAL or TFB_ENOMEM; *bad_out (may be NULL) counts the
 * intervals left out (end < start, or cls not a tfb_ranks_class). */
int tfb_ranks_gpu_breakdown(const tfb_ranks_interval *iv, size_t n,
                            tfb_ranks_gpu *out, size_t *bad_out);

#endif
