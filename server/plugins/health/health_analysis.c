/*
 * health_analysis.c - one alert per (run, tag) that ever held NaN/Inf,
 * built from the store's per-series statistics (see health_analysis.h).
 */
#include "plugins/health/health_analysis.h"
#include "analysis/precursors.h"
#include "base/vec.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Is point (w1, s1) earlier than (w2, s2)? A NaN wall time (a writer that
 * set none) sorts after every real one. */
static int earlier(double w1, int64_t s1, double w2, int64_t s2)
{
    if (isnan(w1) != isnan(w2))
        return isnan(w2);
    if (!isnan(w1) && w1 != w2)
        return w1 < w2;
    return s1 < s2;
}

static int cmp_alert(const void *pa, const void *pb)
{
    const tfb_health_alert *a = pa, *b = pb;
    if (earlier(a->first_wall_time, a->first_step, b->first_wall_time,
                b->first_step))
        return -1;
    if (earlier(b->first_wall_time, b->first_step, a->first_wall_time,
                a->first_step))
        return 1;
    int c = strcmp(a->run, b->run);
    return c ? c : strcmp(a->tag, b->tag);
}

/* The alerts being built for one run, with the per-kind parts kept apart
 * until the merge. */
typedef struct partial {
    tfb_health_alert a;
    int has_numerics;
    uint64_t num_nan, num_pinf, num_ninf; /* numerics element counts */
    uint64_t pt_nan, pt_pinf, pt_ninf;    /* scalar points */
    uint64_t h_nan, h_pinf, h_ninf;       /* histogram points */
} partial;

typedef TFB_VEC(tfb_health_alert) alert_vec;

static int add_run(tfb_run *run, alert_vec *out)
{
    static const tfb_series_kind kinds[] = {
        TFB_SERIES_SCALAR, TFB_SERIES_HISTOGRAM, TFB_SERIES_NUMERICS};
    TFB_VEC(partial) parts = {0};
    int rc = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && rc == 0; k++) {
        tfb_series **ser = NULL;
        size_t ns = 0;
        if ((rc = tfb_run_series(run, kinds[k], &ser, &ns)) < 0)
            break;
        for (size_t i = 0; i < ns; i++) {
            tfb_series_view v;
            tfb_series_read_begin(ser[i], &v);
            tfb_nonfinite_stats st = v.nonfinite;
            tfb_series_read_end(ser[i]);
            if (!st.has_first || st.points == 0)
                continue;
            const char *tag = tfb_series_tag(ser[i]);
            /* Few tags go bad in a run: a linear search is enough. */
            size_t j = 0;
            while (j < parts.n && strcmp(parts.v[j].a.tag, tag) != 0)
                j++;
            if (j == parts.n) {
                partial *np = tfb_vec_add(&parts);
                if (np == NULL) {
                    rc = TFB_ENOMEM;
                    break;
                }
                np->a.run = tfb_run_name(run);
                np->a.tag = tag;
                np->a.first_step = st.first_step;
                np->a.first_wall_time = st.first_wall;
            } else if (earlier(st.first_wall, st.first_step,
                               parts.v[j].a.first_wall_time,
                               parts.v[j].a.first_step)) {
                parts.v[j].a.first_step = st.first_step;
                parts.v[j].a.first_wall_time = st.first_wall;
            }
            partial *q = &parts.v[j];
            if (st.points > q->a.events)
                q->a.events = st.points;
            switch (kinds[k]) {
            case TFB_SERIES_SCALAR:
                q->pt_nan += st.nan;
                q->pt_pinf += st.pos_inf;
                q->pt_ninf += st.neg_inf;
                break;
            case TFB_SERIES_HISTOGRAM:
                q->h_nan += st.nan;
                q->h_pinf += st.pos_inf;
                q->h_ninf += st.neg_inf;
                break;
            default:
                q->has_numerics = 1;
                q->num_nan += st.nan;
                q->num_pinf += st.pos_inf;
                q->num_ninf += st.neg_inf;
                break;
            }
        }
        free(ser);
    }
    for (size_t j = 0; j < parts.n && rc == 0; j++) {
        partial *q = &parts.v[j];
        /* A numerics record counts the elements of the histogram (or
         * tensor) that the histogram point itself only flags: prefer it. */
        if (q->has_numerics) {
            q->a.nan = q->num_nan + q->pt_nan;
            q->a.pos_inf = q->num_pinf + q->pt_pinf;
            q->a.neg_inf = q->num_ninf + q->pt_ninf;
        } else {
            q->a.nan = q->h_nan + q->pt_nan;
            q->a.pos_inf = q->h_pinf + q->pt_pinf;
            q->a.neg_inf = q->h_ninf + q->pt_ninf;
        }
        if (tfb_vec_push(out, q->a) < 0) {
            rc = TFB_ENOMEM;
            break;
        }
    }
    tfb_vec_free(&parts);
    return rc;
}

int tfb_health_alerts(tfb_store *s, tfb_run *only, tfb_health_alert **out,
                      size_t *n)
{
    if (s == NULL || out == NULL || n == NULL)
        return TFB_EINVAL;
    alert_vec a = {0};
    int rc = 0;
    if (only != NULL) {
        rc = add_run(only, &a);
    } else {
        tfb_run **runs = NULL;
        size_t nr = 0;
        rc = tfb_store_runs(s, &runs, &nr);
        for (size_t i = 0; i < nr && rc == 0; i++)
            rc = add_run(runs[i], &a);
        free(runs);
    }
    if (rc < 0) {
        tfb_vec_free(&a);
        return rc;
    }
    if (a.n > 1)
        qsort(a.v, a.n, sizeof *a.v, cmp_alert);
    /* The first alert of each run: what came before its first NaN. */
    for (size_t i = 0; i < a.n; i++) {
        a.v[i].explain[0] = 0;
        size_t k = 0;
        while (k < i && strcmp(a.v[k].run, a.v[i].run) != 0)
            k++;
        if (k < i)
            continue;
        tfb_run *r = tfb_store_find_run(s, a.v[i].run);
        tfb_precursors p;
        if (!r || tfb_precursors_find(r, a.v[i].first_step,
                                      a.v[i].first_step,
                                      TFB_PRECURSOR_K_DEFAULT, &p) < 0)
            continue;
        p.nonfinite = 0; /* the alert is the non-finite value itself */
        p.n_batches = 0;
        char why[256];
        tfb_precursors_text(&p, why, sizeof why);
        snprintf(a.v[i].explain, sizeof a.v[i].explain, "%s%s%s at %lld",
                 why, why[0] ? "; " : "", a.v[i].nan ? "NaN" : "Inf",
                 (long long)a.v[i].first_step);
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

static const tfb_json_field alert_fields[] = {
    TFB_JSON_FIELD(tfb_health_alert, run, STR),
    TFB_JSON_FIELD(tfb_health_alert, tag, STR),
    TFB_JSON_FIELD(tfb_health_alert, first_step, I64),
    /* null when the writer set no wall time */
    TFB_JSON_FIELD(tfb_health_alert, first_wall_time, NUM),
    TFB_JSON_FIELD(tfb_health_alert, nan, U64),
    TFB_JSON_FIELD(tfb_health_alert, pos_inf, U64),
    TFB_JSON_FIELD(tfb_health_alert, neg_inf, U64),
    TFB_JSON_FIELD(tfb_health_alert, events, U64),
    TFB_JSON_FIELD(tfb_health_alert, explain, TEXT),
};

void tfb_health_alerts_member(tfb_json *j, const tfb_health_alert *a,
                              size_t n)
{
    tfb_json_key(j, "alerts");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        TFB_JSON_STRUCT(j, &a[i], alert_fields);
    tfb_json_array_end(j);
}

void tfb_health_alerts_json(tfb_json *j, const tfb_health_alert *a, size_t n)
{
    tfb_json_object_begin(j);
    tfb_health_alerts_member(j, a, n);
    tfb_json_object_end(j);
}
