/*
 * query.c - the connection (query.h): opening it with every table, the
 * authorizer, the limits, one statement's execution and the run filter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/deadline.h"
#include "base/vec.h"
#include "query/query_internal.h"
#include "query/query_mem.h"
#include "query/query_trace_tables.h"
#include "tfboard.h"

/* ---- the authorizer -------------------------------------------------- */

/* Functions a statement may not call: loading code, and the FTS3 hook
 * that takes a raw pointer. (SQLite's library has no file functions;
 * readfile/writefile are the shell's.) */
static const char *const k_refused_functions[] = {
    "load_extension", "fts3_tokenizer", "readfile", "writefile", "edit",
};

/* PRAGMAs that only read and name no file: the page lists columns with
 * them. Their argument is a table or schema name, never a value to set. */
static const char *const k_read_pragmas[] = {
    "table_info", "table_xinfo", "table_list",
};

static int refuse(tfb_query *q, const char *what, const char *name)
{
    snprintf(q->refused, sizeof q->refused, "not allowed: %s%s%s", what,
             name ? " " : "", name ? name : "");
    return SQLITE_DENY;
}

static int authorize(void *ctx, int action, const char *a1, const char *a2,
                     const char *db, const char *trigger)
{
    (void)db;
    (void)trigger;
    tfb_query *q = ctx;
    if (q->internal)
        return SQLITE_OK;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        /* only our tables exist: nothing else can be created */
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        for (size_t i = 0; i < sizeof k_refused_functions /
                                   sizeof k_refused_functions[0]; i++)
            if (a2 && strcasecmp(a2, k_refused_functions[i]) == 0)
                return refuse(q, "function", a2);
        return SQLITE_OK;
    case SQLITE_PRAGMA:
        for (size_t i = 0; i < sizeof k_read_pragmas /
                                   sizeof k_read_pragmas[0]; i++)
            if (a1 && strcasecmp(a1, k_read_pragmas[i]) == 0)
                return SQLITE_OK;
        return refuse(q, "PRAGMA", a1);
    case SQLITE_ATTACH:
        return refuse(q, "ATTACH", NULL);
    case SQLITE_DETACH:
        return refuse(q, "DETACH", NULL);
    case SQLITE_UPDATE:
        /* SQLite asks this about the schema table when an eponymous
         * table (ours, pragma_table_info) is first connected, inside a
         * SELECT. A user's UPDATE of it is refused all the same: by the
         * statement check after prepare (not read-only, not a SELECT)
         * and by SQLITE_DBCONFIG_DEFENSIVE. */
        if (a1 && (strcmp(a1, "sqlite_master") == 0 ||
                   strcmp(a1, "sqlite_temp_master") == 0))
            return SQLITE_OK;
        return refuse(q, "writing to", a1);
    case SQLITE_INSERT:
    case SQLITE_DELETE:
        return refuse(q, "writing to", a1);
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
        return refuse(q, "transactions", NULL);
    default:
        /* CREATE / DROP / ALTER of anything, ANALYZE, REINDEX, ... */
        return refuse(q, "statements other than SELECT", NULL);
    }
}

/* ---- the limits ------------------------------------------------------ */

static int progress(void *ctx)
{
    tfb_query *q = ctx;
    if (q->deadline_ns && tfb_mono_now_ns() > q->deadline_ns) {
        q->timed_out = 1;
        return 1;
    }
    return 0;
}

/* ---- open / close ---------------------------------------------------- */

/* The run-side tables (server/API.md "SQL tables"). */
static const qtable *const k_tables[] = {
    &tfb_qt_runs,         &tfb_qt_hparams,    &tfb_qt_scalars,
    &tfb_qt_scalar_stats, &tfb_qt_histograms, &tfb_qt_histogram_buckets,
    &tfb_qt_texts,        &tfb_qt_images,     &tfb_qt_steps,
    &tfb_qt_spikes,       &tfb_qt_alerts,
};

static int register_tables(tfb_query *q)
{
    for (size_t i = 0; i < sizeof k_tables / sizeof k_tables[0]; i++) {
        int rc = tfb_qvtab_register(q, k_tables[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int tfb_query_open(tfb_store *store, tfb_query **out)
{
    *out = NULL;
    tfb_query *q = calloc(1, sizeof *q);
    if (!q)
        return TFB_ENOMEM;
    q->store = store;
    /* NOMUTEX: one thread at a time (query.h); the store is what threads
     * share, and it has its own locks */
    int rc = sqlite3_open_v2(":memory:", &q->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                 SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_MEMORY,
                             NULL);
    if (rc != SQLITE_OK) {
        tfb_query_close(q);
        return rc == SQLITE_NOMEM ? TFB_ENOMEM : TFB_EIO;
    }
    sqlite3 *db = q->db;
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, TFB_QUERY_MAX_LENGTH);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, TFB_QUERY_MAX_SQL);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    /* sorts and temporary tables in memory (counted by the budget),
     * never in a file */
    if (sqlite3_exec(db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL) !=
            SQLITE_OK ||
        (rc = register_tables(q)) < 0 ||
        (rc = tfb_query_wide_register(q)) < 0) {
        tfb_query_close(q);
        return rc < 0 ? rc : TFB_EIO;
    }
    /* the trace-side tables (query_trace_tables.h) */
    if ((rc = tfb_query_trace_tables_register(db, store)) < 0) {
        tfb_query_close(q);
        return rc;
    }
    sqlite3_set_authorizer(db, authorize, q);
    sqlite3_progress_handler(db, TFB_QUERY_PROGRESS_OPS, progress, q);
    *out = q;
    return 0;
}

void tfb_query_close(tfb_query *q)
{
    if (!q)
        return;
    sqlite3_close_v2(q->db);
    tfb_query_wide_free(q);
    tfb_qstats_free(q);
    tfb_qrun_free(q);
    free(q);
}

int64_t tfb_query_rows_touched(const tfb_query *q) { return q->rows_touched; }

size_t tfb_query_wide_left_out(const tfb_query *q) { return q->wide_left_out; }

/* ---- one statement --------------------------------------------------- */

static void set_err(char *err, size_t cap, const char *msg)
{
    if (err && cap)
        snprintf(err, cap, "%s", msg);
}

/* The layer's error for what SQLite answered rc. */
static int map_error(tfb_query *q, int rc, int mem_hit, int64_t max_mem,
                     char *err, size_t errcap)
{
    char buf[192];
    if (q->timed_out) {
        set_err(err, errcap, "time limit reached: the query was interrupted");
        return TFB_ETIMEDOUT;
    }
    if (mem_hit) {
        snprintf(buf, sizeof buf, "memory limit of %lld bytes reached",
                 (long long)max_mem);
        set_err(err, errcap, buf);
        return TFB_ETOOBIG;
    }
    if (q->refused[0] || rc == SQLITE_AUTH) {
        set_err(err, errcap, q->refused[0] ? q->refused : sqlite3_errmsg(q->db));
        return TFB_EACCES;
    }
    const char *msg = sqlite3_errmsg(q->db);
    if (strstr(msg, "may not be modified") || strstr(msg, "may not be altered")) {
        /* a write to (or ALTER of) one of our tables: SQLite refuses it before asking
         * the authorizer (no xUpdate) */
        snprintf(buf, sizeof buf, "not allowed: %s", msg);
        set_err(err, errcap, buf);
        return TFB_EACCES;
    }
    set_err(err, errcap, msg);
    switch (rc & 0xff) {
    case SQLITE_TOOBIG:
        return TFB_ETOOBIG;
    case SQLITE_NOMEM:
        return TFB_ENOMEM;
    case SQLITE_ERROR:
        return TFB_EINVAL;
    default:
        return TFB_EIO;
    }
}

/* Skips blanks and comments. */
static const char *skip_blanks(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
               *p == '\f')
            p++;
        if (p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

/* Statements a query may be: a read, its plan, or a PRAGMA (which the
 * authorizer then judges). SQLite calls some no-ops read-only (REINDEX
 * of nothing): the first keyword decides too. */
static int allowed_verb(const char *sql)
{
    static const char *const verbs[] = {"SELECT", "WITH", "VALUES",
                                        "EXPLAIN", "PRAGMA"};
    const char *p = skip_blanks(sql);
    size_t n = 0;
    while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z'))
        n++;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strlen(verbs[i]) == n && strncasecmp(p, verbs[i], n) == 0)
            return 1;
    return 0;
}

/* 1 when text holds nothing but blanks, ';' and comments. */
static int only_blanks(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
               *p == '\f' || *p == ';')
            p++;
        if (p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            if (!e)
                return 1; /* SQLite ignores an unterminated last comment */
            p = e + 2;
        } else {
            return *p == 0;
        }
    }
}

int tfb_query_exec(tfb_query *q, const char *sql, const tfb_query_limits *lim,
                   tfb_query_cols_fn cols, tfb_query_row_fn row, void *ctx,
                   int *truncated, char *err, size_t errcap, int *err_off)
{
    static const tfb_query_limits none = {0, 0, 0};
    if (!lim)
        lim = &none;
    if (truncated)
        *truncated = 0;
    if (err_off)
        *err_off = -1;
    set_err(err, errcap, "");
    q->refused[0] = 0;
    q->timed_out = 0;
    q->rows_touched = 0;
    q->deadline_ns = lim->timeout_ms > 0
                         ? tfb_mono_now_ns() + lim->timeout_ms * 1000000LL
                         : 0;
    tfb_query_mem_begin(lim->max_mem);
    /* runs_wide's columns are declared again (the hparams of every run
     * read) only for a statement that names it: SQLite has no way to
     * reach a table but by its name in the text (no user view can be
     * made), so a scan of scalars neither waits for nor allocates the
     * hparams of 10,000 runs (bench_query's RSS during a full scan). */
    int rc = strcasestr(sql, "runs_wide") ? tfb_query_wide_refresh(q) : 0;
    if (rc < 0) {
        int hit = tfb_query_mem_end();
        if (hit)
            return map_error(q, SQLITE_NOMEM, hit, lim->max_mem, err, errcap);
        set_err(err, errcap, tfb_strerror(rc));
        return rc;
    }
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    int src = sqlite3_prepare_v3(q->db, sql, -1, 0, &st, &tail);
    if (src != SQLITE_OK) {
        int hit = tfb_query_mem_end();
        if (err_off)
            *err_off = sqlite3_error_offset(q->db);
        return map_error(q, src, hit, lim->max_mem, err, errcap);
    }
    if (!st) {
        tfb_query_mem_end();
        set_err(err, errcap, "no statement");
        return TFB_EINVAL;
    }
    if (tail && !only_blanks(tail)) {
        sqlite3_finalize(st);
        tfb_query_mem_end();
        set_err(err, errcap, "only one statement is allowed");
        if (err_off)
            *err_off = (int)(skip_blanks(tail) - sql);
        return TFB_EINVAL;
    }
    if (!sqlite3_stmt_readonly(st) || !allowed_verb(sql)) {
        sqlite3_finalize(st);
        tfb_query_mem_end();
        set_err(err, errcap, "not allowed: the statement would write");
        return TFB_EACCES;
    }
    int ncol = sqlite3_column_count(st);
    rc = 0;
    if (cols) {
        const char **names = calloc((size_t)ncol + 1, sizeof *names);
        if (!names) {
            rc = TFB_ENOMEM;
        } else {
            for (int i = 0; i < ncol; i++) {
                names[i] = sqlite3_column_name(st, i);
                if (!names[i])
                    names[i] = "";
            }
            rc = cols(ctx, ncol, names);
            free(names);
        }
    }
    int64_t nrows = 0;
    while (rc == 0) {
        src = sqlite3_step(st);
        if (src == SQLITE_DONE)
            break;
        if (src != SQLITE_ROW) {
            int hit = tfb_query_mem_end();
            rc = map_error(q, src, hit, lim->max_mem, err, errcap);
            sqlite3_finalize(st);
            return rc;
        }
        if (lim->max_rows > 0 && nrows >= lim->max_rows) {
            if (truncated)
                *truncated = 1;
            break;
        }
        nrows++;
        if (row)
            rc = row(ctx, st);
    }
    sqlite3_finalize(st);
    tfb_query_mem_end();
    return rc;
}

/* ---- run filters ----------------------------------------------------- */

/* Checks that expr is one expression: strings, quoted names and comments
 * closed, parentheses balanced and never closing more than opened, no ';'.
 * 0, or TFB_EINVAL with the message and the offset. */
static int check_expr(const char *e, char *err, size_t errcap, int *off)
{
    int depth = 0;
    for (const char *p = e; *p; p++) {
        const char *start = p;
        char close = 0;
        switch (*p) {
        case '\'': close = '\''; break;
        case '"': close = '"'; break;
        case '`': close = '`'; break;
        case '[': close = ']'; break;
        default: break;
        }
        if (close) {
            for (p++;; p++) {
                if (!*p) {
                    set_err(err, errcap, "unterminated string or quoted name");
                    *off = (int)(start - e);
                    return TFB_EINVAL;
                }
                if (*p == close) {
                    if (close != ']' && p[1] == close) {
                        p++; /* a doubled quote */
                        continue;
                    }
                    break;
                }
            }
            continue;
        }
        if (p[0] == '-' && p[1] == '-') {
            while (p[1] && p[1] != '\n')
                p++;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            if (!end) {
                set_err(err, errcap, "unterminated comment");
                *off = (int)(p - e);
                return TFB_EINVAL;
            }
            p = end + 1;
            continue;
        }
        if (*p == ';') {
            set_err(err, errcap, "a filter is one expression: ';' is not allowed");
            *off = (int)(p - e);
            return TFB_EINVAL;
        }
        if (*p == '(')
            depth++;
        if (*p == ')' && --depth < 0) {
            set_err(err, errcap, "unbalanced ')'");
            *off = (int)(p - e);
            return TFB_EINVAL;
        }
    }
    if (depth != 0) {
        set_err(err, errcap, "unbalanced '('");
        *off = (int)strlen(e);
        return TFB_EINVAL;
    }
    return 0;
}

typedef TFB_VEC(char *) names_ctx;

static int name_row(void *ctx, sqlite3_stmt *st)
{
    names_ctx *c = ctx;
    const char *s = (const char *)sqlite3_column_text(st, 0);
    if (tfb_vec_need(c, c->n + 1) < 0)
        return TFB_ENOMEM;
    if (!(c->v[c->n] = strdup(s ? s : "")))
        return TFB_ENOMEM;
    c->n++;
    return 0;
}

/* Wraps the expression; a newline before the ')' ends a line comment. */
#define FILTER_HEAD "SELECT run FROM runs_wide WHERE (\n"
#define FILTER_TAIL "\n)"

int tfb_query_filter_runs(tfb_query *q, const char *expr,
                          const tfb_query_limits *lim, char ***names,
                          size_t *n, char *err, size_t errcap, int *err_off)
{
    *names = NULL;
    *n = 0;
    int off = -1;
    if (err_off)
        *err_off = -1;
    if (only_blanks(expr)) {
        set_err(err, errcap, "empty filter expression");
        if (err_off)
            *err_off = 0;
        return TFB_EINVAL;
    }
    int rc = check_expr(expr, err, errcap, &off);
    if (rc < 0) {
        if (err_off)
            *err_off = off;
        return rc;
    }
    size_t el = strlen(expr), hl = strlen(FILTER_HEAD);
    char *sql = malloc(hl + el + sizeof FILTER_TAIL);
    if (!sql)
        return TFB_ENOMEM;
    memcpy(sql, FILTER_HEAD, hl);
    memcpy(sql + hl, expr, el);
    memcpy(sql + hl + el, FILTER_TAIL, sizeof FILTER_TAIL);
    names_ctx c = {0};
    rc = tfb_query_exec(q, sql, lim, NULL, name_row, &c, NULL, err, errcap,
                        &off);
    free(sql);
    if (err_off && off >= 0) {
        off -= (int)hl;
        *err_off = off < 0 ? 0 : off > (int)el ? (int)el : off;
    }
    if (rc < 0) {
        tfb_query_names_free(c.v, c.n);
        return rc;
    }
    *names = c.v;
    *n = c.n;
    return 0;
}

void tfb_query_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
