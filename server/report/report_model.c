/*
 * report_model.c - gathers the report's own facts for each selected run
 * from the store (the plugins' sections are written by the plugins).
 */
#include "report/report_model.h"
#include "report/report_where.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/natural.h"
#include "base/regex_bound.h"
#include "plugins/health/health_analysis.h"

static int scalar_facts(tfb_series *s, tfb_report_scalar *out)
{
    memset(out, 0, sizeof *out);
    out->tag = tfb_series_tag(s);
    tfb_series_view v;
    tfb_series_read_begin(s, &v);
    out->count = v.count;
    out->last = NAN;
    out->min = INFINITY;
    out->max = -INFINITY;
    for (size_t i = 0; i < v.count; i++) {
        double x = v.value[i];
        if (isfinite(x)) {
            out->has_finite = 1;
            if (x < out->min)
                out->min = x;
            if (x > out->max)
                out->max = x;
        } else {
            out->nonfinite++;
        }
    }
    if (v.count) {
        out->last = v.value[v.count - 1];
        out->last_step = v.step[v.count - 1];
    }
    tfb_series_read_end(s);
    return 0;
}

static int run_facts(tfb_report_run *rr, tfb_store *store, tfb_run *run,
                     const tfb_report_opts *opts)
{
    memset(rr, 0, sizeof *rr);
    rr->run = run;
    rr->name = tfb_run_name(run);
    rr->max_step = tfb_run_max_step(run);
    rr->first_wall = tfb_run_first_wall(run);
    rr->last_wall = tfb_run_last_wall(run);

    tfb_series **ser;
    size_t n;
    int rc = tfb_run_series(run, TFB_SERIES_SCALAR, &ser, &n);
    if (rc < 0)
        return rc;
    if (n > 0) {
        rr->scalars = calloc(n, sizeof *rr->scalars);
        if (!rr->scalars) {
            free(ser);
            return TFB_ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
            scalar_facts(ser[i], &rr->scalars[i]);
        rr->n_scalars = n;
    }
    free(ser);

    (void)opts;
    tfb_health_alert *alerts;
    rc = tfb_health_alerts(store, run, &alerts, &rr->n_alerts);
    if (rc < 0)
        return rc;
    free(alerts);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const tfb_report_run *x = a, *y = b;
    return tfb_natural_cmp(x->name, y->name);
}

int tfb_report_build(tfb_report *rep, tfb_store *store,
                     const tfb_report_opts *opts, char *err, size_t err_len)
{
    memset(rep, 0, sizeof *rep);
    const char *run_regex = opts->run_regex;
    rep->logdir = tfb_store_logdir(store);
    rep->store = store;
    rep->opts = *opts;
    regex_t re;
    char msg[300];
    if (run_regex && tfb_regex_compile(&re, run_regex,
                                       REG_EXTENDED | REG_NOSUB, msg,
                                       sizeof msg) < 0) {
        snprintf(err, err_len, "bad --run regex '%s': %s", run_regex, msg);
        return TFB_EINVAL;
    }
    tfb_where_set where = {0};
    if (opts->where) {
        int wrc = tfb_where_eval(store, opts->where, &where, err, err_len);
        if (wrc < 0) {
            if (run_regex)
                regfree(&re);
            return TFB_EINVAL; /* a usage error: exit 2 */
        }
    }
    tfb_run **runs;
    size_t n;
    int rc = tfb_store_runs(store, &runs, &n);
    if (rc < 0) {
        if (run_regex)
            regfree(&re);
        tfb_where_set_free(&where);
        return rc;
    }
    rep->runs = n ? calloc(n, sizeof *rep->runs) : NULL;
    if (n && !rep->runs)
        rc = TFB_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (run_regex && regexec(&re, tfb_run_name(runs[i]), 0, NULL, 0) != 0)
            continue;
        if (opts->where && !tfb_where_has(&where, tfb_run_name(runs[i])))
            continue;
        rc = run_facts(&rep->runs[rep->n_runs], store, runs[i],
                       opts);
        rep->total_alerts += rep->runs[rep->n_runs].n_alerts;
        rep->n_runs++;
    }
    free(runs);
    if (run_regex)
        regfree(&re);
    tfb_where_set_free(&where);
    /* Runs in natural order of their names, as the sidebar lists them
     * (ranks 0, 1, 2, 3, a sweep by value), not in the order they began. */
    if (rc == 0 && rep->n_runs > 1)
        qsort(rep->runs, rep->n_runs, sizeof *rep->runs, by_name);
    if (rc == 0) {
        tfb_run **sel = rep->n_runs ? malloc(rep->n_runs * sizeof *sel) : NULL;
        if (rep->n_runs && !sel)
            rc = TFB_ENOMEM;
        for (size_t i = 0; i < rep->n_runs && sel; i++)
            sel[i] = rep->runs[i].run;
        if (rc == 0)
            rc = tfb_report_summarize(store, opts, sel, rep->n_runs,
                                      &rep->summary);
        free(sel);
    }
    if (rc < 0) {
        snprintf(err, err_len, "%s", tfb_strerror(rc));
        tfb_report_free(rep);
    }
    return rc;
}

void tfb_report_free(tfb_report *rep)
{
    if (!rep)
        return;
    for (size_t i = 0; i < rep->n_runs; i++) {
        tfb_report_run *rr = &rep->runs[i];
        free(rr->scalars);
    }
    free(rep->runs);
    tfb_report_summary_free(&rep->summary);
    memset(rep, 0, sizeof *rep);
}

static int ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n >= m && !strcmp(s + n - m, end);
}

const tfb_report_scalar *tfb_report_headline(const tfb_report_run *rr)
{
    static const char *const skip[] = {"pipeline/", "comm/", "grad_norm/",
                                       "hparam/", "gpu/"};
    const tfb_report_scalar *loss = NULL, *acc = NULL, *other = NULL;
    for (size_t i = 0; i < rr->n_scalars; i++) {
        const tfb_report_scalar *sc = &rr->scalars[i];
        if (!strcmp(sc->tag, "loss"))
            return sc;
        if (!loss && ends_with(sc->tag, "loss"))
            loss = sc;
        if (!acc && !strcmp(sc->tag, "accuracy"))
            acc = sc;
        int skipped = 0;
        for (size_t k = 0; k < sizeof skip / sizeof *skip; k++)
            skipped |= !strncmp(sc->tag, skip[k], strlen(skip[k]));
        if (!other && !skipped)
            other = sc;
    }
    return loss ? loss : acc ? acc : other;
}
