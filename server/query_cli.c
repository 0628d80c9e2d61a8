/*
 * query_cli.c - `tfboard query` and `tfboard export` (query_cli.h).
 */
#include "query_cli.h"

#include <regex.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/regex_bound.h"
#include "base/vec.h"
#include "core/json.h"
#include "core/options.h"
#include "query/query.h"
#include "report/report_load.h"
#include "store/store.h"
#include "tfboard.h"

typedef enum { F_TABLE, F_CSV, F_JSON, F_JSONL } out_format;

typedef struct cli_opts {
    const char *logdir, *format, *output, *sql, *tags, *where;
    int quiet;
    double timeout_ms, max_rows, max_mem;
} cli_opts;

/* ---- writing a result ------------------------------------------------ */

typedef struct writer {
    FILE *f;
    out_format fmt;
    int ncol;
    char **names;
    int64_t rows;
    /* table: the measured rows, then the widths */
    char **cells;        /* TFB_QUERY_CLI_TABLE_ROWS x ncol */
    size_t nbuf;
    size_t *width;
    int header_done;
    /* export --tags */
    regex_t *tag_re;
    int tag_col;
    char last_tag[512];
    int last_tag_ok;
    int failed;
} writer;

/* A cell as text (NULL: the empty string for CSV/table). */
static char *cell_text(sqlite3_stmt *st, int i, int *is_null)
{
    char buf[64];
    *is_null = 0;
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        *is_null = 1;
        return strdup("");
    case SQLITE_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)sqlite3_column_int64(st, i));
        return strdup(buf);
    case SQLITE_FLOAT: {
        double v = sqlite3_column_double(st, i);
        if (v != v)
            return strdup("nan");
        if (v > 1.7976931348623157e308 || v < -1.7976931348623157e308)
            return strdup(v > 0 ? "inf" : "-inf");
        tfb_fmt_double(buf, v);
        return strdup(buf);
    }
    case SQLITE_BLOB: {
        int n = sqlite3_column_bytes(st, i);
        const unsigned char *b = sqlite3_column_blob(st, i);
        char *s = malloc((size_t)n * 2 + 4);
        if (!s)
            return NULL;
        size_t k = 0;
        s[k++] = 'x';
        s[k++] = '\'';
        for (int j = 0; j < n; j++)
            k += (size_t)sprintf(s + k, "%02x", b[j]);
        s[k++] = '\'';
        s[k] = 0;
        return s;
    }
    default: {
        const char *t = (const char *)sqlite3_column_text(st, i);
        int n = sqlite3_column_bytes(st, i);
        char *s = malloc((size_t)n + 1);
        if (!s)
            return NULL;
        memcpy(s, t ? t : "", (size_t)n);
        s[n] = 0;
        return s;
    }
    }
}

static void csv_put(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Control characters of a cell shown as '?' on the terminal's table. */
static void table_put(FILE *f, const char *s, size_t width)
{
    size_t n = 0;
    for (; *s && n < TFB_QUERY_CLI_TABLE_CELL; s++, n++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
    if (*s) {
        fputs("...", f);
        n += 3;
    }
    for (; n < width; n++)
        fputc(' ', f);
}

static size_t shown_len(const char *s)
{
    size_t n = strlen(s);
    return n > TFB_QUERY_CLI_TABLE_CELL ? TFB_QUERY_CLI_TABLE_CELL + 3 : n;
}

static void table_row(writer *w, char **cells)
{
    for (int i = 0; i < w->ncol; i++) {
        if (i)
            fputs(" | ", w->f);
        table_put(w->f, cells[i], i + 1 < w->ncol ? w->width[i] : 0);
    }
    fputc('\n', w->f);
}

static void table_flush(writer *w)
{
    if (w->header_done)
        return;
    w->header_done = 1;
    table_row(w, w->names);
    for (int i = 0; i < w->ncol; i++) {
        if (i)
            fputs("-+-", w->f);
        for (size_t k = 0; k < w->width[i]; k++)
            fputc('-', w->f);
    }
    fputc('\n', w->f);
    for (size_t r = 0; r < w->nbuf; r++) {
        table_row(w, &w->cells[r * (size_t)w->ncol]);
        for (int i = 0; i < w->ncol; i++)
            free(w->cells[r * (size_t)w->ncol + (size_t)i]);
    }
    w->nbuf = 0;
}

static int on_cols(void *ctx, int ncol, const char *const *names)
{
    writer *w = ctx;
    w->ncol = ncol;
    w->names = calloc((size_t)ncol + 1, sizeof *w->names);
    w->width = calloc((size_t)ncol + 1, sizeof *w->width);
    if (!w->names || !w->width)
        return TFB_ENOMEM;
    for (int i = 0; i < ncol; i++) {
        if (!(w->names[i] = strdup(names[i])))
            return TFB_ENOMEM;
        w->width[i] = shown_len(names[i]);
        if (strcmp(names[i], "tag") == 0)
            w->tag_col = i;
    }
    switch (w->fmt) {
    case F_TABLE:
        w->cells = calloc((size_t)TFB_QUERY_CLI_TABLE_ROWS * (size_t)ncol + 1,
                          sizeof *w->cells);
        if (!w->cells)
            return TFB_ENOMEM;
        break;
    case F_CSV:
        for (int i = 0; i < ncol; i++) {
            if (i)
                fputc(',', w->f);
            csv_put(w->f, names[i]);
        }
        fputc('\n', w->f);
        break;
    case F_JSON: {
        tfb_json j;
        tfb_json_init(&j);
        tfb_json_array_begin(&j);
        for (int i = 0; i < ncol; i++)
            tfb_json_str(&j, names[i]);
        tfb_json_array_end(&j);
        size_t len;
        char *s = tfb_json_failed(&j) ? NULL : tfb_json_take(&j, &len);
        tfb_json_free(&j);
        if (!s)
            return TFB_ENOMEM;
        fprintf(w->f, "{\"columns\": %s, \"rows\": [", s);
        free(s);
        break;
    }
    default:
        break;
    }
    return 0;
}

static void json_value(tfb_json *j, sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        tfb_json_null(j);
        break;
    case SQLITE_INTEGER:
        tfb_json_i64(j, sqlite3_column_int64(st, i));
        break;
    case SQLITE_FLOAT:
        tfb_json_double(j, sqlite3_column_double(st, i));
        break;
    default:
        tfb_json_strn(j, (const char *)sqlite3_column_text(st, i),
                      (size_t)sqlite3_column_bytes(st, i));
    }
}

/* export --tags: the regex decides once a tag. */
static int tag_wanted(writer *w, sqlite3_stmt *st)
{
    if (!w->tag_re)
        return 1;
    const char *t = (const char *)sqlite3_column_text(st, w->tag_col);
    if (!t)
        return 0;
    if (strncmp(t, w->last_tag, sizeof w->last_tag) == 0 &&
        strlen(t) < sizeof w->last_tag)
        return w->last_tag_ok;
    w->last_tag_ok = regexec(w->tag_re, t, 0, NULL, 0) == 0;
    if (strlen(t) < sizeof w->last_tag)
        strcpy(w->last_tag, t);
    else
        w->last_tag[0] = 0;
    return w->last_tag_ok;
}

static int on_row(void *ctx, sqlite3_stmt *st)
{
    writer *w = ctx;
    if (!tag_wanted(w, st))
        return 0;
    if (w->fmt == F_TABLE) {
        if (w->nbuf == TFB_QUERY_CLI_TABLE_ROWS)
            table_flush(w);
        char **cells = w->header_done ? calloc((size_t)w->ncol + 1, sizeof *cells)
                                      : &w->cells[w->nbuf * (size_t)w->ncol];
        if (!cells)
            return TFB_ENOMEM;
        for (int i = 0; i < w->ncol; i++) {
            int is_null;
            if (!(cells[i] = cell_text(st, i, &is_null)))
                return TFB_ENOMEM;
            if (!w->header_done && shown_len(cells[i]) > w->width[i])
                w->width[i] = shown_len(cells[i]);
        }
        if (w->header_done) {
            table_row(w, cells);
            for (int i = 0; i < w->ncol; i++)
                free(cells[i]);
            free(cells);
        } else {
            w->nbuf++;
        }
    } else if (w->fmt == F_CSV) {
        for (int i = 0; i < w->ncol; i++) {
            int is_null;
            char *s = cell_text(st, i, &is_null);
            if (!s)
                return TFB_ENOMEM;
            if (i)
                fputc(',', w->f);
            csv_put(w->f, s);
            free(s);
        }
        fputc('\n', w->f);
    } else {
        tfb_json j;
        tfb_json_init(&j);
        if (w->fmt == F_JSON) {
            tfb_json_array_begin(&j);
            for (int i = 0; i < w->ncol; i++)
                json_value(&j, st, i);
            tfb_json_array_end(&j);
        } else {
            tfb_json_object_begin(&j);
            for (int i = 0; i < w->ncol; i++) {
                tfb_json_key(&j, w->names[i]);
                json_value(&j, st, i);
            }
            tfb_json_object_end(&j);
        }
        size_t len;
        char *s = tfb_json_failed(&j) ? NULL : tfb_json_take(&j, &len);
        tfb_json_free(&j);
        if (!s)
            return TFB_ENOMEM;
        if (w->fmt == F_JSON)
            fputs(w->rows ? ",\n  " : "\n  ", w->f);
        fwrite(s, 1, len, w->f);
        if (w->fmt == F_JSONL)
            fputc('\n', w->f);
        free(s);
    }
    w->rows++;
    if (ferror(w->f)) {
        w->failed = 1;
        return TFB_EIO;
    }
    return 0;
}

static void writer_end(writer *w, int truncated)
{
    if (w->fmt == F_TABLE && w->names) {
        table_flush(w);
        fprintf(w->f, "(%lld row%s%s)\n", (long long)w->rows,
                w->rows == 1 ? "" : "s", truncated ? ", truncated" : "");
    } else if (w->fmt == F_JSON && w->names) {
        fprintf(w->f, "%s], \"truncated\": %s}\n", w->rows ? "\n" : "",
                truncated ? "true" : "false");
    }
}

static void writer_free(writer *w)
{
    for (size_t r = 0; r < w->nbuf * (size_t)w->ncol; r++)
        free(w->cells[r]);
    free(w->cells);
    for (int i = 0; w->names && i < w->ncol; i++)
        free(w->names[i]);
    free(w->names);
    free(w->width);
}

/* ---- the commands ---------------------------------------------------- */

static int parse_format(const char *s, int allow_all, out_format *out)
{
    static const char *const names[] = {"table", "csv", "json", "jsonl"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0 &&
            (allow_all || i == F_CSV || i == F_JSONL)) {
            *out = (out_format)i;
            return 0;
        }
    return -1;
}

/* The SQL from stdin (at most TFB_QUERY_MAX_SQL bytes). */
static char *read_stdin(void)
{
    /* 4 KiB, doubled each time the reads fill it (less the NUL's byte) */
    tfb_buf b = {0};
    if (tfb_vec_need(&b, 4096) < 0)
        return NULL;
    for (;;) {
        size_t k = fread(b.v + b.n, 1, b.cap - b.n - 1, stdin);
        b.n += k;
        if (k == 0)
            break;
        if (b.n + 1 == b.cap &&
            (b.cap > TFB_QUERY_MAX_SQL || tfb_vec_need(&b, b.cap + 1) < 0)) {
            tfb_buf_free(&b);
            return NULL;
        }
    }
    b.v[b.n] = 0;
    return tfb_buf_take(&b);
}

/* SQLite's message, where it is, and a caret under the place. */
static void report_error(const char *prog, const char *what, const char *text,
                         const char *err, int off)
{
    if (off < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, what, err);
        return;
    }
    fprintf(stderr, "%s: %s: %s (at byte %d)\n", prog, what, err, off);
    /* the line of the error and a caret under it */
    const char *ls = text + off, *le = text + off;
    while (ls > text && ls[-1] != '\n')
        ls--;
    while (*le && *le != '\n')
        le++;
    if (le - ls > 200)
        return;
    fprintf(stderr, "  %.*s\n  ", (int)(le - ls), ls);
    for (const char *p = ls; p < text + off; p++)
        fputc(*p == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
}

static int exit_for(int rc)
{
    if (rc == TFB_EINVAL || rc == TFB_EACCES)
        return 2;
    return 1;
}

static const char *k_query_synopsis =
    "usage: tfboard query --logdir DIR [--format table|csv|json|jsonl]\n"
    "         [--output FILE] [--timeout_ms MS] [--max_rows N] "
    "[--max_mem BYTES]\n"
    "         [--quiet] [SQL]\n\n"
    "Runs one SQL statement (SQLite's dialect; from stdin when not given)\n"
    "over the runs of DIR (a directory, or an s3:// or gs:// URL). The\n"
    "tables: runs, hparams, scalars, scalar_stats, histograms,\n"
    "histogram_buckets, texts, images, steps, runs_wide (server/API.md,\n"
    "\"SQL tables\").\n\n";

static const char *k_exit_help =
    "Exit status: 0; 1 a limit was reached or the output could not be\n"
    "written; 2 usage or a bad query (SQLite's message and its position);\n"
    "3 the logdir cannot be read.\n";

/* The SQL may be the last argument: split it off before the options. */
static const char *take_sql(int *argc, char **argv)
{
    if (*argc < 2)
        return NULL;
    const char *last = argv[*argc - 1];
    const char *prev = argv[*argc - 2];
    if (last[0] == '-')
        return NULL;
    /* "--logdir DIR": the last word is an option's value, unless that
     * option is a flag or was written --name=value */
    if (*argc >= 3 && prev[0] == '-' && !strchr(prev, '=') &&
        strcmp(prev, "--quiet") != 0)
        return NULL;
    (*argc)--;
    return last;
}

static int run_sql(const char *prog, tfb_store *store, const char *sql,
                   const cli_opts *o, out_format fmt, regex_t *tag_re)
{
    FILE *f = stdout;
    if (o->output && !(f = fopen(o->output, "w"))) {
        fprintf(stderr, "%s: %s: cannot write\n", prog, o->output);
        return 1;
    }
    tfb_query *q;
    int rc = tfb_query_open(store, &q);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", prog, tfb_strerror(rc));
        if (f != stdout)
            fclose(f);
        return 1;
    }
    tfb_query_limits lim = {(int64_t)o->timeout_ms, (int64_t)o->max_rows,
                            (int64_t)o->max_mem};
    writer w = {.f = f, .fmt = fmt, .tag_re = tag_re, .tag_col = -1};
    char err[512];
    int off = -1, truncated = 0;
    rc = tfb_query_exec(q, sql, &lim, on_cols, on_row, &w, &truncated, err,
                        sizeof err, &off);
    int status = 0;
    if (rc == 0) {
        writer_end(&w, truncated);
        if (truncated)
            fprintf(stderr, "%s: only the first %lld rows (--max_rows)\n",
                    prog, (long long)lim.max_rows);
    } else if (w.failed) {
        fprintf(stderr, "%s: writing the output failed\n", prog);
        status = 1;
    } else {
        report_error(prog, "query failed", sql, err[0] ? err : tfb_strerror(rc),
                     off);
        status = exit_for(rc);
    }
    writer_free(&w);
    tfb_query_close(q);
    if (fflush(f) != 0 || (f != stdout && fclose(f) != 0)) {
        fprintf(stderr, "%s: writing the output failed\n", prog);
        status = status ? status : 1;
    }
    return status;
}

int tfb_query_main(int argc, char **argv)
{
    cli_opts o = {.format = "table", .max_mem = (double)TFB_QUERY_CLI_MAX_MEM};
    const char *sql_arg = take_sql(&argc, argv);
    const tfb_option opts[] = {
        {"logdir", "DIR", "the runs to query (a directory, s3:// or gs://)",
         TFB_OPT_STRING, .dest = &o.logdir},
        {"sql", "SQL", "the statement (or the last argument, or stdin)",
         TFB_OPT_STRING, .dest = &o.sql},
        {"format", "F", "table, csv, json or jsonl", TFB_OPT_STRING, "table",
         .dest = &o.format},
        {"output", "FILE", "write the result there (default stdout)",
         TFB_OPT_STRING, .dest = &o.output},
        {"timeout_ms", "MS", "interrupt the query past this (0: none)",
         TFB_OPT_DOUBLE, "0", 0, 1e12, &o.timeout_ms},
        {"max_rows", "N", "at most N rows (0: all)", TFB_OPT_DOUBLE, "0", 0,
         9e18, &o.max_rows},
        {"max_mem", "BYTES", "memory SQLite may hold for the query",
         TFB_OPT_DOUBLE, "1073741824", 1 << 20, 9e18, &o.max_mem},
        {"quiet", NULL, "no progress lines while loading", TFB_OPT_FLAG,
         .dest = &o.quiet},
    };
    const tfb_command cmd = {.prog = "tfboard query",
                             .synopsis = k_query_synopsis,
                             .opts = opts,
                             .n_opts = sizeof opts / sizeof *opts,
                             .epilogue = k_exit_help};
    int rc = tfb_options_parse(&cmd, argc, argv, stdout, stderr);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    out_format fmt;
    if (parse_format(o.format, 1, &fmt) < 0) {
        fprintf(stderr, "tfboard query: --format: table, csv, json or jsonl\n");
        return 2;
    }
    if (!o.logdir) {
        fprintf(stderr, "tfboard query: --logdir is required (see tfboard "
                        "query --help)\n");
        return 2;
    }
    char *owned = NULL;
    const char *sql = o.sql ? o.sql : sql_arg;
    if (!sql) {
        if (!(sql = owned = read_stdin())) {
            fprintf(stderr, "tfboard query: no SQL (stdin unreadable or over "
                            "%d bytes)\n", TFB_QUERY_MAX_SQL);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    tfb_store *store;
    if (tfb_report_open_as("tfboard query", o.logdir, o.quiet, &store) < 0) {
        free(owned);
        return 3;
    }
    int status = run_sql("tfboard query", store, sql, &o, fmt, NULL);
    tfb_store_destroy(store);
    free(owned);
    return status;
}

int tfb_export_main(int argc, char **argv)
{
    cli_opts o = {.format = "csv", .max_mem = (double)TFB_QUERY_CLI_MAX_MEM};
    const tfb_option opts[] = {
        {"logdir", "DIR", "the runs to export (a directory, s3:// or gs://)",
         TFB_OPT_STRING, .dest = &o.logdir},
        {"format", "F", "csv or jsonl", TFB_OPT_STRING, "csv",
         .dest = &o.format},
        {"tags", "REGEX", "only the tags it matches (POSIX extended)",
         TFB_OPT_STRING, .dest = &o.tags},
        {"where", "EXPR", "only the runs the filter selects: an expression\n"
         "over runs_wide (lr > 0.01 AND \"loss.last\" < 0.5)",
         TFB_OPT_STRING, .dest = &o.where},
        {"output", "FILE", "write there (default stdout)", TFB_OPT_STRING,
         .dest = &o.output},
        {"quiet", NULL, "no progress lines while loading", TFB_OPT_FLAG,
         .dest = &o.quiet},
    };
    const tfb_command cmd = {
        .prog = "tfboard export",
        .synopsis = "usage: tfboard export --logdir DIR [--format csv|jsonl]"
                    " [--tags REGEX]\n         [--where EXPR] [--output "
                    "FILE] [--quiet]\n\n"
                    "Writes every scalar of every run in the long format "
                    "(run, tag, step,\nwall_time, value): a shorthand for "
                    "tfboard query \"SELECT * FROM scalars\".\n\n",
        .opts = opts, .n_opts = sizeof opts / sizeof *opts,
        .epilogue = k_exit_help};
    int rc = tfb_options_parse(&cmd, argc, argv, stdout, stderr);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    out_format fmt;
    if (parse_format(o.format, 0, &fmt) < 0) {
        fprintf(stderr, "tfboard export: --format: csv or jsonl\n");
        return 2;
    }
    if (!o.logdir) {
        fprintf(stderr, "tfboard export: --logdir is required\n");
        return 2;
    }
    regex_t re;
    char why[300];
    if (o.tags && tfb_regex_compile(&re, o.tags, REG_EXTENDED | REG_NOSUB, why,
                                    sizeof why) < 0) {
        fprintf(stderr, "tfboard export: --tags: %s\n", why);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    tfb_store *store;
    int status = 0;
    if (tfb_report_open_as("tfboard export", o.logdir, o.quiet, &store) < 0) {
        status = 3;
        goto out;
    }
    char *sql = NULL;
    if (o.where) {
        /* the filter's runs, as a list of literals the scan joins on */
        tfb_query *q;
        char **names = NULL;
        size_t n = 0;
        char err[512];
        int off = -1;
        rc = tfb_query_open(store, &q);
        if (rc == 0) {
            tfb_query_limits lim = {0, 0, (int64_t)o.max_mem};
            rc = tfb_query_filter_runs(q, o.where, &lim, &names, &n, err,
                                       sizeof err, &off);
            tfb_query_close(q);
        } else {
            snprintf(err, sizeof err, "%s", tfb_strerror(rc));
        }
        if (rc < 0) {
            report_error("tfboard export", "--where", o.where, err, off);
            status = exit_for(rc);
        } else {
            size_t cap = 128;
            for (size_t i = 0; i < n; i++)
                cap += 2 * strlen(names[i]) + 4;
            sql = malloc(cap);
            if (sql) {
                size_t k = (size_t)snprintf(sql, cap, "SELECT run, tag, step,"
                                            " wall_time, value FROM scalars"
                                            " WHERE run IN (");
                for (size_t i = 0; i < n; i++) {
                    sql[k++] = i ? ',' : ' ';
                    sql[k++] = '\'';
                    for (const char *p = names[i]; *p; p++) {
                        if (*p == '\'')
                            sql[k++] = '\'';
                        sql[k++] = *p;
                    }
                    sql[k++] = '\'';
                }
                sql[k++] = ')';
                sql[k] = 0;
            } else {
                status = 1;
            }
        }
        tfb_query_names_free(names, n);
    } else {
        sql = strdup("SELECT run, tag, step, wall_time, value FROM scalars");
        if (!sql)
            status = 1;
    }
    if (status == 0)
        status = run_sql("tfboard export", store, sql, &o, fmt,
                         o.tags ? &re : NULL);
    free(sql);
    tfb_store_destroy(store);
out:
    if (o.tags)
        regfree(&re);
    return status;
}
