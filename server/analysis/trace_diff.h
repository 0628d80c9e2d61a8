/*
 * trace_diff.h - HTA's TraceDiff between two runs' traces
 * (hta/trace_diff.py: compare_traces and ops_diff): per name, the count
 * and total duration of the GPU kernels and of the CPU ops in each trace,
 * their differences, and the kind of change of the count:
 *   added     - only the test trace (B) has it,
 *   deleted   - only the control trace (A) has it,
 *   increased / decreased - both have it, B more / fewer times,
 *   unchanged - both, the same number of times (its time may differ).
 * Kernels: every kernel of the GPU trace (tfb_trace_kernel_stats). CPU
 * ops: the host side's ops and runtime/driver calls (tfb_trace_host ops:
 * Kineto cpu_op, python_function, cuda_runtime/driver; NVTX ranges are
 * not ops), total duration as HTA sums it (not self time). HTA compares
 * the first iteration of rank 0 by default; we compare the whole traces
 * of the two runs.
 *
 * Rows are sorted by |B - A total time| descending, then by name (and
 * kernels before ops on a tie); at most TFB_TRACE_DIFF_ROWS_MAX are
 * listed, the counts per kind cover every name.
 *
 * Ownership: the diff owns its rows and their names. Thread-safety: any
 * thread (the runs' traces are held while read).
 */
#ifndef TFB_SERVER_TRACE_DIFF_H
#define TFB_SERVER_TRACE_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Rows listed: a page's and a report's worth; a trace holds thousands of
 * op names, most of them unchanged. */
#define TFB_TRACE_DIFF_ROWS_MAX 200

typedef enum tfb_trace_diff_kind {
    TFB_TRACE_DIFF_ADDED = 0,
    TFB_TRACE_DIFF_DELETED,
    TFB_TRACE_DIFF_INCREASED,
    TFB_TRACE_DIFF_DECREASED,
    TFB_TRACE_DIFF_UNCHANGED,
    TFB_TRACE_DIFF_KINDS
} tfb_trace_diff_kind;

typedef struct tfb_trace_diff_row {
    char *name;
    const char *device;   /* "gpu" (a kernel) or "cpu" (an op); static */
    const char *change;   /* tfb_trace_diff_kind_name; static */
    int64_t count_a, count_b, total_ns_a, total_ns_b;
    int64_t diff_count, diff_ns; /* B - A */
} tfb_trace_diff_row;

typedef struct tfb_trace_diff {
    int has_a, has_b;      /* the run has a GPU trace or host ops */
    tfb_trace_diff_row *rows;
    size_t n;              /* listed: at most TFB_TRACE_DIFF_ROWS_MAX */
    size_t names;          /* names compared, kernels and ops */
    /* names per kind, for kernels [0] and ops [1] */
    size_t kinds[2][TFB_TRACE_DIFF_KINDS];
} tfb_trace_diff;

/* "added", "deleted", "increased", "decreased", "unchanged". */
const char *tfb_trace_diff_kind_name(int k);

/* The diff of run b (test) against run a (control), each of its store;
 * a run whose trace is not loaded yet is waited for at most wait_ms
 * (< 0: until loaded), and counts as having no trace. 0, TFB_ENOMEM. */
int tfb_trace_diff_runs(tfb_store *sa, tfb_run *a, tfb_store *sb,
                        tfb_run *b, int wait_ms, tfb_trace_diff *out);
void tfb_trace_diff_free(tfb_trace_diff *d);

#endif
