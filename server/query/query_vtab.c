/*
 * query_vtab.c - the generic SQLite module of the run-side tables: the
 * cursor walks the runs (one, with `run = ?`), asks its table for the
 * next rows of the current run (qtable.fill, at most TFB_QUERY_FILL_ROWS
 * at a time) and hands them to SQLite. xBestIndex takes = on run and on
 * the table's tag column, and =, <, <=, >, >= on its step column, so
 * `WHERE run = 'x' AND tag = 'loss'` reads one series.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_internal.h"
#include "tfboard.h"

/* idxNum bits: which constraints xFilter's argv holds, in this order. */
enum { IX_RUN = 1, IX_TAG = 2, IX_LO = 4, IX_HI = 8, IX_EQ = 16 };

static int vt_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
    (void)argc;
    (void)argv;
    (void)err;
    const qtable *t = NULL;
    tfb_query *q = NULL;
    const void *const *pair = aux;
    q = (tfb_query *)pair[0];
    t = (const qtable *)pair[1];
    int rc = sqlite3_declare_vtab(db, t->schema);
    if (rc != SQLITE_OK)
        return rc;
    qvtab *v = sqlite3_malloc(sizeof *v);
    if (!v)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->q = q;
    v->t = t;
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *out = &v->base;
    return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

static int cmp_run_name(const void *a, const void *b)
{
    return strcmp(tfb_run_name(*(tfb_run *const *)a),
                  tfb_run_name(*(tfb_run *const *)b));
}

int tfb_query_runs_by_name(tfb_store *st, tfb_run ***out, size_t *n)
{
    int rc = tfb_store_runs(st, out, n);
    if (rc < 0)
        return rc;
    qsort(*out, *n, sizeof **out, cmp_run_name);
    return 0;
}

static int vt_best_index(sqlite3_vtab *vtab, sqlite3_index_info *ix)
{
    const qtable *t = ((qvtab *)vtab)->t;
    int run = -1, tag = -1, lo = -1, hi = -1, eq = -1;
    for (int i = 0; i < ix->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
        if (!c->usable)
            continue;
        if (c->iColumn == 0 && c->op == SQLITE_INDEX_CONSTRAINT_EQ)
            run = i;
        else if (t->tag_col >= 0 && c->iColumn == t->tag_col &&
                 c->op == SQLITE_INDEX_CONSTRAINT_EQ)
            tag = i;
        else if (t->step_col >= 0 && c->iColumn == t->step_col) {
            if (c->op == SQLITE_INDEX_CONSTRAINT_EQ)
                eq = i;
            else if (c->op == SQLITE_INDEX_CONSTRAINT_GT ||
                     c->op == SQLITE_INDEX_CONSTRAINT_GE)
                lo = i;
            else if (c->op == SQLITE_INDEX_CONSTRAINT_LT ||
                     c->op == SQLITE_INDEX_CONSTRAINT_LE)
                hi = i;
        }
    }
    int num = 0, arg = 1;
    double cost = 1e9;
    if (run >= 0) {
        num |= IX_RUN;
        ix->aConstraintUsage[run].argvIndex = arg++;
        /* the run name is compared exactly; SQLite need not check it */
        ix->aConstraintUsage[run].omit = 1;
        cost /= 1000;
    }
    if (tag >= 0) {
        num |= IX_TAG;
        ix->aConstraintUsage[tag].argvIndex = arg++;
        ix->aConstraintUsage[tag].omit = 1;
        cost /= 100;
    }
    /* step bounds are applied as inclusive integer bounds; SQLite checks
     * each row again (a REAL bound, a NULL, a text) */
    if (lo >= 0) {
        num |= IX_LO;
        ix->aConstraintUsage[lo].argvIndex = arg++;
        cost /= 2;
    }
    if (hi >= 0) {
        num |= IX_HI;
        ix->aConstraintUsage[hi].argvIndex = arg++;
        cost /= 2;
    }
    if (eq >= 0) {
        num |= IX_EQ;
        ix->aConstraintUsage[eq].argvIndex = arg++;
        cost /= 10;
    }
    /* ORDER BY run, GROUP BY run: every table fills a run at a time, the
     * runs in name order (BINARY, tfb_query_runs_by_name), so SQLite need
     * not sort the rows (2 M of them for min(loss) by run on 10,000 runs).
     * Under another collation SQLite does not pass the term (test_query
     * checks GROUP BY run COLLATE NOCASE); DESC is left to SQLite. */
    if (ix->nOrderBy == 1 && ix->aOrderBy[0].iColumn == 0 &&
        !ix->aOrderBy[0].desc)
        ix->orderByConsumed = 1;
    ix->idxNum = num;
    ix->estimatedCost = cost;
    ix->estimatedRows = (sqlite3_int64)cost;
    /* colUsed travels to xFilter so fills skip columns nobody reads */
    ix->idxStr = sqlite3_mprintf("%llx", (unsigned long long)ix->colUsed);
    ix->needToFreeIdxStr = 1;
    return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    qcursor *c = calloc(1, sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    c->vt = (qvtab *)vtab;
    *out = &c->base;
    return SQLITE_OK;
}

static void run_reset(qcursor *c)
{
    if (c->vt->t->run_reset)
        c->vt->t->run_reset(c);
    free(c->series);
    c->series = NULL;
    c->nseries = c->si = c->pi = 0;
    c->series_loaded = 0;
    c->run_done = 0;
}

static void cursor_reset(qcursor *c)
{
    /* a scan may end before its last run (LIMIT): the table frees what
     * it keeps for the whole scan too */
    c->closing = 1;
    run_reset(c);
    c->closing = 0;
    free(c->runs);
    c->runs = NULL;
    c->nruns = c->ri = 0;
    free(c->tag);
    c->tag = NULL;
    c->has_lo = c->has_hi = 0;
    c->nrows = c->row = 0;
    c->cells.n = 0;
    c->arena.n = 0;
    c->rowid = 0;
    c->eof = 1;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
    qcursor *c = (qcursor *)cur;
    cursor_reset(c);
    tfb_vec_free(&c->cells);
    tfb_vec_free(&c->arena);
    free(c);
    return SQLITE_OK;
}

static int set_error(qcursor *c, int rc)
{
    sqlite3_free(c->vt->base.zErrMsg);
    c->vt->base.zErrMsg = sqlite3_mprintf("%s", tfb_strerror(rc));
    return rc == TFB_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
}

/* Makes rows until some are there or the runs are over. */
static int refill(qcursor *c)
{
    c->nrows = c->row = 0;
    c->cells.n = 0;
    c->arena.n = 0;
    while (c->ri < c->nruns) {
        if (c->vt->q->timed_out)
            return SQLITE_INTERRUPT;
        if (!c->run_done) {
            int rc = c->vt->t->fill(c);
            if (rc < 0)
                return set_error(c, rc);
            if (c->nrows > 0)
                return SQLITE_OK;
            if (!c->run_done)
                continue;
        }
        run_reset(c);
        c->ri++;
    }
    c->eof = 1;
    return SQLITE_OK;
}

static int64_t bound_lo(sqlite3_value *v)
{
    double d = sqlite3_value_double(v);
    if (sqlite3_value_numeric_type(v) == SQLITE_INTEGER)
        return sqlite3_value_int64(v);
    if (!(d > -9.2e18))
        return INT64_MIN;
    if (d > 9.2e18)
        return INT64_MAX;
    return (int64_t)floor(d);
}

static int64_t bound_hi(sqlite3_value *v)
{
    double d = sqlite3_value_double(v);
    if (sqlite3_value_numeric_type(v) == SQLITE_INTEGER)
        return sqlite3_value_int64(v);
    if (!(d < 9.2e18))
        return INT64_MAX;
    if (d < -9.2e18)
        return INT64_MIN;
    return (int64_t)ceil(d);
}

static int vt_filter(sqlite3_vtab_cursor *cur, int num, const char *str,
                     int argc, sqlite3_value **argv)
{
    qcursor *c = (qcursor *)cur;
    cursor_reset(c);
    c->eof = 0;
    c->col_used = str ? strtoull(str, NULL, 16) : ~0ull;
    int a = 0;
    tfb_store *st = c->vt->q->store;
    if (num & IX_RUN) {
        const char *name = (const char *)sqlite3_value_text(argv[a++]);
        tfb_run *r = name ? tfb_store_find_run(st, name) : NULL;
        if (r) {
            c->runs = malloc(sizeof *c->runs);
            if (!c->runs)
                return SQLITE_NOMEM;
            c->runs[0] = r;
            c->nruns = 1;
        }
    } else if (tfb_query_runs_by_name(st, &c->runs, &c->nruns) < 0) {
        return SQLITE_NOMEM;
    }
    if (num & IX_TAG) {
        const char *tag = (const char *)sqlite3_value_text(argv[a++]);
        c->tag = strdup(tag ? tag : "");
        if (!c->tag)
            return SQLITE_NOMEM;
        if (!tag) /* tag = NULL matches nothing */
            c->nruns = 0;
    }
    if (num & IX_LO) {
        c->has_lo = 1;
        c->step_lo = bound_lo(argv[a++]);
    }
    if (num & IX_HI) {
        c->has_hi = 1;
        c->step_hi = bound_hi(argv[a++]);
    }
    if (num & IX_EQ) {
        int64_t lo = bound_lo(argv[a]), hi = bound_hi(argv[a]);
        a++;
        if (!c->has_lo || lo > c->step_lo)
            c->step_lo = lo;
        if (!c->has_hi || hi < c->step_hi)
            c->step_hi = hi;
        c->has_lo = c->has_hi = 1;
    }
    (void)argc;
    return refill(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
    qcursor *c = (qcursor *)cur;
    c->rowid++;
    if (++c->row < c->nrows)
        return SQLITE_OK;
    return refill(c);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
    return ((qcursor *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
    qcursor *c = (qcursor *)cur;
    const qcell *x = &c->cells.v[c->row * (size_t)c->vt->t->ncol + (size_t)i];
    switch (x->type) {
    case SQLITE_INTEGER:
        sqlite3_result_int64(ctx, x->i);
        break;
    case SQLITE_FLOAT:
        /* SQLite turns a NaN into NULL itself; +-Inf stay */
        sqlite3_result_double(ctx, x->d);
        break;
    case SQLITE_TEXT:
        if (x->s)
            sqlite3_result_text(ctx, x->s, (int)x->len, SQLITE_STATIC);
        else
            sqlite3_result_text(ctx, c->arena.v + x->off, (int)x->len,
                                SQLITE_TRANSIENT);
        break;
    default:
        sqlite3_result_null(ctx);
    }
    return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
    *out = ((qcursor *)cur)->rowid;
    return SQLITE_OK;
}

/* Eponymous-only (no xCreate): each table exists in every connection as
 * "main".<name>, and CREATE VIRTUAL TABLE cannot make another. */
static const sqlite3_module vt_module = {
    .iVersion = 1,
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

/* ---- row building ---------------------------------------------------- */

qcell *qc_row(qcursor *c)
{
    size_t nc = (size_t)c->vt->t->ncol;
    /* room for 64 rows at least the first time; doubles after */
    size_t need = (c->nrows + 1) * nc;
    if (tfb_vec_need(&c->cells, need < 64 * nc ? 64 * nc : need) < 0)
        return NULL;
    qcell *row = &c->cells.v[c->nrows++ * nc];
    c->cells.n = c->nrows * nc;
    memset(row, 0, nc * sizeof *row);
    return row;
}

void qc_int(qcell *x, int64_t v)
{
    x->type = SQLITE_INTEGER;
    x->i = v;
}

void qc_dbl(qcell *x, double v)
{
    x->type = SQLITE_FLOAT;
    x->d = v;
}

void qc_stable(qcell *x, const char *s)
{
    x->type = SQLITE_TEXT;
    x->s = s;
    x->len = strlen(s);
}

int qc_text(qcursor *c, qcell *x, const char *s, size_t len)
{
    /* 4 KiB at least the first time; doubles after */
    size_t need = c->arena.n + len + 1;
    if (tfb_vec_need(&c->arena, need < 4096 ? 4096 : need) < 0)
        return TFB_ENOMEM;
    if (len)
        memcpy(c->arena.v + c->arena.n, s, len);
    c->arena.v[c->arena.n + len] = 0;
    x->type = SQLITE_TEXT;
    x->s = NULL;
    x->off = c->arena.n;
    x->len = len;
    c->arena.n += len + 1;
    return 0;
}

int qc_series(qcursor *c, tfb_series_kind kind)
{
    if (c->series_loaded)
        return 0;
    tfb_run *r = c->runs[c->ri];
    if (c->tag) {
        tfb_series *s = tfb_run_find_series(r, kind, c->tag);
        if (s) {
            c->series = malloc(sizeof *c->series);
            if (!c->series)
                return TFB_ENOMEM;
            c->series[0] = s;
            c->nseries = 1;
        }
    } else if (tfb_run_series(r, kind, &c->series, &c->nseries) < 0) {
        return TFB_ENOMEM;
    }
    c->series_loaded = 1;
    c->si = c->pi = 0;
    return 0;
}

/* ---- registration ---------------------------------------------------- */

int tfb_qvtab_register(tfb_query *q, const qtable *t)
{
    /* the module's aux: the connection and the table */
    const void **pair = sqlite3_malloc(2 * sizeof *pair);
    if (!pair)
        return TFB_ENOMEM;
    pair[0] = q;
    pair[1] = t;
    return sqlite3_create_module_v2(q->db, t->name, &vt_module, (void *)pair,
                                    sqlite3_free) == SQLITE_OK
               ? 0
               : TFB_EIO;
}
