/*
 * query_runmemo.c - per-connection memo of what runs, runs_wide and
 * hparams work out of one run: its decoded hyperparameters, a status that
 * no clock can change (finished, diverged), and its row of runs_wide's
 * values past the fixed columns (each hyperparameter's value, each scalar
 * tag's last value and finite minimum). Kept by the run's pointer with
 * the run's own generation (tfb_run_generation, which moves after any
 * change to that run's data) it was worked out at, so a run filter typed
 * again and again on the page, or a second query, reads ready-made rows:
 * it decodes no record, reads no point and judges no finished run again.
 * A live run moves only its own generation: its entry alone is worked out
 * again, not the 10,000 others. The status of a running, stalled or
 * crashed run depends on the clock and the writer's process: it is judged
 * every time.
 *
 * A row's values are worked out when a statement first reads their
 * column (a filter on `lr` reads no scalar), then kept; the row follows
 * runs_wide's columns (q->wide_ver) and is cleared with the rest of the
 * entry when the run's generation moved.
 *
 * Memory, bounded by construction: one entry per run of the store (runs
 * are never removed), each holding one decoded hyperparameter set (a
 * sweep's few values) and a row of 8 bytes and a bit per runs_wide column
 * past the fixed ones (at most TFB_QUERY_WIDE_MAX_COLUMNS: 16 bytes a
 * scalar tag, less than the store's own series record): the rows of
 * 10,000 runs x 22 columns take about 2 MB. Freed with the connection.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hparams_analysis.h"
#include "analysis/run_status.h"
#include "base/deadline.h"
#include "query/query_internal.h"
#include "tfboard.h"

/* A value of the row: a hyperparameter's (NULL: the run has none) or a
 * tag's number (NaN: NULL, as SQLite makes of a NaN). */
typedef union qwcell {
    double d;
    const tfb_hparam_value *hv; /* in the entry's h */
} qwcell;

struct qrunmemo {
    tfb_run *r;             /* the key's bytes live here */
    uint64_t gen;           /* tfb_run_generation + 1 what follows was
                               worked out at; 0: nothing yet */
    int has_h, has_state;
    tfb_hparams_set h;
    int state;              /* TFB_RUN_FINISHED or TFB_RUN_DIVERGED */
    /* the row: cells.n == q->n_wide at q->wide_ver == cells_ver; bit w
     * of known: cells.v[w] worked out (at gen) */
    uint64_t cells_ver;
    TFB_VEC(qwcell) cells;
    TFB_VEC(uint64_t) known;
};

static qrunmemo *memo_of(tfb_query *q, tfb_run *r)
{
    qrunmemo *m = tfb_strtab_get(&q->runmemo, (const char *)&r, sizeof r);
    if (m)
        return m;
    m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->r = r;
    if (tfb_strtab_put(&q->runmemo, (const char *)&m->r, sizeof m->r, m) < 0) {
        free(m);
        return NULL;
    }
    return m;
}

qrunmemo *tfb_qrun_memo(tfb_query *q, tfb_run *r)
{
    return memo_of(q, r);
}

tfb_run *tfb_qrun_memo_run(const qrunmemo *m)
{
    return m->r;
}

/* Forgets what was worked out at another generation of the run. The
 * generation is read before anything is worked out (acquire), so what is
 * kept holds at least that generation's data; a change after it moves it
 * again and the next look forgets. */
static void memo_sync(qrunmemo *m)
{
    uint64_t gen = tfb_run_generation(m->r) + 1;
    if (m->gen == gen)
        return;
    if (m->has_h)
        tfb_hparams_set_free(&m->h);
    m->has_h = 0;
    m->has_state = 0;
    if (m->known.n)
        memset(m->known.v, 0, m->known.n * sizeof *m->known.v);
    m->gen = gen;
}

/* The hyperparameters at the entry's generation (no sync). */
static const tfb_hparams_set *memo_h(tfb_query *q, qrunmemo *m)
{
    if (m->has_h)
        return &m->h;
    if (tfb_run_hparams(q->store, m->r, &m->h) < 0) {
        tfb_hparams_set_free(&m->h);
        return NULL;
    }
    m->has_h = 1;
    return &m->h;
}

const tfb_hparams_set *tfb_qrun_memo_hparams(tfb_query *q, qrunmemo *m)
{
    memo_sync(m);
    return memo_h(q, m);
}

static int judge(tfb_run *r)
{
    tfb_run_status st;
    return tfb_run_status_judge(r, tfb_now_wall(), &st) == 0 ? (int)st.state
                                                             : -1;
}

int tfb_qrun_memo_state(tfb_query *q, qrunmemo *m)
{
    (void)q;
    memo_sync(m);
    if (m->has_state)
        return m->state;
    int state = judge(m->r);
    /* only what the data alone decides is kept */
    if (state == TFB_RUN_FINISHED || state == TFB_RUN_DIVERGED) {
        m->state = state;
        m->has_state = 1;
    }
    return state;
}

const tfb_hparams_set *tfb_qrun_hparams(tfb_query *q, tfb_run *r)
{
    qrunmemo *m = memo_of(q, r);
    return m ? tfb_qrun_memo_hparams(q, m) : NULL;
}

int tfb_qrun_state(tfb_query *q, tfb_run *r)
{
    qrunmemo *m = memo_of(q, r);
    return m ? tfb_qrun_memo_state(q, m) : judge(r);
}

/* ---- the runs in name order ------------------------------------------ */

int tfb_qrun_by_name(tfb_query *q, qrunmemo *const **out, size_t *n)
{
    /* runs are never removed: the same count, the same runs */
    if (tfb_store_run_count(q->store) != q->byname.n || !q->byname.v) {
        tfb_run **runs;
        size_t nr;
        if (tfb_query_runs_by_name(q->store, &runs, &nr) < 0)
            return TFB_ENOMEM;
        q->byname.n = 0;
        if (tfb_vec_need(&q->byname, nr ? nr : 1) < 0) {
            free(runs);
            return TFB_ENOMEM;
        }
        for (size_t i = 0; i < nr; i++) {
            qrunmemo *m = memo_of(q, runs[i]);
            if (!m) {
                free(runs);
                q->byname.n = 0;
                return TFB_ENOMEM;
            }
            q->byname.v[i] = m;
        }
        q->byname.n = nr;
        free(runs);
    }
    *out = q->byname.v;
    *n = q->byname.n;
    return 0;
}

/* ---- runs_wide's row ------------------------------------------------- */

/* 1 when the row has a cell for each of runs_wide's columns now (made
 * again, empty, when the columns changed); 0 when out of memory (values
 * are then worked out each time). */
static int row_ready(tfb_query *q, qrunmemo *m)
{
    if (m->cells_ver == q->wide_ver && m->cells.n == q->n_wide &&
        m->cells.v)
        return 1;
    /* exactly one cell a column (no doubling: a row a run) */
    size_t words = (q->n_wide + 63) / 64;
    if ((m->cells.cap < q->n_wide || !m->cells.v) &&
        tfb_vec_setcap(&m->cells, q->n_wide) < 0)
        return 0;
    if ((m->known.cap < words || !m->known.v) &&
        tfb_vec_setcap(&m->known, words) < 0)
        return 0;
    m->cells.n = q->n_wide;
    m->known.n = words;
    if (words)
        memset(m->known.v, 0, words * sizeof *m->known.v);
    m->cells_ver = q->wide_ver;
    return 1;
}

static int work_out(tfb_query *q, qrunmemo *m, const qwide_col *col,
                    qwcell *out)
{
    if (col->kind == QW_HPARAM) {
        const tfb_hparams_set *h = memo_h(q, m);
        if (!h)
            return SQLITE_NOMEM;
        out->hv = tfb_hparams_findn(h, col->key, col->key_len);
        return SQLITE_OK;
    }
    out->d = NAN;
    tfb_series *s = tfb_run_find_series(m->r, TFB_SERIES_SCALAR, col->key);
    if (!s)
        return SQLITE_OK;
    if (col->kind == QW_TAG_LAST) {
        size_t n = tfb_series_count(s);
        double v;
        if (n && tfb_series_scalar_range(s, n - 1, 1, NULL, NULL, NULL,
                                         &v) == 1) {
            q->rows_touched++;
            out->d = v;
        }
        return SQLITE_OK;
    }
    const qstats *st = tfb_qstats_get(q, s);
    if (!st)
        return SQLITE_NOMEM;
    if (st->count)
        out->d = st->min;
    return SQLITE_OK;
}

static void result_cell(sqlite3_context *ctx, qwide_kind kind,
                        const qwcell *c)
{
    if (kind != QW_HPARAM) {
        if (!isnan(c->d))
            sqlite3_result_double(ctx, c->d);
        return;
    }
    const tfb_hparam_value *v = c->hv;
    if (!v)
        sqlite3_result_null(ctx);
    else if (v->kind == TFB_HPV_NUMBER)
        sqlite3_result_double(ctx, v->number);
    else if (v->kind == TFB_HPV_STRING)
        sqlite3_result_text(ctx, v->str, (int)v->len, SQLITE_TRANSIENT);
    else if (v->kind == TFB_HPV_BOOL)
        sqlite3_result_int(ctx, v->boolean);
    else
        sqlite3_result_null(ctx);
}

/* The run's cell of column w: in the row (worked out once), or in *tmp
 * when the row could not be had. SQLITE_OK or SQLITE_NOMEM. */
static int cell_of(tfb_query *q, qrunmemo *m, size_t w, qwcell *tmp,
                   const qwcell **out)
{
    const qwide_col *col = &q->wide[w];
    memo_sync(m);
    if (!row_ready(q, m)) {
        *out = tmp;
        return work_out(q, m, col, tmp);
    }
    uint64_t bit = (uint64_t)1 << (w % 64), *word = &m->known.v[w / 64];
    if (!(*word & bit)) {
        int rc = work_out(q, m, col, &m->cells.v[w]);
        if (rc != SQLITE_OK)
            return rc;
        *word |= bit;
    }
    *out = &m->cells.v[w];
    return SQLITE_OK;
}

int tfb_qrun_wide_value(tfb_query *q, qrunmemo *m, size_t w,
                        sqlite3_context *ctx)
{
    qwcell tmp;
    const qwcell *c;
    int rc = cell_of(q, m, w, &tmp, &c);
    if (rc == SQLITE_OK)
        result_cell(ctx, q->wide[w].kind, c);
    return rc;
}

int tfb_qrun_wide_num(tfb_query *q, qrunmemo *m, size_t w, double *out)
{
    qwcell tmp;
    const qwcell *c;
    if (cell_of(q, m, w, &tmp, &c) != SQLITE_OK)
        return -1;
    if (q->wide[w].kind != QW_HPARAM) {
        *out = c->d;
        return isnan(c->d) ? QW_VALUE_NULL : QW_VALUE_NUMBER;
    }
    const tfb_hparam_value *v = c->hv;
    if (!v)
        return QW_VALUE_NULL;
    if (v->kind == TFB_HPV_NUMBER) {
        *out = v->number;
        return isnan(v->number) ? QW_VALUE_NULL : QW_VALUE_NUMBER;
    }
    if (v->kind == TFB_HPV_BOOL) {
        *out = v->boolean ? 1 : 0;
        return QW_VALUE_NUMBER;
    }
    return v->kind == TFB_HPV_STRING ? QW_VALUE_OTHER : QW_VALUE_NULL;
}

void tfb_qrun_memo_prefetch(const qrunmemo *far, const qrunmemo *near)
{
    if (far)
        __builtin_prefetch(far);
    if (near) {
        /* near's own struct was asked for rows ago: what it points to */
        if (near->cells.v)
            __builtin_prefetch(near->cells.v);
        if (near->known.v)
            __builtin_prefetch(near->known.v);
        if (near->has_h && near->h.hparams)
            __builtin_prefetch(near->h.hparams);
        tfb_run_generation_prefetch(near->r);
    }
}

void tfb_qrun_free(tfb_query *q)
{
    for (size_t i = 0; i < q->runmemo.cap; i++)
        if (q->runmemo.slots[i].hash) {
            qrunmemo *m = q->runmemo.slots[i].val;
            if (m->has_h)
                tfb_hparams_set_free(&m->h);
            tfb_vec_free(&m->cells);
            tfb_vec_free(&m->known);
            free(m);
        }
    tfb_strtab_free(&q->runmemo);
    tfb_vec_free(&q->byname);
}
