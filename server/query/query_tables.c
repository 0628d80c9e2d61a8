/*
 * query_tables.c - the run-side tables over runs and scalars (server/
 * API.md "SQL tables"): runs, hparams, scalars, scalar_stats and steps.
 * Each fills the generic cursor (query_vtab.c) one run at a time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hparams_analysis.h"
#include "analysis/ranks_jobs.h"
#include "analysis/run_status.h"
#include "base/deadline.h"
#include "query/query_internal.h"
#include "tfboard.h"

/* ---- runs ------------------------------------------------------------ */

enum { R_RUN, R_STATUS, R_START, R_END, R_STEPS, R_GROUP, R_RANK, R_WORLD,
       R_JOB, R_NCOL };

/* The jobs (for rank, world_size, job), found once per scan. */
typedef struct runs_state {
    int jobs_loaded;
    tfb_ranks_job *jobs;
    size_t njobs;
} runs_state;

static int runs_fill(qcursor *c)
{
    tfb_run *r = c->runs[c->ri];
    runs_state *rs = c->state;
    if (!rs) {
        rs = c->state = calloc(1, sizeof *rs);
        if (!rs)
            return TFB_ENOMEM;
    }
    qcell *x = qc_row(c);
    if (!x)
        return TFB_ENOMEM;
    c->vt->q->rows_touched++;
    qc_stable(&x[R_RUN], tfb_run_name(r));
    if (qc_used(c, R_STATUS)) {
        tfb_run_status st;
        if (tfb_run_status_judge(r, tfb_now_wall(), &st) == 0)
            qc_stable(&x[R_STATUS], tfb_run_state_name(st.state));
    }
    qc_dbl(&x[R_START], tfb_run_first_wall(r));
    qc_dbl(&x[R_END], tfb_run_last_wall(r));
    if (tfb_run_max_step(r) != INT64_MIN)
        qc_int(&x[R_STEPS], tfb_run_max_step(r));
    if (qc_used(c, R_GROUP)) {
        tfb_hparams_set h;
        int rc = tfb_run_hparams(c->vt->q->store, r, &h);
        if (rc == 0 && h.has_start && h.group_name_len)
            rc = qc_text(c, &x[R_GROUP], h.group_name, h.group_name_len);
        tfb_hparams_set_free(&h);
        if (rc < 0)
            return rc;
    }
    if (qc_used(c, R_RANK) || qc_used(c, R_WORLD) || qc_used(c, R_JOB)) {
        if (!rs->jobs_loaded) {
            if (tfb_ranks_find_jobs(c->vt->q->store, &rs->jobs, &rs->njobs) < 0)
                return TFB_ENOMEM;
            rs->jobs_loaded = 1;
        }
        const tfb_ranks_job *j = tfb_ranks_job_of_run(rs->jobs, rs->njobs, r);
        if (j) {
            int rc = qc_text(c, &x[R_JOB], j->name, j->name_len);
            if (rc < 0)
                return rc;
            for (size_t i = 0; i < j->n_members; i++)
                if (j->members[i].run == r) {
                    if (j->members[i].rank >= 0)
                        qc_int(&x[R_RANK], j->members[i].rank);
                    if (j->members[i].world_size > 0)
                        qc_int(&x[R_WORLD], j->members[i].world_size);
                }
        }
    }
    c->run_done = 1;
    return 0;
}

static void runs_reset(qcursor *c)
{
    /* the jobs stay for the next run of the scan; freed with the last */
    runs_state *rs = c->state;
    if (rs && (c->closing || c->ri + 1 >= c->nruns)) {
        tfb_ranks_jobs_free(rs->jobs, rs->njobs);
        free(rs);
        c->state = NULL;
    }
}

const qtable tfb_qt_runs = {
    "runs",
    "CREATE TABLE x(run TEXT, status TEXT, start_time REAL, end_time REAL,"
    " steps INTEGER, group_name TEXT, rank INTEGER, world_size INTEGER,"
    " job TEXT)",
    R_NCOL, -1, -1, runs_fill, runs_reset};

/* ---- hparams --------------------------------------------------------- */

static const char *hpv_type(tfb_hpv_kind k)
{
    switch (k) {
    case TFB_HPV_NUMBER: return "number";
    case TFB_HPV_STRING: return "string";
    case TFB_HPV_BOOL: return "bool";
    case TFB_HPV_OTHER: return "other";
    default: return "none";
    }
}

/* One row a hyperparameter: the run's whole set fits one fill (at most
 * TFB_HPARAMS_MAX_PER_SESSION; rows past TFB_QUERY_FILL_ROWS continue at
 * c->pi on the next fill). */
static int hparams_fill(qcursor *c)
{
    tfb_hparams_set *h = c->state;
    if (!h) {
        h = c->state = calloc(1, sizeof *h);
        if (!h)
            return TFB_ENOMEM;
        int rc = tfb_run_hparams(c->vt->q->store, c->runs[c->ri], h);
        if (rc < 0)
            return rc;
        c->vt->q->rows_touched += (int64_t)h->n_hparams;
    }
    while (c->pi < h->n_hparams && c->nrows < TFB_QUERY_FILL_ROWS) {
        const tfb_hparam_kv *kv = &h->hparams[c->pi++];
        qcell *x = qc_row(c);
        if (!x)
            return TFB_ENOMEM;
        qc_stable(&x[0], tfb_run_name(c->runs[c->ri]));
        int rc = qc_text(c, &x[1], kv->name, kv->name_len);
        if (rc == 0 && kv->value.kind == TFB_HPV_STRING)
            rc = qc_text(c, &x[2], kv->value.str, kv->value.len);
        if (rc < 0)
            return rc;
        if (kv->value.kind == TFB_HPV_NUMBER)
            qc_dbl(&x[2], kv->value.number);
        else if (kv->value.kind == TFB_HPV_BOOL)
            qc_int(&x[2], kv->value.boolean);
        qc_stable(&x[3], hpv_type(kv->value.kind));
    }
    if (c->pi >= h->n_hparams)
        c->run_done = 1;
    return 0;
}

static void hparams_reset(qcursor *c)
{
    if (c->state) {
        tfb_hparams_set_free(c->state);
        free(c->state);
        c->state = NULL;
    }
}

const qtable tfb_qt_hparams = {
    "hparams", "CREATE TABLE x(run TEXT, name TEXT, value, type TEXT)", 4,
    1, -1, hparams_fill, hparams_reset};

/* ---- scalars --------------------------------------------------------- */

/* The next points of the run's scalar series, TFB_QUERY_CHUNK at a time
 * straight from the store's blocks (no pin). */
static int scalars_fill(qcursor *c)
{
    int rc = qc_series(c, TFB_SERIES_SCALAR);
    if (rc < 0)
        return rc;
    int64_t step[TFB_QUERY_CHUNK];
    double wall[TFB_QUERY_CHUNK], v[TFB_QUERY_CHUNK];
    while (c->si < c->nseries && c->nrows + TFB_QUERY_CHUNK <= TFB_QUERY_FILL_ROWS) {
        tfb_series *s = c->series[c->si];
        size_t k = tfb_series_scalar_range(s, c->pi, TFB_QUERY_CHUNK, step,
                                           wall, NULL, v);
        if (k == 0) {
            c->si++;
            c->pi = 0;
            continue;
        }
        c->pi += k;
        c->vt->q->rows_touched += (int64_t)k;
        const char *run = tfb_run_name(c->runs[c->ri]);
        const char *tag = tfb_series_tag(s);
        size_t run_len = strlen(run), tag_len = strlen(tag);
        for (size_t i = 0; i < k; i++) {
            if (!qc_step_ok(c, step[i]))
                continue;
            qcell *x = qc_row(c);
            if (!x)
                return TFB_ENOMEM;
            x[0].type = x[1].type = SQLITE_TEXT;
            x[0].s = run;
            x[0].len = run_len;
            x[1].s = tag;
            x[1].len = tag_len;
            qc_int(&x[2], step[i]);
            qc_dbl(&x[3], wall[i]);
            qc_dbl(&x[4], v[i]);
        }
        if (c->nrows)
            break;
    }
    if (c->si >= c->nseries)
        c->run_done = 1;
    return 0;
}

const qtable tfb_qt_scalars = {
    "scalars",
    "CREATE TABLE x(run TEXT, tag TEXT, step INTEGER, wall_time REAL,"
    " value REAL)",
    5, 1, 2, scalars_fill, NULL};

/* ---- scalar_stats ---------------------------------------------------- */

static int stats_fill(qcursor *c)
{
    int rc = qc_series(c, TFB_SERIES_SCALAR);
    if (rc < 0)
        return rc;
    while (c->si < c->nseries && c->nrows < TFB_QUERY_FILL_ROWS) {
        tfb_series *s = c->series[c->si++];
        qcell *x = qc_row(c);
        if (!x)
            return TFB_ENOMEM;
        qc_stable(&x[0], tfb_run_name(c->runs[c->ri]));
        qc_stable(&x[1], tfb_series_tag(s));
        int need = qc_used(c, 3) || qc_used(c, 4) || qc_used(c, 5) ||
                   qc_used(c, 6) || qc_used(c, 7) || qc_used(c, 2);
        if (!need) {
            tfb_nonfinite_stats nf;
            tfb_series_nonfinite(s, &nf);
            qc_int(&x[8], (int64_t)(nf.nan + nf.pos_inf + nf.neg_inf));
            continue;
        }
        const qstats *st = tfb_qstats_get(c->vt->q, s);
        if (!st)
            return TFB_ENOMEM;
        qc_int(&x[2], (int64_t)st->count);
        if (st->count) {
            qc_dbl(&x[3], st->first);
            qc_dbl(&x[4], st->last);
            qc_dbl(&x[5], st->min);
            qc_dbl(&x[6], st->max);
            qc_int(&x[7], st->last_step);
        }
        qc_int(&x[8], (int64_t)st->nonfinite);
    }
    if (c->si >= c->nseries)
        c->run_done = 1;
    return 0;
}

const qtable tfb_qt_scalar_stats = {
    "scalar_stats",
    "CREATE TABLE x(run TEXT, tag TEXT, count INTEGER, first REAL,"
    " last REAL, min REAL, max REAL, last_step INTEGER, nonfinite INTEGER)",
    9, 1, -1, stats_fill, NULL};

/* ---- steps ----------------------------------------------------------- */

typedef struct steps_state {
    tfb_ranks_step *v;
    size_t n;
} steps_state;

static int steps_fill(qcursor *c)
{
    steps_state *ss = c->state;
    if (!ss) {
        ss = c->state = calloc(1, sizeof *ss);
        if (!ss)
            return TFB_ENOMEM;
        if (tfb_ranks_collect(c->runs[c->ri], &ss->v, &ss->n) < 0)
            return TFB_ENOMEM;
        c->vt->q->rows_touched += (int64_t)ss->n;
    }
    while (c->pi < ss->n && c->nrows < TFB_QUERY_FILL_ROWS) {
        const tfb_ranks_step *p = &ss->v[c->pi++];
        if (!qc_step_ok(c, p->step))
            continue;
        qcell *x = qc_row(c);
        if (!x)
            return TFB_ENOMEM;
        qc_stable(&x[0], tfb_run_name(c->runs[c->ri]));
        qc_int(&x[1], p->step);
        qc_dbl(&x[2], p->step_ms);
        qc_dbl(&x[3], p->input_ms);
        qc_dbl(&x[4], p->comm_ms);
        qc_dbl(&x[5], p->wall_end);
    }
    if (c->pi >= ss->n)
        c->run_done = 1;
    return 0;
}

static void steps_reset(qcursor *c)
{
    steps_state *ss = c->state;
    if (ss) {
        free(ss->v);
        free(ss);
        c->state = NULL;
    }
}

const qtable tfb_qt_steps = {
    "steps",
    "CREATE TABLE x(run TEXT, step INTEGER, step_ms REAL, input_ms REAL,"
    " comm_ms REAL, wall_time REAL)",
    6, -1, 1, steps_fill, steps_reset};
