/*
 * report_model.h - what `tfboard report` knows about each run, gathered
 * once from the store by the same analyses the HTTP routes use, then
 * written out by the formatters (report_json.c, report_text.c,
 * report_html.c).
 *
 * Ownership: area "pipeline". Thread-safety: a model is built and used by
 * one thread.
 */
#ifndef TFB_SERVER_REPORT_MODEL_H
#define TFB_SERVER_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "pipeline_analysis.h"
#include "store.h"

struct tfb_gradients;

typedef struct tfb_report_scalar {
    const char *tag;     /* owned by the store */
    size_t count;
    double last;         /* value of the last point in file order */
    int64_t last_step;
    int has_finite;      /* 0: every point was NaN/Inf; min/max unknown */
    double min, max;     /* over finite values */
    uint64_t nonfinite;  /* points that were NaN or +-Inf */
} tfb_report_scalar;

typedef struct tfb_report_run {
    tfb_run *run;
    const char *name;    /* owned by the store */
    int64_t max_step;    /* INT64_MIN when no event had a step */
    double first_wall, last_wall; /* NaN when unknown */
    tfb_report_scalar *scalars;
    size_t n_scalars;
    int has_pipeline;
    tfb_pipeline_summary pipeline;
    /* Sections from other areas' analyses (report_sections.c). */
    struct tfb_gradients *grads;  /* NULL when the run has no grad norms */
    size_t n_alerts;
    void *alerts;                 /* report_sections.c's own */
    void *gpu;                    /* report_sections.c's own */
} tfb_report_run;

typedef struct tfb_report_opts {
    const char *run_regex;  /* POSIX extended, unanchored; NULL = all runs */
    double grad_vanish;     /* gradient flag thresholds */
    double grad_explode;
} tfb_report_opts;

typedef struct tfb_report {
    const char *logdir;
    tfb_report_run *runs;
    size_t n_runs;
    size_t total_alerts;
} tfb_report;

/* Builds the model for the store's runs selected by opts. Returns 0,
 * TFB_EINVAL (bad regex or thresholds, message in err) or TFB_ENOMEM. */
int tfb_report_build(tfb_report *rep, tfb_store *store,
                     const tfb_report_opts *opts, char *err, size_t err_len);
void tfb_report_free(tfb_report *rep);

/* The whole report as JSON: {"runs": [{"run", "steps", "first_wall_time",
 * "last_wall_time", "scalars": {tag: {"last","min","max","count"}},
 * "alerts", "gradient_flags", "pipeline", "gpu"}]}. */
void tfb_report_json(tfb_json *j, const tfb_report *rep);

/* Points of one scalar series as [[step, value], ...], evenly thinned to at
 * most max_points but always keeping the min, the max, the last point and
 * every non-finite point of each stride (for the html charts). */
void tfb_report_series_json(tfb_json *j, tfb_run *run, const char *tag,
                            size_t max_points);

#endif
