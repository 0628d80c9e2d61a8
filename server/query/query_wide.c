/*
 * query_wide.c - runs_wide: one row a run, with the runs table's columns,
 * each hyperparameter as a column, and each scalar tag's last value and
 * finite minimum as "<tag>.last" and "<tag>.min" (server/API.md "SQL
 * tables"). The table the run filters (`--where`, the page's expression)
 * are expressions over.
 *
 * Its columns depend on what the store holds, so it is a virtual table
 * created in the temp schema (temp.runs_wide, module tfb_runs_wide) and
 * declared again, before a statement is prepared, when the store's
 * generation moved and the column list changed. Values are worked out
 * when SQLite asks for them (xColumn), for the current run only: a
 * filter on `lr` decodes hparams and reads no scalar; "<tag>.last" reads
 * one point; "<tag>.min" comes from the per-connection statistics
 * (query_stats.c). Each value is kept in the run's memo
 * (query_runmemo.c) until that run changes, so a warm filter reads
 * ready-made rows; xFilter takes the runs in name order from the memo
 * (sorted again only when a run was added). Comparisons of hparam and
 * tag columns with numbers are checked by the scan too (w_best_index):
 * a run that surely fails one is skipped before SQLite sees it.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/efficiency.h"
#include "analysis/hparams_analysis.h"
#include "analysis/ranks_jobs.h"
#include "analysis/run_status.h"
#include "base/deadline.h"
#include "base/vec.h"
#include "query/query_internal.h"
#include "tfboard.h"

static const char *const k_fixed[] = {"run", "status", "start_time",
                                      "end_time", "steps", "group_name",
                                      "rank", "world_size", "job", "mfu",
                                      "goodput", "tokens_per_s",
                                      "j_per_token"};
enum { W_RUN, W_STATUS, W_START, W_END, W_STEPS, W_GROUP, W_RANK, W_WORLD,
       W_JOB, W_MFU, W_GOODPUT, W_TOKENS_PER_S, W_J_PER_TOKEN, W_NFIXED };

typedef struct wvtab {
    sqlite3_vtab base;
    tfb_query *q;
} wvtab;

/* Constraints on hparam and tag columns the scan checks itself, at most
 * this many a scan (more are left to SQLite alone): a run filter has a
 * few terms, 16 cover any typed by hand. */
#define W_MAX_CHECKS 16

/* One such constraint: column w of q->wide, op, a number. */
typedef struct wcheck {
    size_t w;
    int op;       /* SQLITE_INDEX_CONSTRAINT_EQ, _GT, _LE, _LT, _GE */
    double v;
} wcheck;

typedef struct wcursor {
    sqlite3_vtab_cursor base;
    tfb_query *q;
    qrunmemo **runs;        /* the scan's runs' memos, in name order */
    size_t n, i;
    wcheck checks[W_MAX_CHECKS];
    int nchecks;
    int jobs_loaded;
    tfb_ranks_job *jobs;
    size_t njobs;
    /* the efficiency figures of the run eff_of (one computation for the
     * four columns of a row) */
    tfb_run *eff_of;
    int eff_rc;
    tfb_eff_run eff;
} wcursor;

/* ---- the column list ------------------------------------------------- */

static void cols_free(qwide_col *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].col);
    }
    free(v);
}

void tfb_query_wide_free(tfb_query *q)
{
    cols_free(q->wide, q->n_wide);
    q->wide = NULL;
    q->n_wide = 0;
}

typedef struct colset {
    TFB_VEC(qwide_col) cols;
    tfb_strtab lower;   /* lower-cased names taken (SQLite's are
                           case-insensitive) -> 1 */
    TFB_VEC(char *) lowkeys; /* lower's keys, owned */
} colset;

static int taken_or_take(colset *cs, const char *name, int take)
{
    size_t len = strlen(name);
    char *low = malloc(len + 1);
    if (!low)
        return -1;
    for (size_t i = 0; i <= len; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    if (tfb_strtab_get(&cs->lower, low, len)) {
        free(low);
        return 1;
    }
    if (!take) {
        free(low);
        return 0;
    }
    if (tfb_vec_push(&cs->lowkeys, low) < 0) {
        free(low);
        return -1;
    }
    if (tfb_strtab_put(&cs->lower, low, len, (void *)1) < 0)
        return -1;
    return 0;
}

static int add_col(colset *cs, qwide_kind k, const char *key, size_t key_len,
                   const char *suffix)
{
    if (memchr(key, 0, key_len))
        return 0; /* a name with a NUL cannot be a column */
    char *col = malloc(key_len + strlen(suffix) + 1);
    if (!col)
        return -1;
    memcpy(col, key, key_len);
    strcpy(col + key_len, suffix);
    int t = taken_or_take(cs, col, 1);
    if (t != 0) {
        free(col);
        return t < 0 ? -1 : 0; /* a clash: the first comer keeps it */
    }
    if (tfb_vec_need(&cs->cols, cs->cols.n + 1) < 0) {
        free(col);
        return -1;
    }
    char *kc = malloc(key_len + 1);
    if (!kc) {
        free(col);
        return -1;
    }
    memcpy(kc, key, key_len);
    kc[key_len] = 0;
    cs->cols.v[cs->cols.n++] = (qwide_col){k, kc, key_len, col};
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The columns the store calls for now. */
static int work_out(tfb_query *q, colset *cs, size_t *left_out)
{
    *left_out = 0;
    for (size_t i = 0; i < W_NFIXED; i++)
        if (taken_or_take(cs, k_fixed[i], 1) < 0)
            return TFB_ENOMEM;
    tfb_hparams_experiment e;
    int rc = tfb_hparams_experiment_get(q->store, &e);
    for (size_t i = 0; rc == 0 && i < e.n_columns; i++) {
        if (W_NFIXED + cs->cols.n >= TFB_QUERY_WIDE_MAX_COLUMNS)
            break;
        if (add_col(cs, QW_HPARAM, e.columns[i].name, e.columns[i].name_len,
                    "") < 0)
            rc = TFB_ENOMEM;
    }
    tfb_hparams_experiment_free(&e);
    if (rc < 0)
        return rc;
    /* the scalar tags of every run, by name */
    tfb_run **runs = NULL;
    size_t nruns = 0;
    if (tfb_store_runs(q->store, &runs, &nruns) < 0)
        return TFB_ENOMEM;
    tfb_strtab seen = {0};
    TFB_VEC(const char *) tags = {0};
    for (size_t r = 0; r < nruns && rc == 0; r++) {
        tfb_series **ss = NULL;
        size_t ns = 0;
        if (tfb_run_series(runs[r], TFB_SERIES_SCALAR, &ss, &ns) < 0) {
            rc = TFB_ENOMEM;
            break;
        }
        for (size_t k = 0; k < ns && rc == 0; k++) {
            const char *t = tfb_series_tag(ss[k]);
            size_t tl = strlen(t);
            if (tfb_strtab_get(&seen, t, tl))
                continue;
            /* the store's: lives as long as it */
            if (tfb_vec_push(&tags, t) < 0) {
                rc = TFB_ENOMEM;
                break;
            }
            if (tfb_strtab_put(&seen, t, tl, (void *)1) < 0)
                rc = TFB_ENOMEM;
        }
        free(ss);
    }
    free(runs);
    tfb_strtab_free(&seen);
    if (rc == 0 && tags.n)
        qsort(tags.v, tags.n, sizeof *tags.v, cmp_str);
    for (size_t i = 0; rc == 0 && i < tags.n; i++) {
        if (W_NFIXED + cs->cols.n + 2 > TFB_QUERY_WIDE_MAX_COLUMNS) {
            *left_out = tags.n - i;
            break;
        }
        size_t tl = strlen(tags.v[i]);
        if (add_col(cs, QW_TAG_LAST, tags.v[i], tl, ".last") < 0 ||
            add_col(cs, QW_TAG_MIN, tags.v[i], tl, ".min") < 0)
            rc = TFB_ENOMEM;
    }
    tfb_vec_free(&tags);
    return rc;
}

static void colset_free_keys(colset *cs)
{
    for (size_t i = 0; i < cs->lowkeys.n; i++)
        free(cs->lowkeys.v[i]);
    tfb_vec_free(&cs->lowkeys);
    tfb_strtab_free(&cs->lower);
}

static int same_cols(const qwide_col *a, size_t na, const qwide_col *b,
                     size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].kind != b[i].kind || strcmp(a[i].col, b[i].col) != 0)
            return 0;
    return 1;
}

static int exec_internal(tfb_query *q, const char *sql)
{
    q->internal = 1;
    int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
    q->internal = 0;
    return rc == SQLITE_OK ? 0 : rc == SQLITE_NOMEM ? TFB_ENOMEM : TFB_EIO;
}

int tfb_query_wide_refresh(tfb_query *q)
{
    uint64_t gen = tfb_store_generation(q->store);
    if (q->wide_made && gen == q->wide_gen)
        return 0;
    colset cs = {0};
    size_t left_out = 0;
    int rc = work_out(q, &cs, &left_out);
    colset_free_keys(&cs);
    if (rc < 0) {
        cols_free(cs.cols.v, cs.cols.n);
        return rc;
    }
    q->wide_gen = gen;
    q->wide_left_out = left_out;
    if (q->wide_made && same_cols(q->wide, q->n_wide, cs.cols.v, cs.cols.n)) {
        cols_free(cs.cols.v, cs.cols.n);
        return 0;
    }
    if (q->wide_made && (rc = exec_internal(q, "DROP TABLE temp.runs_wide")) < 0) {
        cols_free(cs.cols.v, cs.cols.n);
        return rc;
    }
    tfb_query_wide_free(q);
    q->wide = cs.cols.v;
    q->n_wide = cs.cols.n;
    q->wide_ver++;
    q->wide_made = 0;
    /* the second statement settles the new schema while the layer is
     * still the one asking (SQLite finishes a CREATE VIRTUAL TABLE's
     * bookkeeping at the next prepare) */
    rc = exec_internal(q, "CREATE VIRTUAL TABLE temp.runs_wide USING tfb_runs_wide;"
                          "SELECT run FROM temp.runs_wide LIMIT 0");
    if (rc == 0)
        q->wide_made = 1;
    return rc;
}

/* ---- the module ------------------------------------------------------ */

static char *schema_sql(const tfb_query *q)
{
    size_t cap = 256;
    for (size_t i = 0; i < q->n_wide; i++)
        cap += 2 * strlen(q->wide[i].col) + 8;
    char *s = sqlite3_malloc64(cap);
    if (!s)
        return NULL;
    size_t n = (size_t)snprintf(s, cap,
        "CREATE TABLE x(run TEXT, status TEXT, start_time REAL,"
        " end_time REAL, steps INTEGER, group_name TEXT, rank INTEGER,"
        " world_size INTEGER, job TEXT, mfu REAL, goodput REAL,"
        " tokens_per_s REAL, j_per_token REAL");
    for (size_t i = 0; i < q->n_wide; i++) {
        s[n++] = ',';
        s[n++] = ' ';
        s[n++] = '"';
        for (const char *p = q->wide[i].col; *p; p++) {
            if (*p == '"')
                s[n++] = '"';
            s[n++] = *p;
        }
        s[n++] = '"';
    }
    s[n++] = ')';
    s[n] = 0;
    return s;
}

static int w_connect(sqlite3 *db, void *aux, int argc,
                     const char *const *argv, sqlite3_vtab **out, char **err)
{
    (void)argc;
    (void)argv;
    (void)err;
    tfb_query *q = aux;
    char *sql = schema_sql(q);
    if (!sql)
        return SQLITE_NOMEM;
    int rc = sqlite3_declare_vtab(db, sql);
    sqlite3_free(sql);
    if (rc != SQLITE_OK)
        return rc;
    wvtab *v = sqlite3_malloc(sizeof *v);
    if (!v)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->q = q;
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    *out = &v->base;
    return SQLITE_OK;
}

static int w_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

static int check_op(int op)
{
    return op == SQLITE_INDEX_CONSTRAINT_EQ ||
           op == SQLITE_INDEX_CONSTRAINT_GT ||
           op == SQLITE_INDEX_CONSTRAINT_LE ||
           op == SQLITE_INDEX_CONSTRAINT_LT ||
           op == SQLITE_INDEX_CONSTRAINT_GE;
}

static const char *op_name(int op)
{
    switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ: return "=";
    case SQLITE_INDEX_CONSTRAINT_GT: return ">";
    case SQLITE_INDEX_CONSTRAINT_LE: return "<=";
    case SQLITE_INDEX_CONSTRAINT_LT: return "<";
    default: return ">=";
    }
}

/* run = x reads one run (idxNum 1). Otherwise comparisons (=, <, <=, >,
 * >=) of an hparam or tag column with a value are checked by the scan
 * itself (idxNum 2, idxStr "#<column><op> ...", what EXPLAIN QUERY PLAN
 * shows): a run that surely fails one is skipped before SQLite sees it,
 * so a filter's rejected runs cost no call per column. None is omitted:
 * SQLite checks every row it gets again, and the scan skips only what
 * SQLite would reject (xFilter). */
static int w_best_index(sqlite3_vtab *vtab, sqlite3_index_info *ix)
{
    (void)vtab;
    ix->estimatedCost = 1e6;
    for (int i = 0; i < ix->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
        if (c->usable && c->iColumn == W_RUN &&
            c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
            ix->aConstraintUsage[i].argvIndex = 1;
            ix->aConstraintUsage[i].omit = 1;
            ix->idxNum = 1;
            ix->estimatedCost = 1;
            ix->estimatedRows = 1;
            return SQLITE_OK;
        }
    }
    char buf[W_MAX_CHECKS * 16];
    size_t len = 0;
    int n = 0;
    for (int i = 0; i < ix->nConstraint && n < W_MAX_CHECKS; i++) {
        const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
        if (!c->usable || c->iColumn < W_NFIXED || !check_op(c->op))
            continue;
        ix->aConstraintUsage[i].argvIndex = ++n;
        ix->aConstraintUsage[i].omit = 0;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s#%d%s",
                                len ? " " : "", c->iColumn - W_NFIXED,
                                op_name(c->op));
    }
    if (n) {
        ix->idxNum = 2;
        ix->idxStr = sqlite3_mprintf("%s", buf);
        if (!ix->idxStr)
            return SQLITE_NOMEM;
        ix->needToFreeIdxStr = 1;
        ix->estimatedCost = 1e6 / (1.0 + n);
    }
    return SQLITE_OK;
}

static int w_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
    wcursor *c = calloc(1, sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    c->q = ((wvtab *)vtab)->q;
    *out = &c->base;
    return SQLITE_OK;
}

static void w_reset(wcursor *c)
{
    free(c->runs);
    c->runs = NULL;
    c->n = c->i = 0;
    c->nchecks = 0;
    c->eff_of = NULL;
}

/* Reads idxStr's checks with their values; a value that is not a number
 * (text, a blob, an integer past 2^53 that a double cannot hold) leaves
 * its check to SQLite. 1 when a value is NULL: no row can pass. */
static int read_checks(wcursor *c, const char *str, int argc,
                       sqlite3_value **argv)
{
    const char *p = str ? str : "";
    for (int a = 0; a < argc && *p; a++) {
        while (*p == ' ')
            p++;
        if (*p != '#')
            break;
        char *end;
        unsigned long w = strtoul(p + 1, &end, 10);
        int op = !strncmp(end, ">=", 2) ? SQLITE_INDEX_CONSTRAINT_GE
                 : !strncmp(end, "<=", 2) ? SQLITE_INDEX_CONSTRAINT_LE
                 : *end == '>'            ? SQLITE_INDEX_CONSTRAINT_GT
                 : *end == '<'            ? SQLITE_INDEX_CONSTRAINT_LT
                                          : SQLITE_INDEX_CONSTRAINT_EQ;
        p = end;
        while (*p && *p != ' ')
            p++;
        if (w >= c->q->n_wide || c->nchecks >= W_MAX_CHECKS)
            continue;
        wcheck *k = &c->checks[c->nchecks];
        switch (sqlite3_value_type(argv[a])) {
        case SQLITE_NULL:
            return 1; /* x op NULL is never true */
        case SQLITE_INTEGER: {
            sqlite3_int64 i = sqlite3_value_int64(argv[a]);
            if (i > ((sqlite3_int64)1 << 53) || i < -((sqlite3_int64)1 << 53))
                continue;
            k->v = (double)i;
            break;
        }
        case SQLITE_FLOAT:
            k->v = sqlite3_value_double(argv[a]);
            break;
        default:
            continue;
        }
        k->w = w;
        k->op = op;
        c->nchecks++;
    }
    return 0;
}

/* 0 when the run surely fails a check (its value NULL, or a number the
 * comparison rejects: SQLite would reject the row too), 1 when SQLite
 * must decide, -1 when out of memory. */
static int may_pass(wcursor *c, qrunmemo *m)
{
    for (int i = 0; i < c->nchecks; i++) {
        const wcheck *k = &c->checks[i];
        double d = 0;
        int t = tfb_qrun_wide_num(c->q, m, k->w, &d);
        if (t < 0)
            return -1;
        if (t == QW_VALUE_NULL)
            return 0;
        if (t != QW_VALUE_NUMBER)
            continue; /* text: compared by SQLite's rules */
        int ok = k->op == SQLITE_INDEX_CONSTRAINT_EQ   ? d == k->v
                 : k->op == SQLITE_INDEX_CONSTRAINT_GT ? d > k->v
                 : k->op == SQLITE_INDEX_CONSTRAINT_LE ? d <= k->v
                 : k->op == SQLITE_INDEX_CONSTRAINT_LT ? d < k->v
                                                       : d >= k->v;
        if (!ok)
            return 0;
    }
    return 1;
}

/* Rows ahead whose memo is fetched into the cache (W_PREFETCH_FAR), and
 * whose memo's row, hyperparameters and run counter are
 * (W_PREFETCH_NEAR), while the scan works on this one: the memos of
 * 10,000 runs lie far apart, and a warm filter's time was mostly waits
 * for memory (3.8 ms against 1.4 ms natively). */
#define W_PREFETCH_FAR 8
#define W_PREFETCH_NEAR 4

static void prefetch_ahead(const wcursor *c)
{
    size_t i = c->i;
    tfb_qrun_memo_prefetch(i + W_PREFETCH_FAR < c->n
                               ? c->runs[i + W_PREFETCH_FAR] : NULL,
                           i + W_PREFETCH_NEAR < c->n
                               ? c->runs[i + W_PREFETCH_NEAR] : NULL);
}

/* From c->i on, the first run that may pass the checks (c->n when none). */
static int skip_failing(wcursor *c)
{
    for (; c->i < c->n && c->nchecks; c->i++) {
        prefetch_ahead(c);
        int r = may_pass(c, c->runs[c->i]);
        if (r < 0)
            return SQLITE_NOMEM;
        if (r)
            break;
        c->q->rows_touched++;
    }
    return c->q->timed_out ? SQLITE_INTERRUPT : SQLITE_OK;
}

static int w_close(sqlite3_vtab_cursor *cur)
{
    wcursor *c = (wcursor *)cur;
    w_reset(c);
    tfb_ranks_jobs_free(c->jobs, c->njobs);
    free(c);
    return SQLITE_OK;
}

static int w_filter(sqlite3_vtab_cursor *cur, int num, const char *str,
                    int argc, sqlite3_value **argv)
{
    wcursor *c = (wcursor *)cur;
    w_reset(c);
    if (num & 1) {
        const char *name = (const char *)sqlite3_value_text(argv[0]);
        tfb_run *r = name ? tfb_store_find_run(c->q->store, name) : NULL;
        if (r) {
            c->runs = malloc(sizeof *c->runs);
            if (!c->runs || !(c->runs[0] = tfb_qrun_memo(c->q, r)))
                return SQLITE_NOMEM;
            c->n = 1;
        }
        return SQLITE_OK;
    }
    /* the connection's list, copied: another scan of this statement may
     * have it sorted again (a run added meanwhile) */
    qrunmemo *const *all;
    size_t n;
    if (tfb_qrun_by_name(c->q, &all, &n) < 0)
        return SQLITE_NOMEM;
    c->runs = malloc((n ? n : 1) * sizeof *c->runs);
    if (!c->runs)
        return SQLITE_NOMEM;
    if (n)
        memcpy(c->runs, all, n * sizeof *c->runs);
    c->n = n;
    if ((num & 2) && read_checks(c, str, argc, argv)) {
        c->i = c->n; /* a NULL value: no row */
        return SQLITE_OK;
    }
    return skip_failing(c);
}

static int w_next(sqlite3_vtab_cursor *cur)
{
    wcursor *c = (wcursor *)cur;
    c->i++;
    c->q->rows_touched++;
    if (c->q->timed_out)
        return SQLITE_INTERRUPT;
    if (!c->nchecks)
        prefetch_ahead(c);
    return skip_failing(c);
}

static int w_eof(sqlite3_vtab_cursor *cur)
{
    wcursor *c = (wcursor *)cur;
    return c->i >= c->n;
}

/* The efficiency columns (analysis/efficiency.h, without the dashboard's
 * flags): NULL when unknown. One computation for the four columns of a
 * row; not memoized with the row (it reads every step of the run, and only
 * a query that names these columns pays it). */
static int eff_column(wcursor *c, tfb_run *r, sqlite3_context *ctx, int i)
{
    if (c->eff_of != r) {
        c->eff_rc = tfb_eff_run_compute(r, NULL, &c->eff);
        c->eff_of = r;
    }
    if (c->eff_rc == TFB_ENOMEM) {
        c->eff_of = NULL;
        return SQLITE_NOMEM;
    }
    if (c->eff_rc < 0)
        return SQLITE_OK;
    double v = i == W_MFU       ? c->eff.mfu_pct
               : i == W_GOODPUT ? c->eff.goodput.goodput
               : i == W_TOKENS_PER_S ? c->eff.tokens_per_s
                                     : c->eff.j_per_token;
    if (isfinite(v))
        sqlite3_result_double(ctx, v);
    return SQLITE_OK;
}

static int fixed_column(wcursor *c, qrunmemo *m, sqlite3_context *ctx,
                        int i)
{
    tfb_run *r = tfb_qrun_memo_run(m);
    switch (i) {
    case W_RUN:
        sqlite3_result_text(ctx, tfb_run_name(r), -1, SQLITE_STATIC);
        return SQLITE_OK;
    case W_STATUS: {
        int state = tfb_qrun_memo_state(c->q, m);
        if (state >= 0)
            sqlite3_result_text(ctx, tfb_run_state_name((tfb_run_state)state),
                                -1, SQLITE_STATIC);
        return SQLITE_OK;
    }
    case W_START:
        sqlite3_result_double(ctx, tfb_run_first_wall(r));
        return SQLITE_OK;
    case W_END:
        sqlite3_result_double(ctx, tfb_run_last_wall(r));
        return SQLITE_OK;
    case W_STEPS:
        if (tfb_run_max_step(r) != INT64_MIN)
            sqlite3_result_int64(ctx, tfb_run_max_step(r));
        return SQLITE_OK;
    case W_GROUP: {
        const tfb_hparams_set *h = tfb_qrun_memo_hparams(c->q, m);
        if (!h)
            return SQLITE_NOMEM;
        if (h->has_start && h->group_name_len)
            sqlite3_result_text(ctx, h->group_name, (int)h->group_name_len,
                                SQLITE_TRANSIENT);
        return SQLITE_OK;
    }
    case W_MFU:
    case W_GOODPUT:
    case W_TOKENS_PER_S:
    case W_J_PER_TOKEN:
        return eff_column(c, r, ctx, i);
    default:
        break;
    }
    if (!c->jobs_loaded) {
        if (tfb_ranks_find_jobs(c->q->store, &c->jobs, &c->njobs) < 0)
            return SQLITE_NOMEM;
        c->jobs_loaded = 1;
    }
    const tfb_ranks_job *j = tfb_ranks_job_of_run(c->jobs, c->njobs, r);
    if (!j)
        return SQLITE_OK;
    if (i == W_JOB) {
        sqlite3_result_text(ctx, j->name, (int)j->name_len, SQLITE_TRANSIENT);
        return SQLITE_OK;
    }
    for (size_t k = 0; k < j->n_members; k++)
        if (j->members[k].run == r) {
            int32_t v = i == W_RANK ? j->members[k].rank
                                    : j->members[k].world_size;
            if (i == W_RANK ? v >= 0 : v > 0)
                sqlite3_result_int(ctx, v);
        }
    return SQLITE_OK;
}

static int w_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
    wcursor *c = (wcursor *)cur;
    qrunmemo *m = c->runs[c->i];
    if (i < W_NFIXED)
        return fixed_column(c, m, ctx, i);
    return tfb_qrun_wide_value(c->q, m, (size_t)(i - W_NFIXED), ctx);
}

static int w_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
    *out = (sqlite3_int64)((wcursor *)cur)->i;
    return SQLITE_OK;
}

/* xCreate = xConnect: created in temp by tfb_query_wide_refresh only (the
 * authorizer refuses CREATE from a user); xDestroy frees the same. */
static const sqlite3_module w_module = {
    .iVersion = 1,
    .xCreate = w_connect,
    .xConnect = w_connect,
    .xBestIndex = w_best_index,
    .xDisconnect = w_disconnect,
    .xDestroy = w_disconnect,
    .xOpen = w_open,
    .xClose = w_close,
    .xFilter = w_filter,
    .xNext = w_next,
    .xEof = w_eof,
    .xColumn = w_column,
    .xRowid = w_rowid,
};

int tfb_query_wide_register(tfb_query *q)
{
    return sqlite3_create_module(q->db, "tfb_runs_wide", &w_module, q) ==
                   SQLITE_OK
               ? 0
               : TFB_EIO;
}
