/*
 * trace_load_sqlite.c - reads a trace store in the Nsight Systems export
 * layout: ours (*.trace.sqlite) or `nsys export --type sqlite`. Names are
 * StringIds ids in both; a name column holding text is taken as it is.
 * Columns a file lacks read as NULL, so older or trimmed exports load.
 *
 * A trace file is data from elsewhere, and SQLite files can compute. So
 * a file is opened read-only, immutable and hardened (trace_sqlite_open.h)
 * - or, when it has a non-empty -wal (data an immutable open would not
 * see), a copy of it and its WAL in the cache directory is opened
 * (trace_walcopy.h) -; every table read must be a real table (a view is
 * refused, with a message naming the file); and a progress handler stops
 * any statement past the load's time budget, while the builder counts rows
 * against the row budget.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idxtab.h"
#include "base/str.h"
#include "trace/trace_internal.h"
#include "trace/trace_file.h"
#include "trace/trace_sqlite_open.h"
#include "trace/trace_walcopy.h"
#include "base/vec.h"

/* StringIds id -> index: the pairs, and their table (base/idxtab.h). */
typedef struct id_pair {
    int64_t id;
    int32_t val;
} id_pair;
typedef struct id_map {
    TFB_VEC(id_pair) pairs;
    tfb_idxtab tab;
} id_map;

#define SMALL_IDS 1024

typedef struct loader {
    tfb_trace_builder *b;
    tfb_trace_load_ctl *ctl; /* the builder's: budgets, message */
    sqlite3 *db;
    const char *path;
    /* path with its -wal copied into the cache directory (its WAL data is
     * read), or NULL: path itself is opened, immutable. */
    char *wal_copy;
    int interrupted; /* the progress handler stopped a statement */
    int row_err;     /* an error inside a row function (kernel_row) */
    /* StringIds: id -> interned string, looked up on first use */
    sqlite3_stmt *str_stmt;
    id_map sids;
    /* ids below SMALL_IDS (the usual case) answered without hashing:
     * their string index + 2, 0 when not looked up yet */
    int32_t small_ids[SMALL_IDS];
    /* progress: rows read (here and by the runtime reader) of about
     * rows_est */
    uint64_t rows_read, rows_est;
    _Atomic uint64_t *other_rows;
} loader;

static int on_progress(void *arg)
{
    loader *L = arg;
    if (tfb_trace_load_ctl_late(L->ctl)) {
        L->interrupted = 1;
        return 1;
    }
    return 0;
}

/* 1 when name is a table; 0 when absent; TFB_ECORRUPT (message set)
 * when it is something else (a view). */
static int table_kind(loader *L, const char *name)
{
    int k = tfb_trace_sqlite_table_kind(L->db, name);
    if (k == TFB_TRACE_SQLITE_VIRTUAL)
        return tfb_trace_load_ctl_fail(
            L->ctl, TFB_ECORRUPT,
            "%s: %s is a virtual table: trace files are read only from "
            "plain tables", tfb_trace_file_name(L->path), name);
    if (k == TFB_TRACE_SQLITE_VIEW)
        return tfb_trace_load_ctl_fail(
            L->ctl, TFB_ECORRUPT,
            "%s: %s is a view, not a table: trace files are read only "
            "from tables (a view can compute rows without end)",
            tfb_trace_file_name(L->path), name);
    return k == TFB_TRACE_SQLITE_TABLE;
}

/* "t.col" when the table has it, else "NULL". */
static const char *col(sqlite3 *db, const char *table, const char *c,
                       char *buf, size_t cap)
{
    if (!tfb_trace_sqlite_has_column(db, table, c))
        return "NULL";
    snprintf(buf, cap, "t.\"%s\"", c);
    return buf;
}

/* NULL reads as 0 with sqlite3_column_int64 already: int_or only where
 * the default is something else (each type check costs, 10 M rows). */
static int64_t int_or(sqlite3_stmt *st, int i, int64_t def)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? def
               : sqlite3_column_int64(st, i);
}

/* A statement's end: SQLITE_DONE, or an error. Interrupted by the time
 * budget: TFB_ETOOBIG with the message; other errors (malformed content)
 * end the table quietly, as a damaged file keeps what could be read. */
static int step_end(loader *L, int rc)
{
    if (L->interrupted)
        return tfb_trace_load_ctl_fail(L->ctl, TFB_ETOOBIG,
                                       "%s: reading the trace took longer "
                                       "than the load budget",
                                       tfb_trace_file_name(L->path));
    (void)rc;
    return 0;
}

static void row_done(loader *L)
{
    if ((++L->rows_read & 0xffff) == 0 && L->rows_est) {
        uint64_t other = L->other_rows ? atomic_load(L->other_rows) : 0;
        tfb_trace_builder_progress(L->b, (double)(L->rows_read + other) /
                                             (double)L->rows_est);
    }
}

/* ---- StringIds ------------------------------------------------------------ */

static uint64_t hash_id(int64_t id)
{
    uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static uint64_t hash_pair(const void *ctx, int32_t i)
{
    return hash_id(((const id_map *)ctx)->pairs.v[i].id);
}

/* The slot of id's pair, or of the empty slot its probe ends on. */
static size_t id_slot(const id_map *m, int64_t id)
{
    size_t j = tfb_idxtab_first(&m->tab, hash_id(id));
    for (int32_t i; (i = m->tab.slot[j]) >= 0; j = tfb_idxtab_next(&m->tab, j))
        if (m->pairs.v[i].id == id)
            break;
    return j;
}

/* The value stored for id, or INT32_MIN. */
static int32_t id_get(const id_map *m, int64_t id)
{
    if (!m->tab.cap)
        return INT32_MIN;
    int32_t i = m->tab.slot[id_slot(m, id)];
    return i >= 0 ? m->pairs.v[i].val : INT32_MIN;
}

/* Stores v for id (replacing an old value): 0 or TFB_ENOMEM. */
static int id_put(id_map *m, int64_t id, int32_t v)
{
    if (m->pairs.n >= INT32_MAX ||
        tfb_idxtab_reserve(&m->tab, m->pairs.n + 1, hash_pair, m) < 0)
        return TFB_ENOMEM;
    size_t j = id_slot(m, id);
    if (m->tab.slot[j] >= 0) {
        m->pairs.v[m->tab.slot[j]].val = v;
        return 0;
    }
    if (tfb_vec_push(&m->pairs, ((id_pair){id, v})) < 0)
        return TFB_ENOMEM;
    tfb_idxtab_set(&m->tab, j, (int32_t)(m->pairs.n - 1));
    return 0;
}

static void id_free(id_map *m)
{
    tfb_vec_free(&m->pairs);
    tfb_idxtab_free(&m->tab);
}

static int32_t string_id_lookup(loader *L, int64_t id);

/* The interned text of StringIds id, -1 when unknown; -2 on ENOMEM. */
static int32_t string_id(loader *L, int64_t id)
{
    int small = id >= 0 && id < SMALL_IDS;
    if (small && L->small_ids[id])
        return L->small_ids[id] - 2;
    if (small) {
        /* A small id is looked up once, then answered from the array. */
        int32_t v = string_id_lookup(L, id);
        if (v >= -1)
            L->small_ids[id] = v + 2;
        return v;
    }
    int32_t known = id_get(&L->sids, id);
    if (known != INT32_MIN)
        return known;
    int32_t v = string_id_lookup(L, id);
    if (v >= -1 && id_put(&L->sids, id, v))
        return -2;
    return v;
}

/* The StringIds text of id, interned: its index, -1 when unknown, -2 on
 * ENOMEM. */
static int32_t string_id_lookup(loader *L, int64_t id)
{
    if (!L->str_stmt)
        return -1;
    int32_t v = -1;
    sqlite3_reset(L->str_stmt);
    sqlite3_bind_int64(L->str_stmt, 1, id);
    if (sqlite3_step(L->str_stmt) == SQLITE_ROW &&
        sqlite3_column_type(L->str_stmt, 0) == SQLITE_TEXT) {
        v = tfb_trace_builder_str(
            L->b, (const char *)sqlite3_column_text(L->str_stmt, 0),
            (size_t)sqlite3_column_bytes(L->str_stmt, 0));
        if (v < 0)
            return -2;
    }
    return v;
}

/* ---- tables ---------------------------------------------------------------- */

/* The kernel and runtime tables are long (10 M rows and more), and what a
 * row costs is mostly SQLite's: stepping the statement and one API call
 * per column (sqlite3_column_*) cost more than decoding the row. So their
 * rows are not stepped out one by one: an aggregate SQL function of ours
 * (registered on this connection only, SQLITE_DIRECTONLY so that no view
 * or trigger of the file can call it) gets each row's values as its
 * arguments inside one sqlite3_step - 40 % less CPU a row. An error inside
 * it (out of memory, the row budget) is kept (loader.row_err,
 * call_reader.err) and ends the statement with sqlite3_result_error. */
static void rows_final(sqlite3_context *cx)
{
    sqlite3_result_null(cx);
}

/* Registers fn as the aggregate `name` of argc arguments on db. */
static int add_row_fn(sqlite3 *db, const char *name, int argc, void *arg,
                      void (*fn)(sqlite3_context *, int, sqlite3_value **))
{
    return sqlite3_create_function_v2(db, name, argc,
                                      SQLITE_UTF8 | SQLITE_DIRECTONLY, arg,
                                      NULL, fn, rows_final, NULL) == SQLITE_OK
               ? 0
               : TFB_ENOMEM;
}

/* A value, or def when it is NULL (NULL reads as 0 otherwise). */
static int64_t val_or(sqlite3_value *v, int64_t def)
{
    return sqlite3_value_type(v) == SQLITE_NULL ? def : sqlite3_value_int64(v);
}

/* A name value: the StringIds text when it holds an id that resolves, its
 * own text when it is text, else -1; -2 on ENOMEM. */
static int32_t name_val(loader *L, sqlite3_value *v)
{
    int ty = sqlite3_value_type(v);
    if (ty == SQLITE_INTEGER)
        return string_id(L, sqlite3_value_int64(v));
    if (ty == SQLITE_TEXT) {
        const unsigned char *txt = sqlite3_value_text(v);
        if (!txt)
            return -2; /* SQLite's conversion ran out of memory */
        int32_t id = tfb_trace_builder_str(L->b, (const char *)txt,
                                           (size_t)sqlite3_value_bytes(v));
        return id < 0 ? -2 : id;
    }
    return -1;
}

/* One kernel row (the columns of load_kernels' query, in order). */
static void kernel_row(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    loader *L = sqlite3_user_data(cx);
    (void)argc;
    if (L->row_err)
        return;
    tfb_trace_span_in s;
    s.kind = TFB_TRACE_KERNEL;
    s.start = sqlite3_value_int64(v[0]);
    s.end = sqlite3_value_int64(v[1]);
    s.device = (int32_t)sqlite3_value_int64(v[2]);
    s.stream = (int32_t)sqlite3_value_int64(v[3]);
    s.correlation = val_or(v[4], -1);
    for (int k = 0; k < 3; k++) {
        s.grid[k] = (int32_t)sqlite3_value_int64(v[5 + k]);
        s.block[k] = (int32_t)sqlite3_value_int64(v[8 + k]);
    }
    s.registers = (int32_t)sqlite3_value_int64(v[11]);
    s.shared_mem = (int32_t)(sqlite3_value_int64(v[12]) +
                             sqlite3_value_int64(v[13]));
    s.bytes = 0;
    s.copy_kind = 0;
    s.step = -1;
    s.name = name_val(L, v[14]);
    int err = s.name == -2 ? TFB_ENOMEM : tfb_trace_builder_span(L->b, &s);
    row_done(L);
    if (err) {
        L->row_err = err;
        sqlite3_result_error(cx, "stopped", -1);
    }
}

static int load_kernels(loader *L)
{
    sqlite3 *db = L->db;
    const char *T = "CUPTI_ACTIVITY_KIND_KERNEL";
    char c[16][64];
    const char *name_col =
        tfb_trace_sqlite_has_column(db, T, "demangledName") ? "demangledName"
        : tfb_trace_sqlite_has_column(db, T, "shortName")   ? "shortName"
                                                            : NULL;
    char namebuf[64] = "NULL";
    if (name_col)
        snprintf(namebuf, sizeof namebuf, "t.\"%s\"", name_col);
    char sql[2048];
    /* Argument 14: the name column (text, or a StringIds id). */
    snprintf(
        sql, sizeof sql,
        "SELECT tfb_kernel_rows(t.start, t.\"end\", %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s, %s, %s, %s, %s) FROM %s t",
        col(db, T, "deviceId", c[0], 64), col(db, T, "streamId", c[1], 64),
        col(db, T, "correlationId", c[2], 64), col(db, T, "gridX", c[3], 64),
        col(db, T, "gridY", c[4], 64), col(db, T, "gridZ", c[5], 64),
        col(db, T, "blockX", c[6], 64), col(db, T, "blockY", c[7], 64),
        col(db, T, "blockZ", c[8], 64),
        col(db, T, "registersPerThread", c[9], 64),
        col(db, T, "staticSharedMemory", c[10], 64),
        col(db, T, "dynamicSharedMemory", c[11], 64), namebuf, T);
    if (add_row_fn(db, "tfb_kernel_rows", 15, L, kernel_row))
        return TFB_ENOMEM;
    sqlite3_stmt *st = tfb_trace_sqlite_prepare(db, sql);
    if (!st)
        return step_end(L, 0);
    L->row_err = 0;
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return L->row_err ? L->row_err : step_end(L, rc);
}

static int load_copies(loader *L, int memset_)
{
    sqlite3 *db = L->db;
    const char *T = memset_ ? "CUPTI_ACTIVITY_KIND_MEMSET"
                            : "CUPTI_ACTIVITY_KIND_MEMCPY";
    int k = table_kind(L, T);
    if (k <= 0)
        return k;
    char c[5][64];
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT t.start, t.\"end\", %s, %s, %s, %s, %s FROM %s t",
             col(db, T, "deviceId", c[0], 64), col(db, T, "streamId", c[1], 64),
             col(db, T, "correlationId", c[2], 64), col(db, T, "bytes", c[3], 64),
             memset_ ? "NULL" : col(db, T, "copyKind", c[4], 64), T);
    sqlite3_stmt *st = tfb_trace_sqlite_prepare(db, sql);
    if (!st)
        return step_end(L, 0);
    int err = 0, rc = 0;
    while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        tfb_trace_span_in s;
        memset(&s, 0, sizeof s);
        s.kind = memset_ ? TFB_TRACE_MEMSET : TFB_TRACE_MEMCPY;
        s.start = sqlite3_column_int64(st, 0);
        s.end = sqlite3_column_int64(st, 1);
        s.device = (int32_t)sqlite3_column_int64(st, 2);
        s.stream = (int32_t)sqlite3_column_int64(st, 3);
        s.correlation = int_or(st, 4, -1);
        s.bytes = sqlite3_column_int64(st, 5);
        int64_t ck = sqlite3_column_int64(st, 6);
        s.copy_kind = (uint8_t)(ck >= 0 && ck < 256 ? ck : 0);
        s.name = -1;
        s.step = -1;
        err = tfb_trace_builder_span(L->b, &s);
        row_done(L);
    }
    sqlite3_finalize(st);
    return err ? err : step_end(L, rc);
}

/* ---- runtime calls, read on a second thread --------------------------------
 * The runtime table is as long as the kernel table: it is read on its own
 * connection and thread while this one reads the kernels (half the wall
 * time on two cores). Its names (a few distinct StringIds ids) are kept
 * as local texts and interned in the builder after the join. */

typedef struct call_reader {
    const char *file; /* what to open (the store or its WAL copy) */
    int immutable;
    const char *path;
    /* the load's: only its deadline is read here, which nothing writes
     * during the load */
    const tfb_trace_load_ctl *ctl;
    uint64_t max_rows;
    atomic_int cancel;
    _Atomic uint64_t rows;
    uint64_t nrows; /* rows seen (the reader's own count) */
    /* The calls are kept as the builder keeps them (filtered, ids offset
     * by the file's base: tfb_trace_builder_calls_take), here, in
     * parallel with the kernel rows, not in a pass after the join. */
    int64_t corr_base, corr_max;
    sqlite3_stmt *q; /* StringIds lookup, on the reader's connection */
    int has_name;
    TFB_VEC(tfb_trace_call) calls;
    size_t calls_prefaulted; /* bytes (trace_prefault.c) */
    TFB_VEC(char *) names; /* local name index -> text */
    id_map ids; /* StringIds id -> local name index */
    int err;      /* 0, TFB_ENOMEM, TFB_ETOOBIG */
    int interrupted;
    double wall_s, cpu_s; /* the reader's own (the load's timeline) */
    int serial; /* no thread: read at the join, on the load's thread */
    pthread_t th;
} call_reader;

static int reader_progress(void *arg)
{
    call_reader *R = arg;
    if (atomic_load(&R->cancel) || tfb_trace_load_ctl_late(R->ctl)) {
        R->interrupted = 1;
        return 1;
    }
    return 0;
}

static int32_t reader_name(call_reader *R, const char *text, size_t len)
{
    size_t n = R->names.n;
    if (n && strlen(R->names.v[n - 1]) == len &&
        memcmp(R->names.v[n - 1], text, len) == 0)
        return (int32_t)(n - 1);
    if (n >= INT32_MAX || tfb_vec_need(&R->names, n + 1) < 0)
        return -2;
    char *c = tfb_strndup(text, len);
    if (!c)
        return -2;
    R->names.v[R->names.n++] = c;
    return (int32_t)n;
}

/* Local index of StringIds id (looked up once); -1 unknown, -2 ENOMEM. */
static int32_t reader_id(call_reader *R, sqlite3_stmt *q, int64_t id)
{
    int32_t known = id_get(&R->ids, id);
    if (known != INT32_MIN)
        return known;
    int32_t v = -1;
    if (q) {
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, id);
        if (sqlite3_step(q) == SQLITE_ROW &&
            sqlite3_column_type(q, 0) == SQLITE_TEXT)
            v = reader_name(R, (const char *)sqlite3_column_text(q, 0),
                            (size_t)sqlite3_column_bytes(q, 0));
        if (v == -2)
            return -2;
    }
    return id_put(&R->ids, id, v) ? -2 : v;
}

/* One runtime row (start, end, correlationId, name): see kernel_row. */
static void call_row(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    call_reader *R = sqlite3_user_data(cx);
    (void)argc;
    if (R->err)
        return;
    /* The count is published for the progress figure now and then (an
     * atomic add a row costs). */
    if ((++R->nrows & 0xfff) == 0)
        atomic_store(&R->rows, R->nrows);
    if (R->max_rows && R->nrows > R->max_rows)
        R->err = TFB_ETOOBIG;
    else if (tfb_vec_need(&R->calls, R->calls.n + 1) < 0)
        R->err = TFB_ENOMEM;
    if (R->err) {
        sqlite3_result_error(cx, "stopped", -1);
        return;
    }
    size_t used = (R->calls.n + 1) * sizeof *R->calls.v;
    if (used + TFB_TRACE_PREFAULT_CHUNK / 2 > R->calls_prefaulted)
        tfb_trace_prefault_ahead(R->calls.v, used,
                                 R->calls.cap * sizeof *R->calls.v,
                                 &R->calls_prefaulted);
    tfb_trace_call *c = &R->calls.v[R->calls.n];
    /* Its padding too: the columnar cache file stores calls raw, and
     * heap bytes there made two loads of one trace differ. */
    memset(c, 0, sizeof *c);
    c->start = sqlite3_value_int64(v[0]);
    c->end = sqlite3_value_int64(v[1]);
    c->correlation = val_or(v[2], -1);
    /* No correlation or nonsense times: left out (counted as read). */
    if (c->correlation < 0 || c->end < c->start || c->start < 0)
        return;
    int ty = sqlite3_value_type(v[3]);
    c->name = -1;
    if (ty == SQLITE_INTEGER) {
        c->name = reader_id(R, R->q, sqlite3_value_int64(v[3]));
    } else if (ty == SQLITE_TEXT) {
        const unsigned char *txt = sqlite3_value_text(v[3]);
        c->name = txt ? reader_name(R, (const char *)txt,
                                    (size_t)sqlite3_value_bytes(v[3]))
                      : -2;
    }
    if (c->name == -2) {
        R->err = TFB_ENOMEM;
        sqlite3_result_error(cx, "stopped", -1);
        return;
    }
    if (c->correlation > R->corr_max)
        R->corr_max = c->correlation;
    c->correlation += R->corr_base;
    R->calls.n++;
}

static void *reader_main(void *arg)
{
    call_reader *R = arg;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL, *q = NULL;
    double w0 = tfb_trace_clock_wall(), c0 = tfb_trace_clock_thread();
    if (tfb_trace_sqlite_open(R->file, R->immutable, &db))
        goto out;
    sqlite3_progress_handler(db, 10000, reader_progress, R);
    q = tfb_trace_sqlite_prepare(db,
                                 "SELECT value FROM StringIds WHERE id = ?");
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT tfb_call_rows(t.start, t.\"end\", t.correlationId, %s) "
             "FROM CUPTI_ACTIVITY_KIND_RUNTIME t",
             R->has_name ? "t.nameId" : "NULL");
    R->q = q;
    if (add_row_fn(db, "tfb_call_rows", 4, R, call_row)) {
        R->err = TFB_ENOMEM;
        goto out;
    }
    if (!(st = tfb_trace_sqlite_prepare(db, sql)))
        goto out;
    sqlite3_step(st);
    atomic_store(&R->rows, R->nrows);
out:
    sqlite3_finalize(st);
    sqlite3_finalize(q);
    sqlite3_close(db);
    R->wall_s = tfb_trace_clock_wall() - w0;
    R->cpu_s = tfb_trace_clock_thread() - c0;
    return NULL;
}

static void reader_free(call_reader *R)
{
    tfb_strv_free(R->names.v, R->names.n);
    id_free(&R->ids);
    tfb_vec_free(&R->calls);
}

/* Starts the runtime reader when the file has the table (1), 0 when not,
 * negative when refused or on ENOMEM. */
static int runtime_start(loader *L, call_reader *R)
{
    const char *T = "CUPTI_ACTIVITY_KIND_RUNTIME";
    memset(R, 0, sizeof *R);
    int k = table_kind(L, T);
    if (k <= 0 || !tfb_trace_sqlite_has_column(L->db, T, "correlationId"))
        return k < 0 ? k : 0;
    R->file = L->wal_copy ? L->wal_copy : L->path;
    R->immutable = !L->wal_copy;
    R->path = L->path;
    R->ctl = L->ctl;
    R->max_rows = L->ctl ? L->ctl->max_rows : 0;
    R->has_name = tfb_trace_sqlite_has_column(L->db, T, "nameId");
    R->corr_base = tfb_trace_builder_corr_base(L->b);
    R->corr_max = -1;
    atomic_init(&R->cancel, 0);
    atomic_init(&R->rows, 0);
    R->serial = L->ctl && L->ctl->serial;
    if (R->serial)
        return 1; /* read by runtime_finish */
    if (pthread_create(&R->th, NULL, reader_main, R) != 0) {
        reader_free(R);
        return TFB_ENOMEM;
    }
    return 1;
}

/* Joins the reader and hands its calls to the builder (cancel: stop it
 * first, the load failed). */
static int runtime_finish(loader *L, call_reader *R, int cancel)
{
    if (cancel)
        atomic_store(&R->cancel, 1);
    if (!R->serial)
        pthread_join(R->th, NULL);
    else if (!cancel)
        reader_main(R);
    tfb_trace_load_ctl_phase(L->ctl, "waiting for the runtime reader");
    tfb_trace_load_ctl_phase_add(L->ctl, "runtime rows (reader thread)",
                                 R->wall_s, R->cpu_s);
    if (cancel) {
        reader_free(R);
        return 0;
    }
    int err;
    if (R->err == TFB_ETOOBIG || (R->interrupted && !R->err))
        err = tfb_trace_load_ctl_fail(
            L->ctl, TFB_ETOOBIG, "%s: %s", tfb_trace_file_name(L->path),
            R->err == TFB_ETOOBIG
                ? "the runtime calls exceed the load budget (rows)"
                : "reading the trace took longer than the load budget");
    else
        err = R->err;
    int32_t *map = NULL;
    if (!err && R->names.n) {
        map = malloc(R->names.n * sizeof *map);
        if (!map)
            err = TFB_ENOMEM;
        for (size_t i = 0; !err && i < R->names.n; i++) {
            map[i] = tfb_trace_builder_str(L->b, R->names.v[i],
                                           strlen(R->names.v[i]));
            if (map[i] < 0)
                err = TFB_ENOMEM;
        }
    }
    if (!err) {
        /* The names are renamed in the builder's finish (one pass over
         * the calls fewer). */
        err = tfb_trace_builder_calls_take(L->b, R->calls.v, R->calls.n,
                                           R->calls.cap, R->nrows,
                                           R->corr_max, map, R->names.n);
        memset(&R->calls, 0, sizeof R->calls);
        map = NULL;
    }
    free(map);
    reader_free(R);
    tfb_trace_load_ctl_phase(L->ctl, "runtime calls merged");
    return err;
}

static int load_devices(loader *L)
{
    sqlite3 *db = L->db;
    const char *T = "TARGET_INFO_GPU";
    int k = table_kind(L, T);
    if (k <= 0 || !tfb_trace_sqlite_has_column(db, T, "id"))
        return k < 0 ? k : 0;
    char c[2][64];
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT t.id, %s, %s FROM %s t",
             col(db, T, "name", c[0], 64), col(db, T, "smCount", c[1], 64), T);
    sqlite3_stmt *st = tfb_trace_sqlite_prepare(db, sql);
    if (!st)
        return step_end(L, 0);
    int err = 0, rc = 0;
    while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        err = tfb_trace_builder_rows(L->b, 1);
        int32_t name = -1;
        if (!err && sqlite3_column_type(st, 1) == SQLITE_TEXT) {
            name = tfb_trace_builder_str(
                L->b, (const char *)sqlite3_column_text(st, 1),
                (size_t)sqlite3_column_bytes(st, 1));
            if (name < 0)
                err = TFB_ENOMEM;
        }
        if (!err)
            err = tfb_trace_builder_device(
                L->b, (int32_t)sqlite3_column_int64(st, 0), name,
                (int32_t)int_or(st, 2, -1));
    }
    sqlite3_finalize(st);
    return err ? err : step_end(L, rc);
}

static int load_host_spans(loader *L)
{
    int k = table_kind(L, "TFB_HOST_SPANS");
    if (k <= 0)
        return k;
    sqlite3_stmt *st = tfb_trace_sqlite_prepare(
        L->db, "SELECT start, \"end\", kind, step FROM TFB_HOST_SPANS");
    if (!st)
        return step_end(L, 0);
    int err = 0, rc = 0;
    while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        row_done(L);
        const unsigned char *kd = sqlite3_column_text(st, 2);
        tfb_trace_span_in s;
        memset(&s, 0, sizeof s);
        if (kd && strcmp((const char *)kd, "step") == 0)
            s.kind = TFB_TRACE_HOST_STEP;
        else if (kd && strcmp((const char *)kd, "input") == 0)
            s.kind = TFB_TRACE_HOST_INPUT;
        else {
            err = tfb_trace_builder_rows(L->b, 1);
            continue;
        }
        s.start = sqlite3_column_int64(st, 0);
        s.end = sqlite3_column_int64(st, 1);
        s.step = int_or(st, 3, -1);
        s.device = -1;
        s.stream = -1;
        s.name = -1;
        s.correlation = -1;
        err = tfb_trace_builder_span(L->b, &s);
    }
    sqlite3_finalize(st);
    return err ? err : step_end(L, rc);
}

/* Rows to expect, for the progress figure: max(rowid) of each table read
 * (an index lookup, not a count). */
static uint64_t estimate_rows(loader *L)
{
    static const char *const tables[] = {
        "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
        "TFB_HOST_SPANS"};
    uint64_t total = 0;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        if (table_kind(L, tables[i]) != 1)
            continue;
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT max(rowid) FROM \"%s\"", tables[i]);
        sqlite3_stmt *st = tfb_trace_sqlite_prepare(L->db, sql);
        if (st && sqlite3_step(st) == SQLITE_ROW) {
            int64_t v = sqlite3_column_int64(st, 0);
            if (v > 0)
                total += (uint64_t)v;
        }
        sqlite3_finalize(st);
    }
    return total;
}

int tfb_trace_load_sqlite(tfb_trace_builder *b, const char *path)
{
    loader L;
    memset(&L, 0, sizeof L);
    L.b = b;
    L.ctl = tfb_trace_builder_ctl(b);
    L.path = path;
    /* A WAL with data that could not be copied (past the copy budget, no
     * room): the store is read immutable, without it, and the trace is
     * not cached (the next load tries again). */
    if (tfb_trace_wal_copy(path, L.ctl ? L.ctl->max_copy_bytes : 0,
                           &L.wal_copy) < 0 &&
        L.ctl)
        L.ctl->wal_unread = 1;
    int rc = tfb_trace_sqlite_open(L.wal_copy ? L.wal_copy : path,
                                   !L.wal_copy, &L.db);
    if (rc) {
        tfb_trace_wal_drop(L.wal_copy);
        return rc == TFB_ENOMEM ? rc : 0; /* unreadable: not a trace */
    }
    sqlite3_progress_handler(L.db, 10000, on_progress, &L);
    int err = table_kind(&L, "CUPTI_ACTIVITY_KIND_KERNEL");
    if (err <= 0) {
        sqlite3_close(L.db);
        tfb_trace_wal_drop(L.wal_copy);
        return err; /* 0: not a trace; < 0: refused */
    }
    err = table_kind(&L, "StringIds");
    if (err == 1)
        L.str_stmt = tfb_trace_sqlite_prepare(
            L.db, "SELECT value FROM StringIds WHERE id = ?");
    if (err > 0)
        err = 0;
    L.rows_est = err ? 0 : estimate_rows(&L);
    call_reader R;
    int reading = 0;
    if (!err)
        err = load_devices(&L);
    if (!err) {
        err = runtime_start(&L, &R);
        reading = err == 1;
        if (err > 0)
            err = 0;
        if (reading)
            L.other_rows = &R.rows;
    }
    tfb_trace_load_ctl_phase(L.ctl, "open, devices, reader started");
    if (!err)
        err = load_kernels(&L);
    tfb_trace_load_ctl_phase(L.ctl, "kernel rows");
    if (!err)
        err = load_copies(&L, 0);
    if (!err)
        err = load_copies(&L, 1);
    if (!err)
        err = load_host_spans(&L);
    tfb_trace_load_ctl_phase(L.ctl, "copies, host spans");
    if (reading) {
        int e2 = runtime_finish(&L, &R, err != 0);
        if (!err)
            err = e2;
    }
    if (!err && L.interrupted)
        err = step_end(&L, 0);
    sqlite3_finalize(L.str_stmt);
    sqlite3_close(L.db);
    tfb_trace_wal_drop(L.wal_copy);
    id_free(&L.sids);
    return err ? err : 1;
}
