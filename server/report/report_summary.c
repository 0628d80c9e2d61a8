/*
 * report_summary.c - gathers the plugins' findings and advice for the
 * report's runs and groups them across runs (see report_summary.h).
 */
#include "report/report_summary.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

typedef TFB_VEC(tfb_report_group) group_vec;

typedef struct gather {
    group_vec findings, advice;
    size_t run;
    int err;
} gather;

/* Adds run g->run to the group of that text, or a new group. */
static void add(gather *g, group_vec *v, double weight, const char *text)
{
    if (g->err)
        return;
    tfb_report_group *grp = NULL;
    for (size_t i = 0; i < v->n && !grp; i++)
        if (!strcmp(v->v[i].text, text))
            grp = &v->v[i];
    if (!grp) {
        grp = tfb_vec_add(v);
        if (!grp || !(grp->text = strdup(text))) {
            if (grp)
                v->n--;
            g->err = TFB_ENOMEM;
            return;
        }
        grp->weight = weight;
    }
    /* One run may say the same thing twice: it is named once. */
    if (grp->runs.n && grp->runs.v[grp->runs.n - 1] == g->run)
        return;
    if (tfb_vec_push(&grp->runs, g->run) < 0) {
        g->err = TFB_ENOMEM;
        return;
    }
    if (weight > grp->weight)
        grp->weight = weight;
}

static void on_finding(void *user, double weight, const char *text)
{
    gather *g = user;
    add(g, &g->findings, weight, text);
}

static void on_advice(void *user, const char *text)
{
    gather *g = user;
    add(g, &g->advice, 0, text);
}

/* Heaviest first; equal weights keep the order of their first run. */
static int cmp_group(const void *a, const void *b)
{
    const tfb_report_group *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight < y->weight ? 1 : -1;
    return (x->runs.v[0] > y->runs.v[0]) - (x->runs.v[0] < y->runs.v[0]);
}

static void free_groups(tfb_report_group *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].text);
        tfb_vec_free(&v[i].runs);
    }
    free(v);
}

int tfb_report_summarize(tfb_store *store, const tfb_report_opts *opts,
                         tfb_run *const *runs, size_t n,
                         tfb_report_summary *out)
{
    memset(out, 0, sizeof *out);
    gather g = {0};
    size_t np;
    const tfb_plugin *const *pl = tfb_plugins(&np);
    for (size_t i = 0; i < n && !g.err; i++) {
        g.run = i;
        for (size_t k = 0; k < np && !g.err; k++) {
            int rc = 0;
            if (pl[k]->report_findings)
                rc = pl[k]->report_findings(store, runs[i], opts, on_finding,
                                            &g);
            if (rc == 0 && pl[k]->report_advice)
                rc = pl[k]->report_advice(store, runs[i], opts, on_advice,
                                          &g);
            if (rc < 0)
                g.err = rc;
        }
    }
    if (g.err) {
        free_groups(g.findings.v, g.findings.n);
        free_groups(g.advice.v, g.advice.n);
        return g.err;
    }
    /* Groups are made in run order, so runs[0] is each one's first run. */
    if (g.findings.n > 1)
        qsort(g.findings.v, g.findings.n, sizeof *g.findings.v, cmp_group);
    out->findings = g.findings.v;
    out->n_findings = g.findings.n;
    out->advice = g.advice.v;
    out->n_advice = g.advice.n;
    return 0;
}

void tfb_report_summary_free(tfb_report_summary *s)
{
    if (!s)
        return;
    free_groups(s->findings, s->n_findings);
    free_groups(s->advice, s->n_advice);
    memset(s, 0, sizeof *s);
}

size_t tfb_report_label_len(const char *t)
{
    const char *c = strchr(t, ':');
    return c ? (size_t)(c - t) : strlen(t);
}

int tfb_report_group_has(const tfb_report_group *g, size_t run)
{
    for (size_t i = 0; i < g->runs.n; i++)
        if (g->runs.v[i] == run)
            return 1;
    return 0;
}

const tfb_report_group *tfb_report_run_finding(const tfb_report_summary *s,
                                               size_t run)
{
    for (size_t i = 0; i < s->n_findings; i++)
        if (tfb_report_group_has(&s->findings[i], run))
            return &s->findings[i];
    return NULL;
}
