/*
 * trace_load_host_sqlite.c - the host side of a trace store in the nsys
 * export layout (ours, *.trace.sqlite, or `nsys export --type sqlite`)
 * into the host model (trace.h):
 *   NVTX_EVENTS                  eventType 59 (push/pop) and 60 (start/end)
 *                                ranges, 34 marks; text from the text
 *                                column, else StringIds by textId;
 *   CUPTI_ACTIVITY_KIND_RUNTIME  CUDA API calls, names by nameId, with
 *                                correlationId (launch -> kernel flows);
 *   ThreadNames                  (nsys) thread names by globalTid;
 * each row on the thread of its globalTid = (pid << 24) | tid, the layout
 * of nsys and of our collector (docs/trace-store.md). A table or column
 * the file lacks reads as absent (no lanes), never as an error.
 *
 * Opened as trace_load_sqlite.c opens a trace (a file from elsewhere may
 * compute): read-only and immutable (or its WAL copy, trace_walcopy.h),
 * untrusted schema, defensive, 1 MiB values, a progress handler that stops
 * a statement past the load's time, and only plain tables are read (a view
 * or virtual table in place of one fails the load, naming the file).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_file.h"
#include "trace/trace_internal.h"
#include "trace/trace_sqlite_open.h"
#include "trace/trace_walcopy.h"

#define NVTX_MARK 34
#define NVTX_PUSHPOP 59
#define NVTX_STARTEND 60

typedef struct hload {
    tfb_trace_host_builder *b;
    tfb_trace_load_ctl *ctl; /* the builder's: budgets, message */
    sqlite3 *db;
    const char *name; /* the file's base name, for messages */
    int strings;      /* StringIds is a table */
} hload;

static int on_progress(void *arg)
{
    return tfb_trace_load_ctl_late(((hload *)arg)->ctl);
}

/* 1 when name is a plain table, 0 when absent, TFB_ECORRUPT (message
 * set) when a view or virtual table stands in its place. */
static int table(hload *L, const char *name)
{
    int k = tfb_trace_sqlite_table_kind(L->db, name);
    if (k == TFB_TRACE_SQLITE_VIEW || k == TFB_TRACE_SQLITE_VIRTUAL)
        return tfb_trace_load_ctl_fail(
            L->ctl, TFB_ECORRUPT,
            "%s: %s is a %s: trace files are read only from plain tables",
            L->name, name,
            k == TFB_TRACE_SQLITE_VIRTUAL ? "virtual table" : "view");
    return k == TFB_TRACE_SQLITE_TABLE;
}

/* "t.<col>" when the table has it, else "NULL". */
static const char *col(hload *L, const char *tab, const char *c, char *buf,
                       size_t cap)
{
    if (!tfb_trace_sqlite_has_column(L->db, tab, c))
        return "NULL";
    snprintf(buf, cap, "t.\"%s\"", c);
    return buf;
}

/* The text of column i: its own text, or its StringIds text (joined in
 * the query as column i + 1) when it is an id. -1: none; -2: ENOMEM. */
static int32_t text_of(hload *L, sqlite3_stmt *st, int i)
{
    for (int k = i; k <= i + 1; k++)
        if (sqlite3_column_type(st, k) == SQLITE_TEXT) {
            int32_t id = tfb_trace_host_builder_str(
                L->b, (const char *)sqlite3_column_text(st, k),
                (size_t)sqlite3_column_bytes(st, k));
            return id < 0 ? -2 : id;
        }
    return -1;
}

/* A statement's rows, each to row(); then why it ended. */
static int each_row(hload *L, const char *sql,
                    int (*row)(hload *L, sqlite3_stmt *st))
{
    sqlite3_stmt *st = tfb_trace_sqlite_prepare(L->db, sql);
    if (!st)
        return 0; /* an odd schema: nothing to read, not an error */
    int err = 0, rc;
    while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
        err = row(L, st);
    sqlite3_finalize(st);
    if (!err && tfb_trace_load_ctl_late(L->ctl))
        err = tfb_trace_load_ctl_fail(L->ctl, TFB_ETOOBIG,
                                      "%s: reading the host events took "
                                      "longer than the load budget",
                                      L->name);
    return err;
}

/* nsys sets bits above the pid (hardware and VM ids) in its globalTids;
 * ours are (pid << 24) | tid: the pid is the 24 bits above the tid. */
static int64_t pid_of(int64_t gtid) { return (gtid >> 24) & 0xffffff; }
static int64_t tid_of(int64_t gtid) { return gtid & 0xffffff; }

static int thread_row(hload *L, sqlite3_stmt *st)
{
    int32_t name = text_of(L, st, 1);
    if (name == -2)
        return TFB_ENOMEM;
    int64_t g = sqlite3_column_int64(st, 0);
    return name < 0 ? 0
                    : tfb_trace_host_builder_thread_name(L->b, pid_of(g),
                                                         tid_of(g), name);
}

static int nvtx_row(hload *L, sqlite3_stmt *st)
{
    int64_t start = sqlite3_column_int64(st, 0);
    int null_end = sqlite3_column_type(st, 1) == SQLITE_NULL;
    int64_t end = sqlite3_column_int64(st, 1);
    int64_t type = sqlite3_column_type(st, 2) == SQLITE_NULL
                       ? -1
                       : sqlite3_column_int64(st, 2);
    int64_t g = sqlite3_column_int64(st, 3);
    int kind;
    if (type == NVTX_PUSHPOP || type == NVTX_STARTEND ||
        (type == -1 && !null_end))
        kind = TFB_TRACE_HOST_RANGE;
    else if (type == NVTX_MARK || type == -1)
        kind = TFB_TRACE_HOST_MARK;
    else
        return 0; /* domain and category records: not on the timeline */
    if (kind == TFB_TRACE_HOST_RANGE && null_end)
        return 0; /* a range never closed */
    if (kind == TFB_TRACE_HOST_MARK)
        end = start;
    int32_t name = text_of(L, st, 4);
    if (name == -1)
        name = tfb_trace_host_builder_str(L->b, "(unnamed)", 9);
    if (name < 0)
        return TFB_ENOMEM;
    return tfb_trace_host_builder_span(L->b, pid_of(g), tid_of(g), kind, name,
                                       start, end, -1);
}

static int runtime_row(hload *L, sqlite3_stmt *st)
{
    int64_t g = sqlite3_column_int64(st, 2);
    int64_t corr = sqlite3_column_type(st, 3) == SQLITE_NULL
                       ? -1
                       : sqlite3_column_int64(st, 3);
    int32_t name = text_of(L, st, 4);
    if (name == -1)
        name = tfb_trace_host_builder_str(L->b, "CUDA API call", 13);
    if (name < 0)
        return TFB_ENOMEM;
    return tfb_trace_host_builder_span(
        L->b, pid_of(g), tid_of(g), TFB_TRACE_HOST_RUNTIME, name,
        sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), corr);
}

/* "<id column>, s.value ... LEFT JOIN StringIds s ON s.id = <id>" parts
 * for a name column that holds a StringIds id (or text). */
static void name_cols(hload *L, const char *tab, const char *id_col,
                      const char *text_col, char *sel, size_t scap,
                      char *join, size_t jcap)
{
    char a[64], c[64];
    const char *idc = id_col ? col(L, tab, id_col, a, sizeof a) : "NULL";
    const char *txt = text_col ? col(L, tab, text_col, c, sizeof c) : "NULL";
    int joined = L->strings && strcmp(idc, "NULL") != 0;
    /* Text first: nsys writes either the text or its id. An id column
     * holding text (a hand-made file) is taken as text too. */
    snprintf(sel, scap, "COALESCE(%s, CASE WHEN typeof(%s) = 'text' THEN "
             "%s END), %s", txt, idc, idc, joined ? "s.value" : "NULL");
    if (joined)
        snprintf(join, jcap, " LEFT JOIN StringIds s ON s.id = %s", idc);
    else
        join[0] = '\0';
}

static int read_threads(hload *L)
{
    const char *T = "ThreadNames";
    int k = table(L, T);
    if (k <= 0 || !tfb_trace_sqlite_has_column(L->db, T, "globalTid"))
        return k < 0 ? k : 0;
    char sel[256], join[128], sql[640];
    name_cols(L, T, "nameId", NULL, sel, sizeof sel, join, sizeof join);
    snprintf(sql, sizeof sql, "SELECT t.globalTid, %s FROM %s t%s", sel, T,
             join);
    return each_row(L, sql, thread_row);
}

static int read_nvtx(hload *L)
{
    const char *T = "NVTX_EVENTS";
    int k = table(L, T);
    if (k <= 0 || !tfb_trace_sqlite_has_column(L->db, T, "start"))
        return k < 0 ? k : 0;
    char c[3][64], sel[256], join[128], sql[1024];
    name_cols(L, T, "textId", "text", sel, sizeof sel, join, sizeof join);
    snprintf(sql, sizeof sql, "SELECT t.start, %s, %s, %s, %s FROM %s t%s",
             col(L, T, "end", c[0], 64), col(L, T, "eventType", c[1], 64),
             col(L, T, "globalTid", c[2], 64), sel, T, join);
    return each_row(L, sql, nvtx_row);
}

static int read_runtime(hload *L)
{
    const char *T = "CUPTI_ACTIVITY_KIND_RUNTIME";
    int k = table(L, T);
    if (k <= 0 || !tfb_trace_sqlite_has_column(L->db, T, "start") ||
        !tfb_trace_sqlite_has_column(L->db, T, "end"))
        return k < 0 ? k : 0;
    char c[2][64], sel[256], join[128], sql[1024];
    name_cols(L, T, "nameId", NULL, sel, sizeof sel, join, sizeof join);
    snprintf(sql, sizeof sql,
             "SELECT t.start, t.\"end\", %s, %s, %s FROM %s t%s",
             col(L, T, "globalTid", c[0], 64),
             col(L, T, "correlationId", c[1], 64), sel, T, join);
    return each_row(L, sql, runtime_row);
}

int tfb_trace_host_load_sqlite(tfb_trace_host_builder *b, const char *path)
{
    hload L = {b, tfb_trace_host_builder_ctl(b), NULL,
               tfb_trace_file_name(path), 0};
    /* Without a copy (none needed, or refused: trace_walcopy.h) the store
     * is read immutable. */
    char *copy = NULL;
    (void)tfb_trace_wal_copy(path, L.ctl ? L.ctl->max_copy_bytes : 0, &copy);
    /* Opened as every trace reader opens one (trace_sqlite_open.h); a
     * file SQLite refuses is not a trace (0), as below. */
    int err = tfb_trace_sqlite_open(copy ? copy : path, !copy, &L.db);
    if (err != TFB_ENOMEM)
        err = 0;
    int read = 0;
    if (L.db) {
        sqlite3_progress_handler(L.db, 10000, on_progress, &L);
        int k = table(&L, "StringIds");
        L.strings = k > 0;
        err = k < 0 ? k : 0;
        if (!err)
            err = read_threads(&L);
        if (!err)
            err = read_nvtx(&L);
        if (!err)
            err = read_runtime(&L);
        /* A file SQLite could not read (not a database) is not a trace. */
        read = sqlite3_errcode(L.db) != SQLITE_NOTADB;
        sqlite3_close(L.db);
    }
    tfb_trace_wal_drop(copy);
    return err ? err : read;
}
