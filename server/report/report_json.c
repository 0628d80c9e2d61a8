/*
 * report_json.c - the report as JSON (the `--format json` output, and the
 * data the html page draws from). Field names match the HTTP routes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_model.h"

/* A scalar tag of the run, after its name: min and max are null when no
 * point was finite. */
static const tfb_json_field scalar_fields[] = {
    TFB_JSON_FIELD(tfb_report_scalar, last, DOUBLE),
    TFB_JSON_FIELD_IF("min", tfb_report_scalar, min, DOUBLE, has_finite),
    TFB_JSON_FIELD_IF("max", tfb_report_scalar, max, DOUBLE, has_finite),
    TFB_JSON_FIELD(tfb_report_scalar, count, SIZE),
    TFB_JSON_FIELD(tfb_report_scalar, last_step, I64),
    TFB_JSON_FIELD(tfb_report_scalar, nonfinite, U64),
};

/* NaN (no event had a wall time): null. */
static const tfb_json_field wall_fields[] = {
    TFB_JSON_FIELD_AS("first_wall_time", tfb_report_run, first_wall, NUM),
    TFB_JSON_FIELD_AS("last_wall_time", tfb_report_run, last_wall, NUM),
};

static int run_json(tfb_json *j, const tfb_report *rep,
                    const tfb_report_run *rr)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "run");
    tfb_json_str(j, rr->name);
    tfb_json_key(j, "steps");
    if (rr->max_step == INT64_MIN)
        tfb_json_null(j);
    else
        tfb_json_i64(j, rr->max_step);
    TFB_JSON_FIELDS(j, rr, wall_fields);
    tfb_json_key(j, "duration_s");
    if (isnan(rr->first_wall) || isnan(rr->last_wall))
        tfb_json_null(j);
    else
        tfb_json_double(j, rr->last_wall - rr->first_wall);

    tfb_json_key(j, "scalars");
    tfb_json_object_begin(j);
    for (size_t i = 0; i < rr->n_scalars; i++) {
        const tfb_report_scalar *s = &rr->scalars[i];
        tfb_json_key(j, s->tag);
        TFB_JSON_STRUCT(j, s, scalar_fields);
    }
    tfb_json_object_end(j);

    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    for (size_t k = 0; k < np; k++)
        if (pl[k]->report_json) {
            int rc = pl[k]->report_json(j, rep->store, rr->run, &rep->opts);
            if (rc < 0)
                return rc;
        }
    tfb_json_object_end(j);
    return 0;
}

static void run_names(tfb_json *j, const tfb_report *rep,
                      const tfb_report_group *g)
{
    tfb_json_array_begin(j);
    for (size_t i = 0; i < g->runs.n; i++)
        tfb_json_str(j, rep->runs[g->runs.v[i]].name);
    tfb_json_array_end(j);
}

/* "summary": the first screen (report_summary.h): a line per run, the
 * findings ranked and the advice grouped across runs. */
static void summary_json(tfb_json *j, const tfb_report *rep)
{
    const tfb_report_summary *sm = &rep->summary;
    tfb_json_key(j, "summary");
    tfb_json_object_begin(j);
    tfb_json_key(j, "runs");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < rep->n_runs; i++) {
        const tfb_report_run *rr = &rep->runs[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "run");
        tfb_json_str(j, rr->name);
        tfb_json_key(j, "steps");
        if (rr->max_step == INT64_MIN)
            tfb_json_null(j);
        else
            tfb_json_i64(j, rr->max_step);
        tfb_json_key(j, "duration_s");
        if (isnan(rr->first_wall) || isnan(rr->last_wall))
            tfb_json_null(j);
        else
            tfb_json_double(j, rr->last_wall - rr->first_wall);
        /* verdict: the label of its heaviest finding, or "ok" (not
         * "status": that is the run's own, finished/crashed/..., in the
         * run's object under "runs"). */
        const tfb_report_group *top = tfb_report_run_finding(sm, i);
        tfb_json_key(j, "verdict");
        if (top)
            tfb_json_strn(j, top->text, tfb_report_label_len(top->text));
        else
            tfb_json_str(j, "ok");
        tfb_json_key(j, "labels");
        tfb_json_array_begin(j);
        for (size_t k = 0; k < sm->n_findings; k++)
            if (tfb_report_group_has(&sm->findings[k], i))
                tfb_json_strn(j, sm->findings[k].text,
                              tfb_report_label_len(sm->findings[k].text));
        tfb_json_array_end(j);
        tfb_json_key(j, "finding");
        tfb_json_str(j, top ? top->text : NULL);
        tfb_json_key(j, "headline");
        const tfb_report_scalar *h = tfb_report_headline(rr);
        if (h) {
            tfb_json_object_begin(j);
            tfb_json_key(j, "tag");
            tfb_json_str(j, h->tag);
            tfb_json_key(j, "last");
            tfb_json_double(j, h->last);
            tfb_json_key(j, "step");
            tfb_json_i64(j, h->last_step);
            tfb_json_object_end(j);
        } else {
            tfb_json_null(j);
        }
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "findings");
    tfb_json_array_begin(j);
    for (size_t k = 0; k < sm->n_findings; k++) {
        const tfb_report_group *g = &sm->findings[k];
        tfb_json_object_begin(j);
        tfb_json_key(j, "label");
        tfb_json_strn(j, g->text, tfb_report_label_len(g->text));
        tfb_json_key(j, "text");
        tfb_json_str(j, g->text);
        tfb_json_key(j, "weight");
        tfb_json_double(j, g->weight);
        tfb_json_key(j, "runs");
        run_names(j, rep, g);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "advice");
    tfb_json_array_begin(j);
    for (size_t k = 0; k < sm->n_advice; k++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "advice");
        tfb_json_str(j, sm->advice[k].text);
        tfb_json_key(j, "runs");
        run_names(j, rep, &sm->advice[k]);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

int tfb_report_json(tfb_json *j, const tfb_report *rep)
{
    int rc = 0;
    tfb_json_object_begin(j);
    tfb_json_key(j, "logdir");
    tfb_json_str(j, rep->logdir);
    summary_json(j, rep);
    tfb_json_key(j, "runs");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < rep->n_runs && rc == 0; i++)
        rc = run_json(j, rep, &rep->runs[i]);
    tfb_json_array_end(j);
    tfb_json_object_end(j);
    return rc;
}

void tfb_report_series_json(tfb_json *j, tfb_run *run, const char *tag,
                            size_t max_points)
{
    tfb_series *s = tfb_run_find_series(run, TFB_SERIES_SCALAR, tag);
    tfb_json_array_begin(j);
    if (!s) {
        tfb_json_array_end(j);
        return;
    }
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    size_t n = v.count;
    /* Strides of about n / (max_points / 3) points; from each, its
     * minimum, maximum and first non-finite point, in order, so spikes and
     * NaNs survive the thinning. */
    size_t stride = 1;
    if (max_points >= 3 && n > max_points)
        stride = (n + max_points / 3 - 1) / (max_points / 3);
    for (size_t b = 0; b < n; b += stride) {
        size_t e = b + stride < n ? b + stride : n;
        size_t lo = b, hi = b;
        for (size_t i = b; i < e; i++) {
            float x = v.value[i];
            if (!isfinite(x))
                continue;
            if (!isfinite(v.value[lo]) || x < v.value[lo])
                lo = i;
            if (!isfinite(v.value[hi]) || x > v.value[hi])
                hi = i;
        }
        int nonfinite_kept = 0;
        for (size_t i = b; i < e; i++) {
            /* One non-finite point per stride marks it; a diverged run's
             * long NaN tail must not defeat the thinning. */
            int nf = !isfinite(v.value[i]) && !nonfinite_kept;
            int keep = stride == 1 || i == lo || i == hi || nf || i == n - 1;
            if (!keep)
                continue;
            if (nf)
                nonfinite_kept = 1;
            tfb_json_array_begin(j);
            tfb_json_i64(j, v.step[i]);
            tfb_json_float(j, v.value[i]);
            tfb_json_array_end(j);
        }
    }
    tfb_series_read_end(s);
    tfb_json_array_end(j);
}
