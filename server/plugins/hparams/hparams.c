/*
 * hparams.c - the hparams plugin: routes /data/plugin/hparams/{experiment,
 * runs, groups} and the run's hparams section of `tfboard report`. Its
 * tab (webui/js/pages/hparams.js) shows a hparam-vs-metric scatter; the
 * table with a column per hparam is on the Runs page and the groups are
 * drawn by the Scalars page.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hparams_analysis.h"
#include "plugins/hparams/hparams_groups.h"
#include "core/plugin.h"
#include "core/report_fmt.h"

static void json_value(tfb_json *j, const tfb_hparam_value *v)
{
    switch (v->kind) {
    case TFB_HPV_NUMBER: tfb_json_double(j, v->number); break;
    case TFB_HPV_STRING: tfb_json_strn(j, v->str ? v->str : "", v->len); break;
    case TFB_HPV_BOOL: tfb_json_bool(j, v->boolean); break;
    default: tfb_json_null(j); break;
    }
}

static const char *type_name(int t)
{
    switch (t) {
    case 1: return "string";
    case 2: return "bool";
    case 3: return "number";
    default: return "unset";
    }
}

/* Time fields: null when the file held none. */
static void json_time(tfb_json *j, const char *key, double t)
{
    tfb_json_key(j, key);
    if (isnan(t))
        tfb_json_null(j);
    else
        tfb_json_double(j, t);
}

static void json_experiment(tfb_json *j, const tfb_hparams_experiment *e)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "runs_with_hparams");
    tfb_json_u64(j, e->n_runs);
    tfb_json_key(j, "experiments");
    tfb_json_u64(j, e->n_experiments);
    tfb_json_key(j, "hparams");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < e->n_columns; i++) {
        const tfb_hparam_column *c = &e->columns[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "name");
        tfb_json_strn(j, c->name, c->name_len);
        tfb_json_key(j, "display_name");
        tfb_json_str(j, c->display_name ? c->display_name : "");
        tfb_json_key(j, "description");
        tfb_json_str(j, c->description ? c->description : "");
        tfb_json_key(j, "type");
        tfb_json_str(j, type_name(c->type));
        tfb_json_key(j, "runs");
        tfb_json_u64(j, c->n_runs);
        tfb_json_key(j, "values");
        tfb_json_array_begin(j);
        for (size_t k = 0; k < c->n_values; k++)
            json_value(j, &c->values[k]);
        tfb_json_array_end(j);
        tfb_json_key(j, "more_values");
        tfb_json_bool(j, c->more_values);
        json_time(j, "min", c->min_seen);
        json_time(j, "max", c->max_seen);
        if (c->has_interval) {
            tfb_json_key(j, "interval");
            tfb_json_array_begin(j);
            tfb_json_double(j, c->min_value);
            tfb_json_double(j, c->max_value);
            tfb_json_array_end(j);
        }
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "metrics");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < e->n_metrics; i++) {
        const tfb_hparam_metric *m = &e->metrics[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "tag");
        tfb_json_str(j, m->tag);
        tfb_json_key(j, "group");
        tfb_json_str(j, m->group ? m->group : "");
        tfb_json_key(j, "display_name");
        tfb_json_str(j, m->display_name ? m->display_name : "");
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "metrics_left_out");
    tfb_json_u64(j, e->metrics_left_out);
    tfb_json_object_end(j);
}

static int route_experiment(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_hparams_experiment e;
    if (tfb_hparams_experiment_get(tfb_server_store(req), &e) < 0) {
        tfb_hparams_experiment_free(&e);
        return tfb_http_error(resp, 500, "out of memory");
    }
    tfb_json j;
    tfb_json_init(&j);
    json_experiment(&j, &e);
    tfb_hparams_experiment_free(&e);
    return tfb_http_json(resp, &j);
}

/* A metric with points: min and max are null when none was finite. */
static const tfb_json_field metric_fields[] = {
    TFB_JSON_FIELD(tfb_metric_summary, last, DOUBLE),
    TFB_JSON_FIELD(tfb_metric_summary, last_step, I64),
    TFB_JSON_FIELD_IF("min", tfb_metric_summary, min, DOUBLE, finite),
    TFB_JSON_FIELD_IF("max", tfb_metric_summary, max, DOUBLE, finite),
};

static void json_metric(tfb_json *j, const tfb_metric_summary *m,
                        const char *own_run)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "count");
    tfb_json_u64(j, m->count);
    if (m->count)
        TFB_JSON_FIELDS(j, m, metric_fields);
    tfb_json_key(j, "nonfinite");
    tfb_json_u64(j, m->nonfinite);
    if (m->run && strcmp(m->run, own_run) != 0) {
        tfb_json_key(j, "run");
        tfb_json_str(j, m->run);
    }
    tfb_json_object_end(j);
}

/* [{run, has_hparams, hparams: {name: value}, group, status, start_time,
 *   end_time, metrics: {tag: {count, last, last_step, min, max,
 *   nonfinite, run?}}}]: the metric tags are every experiment's metric
 * tags plus the `metric` parameter (any scalar tag). */
static int route_runs(const tfb_http_req *req, tfb_http_resp *resp)
{
    tfb_store *s = tfb_server_store(req);
    const char *extra;
    if (tfb_http_param_str(req, resp, "metric", 0, NULL, &extra) < 0)
        return 0;
    tfb_run **runs;
    size_t nr;
    if (tfb_store_runs(s, &runs, &nr) < 0)
        return tfb_http_error(resp, 500, "out of memory");
    /* Each run's records are decoded once: the experiments' metric tags
     * come from the same sets the rows are written from. */
    tfb_hparams_set *sets = calloc(nr ? nr : 1, sizeof *sets);
    int err = !sets;
    for (size_t i = 0; i < nr && !err; i++)
        err = tfb_run_hparams(s, runs[i], &sets[i]) < 0;
    tfb_hparams_experiment e;
    memset(&e, 0, sizeof e);
    if (!err)
        err = tfb_hparams_metrics_of(sets, nr, &e) < 0;
    tfb_json j;
    tfb_json_init(&j);
    tfb_json_array_begin(&j);
    for (size_t i = 0; i < nr && !err; i++) {
        const tfb_hparams_set h = sets[i];
        const char *name = tfb_run_name(runs[i]);
        char sb[24];
        tfb_json_object_begin(&j);
        tfb_json_key(&j, "run");
        tfb_json_str(&j, name);
        tfb_json_key(&j, "has_hparams");
        tfb_json_bool(&j, h.has_start);
        tfb_json_key(&j, "hparams");
        tfb_json_object_begin(&j);
        for (size_t k = 0; k < h.n_hparams; k++) {
            tfb_json_keyn(&j, h.hparams[k].name, h.hparams[k].name_len);
            json_value(&j, &h.hparams[k].value);
        }
        tfb_json_object_end(&j);
        tfb_json_key(&j, "group");
        tfb_json_strn(&j, h.group_name ? h.group_name : "",
                      h.group_name ? h.group_name_len : 0);
        tfb_json_key(&j, "status");
        if (h.has_end)
            tfb_json_str(&j, tfb_hparams_status_name(h.status, sb));
        else
            tfb_json_null(&j);
        json_time(&j, "start_time", h.start_time);
        json_time(&j, "end_time", h.end_time);
        if (h.n_bad || h.n_left_out) {
            tfb_json_key(&j, "note");
            char msg[160];
            int n = 0;
            if (h.n_bad)
                n = snprintf(msg, sizeof msg,
                             "%zu hparams record(s) not readable", h.n_bad);
            if (h.n_left_out)
                snprintf(msg + n, sizeof msg - (size_t)n,
                         "%s%zu hparams past the first %d left out",
                         n ? "; " : "", h.n_left_out,
                         TFB_HPARAMS_MAX_PER_SESSION);
            tfb_json_str(&j, msg);
        }
        tfb_json_key(&j, "metrics");
        tfb_json_object_begin(&j);
        for (size_t m = 0; m <= e.n_metrics; m++) {
            const char *tag = m < e.n_metrics ? e.metrics[m].tag : extra;
            if (!tag || !*tag)
                continue;
            if (m == e.n_metrics) { /* the extra tag: skip if listed */
                int dup = 0;
                for (size_t k = 0; k < e.n_metrics && !dup; k++)
                    dup = strcmp(e.metrics[k].tag, tag) == 0;
                if (dup)
                    continue;
            }
            tfb_metric_summary ms;
            if (tfb_run_metric_summary(s, runs[i], tag, &ms) == 0) {
                tfb_json_key(&j, tag);
                json_metric(&j, &ms, name);
            }
        }
        tfb_json_object_end(&j);
        tfb_json_object_end(&j);
    }
    tfb_json_array_end(&j);
    for (size_t i = 0; sets && i < nr; i++)
        tfb_hparams_set_free(&sets[i]);
    free(sets);
    free(runs);
    tfb_hparams_experiment_free(&e);
    if (err) {
        tfb_json_free(&j);
        return tfb_http_error(resp, 500, "out of memory");
    }
    return tfb_http_json(resp, &j);
}

static int has_hparams(tfb_store *s, tfb_run *r)
{
    return tfb_run_has_hparams(s, r);
}

/* ---- report: the run's hparams ---------------------------------------- */

static int report_text(FILE *f, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o, int markdown)
{
    (void)o;
    tfb_hparams_set h;
    int e = tfb_run_hparams(s, r, &h);
    if (e < 0 || !h.has_start) {
        tfb_hparams_set_free(&h);
        return e < 0 ? e : 0;
    }
    fputs(markdown ? "\n### Hyperparameters\n\n" : "  hparams:", f);
    for (size_t i = 0; i < h.n_hparams; i++) {
        size_t len = tfb_hparam_value_text(&h.hparams[i].value, NULL, 0);
        char *buf = malloc(len + 1);
        if (!buf) {
            tfb_hparams_set_free(&h);
            return TFB_ENOMEM;
        }
        tfb_hparam_value_text(&h.hparams[i].value, buf, len + 1);
        /* names and values come from files: the writer escapes them */
        fputs(markdown ? "- " : " ", f);
        tfb_report_put_str(f, h.hparams[i].name, markdown);
        fputs(markdown ? " = " : "=", f);
        tfb_report_put_str(f, buf, markdown);
        if (markdown)
            fputc('\n', f);
        free(buf);
    }
    if (h.has_end) {
        char sb[24];
        fprintf(f, markdown ? "- status: %s\n" : " (%s)",
                tfb_hparams_status_name(h.status, sb));
    }
    if (!markdown)
        fputc('\n', f);
    tfb_hparams_set_free(&h);
    return 0;
}

static int report_json(tfb_json *j, tfb_store *s, tfb_run *r,
                       const tfb_report_opts *o)
{
    (void)o;
    tfb_hparams_set h;
    int e = tfb_run_hparams(s, r, &h);
    if (e < 0 || !h.has_start) {
        tfb_hparams_set_free(&h);
        return e < 0 ? e : 0;
    }
    tfb_json_key(j, "hparams");
    tfb_json_object_begin(j);
    for (size_t i = 0; i < h.n_hparams; i++) {
        tfb_json_keyn(j, h.hparams[i].name, h.hparams[i].name_len);
        json_value(j, &h.hparams[i].value);
    }
    tfb_json_object_end(j);
    if (h.has_end) {
        char sb[24];
        tfb_json_key(j, "hparams_status");
        tfb_json_str(j, tfb_hparams_status_name(h.status, sb));
    }
    tfb_hparams_set_free(&h);
    return 0;
}

static const tfb_plugin_route routes[] = {
    {"experiment", route_experiment},
    {"runs", route_runs},
    {"groups", tfb_route_hparams_groups},
};

/* Its web files (page.js first), embedded from this folder by the
 * build (server/plugins/meson.build). */
extern const tfb_asset tfb_hparams_assets[];

const tfb_plugin tfb_plugin_hparams = {
    TFB_PLUGIN_ABI,
    .name = "hparams",
    .title = "HParams",
    .module = "js/pages/hparams.js",
    .assets = tfb_hparams_assets,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
    .has_data = has_hparams,
    .report_text = report_text,
    .report_json = report_json,
};
