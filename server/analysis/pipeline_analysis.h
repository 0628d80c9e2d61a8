/*
 * pipeline_analysis.h - "is this run input-bound, by how much, and what
 * should change": the input-pipeline analysis shared by the HTTP routes
 * (/data/plugin/pipeline/...) and `tfboard report`.
 *
 *
 *
 * Data: the per-step scalars pipeline/step_ms and pipeline/input_ms
 * (DESIGN.md conventions, written by tfb_step_end or any other tool), and,
 * when the run holds a trace store with host spans (TFB_HOST_SPANS) and
 * kernels, the time the GPU sat idle and the host time outside input waits.
 *
 * Verdict (TensorFlow profiler thresholds, REFERENCE.md):
 *   input_fraction >= 0.20  "highly"
 *   input_fraction >= 0.05  "moderately"
 *   else other_host_fraction >= 0.03 (trace only)  "potentially"
 *   else "not"
 *
 * Thread-safety: every function here is reentrant; the store functions may
 * run on many threads at once (they pin series snapshots briefly).
 */
#ifndef TFB_SERVER_PIPELINE_ANALYSIS_H
#define TFB_SERVER_PIPELINE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "store/store.h"


#define TFB_PIPELINE_HIGHLY 0.20
#define TFB_PIPELINE_MODERATELY 0.05
#define TFB_PIPELINE_OTHER 0.03
/* saving_fraction leaves out the largest n / TFB_PIPELINE_TRIM savings. */
#define TFB_PIPELINE_TRIM 12

/* One step that has both scalars; comm_ms is the step's collective wait
 * (TFB_TAG_COMM_MS, a rank of a data-parallel job), 0 when not logged. */
typedef struct tfb_pipeline_step {
    int64_t step;
    double step_ms;
    double input_ms;
    double comm_ms;
} tfb_pipeline_step;

typedef struct tfb_pipeline_stats {
    double mean, stddev, min, max, p50, p90, p99;
} tfb_pipeline_stats;

/* What a trace adds. has_trace is 0 when the run has no trace store with
 * step spans; the fractions are then unknown (null in JSON). */
typedef struct tfb_pipeline_trace {
    int has_trace;
    /* Share of step time (union of step spans) during which the host was
     * neither waiting for input nor covered by GPU work: the profiler's
     * "all other time". */
    double other_host_fraction;
    /* Share of GPU idle time inside steps that falls inside input waits;
     * 0 when the GPU was never idle inside a step. */
    double gpu_idle_in_input_fraction;
    /* Raw figures behind the fractions, in ns. */
    int64_t step_ns, input_ns, gpu_busy_ns, gpu_idle_ns, idle_in_input_ns;
} tfb_pipeline_trace;

typedef struct tfb_pipeline_summary {
    size_t steps;
    double mean_step_ms, mean_input_ms;
    double input_fraction;    /* Σ input_ms / Σ step_ms; 0 when Σ step is 0 */
    /* The share of step time that faster input would save, which sets the
     * verdict (the 5 % rule, server/API.md): per step, the input wait less
     * the step's collective wait (a rank that gets its batch sooner only
     * waits longer for the others), averaged without the largest 1 in
     * TFB_PIPELINE_TRIM of them (one-off stalls, e.g. the OS scheduler, are
     * not the loaders' doing), times the steps, divided by the summed step
     * time. A steady wait gives input_fraction. */
    double saving_fraction;
    const char *verdict;      /* static string; NULL when steps == 0 */
    tfb_pipeline_stats step_ms, input_ms;
    tfb_pipeline_trace trace;
} tfb_pipeline_summary;

/* The verdict for the given fractions (other_host_fraction is used only
 * when has_trace). Returns a static string. */
const char *tfb_pipeline_verdict(double input_fraction, int has_trace,
                                 double other_host_fraction);

/* Statistics of v[0..n) (n >= 1): mean, population stddev, min, max, and
 * percentiles by linear interpolation between closest ranks (numpy's
 * default). v is reordered. */
void tfb_pipeline_stats_of(double *v, size_t n, tfb_pipeline_stats *out);

/* Summarizes n steps (trace may be NULL = no trace). Returns 0, TFB_ENOMEM
 * or TFB_EINVAL. n == 0 gives steps 0 and verdict NULL. */
int tfb_pipeline_summarize(const tfb_pipeline_step *steps, size_t n,
                           const tfb_pipeline_trace *trace,
                           tfb_pipeline_summary *out);

/* One recommendation in two forms: title and advice are the same text on
 * every run that gets it (static strings: a report groups runs by them),
 * detail quotes this run's figures ("" when none), and sentence is the
 * whole recommendation with the figures in it. detail and sentence live
 * only during the emit call. */
typedef struct tfb_pipeline_advice {
    const char *title;    /* a few words: "Raise loader throughput" */
    const char *advice;   /* one sentence, without this run's numbers */
    const char *detail;
    const char *sentence;
} tfb_pipeline_advice;

/* The recommendations, in order of importance: emit(user, a) for each. */
void tfb_pipeline_advise(const tfb_pipeline_summary *s,
                         void (*emit)(void *user, const tfb_pipeline_advice *a),
                         void *user);

/* The same recommendations as whole sentences tied to the summary's
 * numbers (tfb_pipeline_advise's sentence): emit(user, text) for each. */
void tfb_pipeline_recommend(const tfb_pipeline_summary *s,
                            void (*emit)(void *user, const char *text),
                            void *user);

/* Writes the summary object of /data/plugin/pipeline/summary:
 * {"steps", "mean_step_ms", "mean_input_ms", "input_fraction", "verdict",
 *  "step_ms": {"mean","stddev","min","max","p50","p90","p99"},
 *  "input_ms": {...same...}, "other_host_fraction",
 *  "gpu_idle_in_input_fraction", "recommendations": [...],
 *  "advice": [{"title", "advice", "detail"}, ...]}
 * with null for what is unknown (no steps, no trace). */
void tfb_pipeline_summary_json(tfb_json *j, const tfb_pipeline_summary *s);

/* The run's steps that hold both scalars, ordered by step (when a step was
 * logged more than once, its last value in file order wins; non-finite or
 * negative values drop the step). *out is malloc'd (free()); NULL with
 * *n == 0 when there are none. Returns 0 or TFB_ENOMEM. */
int tfb_pipeline_collect(tfb_run *run, tfb_pipeline_step **out, size_t *n);

/* Lays the host step/input spans of the run's GPU trace (trace.h)
 * against its GPU busy intervals and fills *out; out->has_trace = 0 when
 * the run has no trace, no step spans or no kernels. Returns 0, or
 * TFB_ENOMEM (unreadable trace files are skipped: a trace is an extra,
 * never a reason to fail). */
int tfb_pipeline_trace_of_run(tfb_store *store, tfb_run *run,
                              tfb_pipeline_trace *out);

/* Collect + trace + summarize for one run. Returns 0 or TFB_ENOMEM. */
int tfb_pipeline_analyze_run(tfb_store *store, tfb_run *run,
                             tfb_pipeline_summary *out);

/* The JSON of /data/plugin/pipeline/steps: [[step, step_ms, input_ms], ...]. */
void tfb_pipeline_steps_json(tfb_json *j, const tfb_pipeline_step *steps,
                             size_t n);

#endif
