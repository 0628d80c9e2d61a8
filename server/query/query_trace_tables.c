/*
 * query_trace_tables.c - the trace tables' module (query_trace_tables.h):
 * one eponymous-only virtual-table module per table, sharing the cursor's
 * walk over the runs and the planner's side (xBestIndex). Each table's
 * rows come from its family's file (query_trace_gpu.c, _host.c,
 * _memory.c).
 *
 * xBestIndex takes equality on run, device and stream and ranges on
 * start_ns and end_ns; it writes the constraints it uses as idxStr
 * ("run= start_ns>= start_ns<="), which is what EXPLAIN QUERY PLAN shows
 * and what xFilter reads back. No constraint is omitted: SQLite checks
 * every row again, so a bound the scan can only widen (a real number, a
 * text compared with an integer column) is never wrong.
 */
#include "query/query_trace_tables.h"
#include "query/query_trace_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

typedef struct qt_aux {
    qt_ctx *ctx;
    const qt_table *tab;
} qt_aux;

typedef struct qt_vtab {
    sqlite3_vtab base;
    qt_ctx *ctx;
    const qt_table *tab;
} qt_vtab;

static void ctx_unref(qt_ctx *ctx)
{
    if (ctx && --ctx->refs == 0)
        free(ctx);
}

static void aux_free(void *p)
{
    qt_aux *a = p;
    ctx_unref(a->ctx);
    free(a);
}

static int qt_connect(sqlite3 *db, void *paux, int argc,
                      const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
    (void)argc;
    (void)argv;
    (void)err;
    qt_aux *a = paux;
    int rc = sqlite3_declare_vtab(db, a->tab->decl);
    if (rc != SQLITE_OK)
        return rc;
    /* reading a trace has no side effect: usable from views and triggers
     * even with SQLITE_DBCONFIG_TRUSTED_SCHEMA off */
    sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
    qt_vtab *v = sqlite3_malloc(sizeof *v);
    if (!v)
        return SQLITE_NOMEM;
    memset(v, 0, sizeof *v);
    v->ctx = a->ctx;
    v->tab = a->tab;
    *out = &v->base;
    return SQLITE_OK;
}

static int qt_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

/* The constraint's token in idxStr, or NULL when the scan cannot use it. */
static const char *usable_token(const qt_table *t, int col, int op)
{
    if (col < 0)
        return NULL;
    if (op == SQLITE_INDEX_CONSTRAINT_EQ) {
        if (col == t->col_run)
            return "run=";
        if (col == t->col_device)
            return "device=";
        if (col == t->col_stream)
            return "stream=";
    }
    static const struct {
        int op;
        const char *start, *end;
    } ranges[] = {
        {SQLITE_INDEX_CONSTRAINT_EQ, "start_ns=", "end_ns="},
        {SQLITE_INDEX_CONSTRAINT_GE, "start_ns>=", "end_ns>="},
        {SQLITE_INDEX_CONSTRAINT_GT, "start_ns>", "end_ns>"},
        {SQLITE_INDEX_CONSTRAINT_LE, "start_ns<=", "end_ns<="},
        {SQLITE_INDEX_CONSTRAINT_LT, "start_ns<", "end_ns<"},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        if (ranges[i].op != op)
            continue;
        if (col == t->col_start)
            return ranges[i].start;
        if (col == t->col_end)
            return ranges[i].end;
    }
    return NULL;
}

/* The store's run count now (SIZE_MAX when it cannot be told). */
static size_t store_runs(qt_ctx *ctx)
{
    tfb_run **runs = NULL;
    size_t n = 0;
    if (tfb_store_runs(ctx->store, &runs, &n) < 0)
        return SIZE_MAX;
    free(runs);
    return n;
}

static int qt_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    const qt_table *t = ((qt_vtab *)vt)->tab;
    char buf[256];
    size_t len = 0;
    int argi = 0;
    double rows = t->rows_per_run * 100.0; /* a guess of 100 runs */
    int start_lo = 0, start_hi = 0, end_lo = 0, end_hi = 0;
    buf[0] = '\0';
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *k = &info->aConstraint[i];
        if (!k->usable)
            continue;
        const char *tok = usable_token(t, k->iColumn, k->op);
        if (!tok || len + strlen(tok) + 2 >= sizeof buf)
            continue;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
                                len ? " " : "", tok);
        info->aConstraintUsage[i].argvIndex = ++argi;
        info->aConstraintUsage[i].omit = 0;
        if (!strcmp(tok, "run="))
            rows /= 100.0;
        else if (!strcmp(tok, "device=") || !strcmp(tok, "stream="))
            rows /= 4.0;
        else if (!strncmp(tok, "start_ns=", 9) ||
                 !strncmp(tok, "end_ns=", 7))
            start_lo = start_hi = 1;
        else if (tok[0] == 's')
            *(tok[8] == '>' ? &start_lo : &start_hi) = 1;
        else
            *(tok[6] == '>' ? &end_lo : &end_hi) = 1;
    }
    /* A closed range reads a window; one bound about half the rows. */
    if (start_lo && start_hi)
        rows /= 50.0;
    else if (start_lo || start_hi)
        rows /= 2.0;
    if (end_lo && end_hi)
        rows /= 20.0;
    else if (end_lo || end_hi)
        rows /= 2.0;
    if (rows < 1)
        rows = 1;
    /* ORDER BY name (GROUP BY name asks the same): the rows of one run
     * can come in that order (query_trace_gpu.c), which spares SQLite's
     * sort; not across runs (a cursor holds one run at a time), so only
     * for a run named by `run =` (SQLite gives the order up itself for
     * `run IN (...)`) or a store of one run (checked again in xFilter). */
    if (t->col_name >= 0 && info->nOrderBy == 1 &&
        info->aOrderBy[0].iColumn == t->col_name &&
        (strstr(buf, "run=") || store_runs(((qt_vtab *)vt)->ctx) <= 1) &&
        len + 12 < sizeof buf) {
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%sorder=%s",
                                len ? " " : "",
                                info->aOrderBy[0].desc ? "desc" : "asc");
        info->orderByConsumed = 1;
    }
    info->estimatedRows = (sqlite3_int64)rows;
    info->estimatedCost = rows;
    if (len) {
        info->idxStr = sqlite3_mprintf("%s", buf);
        if (!info->idxStr)
            return SQLITE_NOMEM;
        info->needToFreeIdxStr = 1;
    }
    info->idxNum = argi;
    return SQLITE_OK;
}

static int qt_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    qt_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->ctx = ((qt_vtab *)vt)->ctx;
    c->tab = ((qt_vtab *)vt)->tab;
    c->eof = 1;
    *out = &c->base;
    return SQLITE_OK;
}

static int qt_close(sqlite3_vtab_cursor *cur)
{
    qt_cursor *c = (qt_cursor *)cur;
    tfb_qt_close(c);
    free(c->runs);
    sqlite3_free(c);
    return SQLITE_OK;
}

/* An integer bound from v: lower bounds round down, upper bounds up, so
 * the range only widens; 0 when v says nothing the scan can use. */
static int int_bound(sqlite3_value *v, int upper, int64_t *out)
{
    switch (sqlite3_value_numeric_type(v)) {
    case SQLITE_INTEGER:
        *out = sqlite3_value_int64(v);
        return 1;
    case SQLITE_FLOAT: {
        double d = sqlite3_value_double(v);
        if (isnan(d))
            return 0;
        d = upper ? ceil(d) : floor(d);
        if (d >= 9.2e18 || d <= -9.2e18)
            return 0;
        *out = (int64_t)d;
        return 1;
    }
    default:
        return 0; /* text, blob, NULL: SQLite decides alone */
    }
}

static void tighten(int64_t *lo, int64_t *hi, const char *op, int64_t x)
{
    if (!strcmp(op, "=")) {
        if (x > *lo)
            *lo = x;
        if (x < *hi)
            *hi = x;
    } else if (!strcmp(op, ">=") && x > *lo) {
        *lo = x;
    } else if (!strcmp(op, ">") && x != INT64_MAX && x + 1 > *lo) {
        *lo = x + 1;
    } else if (!strcmp(op, "<=") && x < *hi) {
        *hi = x;
    } else if (!strcmp(op, "<") && x != INT64_MIN && x - 1 < *hi) {
        *hi = x - 1;
    }
}

/* Moves to the next run that has a row within the bounds (loading its
 * data), or sets eof. */
static int advance_run(qt_cursor *c)
{
    for (;;) {
        tfb_qt_unload(c);
        if (c->irun >= c->nruns) {
            c->eof = 1;
            return SQLITE_OK;
        }
        tfb_run *r = c->runs[c->irun++];
        c->run = r;
        int rc = c->tab->load(c, r);
        if (rc != SQLITE_OK) {
            c->eof = 1;
            return rc;
        }
        int found = c->tab->seek(c);
        if (found < 0) {
            c->eof = 1;
            return SQLITE_NOMEM;
        }
        if (found) {
            c->eof = 0;
            return SQLITE_OK;
        }
    }
}

static int qt_filter(sqlite3_vtab_cursor *cur, int idx_num,
                     const char *idx_str, int argc, sqlite3_value **argv)
{
    qt_cursor *c = (qt_cursor *)cur;
    tfb_qt_unload(c);
    free(c->runs);
    c->runs = NULL;
    c->nruns = c->irun = 0;
    c->rowid = 0;
    c->eof = 1;
    qt_bounds *b = &c->b;
    memset(b, 0, sizeof *b);
    b->start_lo = b->end_lo = INT64_MIN;
    b->start_hi = b->end_hi = INT64_MAX;
    const char *run = NULL;
    int none = 0; /* a constraint no row can meet */
    const char *p = idx_str ? idx_str : "";
    const char *ord = strstr(p, "order=");
    c->ordered = ord != NULL;
    c->desc = ord && !strncmp(ord + 6, "desc", 4);
    for (int i = 0; i < idx_num && i < argc; i++) {
        while (*p == ' ')
            p++;
        const char *tok = p;
        while (*p && *p != ' ')
            p++;
        size_t n = (size_t)(p - tok);
        sqlite3_value *v = argv[i];
        int64_t x;
        if (n == 4 && !strncmp(tok, "run=", 4)) {
            if (sqlite3_value_type(v) == SQLITE_TEXT)
                run = (const char *)sqlite3_value_text(v);
            else if (sqlite3_value_type(v) == SQLITE_NULL)
                none = 1;
        } else if ((n == 7 && !strncmp(tok, "device=", 7)) ||
                   (n == 7 && !strncmp(tok, "stream=", 7))) {
            if (sqlite3_value_type(v) == SQLITE_NULL) {
                none = 1;
            } else if (sqlite3_value_numeric_type(v) == SQLITE_INTEGER) {
                x = sqlite3_value_int64(v);
                if (tok[0] == 'd') {
                    b->has_device = 1;
                    b->device = x;
                } else {
                    b->has_stream = 1;
                    b->stream = x;
                }
            }
        } else if (n > 8 && !strncmp(tok, "start_ns", 8)) {
            char op[3] = {0};
            memcpy(op, tok + 8, n - 8 < 2 ? n - 8 : 2);
            if (sqlite3_value_type(v) == SQLITE_NULL)
                none = 1;
            else if (int_bound(v, op[0] == '<', &x))
                tighten(&b->start_lo, &b->start_hi, op, x);
        } else if (n > 6 && !strncmp(tok, "end_ns", 6)) {
            char op[3] = {0};
            memcpy(op, tok + 6, n - 6 < 2 ? n - 6 : 2);
            if (sqlite3_value_type(v) == SQLITE_NULL)
                none = 1;
            else if (int_bound(v, op[0] == '<', &x))
                tighten(&b->end_lo, &b->end_hi, op, x);
        }
    }
    if (none || b->start_lo > b->start_hi || b->end_lo > b->end_hi)
        return SQLITE_OK; /* eof */
    if (run) {
        tfb_run *r = tfb_store_find_run(c->ctx->store, run);
        if (!r)
            return SQLITE_OK;
        c->runs = malloc(sizeof *c->runs);
        if (!c->runs)
            return SQLITE_NOMEM;
        c->runs[0] = r;
        c->nruns = 1;
    } else {
        int rc = tfb_store_runs(c->ctx->store, &c->runs, &c->nruns);
        if (rc < 0)
            return rc == TFB_ENOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
        if (c->ordered && c->nruns > 1) {
            /* planned for one run; a second appeared since */
            sqlite3_free(cur->pVtab->zErrMsg);
            cur->pVtab->zErrMsg = sqlite3_mprintf(
                "%s: the logdir gained runs since the query was planned: "
                "run it again",
                c->tab->name);
            return SQLITE_ERROR;
        }
    }
    return advance_run(c);
}

static int qt_next(sqlite3_vtab_cursor *cur)
{
    qt_cursor *c = (qt_cursor *)cur;
    c->rowid++;
    if (c->tab->next(c))
        return SQLITE_OK;
    return advance_run(c);
}

static int qt_eof(sqlite3_vtab_cursor *cur)
{
    return ((qt_cursor *)cur)->eof;
}

static int qt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    qt_cursor *c = (qt_cursor *)cur;
    if (col == c->tab->col_run)
        sqlite3_result_text(ctx, tfb_run_name(c->run), -1, SQLITE_TRANSIENT);
    else
        c->tab->column(c, ctx, col);
    return SQLITE_OK;
}

static int qt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
    *out = ((qt_cursor *)cur)->rowid;
    return SQLITE_OK;
}

/* xCreate NULL: eponymous-only, the table exists as the module's name and
 * CREATE VIRTUAL TABLE cannot make another (read-only data). */
static const sqlite3_module qt_module = {
    .iVersion = 1,
    .xCreate = NULL,
    .xConnect = qt_connect,
    .xBestIndex = qt_best_index,
    .xDisconnect = qt_disconnect,
    .xDestroy = qt_disconnect,
    .xOpen = qt_open,
    .xClose = qt_close,
    .xFilter = qt_filter,
    .xNext = qt_next,
    .xEof = qt_eof,
    .xColumn = qt_column,
    .xRowid = qt_rowid,
};

static void rows_read_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    qt_ctx *q = sqlite3_user_data(ctx);
    sqlite3_result_int64(ctx, q->rows_read);
}

static void fn_ctx_free(void *p)
{
    ctx_unref(p);
}

int tfb_query_trace_tables_register(struct sqlite3 *db, tfb_store *store)
{
    static const qt_table *const tables[] = {
        &tfb_qt_kernels,    &tfb_qt_memcpy, &tfb_qt_memset,
        &tfb_qt_comms,      &tfb_qt_host_spans, &tfb_qt_nvtx,
        &tfb_qt_memory_events,
    };
    if (!db || !store)
        return TFB_EINVAL;
    qt_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return TFB_ENOMEM;
    ctx->store = store;
    ctx->refs = 1; /* this function's, dropped at the end */
    int err = 0;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0] && !err; i++) {
        qt_aux *a = malloc(sizeof *a);
        if (!a) {
            err = TFB_ENOMEM;
            break;
        }
        a->ctx = ctx;
        a->tab = tables[i];
        ctx->refs++;
        /* create_module_v2 calls aux_free on failure too */
        if (sqlite3_create_module_v2(db, tables[i]->name, &qt_module, a,
                                     aux_free) != SQLITE_OK)
            err = TFB_EINVAL;
    }
    if (!err) {
        ctx->refs++;
        if (sqlite3_create_function_v2(db, "tfb_trace_rows_read", 0,
                                       SQLITE_UTF8 | SQLITE_INNOCUOUS, ctx,
                                       rows_read_fn, NULL, NULL,
                                       fn_ctx_free) != SQLITE_OK)
            err = TFB_EINVAL;
    }
    ctx_unref(ctx);
    return err;
}
