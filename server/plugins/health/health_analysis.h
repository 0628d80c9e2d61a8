/*
 * health_analysis.h - "where did the first NaN or Inf appear": the alerts
 * of GET /data/plugin/health/alerts and of `tfboard report`.
 *
 *
 *
 * Data: the non-finite statistics the store keeps per series at ingestion
 * (store.h, tfb_nonfinite_stats) for scalars, histograms and numerics
 * records, whoever wrote them (a NaN loss from PyTorch, a histogram whose
 * min/max/sum/num is not finite, tfb_check_numerics records).
 *
 * One alert per (run, tag) that ever held a non-finite value. A tag may be
 * several series at once (libtfboard writes a numerics record under a
 * histogram's tag when the histogram's input held NaN/Inf); they make one
 * alert:
 *   first_step/first_wall_time: the earliest first point of them (by wall
 *     time, then step);
 *   nan/pos_inf/neg_inf: for a tag with numerics records, their element
 *     counts plus the scalar points; otherwise the counts of non-finite
 *     points (scalars and histograms);
 *   events: how many logged points held a non-finite value (the largest of
 *     the series' counts, since a histogram and its numerics record at one
 *     step are one event).
 * Ordered by first_wall_time, then first_step, then run, then tag, so the
 * first alert is where the trouble started.
 *
 * Thread-safety: reentrant; may run on many threads at once.
 */
#ifndef TFB_SERVER_HEALTH_ANALYSIS_H
#define TFB_SERVER_HEALTH_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "store/store.h"

typedef struct tfb_health_alert {
    const char *run;      /* owned by the store (stable) */
    const char *tag;      /* owned by the store (stable) */
    int64_t first_step;
    double first_wall_time;
    uint64_t nan, pos_inf, neg_inf;
    uint64_t events;
    /* On the first alert of each run (the run's first NaN/Inf), what came
     * before it (analysis/precursors.h): "gradient norms grew 10^4x from step
     * 56 (fc3 first); NaN at 61"; "" on the others. */
    char explain[320];
} tfb_health_alert;

/* The alerts of one run (only != NULL) or of every run, ordered as above.
 * *out is malloc'd (free() it; NULL when *n is 0). Returns 0 or
 * TFB_ENOMEM. */
int tfb_health_alerts(tfb_store *s, tfb_run *only, tfb_health_alert **out,
                      size_t *n);

/* Writes the member "alerts": [{"run", "tag", "first_step",
 * "first_wall_time", "nan", "pos_inf", "neg_inf", "events", "explain"},
 * ...] into the object being built ("first_wall_time" null when the
 * writer set none, "explain" null when empty): the report's section; and
 * {"alerts": [...]}, the route's answer. */
void tfb_health_alerts_member(tfb_json *j, const tfb_health_alert *a,
                              size_t n);
void tfb_health_alerts_json(tfb_json *j, const tfb_health_alert *a,
                            size_t n);

#endif
