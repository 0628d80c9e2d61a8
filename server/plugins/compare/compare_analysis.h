/*
 * compare_analysis.h - two runs side by side: the comparison that the
 * compare dashboard (/data/plugin/compare/compare?a=..&b=..) and `tfboard
 * report --compare A B` (server/report/report_compare.h) share. It lives
 * in the compare plugin's folder, below the report, so the route needs
 * nothing from server/report/.
 *
 * The comparison is built once as structs (tfb_compare_runs); the JSON
 * (compare_json.c, here), text/Markdown and html writers (server/report/
 * report_compare_text.c, report_compare_html.c) render the same structs,
 * and the report's regression gate (tfb_compare_gate_*) judges them.
 *
 * Facts compared (A is the baseline, B the new run):
 *  - every scalar tag the two runs share: its final value (last point in
 *    file order) and its minimum over finite values;
 *  - the input pipeline (pipeline_analysis.h): mean step time, mean input
 *    wait and the input share (Σ input / Σ step) with its verdict;
 *  - GPU kernel time by kernel name (gpu_analysis.h), over the union of
 *    the names of both traces;
 *  - HTA's TraceDiff of the two traces: kernels and CPU ops added,
 *    deleted, and changed in count and total time (analysis/trace_diff.h);
 *  - the hparams whose values differ (or that only one run has);
 *  - efficiency (analysis/efficiency.h): mean MFU, tokens/s and J/token,
 *    with the --peak_tflops and --grid_gco2_per_kwh flags when the
 *    efficiency dashboard's options hold them (core/plugin.h).
 *
 * Changes: `change` is the relative change (B - A) / |A|; it is 0 when
 * both are 0, +-Infinity when only A is 0, and NaN when either side is
 * not finite or missing. The input share's change is in share points
 * (B - A), since it is already a fraction.
 *
 * Thread-safety: a tfb_compare is built and read by one thread; building
 * reads the stores as any analysis does (safe alongside the loader).
 */
#ifndef TFB_SERVER_COMPARE_ANALYSIS_H
#define TFB_SERVER_COMPARE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/trace_diff.h"
#include "core/json.h"
#include "store/store.h"

/* A kernel counts as "slower" in B when its total time grew by more than
 * this share (and by at least TFB_COMPARE_SLOWER_MIN_NS), so noise on
 * tiny kernels is not flagged. */
#define TFB_COMPARE_SLOWER 0.05
#define TFB_COMPARE_SLOWER_MIN_NS 1000

typedef struct tfb_compare_scalar {
    char *tag;
    double last_a, last_b, last_change;
    int has_min_a, has_min_b; /* 0: every point was NaN/Inf */
    double min_a, min_b, min_change;
    size_t count_a, count_b;
} tfb_compare_scalar;

typedef struct tfb_compare_pipeline {
    size_t steps_a, steps_b;  /* 0: that run has no step timings */
    double step_ms_a, step_ms_b, step_change;       /* mean step time */
    double input_ms_a, input_ms_b, input_ms_change; /* mean input wait */
    double share_a, share_b, share_change;          /* change in points */
    const char *verdict_a, *verdict_b;              /* static; NULL */
} tfb_compare_pipeline;

/* Efficiency (analysis/efficiency.h) of both runs; NaN where a run lacks
 * the figure (MFU: peak unknown; J/token: no energy or no tokens). */
typedef struct tfb_compare_eff {
    int has_a, has_b;                     /* the run has step timing or
                                             perf scalars */
    double mfu_a, mfu_b, mfu_change;      /* percent of the peak */
    double tokens_a, tokens_b, tokens_change; /* tokens/s */
    double jpt_a, jpt_b, jpt_change;      /* J/token */
} tfb_compare_eff;

typedef struct tfb_compare_kernel {
    char *name;
    int64_t count_a, count_b;       /* 0 when the run has no such kernel */
    int64_t total_ns_a, total_ns_b;
    double mean_ns_a, mean_ns_b;    /* NaN when count is 0 */
    double change;                  /* of total_ns */
    int slower;                     /* see TFB_COMPARE_SLOWER */
} tfb_compare_kernel;

typedef struct tfb_compare_hparam {
    char *name;
    char *a, *b; /* the value as text; NULL when the run lacks it */
} tfb_compare_hparam;

typedef struct tfb_compare {
    char *name_a, *name_b;          /* how the runs were named */
    tfb_compare_scalar *scalars;    /* shared tags, by tag */
    size_t n_scalars;
    size_t only_a, only_b;          /* scalar tags in one run only */
    tfb_compare_pipeline pipeline;
    tfb_compare_eff eff;
    int traced_a, traced_b;         /* the run has a readable GPU trace */
    int loading_a, loading_b;       /* its trace is still being read */
    char *gpu_error_a, *gpu_error_b; /* why its trace could not be read */
    int64_t kernel_ns_a, kernel_ns_b; /* Σ kernel time */
    double kernel_change;
    tfb_compare_kernel *kernels;    /* by B - A total descending */
    size_t n_kernels;
    tfb_compare_hparam *hparams;    /* differing only, by name */
    size_t n_hparams;
    size_t hparams_a, hparams_b;    /* hparams each run logged */
    tfb_trace_diff diff;            /* HTA's TraceDiff, when both traced */
} tfb_compare;

/* Compares run a of store sa (the baseline) with run b of store sb (the
 * stores may be the same). name_a/name_b label the runs in the output
 * (copied; NULL: the run's name). GPU traces load in the background
 * (gpu_trace.h): gpu_wait_ms bounds the wait for each (< 0: until loaded,
 * as the report does; an HTTP route waits briefly and answers "loading").
 * Returns 0 or TFB_ENOMEM; an unreadable trace is "not traced" with its
 * error, never a failure. On failure *out is left empty. */
int tfb_compare_runs(tfb_store *sa, tfb_run *a, const char *name_a,
                     tfb_store *sb, tfb_run *b, const char *name_b,
                     int gpu_wait_ms, tfb_compare *out);
void tfb_compare_free(tfb_compare *c);

/* (b - a) / |a| with the rules above. */
double tfb_compare_change(double a, double b);

/* ---- the JSON writer ------------------------------------------------- */

/* The comparison object (route /data/plugin/compare/compare and
 * `tfboard report --compare --format json`):
 * {"a", "b", "scalars": [{"tag", "last_a", "last_b", "last_change",
 *   "min_a", "min_b", "min_change", "count_a", "count_b"}],
 *  "scalars_only_a", "scalars_only_b",
 *  "pipeline": {"steps_a", "steps_b", "step_ms_a", "step_ms_b",
 *   "step_ms_change", "input_ms_a", "input_ms_b", "input_ms_change",
 *   "input_share_a", "input_share_b", "input_share_change", "verdict_a",
 *   "verdict_b"} (a side without step timings has nulls),
 *  "gpu": {"traced_a", "traced_b", "loading_a", "loading_b", "error_a",
 *   "error_b", "kernel_ns_a", "kernel_ns_b",
 *   "kernel_change", "kernels": [{"name", "count_a", "count_b",
 *   "total_ns_a", "total_ns_b", "mean_ns_a", "mean_ns_b", "change",
 *   "slower"}]},
 *  "trace_diff": null or {"names", "rows_max", "kernels": {"added",
 *   "deleted", "increased", "decreased", "unchanged"}, "ops": {...},
 *   "rows": [{"name", "device", "change", "count_a", "count_b",
 *   "total_ns_a", "total_ns_b", "diff_count", "diff_ns"}]},
 *  "hparams": {"count_a", "count_b", "differ": [{"name", "a", "b"}]},
 *  "efficiency": {"has_a", "has_b", "mfu_a", "mfu_b", "mfu_change",
 *   "tokens_per_s_a", "tokens_per_s_b", "tokens_per_s_change",
 *   "j_per_token_a", "j_per_token_b", "j_per_token_change"}}
 * Unknown numbers are null; non-finite data values are "NaN"/"Infinity"
 * strings as everywhere in the API. */
void tfb_compare_json(tfb_json *j, const tfb_compare *c);

#endif
