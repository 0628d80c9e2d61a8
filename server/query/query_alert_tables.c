/*
 * query_alert_tables.c - the run-side tables of what the analysis layer
 * finds in a run (server/API.md "SQL tables"): spikes (the loss spikes
 * of the online detector, analysis/spike_detect.h) and alerts (the
 * conditions the Alerts API derives from the run status and those
 * spikes). Both read the loss watch the store keeps per loss series
 * (a snapshot: no decode) and the run status (no pin); nothing is
 * copied but one series' watch while a fill reads it.
 *
 * The alerts plugin lives above this layer, so the conditions only it
 * works out (user --alert rules, straggler, input_bound, gpu_idle,
 * gpu_memory) are not rows here: this table holds the conditions that
 * need no server setting, worked out the way alerts_feed.c does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/loss_watch.h"
#include "analysis/run_status.h"
#include "base/deadline.h"
#include "query/query_internal.h"
#include "tfboard.h"

/* Rows one spike makes at most (alerts: loss_spike, spike_open or
 * diverged): a fill stops before it could pass TFB_QUERY_FILL_ROWS. */
#define ROWS_PER_SPIKE 2

enum { S_RUN, S_TAG, S_STEP, S_VALUE, S_LEVEL, S_Z, S_PEAK_STEP, S_PEAK,
       S_STATE, S_END_STEP, S_NCOL };
enum { A_RUN, A_RULE, A_TAG, A_STEP, A_MESSAGE, A_NCOL };

static int add_alert(qcursor *c, const char *rule, const char *tag,
                     int64_t step, int has_step, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int add_alert(qcursor *c, const char *rule, const char *tag,
                     int64_t step, int has_step, const char *fmt, ...)
{
    qcell *x = qc_row(c);
    if (!x)
        return TFB_ENOMEM;
    qc_stable(&x[A_RUN], tfb_run_name(c->runs[c->ri]));
    qc_stable(&x[A_RULE], rule);
    if (tag)
        qc_stable(&x[A_TAG], tag);
    if (has_step)
        qc_int(&x[A_STEP], step);
    if (!qc_used(c, A_MESSAGE))
        return 0;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof msg)
        n = (int)sizeof msg - 1;
    return qc_text(c, &x[A_MESSAGE], msg, (size_t)n);
}

static int spike_rows(qcursor *c, tfb_series *s, const tfb_spike *sp,
                      int alerts)
{
    const char *tag = tfb_series_tag(s);
    if (!alerts) {
        if (!qc_step_ok(c, sp->step))
            return 0;
        qcell *x = qc_row(c);
        if (!x)
            return TFB_ENOMEM;
        qc_stable(&x[S_RUN], tfb_run_name(c->runs[c->ri]));
        qc_stable(&x[S_TAG], tag);
        qc_int(&x[S_STEP], sp->step);
        qc_dbl(&x[S_VALUE], sp->value);
        qc_dbl(&x[S_LEVEL], sp->level);
        qc_dbl(&x[S_Z], sp->z);
        qc_int(&x[S_PEAK_STEP], sp->peak_step);
        qc_dbl(&x[S_PEAK], sp->peak);
        qc_stable(&x[S_STATE], tfb_spike_state_name(sp->state));
        qc_int(&x[S_END_STEP], sp->end_step);
        return 0;
    }
    int rc = add_alert(c, "loss_spike", tag, sp->step, 1,
                       "%s spiked to %.4g (level %.4g, z %.0f) at step "
                       "%lld, %s", tag, sp->value, sp->level, sp->z,
                       (long long)sp->step, tfb_spike_state_name(sp->state));
    if (rc == 0 && sp->state == TFB_SPIKE_OPEN)
        rc = add_alert(c, "spike_open", tag, sp->step, 1,
                       "%s has not recovered from its spike at step %lld "
                       "(%.4g, level %.4g)", tag, (long long)sp->step,
                       sp->value, sp->level);
    if (rc == 0 && sp->state == TFB_SPIKE_DIVERGED)
        rc = add_alert(c, "diverged", tag, sp->step, 1,
                       "%s diverged after its spike at step %lld", tag,
                       (long long)sp->step);
    return rc;
}

/* The spikes of the run's loss series from (c->si, c->pi) on, until the
 * fill is full; sets run_done after the last. */
static int spikes_walk(qcursor *c, int alerts)
{
    int rc = qc_series(c, TFB_SERIES_SCALAR);
    if (rc < 0)
        return rc;
    while (c->si < c->nseries &&
           c->nrows + ROWS_PER_SPIKE <= TFB_QUERY_FILL_ROWS) {
        tfb_series *s = c->series[c->si];
        tfb_loss_watch w;
        int got = tfb_series_loss_watch(s, &w);
        if (got == TFB_ENOENT) {      /* not a loss series */
            c->si++;
            c->pi = 0;
            continue;
        }
        if (got < 0)
            return got;
        size_t k = w.det.spikes.n;
        for (; c->pi < k && rc == 0 &&
               c->nrows + ROWS_PER_SPIKE <= TFB_QUERY_FILL_ROWS;
             c->pi++) {
            c->vt->q->rows_touched++;
            rc = spike_rows(c, s, &w.det.spikes.v[c->pi], alerts);
        }
        int over = c->pi >= k;
        tfb_loss_watch_free(&w);
        if (rc < 0)
            return rc;
        if (over) {
            c->si++;
            c->pi = 0;
        }
    }
    if (c->si >= c->nseries)
        c->run_done = 1;
    return 0;
}

static int spikes_fill(qcursor *c) { return spikes_walk(c, 0); }

const qtable tfb_qt_spikes = {
    "spikes",
    "CREATE TABLE x(run TEXT, tag TEXT, step INTEGER, value REAL,"
    " level REAL, z REAL, peak_step INTEGER, peak REAL, state TEXT,"
    " end_step INTEGER)",
    S_NCOL, S_TAG, S_STEP, spikes_fill, NULL};

/* The run status's conditions (once a run, before its spikes), as
 * alerts_feed.c words them, without the precursors (the Alerts API's
 * messages add them). */
static int status_rows(qcursor *c)
{
    tfb_run_status st;
    if (tfb_run_status_judge(c->runs[c->ri], tfb_now_wall(), &st) != 0)
        return 0;   /* a run of trace files only: no writer to judge */
    c->vt->q->rows_touched++;
    int rc = 0;
    if (st.diverged_why && !strcmp(st.diverged_why, "non-finite"))
        rc = add_alert(c, "nonfinite", st.diverged_tag, st.diverged_step, 1,
                       "NaN/Inf in %s at step %lld",
                       st.diverged_tag ? st.diverged_tag : "?",
                       (long long)st.diverged_step);
    else if (st.diverged_why)
        rc = add_alert(c, "diverged", st.diverged_tag, st.diverged_step, 1,
                       "%s blew up at step %lld",
                       st.diverged_tag ? st.diverged_tag : "?",
                       (long long)st.diverged_step);
    if (rc == 0 && st.state == TFB_RUN_STALLED)
        rc = add_alert(c, "stalled", NULL, 0, 0,
                       "no new step for %.0f s (threshold %.0f s)", st.idle_s,
                       st.stall_after);
    if (rc == 0 && st.state == TFB_RUN_CRASHED)
        rc = add_alert(c, "crashed", NULL, 0, 0,
                       "no end record and process %ld is gone", st.pid);
    return rc;
}

static int alerts_fill(qcursor *c)
{
    if (!c->series_loaded) {
        int rc = status_rows(c);
        if (rc < 0)
            return rc;
    }
    return spikes_walk(c, 1);
}

const qtable tfb_qt_alerts = {
    "alerts",
    "CREATE TABLE x(run TEXT, rule TEXT, tag TEXT, step INTEGER,"
    " message TEXT)",
    A_NCOL, -1, -1, alerts_fill, NULL};
