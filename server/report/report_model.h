/*
 * report_model.h - the runs `tfboard report` covers and their own facts,
 * gathered once from the store, then written out by the formatters
 * (report_json.c, report_text.c, report_html.c) together with every
 * plugin's section.
 *
 * Thread-safety: a model is built and used by one thread.
 */
#ifndef TFB_SERVER_REPORT_MODEL_H
#define TFB_SERVER_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "core/plugin.h"
#include "store/store.h"
#include "report/report_summary.h"

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
    size_t n_alerts;     /* tags with NaN/Inf (the health analysis) */
} tfb_report_run;

/* The facts that belong to no dashboard (run times, scalar tags); each
 * plugin writes its own section from its own analysis (plugin.h). */
typedef struct tfb_report {
    const char *logdir;
    tfb_store *store;
    tfb_report_opts opts;
    tfb_report_run *runs;
    size_t n_runs;
    size_t total_alerts;
    /* The first screen: findings and advice over these runs (indexes
     * into runs). */
    tfb_report_summary summary;
} tfb_report;

/* Builds the model for the store's runs selected by opts. Returns 0,
 * TFB_EINVAL (bad regex or thresholds, message in err) or TFB_ENOMEM. */
int tfb_report_build(tfb_report *rep, tfb_store *store,
                     const tfb_report_opts *opts, char *err, size_t err_len);
void tfb_report_free(tfb_report *rep);

/* The scalar that stands for the run on its summary line: "loss" (or the
 * first tag ending in "loss"), else "accuracy", else the first tag that is
 * not a timing, gradient or hparam series; NULL when none. */
const tfb_report_scalar *tfb_report_headline(const tfb_report_run *rr);

/* The whole report as JSON: {"logdir", "summary": {...}, (report_json.c,
 * server/API.md) "runs": [{"run", "steps", "first_wall_time",
 * "last_wall_time", "scalars": {tag: {"last","min","max","count"}}, and
 * each plugin's members ("alerts", "gradient_flags", "gpu", "pipeline")}]}.
 * Returns 0 or a plugin's error. */
int tfb_report_json(tfb_json *j, const tfb_report *rep);

/* Points of one scalar series as [[step, value], ...], evenly thinned to at
 * most max_points but always keeping the min, the max, the last point and
 * every non-finite point of each stride (for the html charts). */
void tfb_report_series_json(tfb_json *j, tfb_run *run, const char *tag,
                            size_t max_points);

#endif
