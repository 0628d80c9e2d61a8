/*
 * trace_store.c - the per-process SQLite trace store: schema, row queue,
 * string interning, the batching writer thread, and host-span attachment.
 */
#include "collector/trace_store.h"
#include "collector/fork_guard.h"
#include "collector/writer_internal.h"

#include "base/deadline.h"
#include "base/hash.h"
#include "base/str.h"
#include "base/strtab.h"
#include "base/vec.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Schema, spelled once. Per table: its tfb_trace_table, its name, whether
 * rows replace each other (INSERT OR REPLACE), and its columns in file
 * order: the integer columns I(name, declaration) first, in the order of
 * tfb_trace_row.c, then the text columns T(...), bound to row.text and
 * row.text2. The CREATE TABLE statements (file_ddl) and the INSERTs
 * (prepare_one) are generated from it. Names follow the nsys SQLite export;
 * docs/trace-store.md documents the tables, and test_trace_store.c checks
 * the generated schema byte for byte against the files already out there.
 * ---------------------------------------------------------------------- */
#define NN "INTEGER NOT NULL"
#define STR_REF "REFERENCES StringIds(id)"
#define TRACE_SCHEMA(X)                                                      \
    X(TFB_TT_STRINGIDS, "StringIds", 0,                                      \
      I("id", NN " PRIMARY KEY") T("value", "TEXT NOT NULL"))                \
    X(TFB_TT_KERNEL, "CUPTI_ACTIVITY_KIND_KERNEL", 0,                        \
      I("start", NN) I("end", NN) I("deviceId", NN) I("contextId", NN)       \
      I("streamId", NN) I("correlationId", "INTEGER")                        \
      I("globalPid", "INTEGER") I("demangledName", NN " " STR_REF)           \
      I("shortName", NN " " STR_REF) I("gridX", NN) I("gridY", NN)           \
      I("gridZ", NN) I("blockX", NN) I("blockY", NN) I("blockZ", NN)         \
      I("registersPerThread", NN) I("staticSharedMemory", NN)                \
      I("dynamicSharedMemory", NN) I("localMemoryPerThread", "INTEGER")      \
      I("gridId", "INTEGER") I("launchType", "INTEGER")                      \
      I("graphNodeId", "INTEGER") I("mangledName", "INTEGER " STR_REF))      \
    X(TFB_TT_MEMCPY, "CUPTI_ACTIVITY_KIND_MEMCPY", 0,                        \
      I("start", NN) I("end", NN) I("deviceId", NN) I("contextId", NN)       \
      I("streamId", NN) I("correlationId", "INTEGER")                        \
      I("globalPid", "INTEGER") I("bytes", NN) I("copyKind", NN)             \
      I("srcKind", "INTEGER") I("dstKind", "INTEGER")                        \
      I("srcDeviceId", "INTEGER") I("dstDeviceId", "INTEGER")                \
      I("graphNodeId", "INTEGER"))                                           \
    X(TFB_TT_MEMSET, "CUPTI_ACTIVITY_KIND_MEMSET", 0,                        \
      I("start", NN) I("end", NN) I("deviceId", NN) I("contextId", NN)       \
      I("streamId", NN) I("correlationId", "INTEGER")                        \
      I("globalPid", "INTEGER") I("value", NN) I("bytes", NN)                \
      I("memKind", "INTEGER") I("graphNodeId", "INTEGER"))                   \
    X(TFB_TT_SYNC, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 0,                 \
      I("start", NN) I("end", NN) I("deviceId", "INTEGER")                   \
      I("contextId", "INTEGER") I("streamId", "INTEGER")                     \
      I("correlationId", "INTEGER") I("globalPid", "INTEGER")                \
      I("syncType", NN) I("eventId", "INTEGER"))                             \
    X(TFB_TT_RUNTIME, "CUPTI_ACTIVITY_KIND_RUNTIME", 0,                      \
      I("start", NN) I("end", NN) I("eventClass", NN)                        \
      I("globalTid", "INTEGER") I("correlationId", "INTEGER")                \
      I("nameId", NN " " STR_REF) I("returnValue", NN) I("cbid", "INTEGER")) \
    X(TFB_TT_NVTX, "NVTX_EVENTS", 0,                                         \
      I("start", NN) I("end", "INTEGER") I("eventType", NN)                  \
      I("rangeId", "INTEGER") I("globalTid", "INTEGER")                      \
      I("textId", "INTEGER " STR_REF) I("domainId", "INTEGER")               \
      T("text", "TEXT"))                                                     \
    X(TFB_TT_OVERHEAD, "PROFILER_OVERHEAD", 0,                               \
      I("start", NN) I("end", NN) I("globalTid", "INTEGER")                  \
      I("overheadKind", "INTEGER") I("objectKind", "INTEGER")                \
      I("objectId", "INTEGER"))                                              \
    X(TFB_TT_GPU_INFO, "TARGET_INFO_GPU", 1,                                 \
      I("id", NN " PRIMARY KEY") I("smCount", "INTEGER")                     \
      I("totalMemory", "INTEGER") I("clockRate", "INTEGER")                  \
      I("computeMajor", "INTEGER") I("computeMinor", "INTEGER")              \
      I("l2CacheSize", "INTEGER") I("memoryBandwidth", "INTEGER")            \
      T("name", "TEXT"))                                                     \
    X(TFB_TT_HOST_SPAN, "TFB_HOST_SPANS", 0,                                 \
      I("start", NN) I("end", NN) I("step", "INTEGER")                       \
      I("globalTid", "INTEGER") T("kind", "TEXT NOT NULL"))                  \
    X(TFB_TT_META, "META", 1,                                                \
      T("key", "TEXT NOT NULL PRIMARY KEY") T("value", "TEXT"))              \
    /* GPU memory (issue 13): nsys's column names. */                        \
    X(TFB_TT_MEM_USAGE, "CUDA_GPU_MEMORY_USAGE_EVENTS", 0,                   \
      I("start", NN) I("globalPid", "INTEGER") I("deviceId", NN)             \
      I("contextId", "INTEGER") I("streamId", "INTEGER")                     \
      I("correlationId", "INTEGER") I("address", NN) I("pc", "INTEGER")      \
      I("bytes", NN) I("memKind", "INTEGER")                                 \
      I("memoryOperationType", NN) I("name", "INTEGER " STR_REF)             \
      I("isAsync", "INTEGER") I("memoryPoolType", "INTEGER")                 \
      I("localMemoryPoolAddress", "INTEGER")                                 \
      I("localMemoryPoolReleaseThreshold", "INTEGER")                        \
      I("localMemoryPoolSize", "INTEGER")                                    \
      I("localMemoryPoolUtilizedSize", "INTEGER")                            \
      I("importedMemoryPoolAddress", "INTEGER")                              \
      I("importedMemoryPoolProcessId", "INTEGER"))                           \
    X(TFB_TT_MEM_POOL, "CUDA_GPU_MEMORY_POOL_EVENTS", 0,                     \
      I("start", NN) I("globalPid", "INTEGER") I("deviceId", NN)             \
      I("correlationId", "INTEGER") I("operationType", NN)                   \
      I("poolType", "INTEGER") I("address", NN) I("size", "INTEGER")         \
      I("releaseThreshold", "INTEGER") I("utilizedSize", "INTEGER")          \
      I("minBytesToKeep", "INTEGER") I("isManagedPool", "INTEGER"))

typedef struct col_spec {
    const char *name;
    const char *decl; /* type and constraints, as in CREATE TABLE */
} col_spec;

typedef struct table_spec {
    const char *name;
    const col_spec *cols; /* nint integer columns, then the text ones */
    int ncols, nint;
    int replace; /* INSERT OR REPLACE */
} table_spec;

/* The column arrays, TFB_TT_<table>_cols[]. */
#define I(n, d) {n, d},
#define T(n, d) {n, d},
#define X(tt, name, rep, cols) static const col_spec tt##_cols[] = {cols};
TRACE_SCHEMA(X)
#undef X
#undef I
#undef T

#define NCOLS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The table specs; I counts the integer columns, T nothing. */
#define I(n, d) +1
#define T(n, d)
#define X(tt, name, rep, cols)                                               \
    [tt] = {name, tt##_cols, NCOLS(tt##_cols), 0 cols, rep},
static const table_spec k_tables[TFB_TT_COUNT_] = {TRACE_SCHEMA(X)};
#undef X

/* Every table is in the schema, at most two text columns each, and the
 * integer columns fit tfb_trace_row.c and the 32-bit hoist mask. */
#define X(tt, name, rep, cols) +1
_Static_assert(0 TRACE_SCHEMA(X) == TFB_TT_COUNT_, "a table is missing");
#undef X
#define X(tt, name, rep, cols)                                               \
    _Static_assert(0 cols <= TFB_TRACE_MAX_COLS && 0 cols <= 32, name);      \
    _Static_assert(NCOLS(tt##_cols) - (0 cols) <= 2, name);
TRACE_SCHEMA(X)
#undef X
#undef I
#undef T

/* nsys's ENUM_CUDA_MEMCPY_OPER, so copyKind can be joined to a label. */
static const char k_memcpy_enum_sql[] =
    "CREATE TABLE IF NOT EXISTS ENUM_CUDA_MEMCPY_OPER(id INTEGER NOT NULL"
    " PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);"
    "INSERT OR IGNORE INTO ENUM_CUDA_MEMCPY_OPER VALUES"
    "(0,'CUDA_MEMCPY_OPER_UNKNOWN','Unknown'),"
    "(1,'CUDA_MEMCPY_OPER_HTOD','Host-to-Device'),"
    "(2,'CUDA_MEMCPY_OPER_DTOH','Device-to-Host'),"
    "(3,'CUDA_MEMCPY_OPER_HTOA','Host-to-Array'),"
    "(4,'CUDA_MEMCPY_OPER_ATOH','Array-to-Host'),"
    "(5,'CUDA_MEMCPY_OPER_ATOA','Array-to-Array'),"
    "(6,'CUDA_MEMCPY_OPER_ATOD','Array-to-Device'),"
    "(7,'CUDA_MEMCPY_OPER_DTOA','Device-to-Array'),"
    "(8,'CUDA_MEMCPY_OPER_DTOD','Device-to-Device'),"
    "(9,'CUDA_MEMCPY_OPER_HTOH','Host-to-Host'),"
    "(10,'CUDA_MEMCPY_OPER_PTOP','Peer-to-Peer');";

/* GPU memory (issue 13): labels for memoryOperationType and memKind, so
 * the nsys recipes' joins work on our files too. memKind keeps CUPTI's
 * CUpti_ActivityMemoryKind numbers. */
static const char k_mem_enum_sql[] =
    "CREATE TABLE IF NOT EXISTS ENUM_CUDA_DEV_MEM_EVENT_OPER(id INTEGER NOT"
    " NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);"
    "INSERT OR IGNORE INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES"
    "(0,'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION','Allocation'),"
    "(1,'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION','Deallocation');"
    "CREATE TABLE IF NOT EXISTS ENUM_CUDA_MEM_KIND(id INTEGER NOT NULL"
    " PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);"
    "INSERT OR IGNORE INTO ENUM_CUDA_MEM_KIND VALUES"
    "(0,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown'),"
    "(1,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),"
    "(2,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),"
    "(3,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),"
    "(4,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),"
    "(5,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),"
    "(6,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static'),"
    "(7,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static');";

/* A queued row. `owned` tells whether text/text2 were copied by the store
 * (freed after the insert) or point at storage that outlives the queue
 * (string literals, the intern table). */
typedef struct qrow {
    tfb_trace_row r;
    unsigned char own1, own2;
} qrow;

typedef TFB_VEC(qrow) rowvec;

struct tfb_trace_store {
    char *path;
    sqlite3 *db;
    sqlite3_stmt *ins[TFB_TT_COUNT_];   /* one row, bound parameters */
    sqlite3_stmt *ins_run[TFB_TT_COUNT_]; /* INSERT ... SELECT FROM tfb_rows */
    /* The rows the tfb_rows virtual table yields while an ins_run
     * statement steps, and the per-batch table grouping they are taken
     * from (writer thread only). */
    const qrow *const *vt_rows;
    size_t vt_n;
    TFB_VEC(const qrow *) order;
    /* Per table, the last INSERT ... SELECT with constant columns taken
     * from parameters (hoist_mask: those columns). */
    sqlite3_stmt *hoist[TFB_TT_COUNT_];
    uint32_t hoist_mask[TFB_TT_COUNT_];
    tfb_trace_store_opts opts;

    pthread_t thread;
    int thread_started;
    pthread_mutex_t mu;
    pthread_cond_t wake;  /* writer: work, flush, stop */
    pthread_cond_t done;  /* flushers and blocked pushers */
    rowvec pending;
    size_t pending_owned; /* rows of pending with strings to free */
    uint64_t queued_seq;    /* rows accepted so far */
    uint64_t committed_seq; /* rows written (or discarded after an error) */
    uint64_t flush_target;
    int stop;

    tfb_trace_store_stats stats;

    pthread_mutex_t smu; /* intern table */
    /* string (our copy, the key) -> id + 1, as a pointer-sized integer */
    tfb_strtab itab;
    int64_t next_id;
};

/* ------------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------- */
static void free_row_strings(qrow *q)
{
    if (q->own1)
        free((char *)q->r.text);
    if (q->own2)
        free((char *)q->r.text2);
}

static int exec_sql(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0
                                                                : TFB_ETRACE;
}

/* Groups smaller than this go row by row through bound parameters; larger
 * ones through the tfb_rows virtual table, whose per-statement start-up
 * (open, filter, close a cursor) is then paid off. */
#define RUN_MIN_VTAB 8

/* The CREATE TABLE IF NOT EXISTS statement of ts into sql: 0, or
 * TFB_ETRACE when it does not fit. */
static int file_ddl(char *sql, size_t cap, const table_spec *ts)
{
    int len = snprintf(sql, cap, "CREATE TABLE IF NOT EXISTS %s(", ts->name);
    for (int i = 0; i < ts->ncols && len >= 0 && (size_t)len < cap; i++)
        len += snprintf(sql + len, cap - (size_t)len, "%s%s %s",
                        i ? ", " : "", ts->cols[i].name, ts->cols[i].decl);
    if (len >= 0 && (size_t)len < cap)
        len += snprintf(sql + len, cap - (size_t)len, ")");
    return len < 0 || (size_t)len >= cap ? TFB_ETRACE : 0;
}

/* ------------------------------------------------------------------------
 * tfb_rows: an eponymous-only virtual table over the group of queued rows
 * being written, so that a group of rows of one table is one
 *     INSERT INTO T(cols) SELECT c0, c1, ..., t1, t2 FROM tfb_rows
 * statement. Why: a bound parameter costs a mutex, an unbind and a copy
 * into a register per column per row (23 columns per kernel row), and a
 * multi-row VALUES statement adds a co-routine copy on top; xColumn hands
 * SQLite each value once, straight into its register, and the text
 * columns as SQLITE_STATIC (the queue owns them until the batch is done).
 * Eponymous-only (xCreate NULL): it exists on the writer's connection only
 * and is never written into the file's schema, so readers never see it.
 * ---------------------------------------------------------------------- */
typedef struct vt_tab {
    sqlite3_vtab base;
    tfb_trace_store *s;
} vt_tab;

typedef struct vt_cursor {
    sqlite3_vtab_cursor base;
    const qrow *const *row, *const *end; /* rows yielded; row = current */
    size_t i;
} vt_cursor;

static int vt_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
    (void)argc;
    (void)argv;
    (void)err;
    char decl[512];
    int len = snprintf(decl, sizeof decl, "CREATE TABLE x(");
    for (int i = 0; i < TFB_TRACE_MAX_COLS; i++)
        len += snprintf(decl + len, sizeof decl - (size_t)len, "c%d INTEGER,",
                        i);
    snprintf(decl + len, sizeof decl - (size_t)len, "t1 TEXT, t2 TEXT)");
    int rc = sqlite3_declare_vtab(db, decl);
    if (rc != SQLITE_OK)
        return rc;
    /* Only our own statements may use it, never a view or trigger. */
    sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
    vt_tab *t = sqlite3_malloc(sizeof *t);
    if (!t)
        return SQLITE_NOMEM;
    memset(t, 0, sizeof *t);
    t->s = aux;
    *out = &t->base;
    return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *tab)
{
    sqlite3_free(tab);
    return SQLITE_OK;
}

static int vt_best_index(sqlite3_vtab *tab, sqlite3_index_info *info)
{
    const tfb_trace_store *s = ((vt_tab *)tab)->s;
    info->estimatedRows = (sqlite3_int64)s->vt_n;
    info->estimatedCost = (double)s->vt_n + 1.0;
    return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
    (void)tab;
    vt_cursor *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *out = &c->base;
    return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
    sqlite3_free(cur);
    return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr,
                     int argc, sqlite3_value **argv)
{
    (void)idx;
    (void)idxstr;
    (void)argc;
    (void)argv;
    vt_cursor *c = (vt_cursor *)cur;
    const tfb_trace_store *s = ((vt_tab *)cur->pVtab)->s;
    c->row = s->vt_rows;
    c->end = s->vt_rows + s->vt_n;
    c->i = 0;
    return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
    vt_cursor *c = (vt_cursor *)cur;
    c->row++;
    c->i++;
    return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
    const vt_cursor *c = (const vt_cursor *)cur;
    return c->row >= c->end;
}

/* Called once per column per row: the hottest function of the writer. */
static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    const tfb_trace_row *r = &(*((const vt_cursor *)cur)->row)->r;
    if (col < TFB_TRACE_MAX_COLS) {
        if (r->c[col] == TFB_TRACE_NULL)
            sqlite3_result_null(ctx);
        else
            sqlite3_result_int64(ctx, r->c[col]);
        return SQLITE_OK;
    }
    const char *t = col == TFB_TRACE_MAX_COLS ? r->text : r->text2;
    if (t)
        sqlite3_result_text(ctx, t, -1, SQLITE_STATIC);
    else
        sqlite3_result_null(ctx);
    return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
    *out = (sqlite3_int64)((const vt_cursor *)cur)->i;
    return SQLITE_OK;
}

static const sqlite3_module k_rows_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous-only */
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

/* The column list "a","b",... of ts into sql; returns the new length. */
static int put_cols(char *sql, size_t cap, int len, const table_spec *ts)
{
    for (int i = 0; i < ts->ncols; i++)
        len += snprintf(sql + len, cap - (size_t)len, "%s\"%s\"",
                        i ? "," : "", ts->cols[i].name);
    return len;
}

/* vt = 0: INSERT ... VALUES(?,...) for one row; vt = 1: INSERT ... SELECT
 * from tfb_rows, with the table's integer columns as c0.. and its text
 * columns as t1, t2, except the integer columns in consts, which are
 * parameters ?(i+1). */
static int prepare_one(tfb_trace_store *s, const table_spec *ts, int vt,
                       uint32_t consts, sqlite3_stmt **out)
{
    char sql[2048];
    size_t cap = sizeof sql;
    int len = snprintf(sql, cap, "INSERT %sINTO %s(",
                       ts->replace ? "OR REPLACE " : "", ts->name);
    len = put_cols(sql, cap, len, ts);
    if (!vt) {
        len += snprintf(sql + len, cap - (size_t)len, ") VALUES(");
        for (int i = 0; i < ts->ncols; i++)
            len += snprintf(sql + len, cap - (size_t)len, "%s?", i ? "," : "");
        len += snprintf(sql + len, cap - (size_t)len, ")");
    } else {
        len += snprintf(sql + len, cap - (size_t)len, ") SELECT ");
        for (int i = 0; i < ts->ncols; i++) {
            const char *sep = i ? "," : "";
            if (i >= ts->nint) /* the text columns: t1, t2 */
                len += snprintf(sql + len, cap - (size_t)len, "%st%d", sep,
                                i - ts->nint + 1);
            else if (consts >> i & 1)
                len += snprintf(sql + len, cap - (size_t)len, "%s?%d", sep,
                                i + 1);
            else
                len += snprintf(sql + len, cap - (size_t)len, "%sc%d", sep,
                                i);
        }
        len += snprintf(sql + len, cap - (size_t)len, " FROM tfb_rows");
    }
    if (len < 0 || (size_t)len >= cap)
        return TFB_ETRACE;
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out,
                                NULL);
    return rc == SQLITE_OK ? 0 : TFB_ETRACE;
}

static int prepare_inserts(tfb_trace_store *s)
{
    if (sqlite3_create_module_v2(s->db, "tfb_rows", &k_rows_module, s,
                                 NULL) != SQLITE_OK)
        return TFB_ETRACE;
    for (int t = 0; t < TFB_TT_COUNT_; t++) {
        int err = prepare_one(s, &k_tables[t], 0, 0, &s->ins[t]);
        if (!err)
            err = prepare_one(s, &k_tables[t], 1, 0, &s->ins_run[t]);
        if (err)
            return err;
    }
    return 0;
}

/* Binds r's columns from parameter 1 on. */
static void bind_row(sqlite3_stmt *st, const tfb_trace_row *r)
{
    const table_spec *ts = &k_tables[r->table];
    int col = 1;
    for (int i = 0; i < ts->nint; i++, col++) {
        if (r->c[i] == TFB_TRACE_NULL)
            sqlite3_bind_null(st, col);
        else
            sqlite3_bind_int64(st, col, r->c[i]);
    }
    for (int i = ts->nint; i < ts->ncols; i++, col++) {
        const char *text = i == ts->nint ? r->text : r->text2;
        if (text)
            sqlite3_bind_text(st, col, text, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, col);
    }
}

static int step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : TFB_ETRACE;
}

/* Groups of at least this many rows get their constant columns hoisted. */
#define HOIST_MIN 256

/* Integer columns that hold one value on all n rows become parameters of
 * the statement, bound once, instead of a virtual-table column fetched
 * per row (each fetch costs about as much as a third of the row's
 * insert). Tracing data has many: globalPid, deviceId and contextId of a
 * process, launch-config dimensions of 1, NULL graph nodes... On success
 * *st is the statement to step for these rows. */
static int hoisted_stmt(tfb_trace_store *s, tfb_trace_table t,
                        const qrow *const *rows, size_t n, sqlite3_stmt **st)
{
    const table_spec *ts = &k_tables[t];
    const uint32_t all = ts->nint >= 32 ? UINT32_MAX
                                          : ((uint32_t)1 << ts->nint) - 1;
    const int64_t *first = rows[0]->r.c;
    uint32_t varies = 0;
    for (size_t i = 1; i < n && varies != all; i++) {
        const int64_t *c = rows[i]->r.c;
        for (int k = 0; k < ts->nint; k++)
            varies |= (uint32_t)(c[k] != first[k]) << k;
    }
    uint32_t consts = all & ~varies;
    if (consts == 0)
        return 0; /* *st stays the plain one */
    if (!s->hoist[t] || s->hoist_mask[t] != consts) {
        sqlite3_finalize(s->hoist[t]);
        s->hoist[t] = NULL;
        int err = prepare_one(s, ts, 1, consts, &s->hoist[t]);
        if (err)
            return err;
        s->hoist_mask[t] = consts;
    }
    for (int k = 0; k < ts->nint; k++) {
        if (!(consts >> k & 1))
            continue;
        if (first[k] == TFB_TRACE_NULL)
            sqlite3_bind_null(s->hoist[t], k + 1);
        else
            sqlite3_bind_int64(s->hoist[t], k + 1, first[k]);
    }
    *st = s->hoist[t];
    return 0;
}

/* Writes rows (all of table t, in queue order) through the virtual table,
 * or one by one when they are few. */
static int write_group(tfb_trace_store *s, tfb_trace_table t,
                       const qrow *const *rows, size_t n)
{
    if (n >= RUN_MIN_VTAB) {
        sqlite3_stmt *st = s->ins_run[t];
        if (n >= HOIST_MIN) {
            int err = hoisted_stmt(s, t, rows, n, &st);
            if (err)
                return err;
        }
        s->vt_rows = rows;
        s->vt_n = n;
        int err = step_reset(st);
        s->vt_rows = NULL;
        s->vt_n = 0;
        return err;
    }
    int err = 0;
    for (size_t k = 0; k < n && !err; k++) {
        bind_row(s->ins[t], &rows[k]->r);
        err = step_reset(s->ins[t]);
    }
    return err;
}

/* Writes one batch in one transaction, one table after the other, each
 * table's rows in queue order. Why grouped: a tracer queues kernels,
 * copies and runtime calls interleaved, and runs of one table would be
 * too short for the virtual table. Order across tables does not matter:
 * a reader sees the whole transaction or none of it (so a StringIds row
 * is never missing for a row that uses its id), and META rows, which
 * replace each other, keep their order. Runs on the writer thread only,
 * the only user of the connection after open. */
static int write_batch(tfb_trace_store *s, const qrow *rows, size_t n)
{
    size_t count[TFB_TT_COUNT_] = {0}, at[TFB_TT_COUNT_];
    for (size_t i = 0; i < n; i++)
        count[rows[i].r.table]++;
    int grouped = tfb_vec_need(&s->order, n) == 0;
    int err = exec_sql(s->db, "BEGIN");
    if (grouped) {
        size_t sum = 0;
        for (int t = 0; t < TFB_TT_COUNT_; t++) {
            at[t] = sum;
            sum += count[t];
        }
        for (size_t i = 0; i < n; i++)
            s->order.v[at[rows[i].r.table]++] = &rows[i];
        size_t off = 0;
        for (int t = 0; t < TFB_TT_COUNT_ && !err; t++) {
            err = write_group(s, (tfb_trace_table)t, s->order.v + off,
                              count[t]);
            off += count[t];
        }
    } else {
        /* No memory for the grouping: row by row, in queue order. */
        for (size_t i = 0; i < n && !err; i++) {
            const qrow *one = &rows[i];
            err = write_group(s, rows[i].r.table, &one, 1);
        }
    }
    if (!err)
        err = exec_sql(s->db, "COMMIT");
    else
        exec_sql(s->db, "ROLLBACK");
    return err;
}

static uint64_t clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *writer_main(void *arg)
{
    tfb_trace_store *s = arg;
    rowvec work = {0};
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->pending.n < s->opts.batch_rows &&
               s->flush_target <= s->committed_seq) {
            struct timespec ts;
            tfb_deadline_after_ms(&ts, s->opts.commit_interval_ms);
            if (pthread_cond_timedwait(&s->wake, &s->mu, &ts) == ETIMEDOUT)
                break;
        }
        if (s->pending.n == 0) {
            if (s->stop)
                break;
            continue;
        }
        /* Take the whole queue; producers refill an empty vector. */
        size_t owned = s->pending_owned;
        s->pending_owned = 0;
        rowvec tmp = s->pending;
        s->pending = work;
        s->pending.n = 0;
        work = tmp;
        pthread_cond_broadcast(&s->done); /* room for blocked pushers */
        int sticky = s->stats.sticky_error;
        pthread_mutex_unlock(&s->mu);

        /* A backlog larger than txn_rows goes in several transactions. */
        int err = sticky;
        size_t written = 0;
        uint64_t txns = 0;
        uint64_t w0 = clock_ns(CLOCK_MONOTONIC);
        uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (size_t off = 0; off < work.n && !err; off += s->opts.txn_rows) {
            size_t m = work.n - off;
            if (m > s->opts.txn_rows)
                m = s->opts.txn_rows;
            err = write_batch(s, work.v + off, m);
            if (!err) {
                written += m;
                txns++;
            }
        }
        uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        uint64_t wall = clock_ns(CLOCK_MONOTONIC) - w0;
        /* Kernel rows own no strings: skip a pass over the batch. */
        for (size_t i = 0; owned && i < work.n; i++)
            free_row_strings(&work.v[i]);

        pthread_mutex_lock(&s->mu);
        if (err && !s->stats.sticky_error)
            s->stats.sticky_error = err;
        s->stats.rows_written += written;
        s->stats.transactions += txns;
        s->stats.write_ns += wall;
        s->stats.write_cpu_ns += cpu;
        s->committed_seq += work.n;
        work.n = 0;
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    tfb_vec_free(&work);
    tfb_vec_free(&s->order);
    return NULL;
}

static int make_path(char **out, const char *run_dir, const char *file_name)
{
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++)
        if (*p == '/')
            *p = '_';
    *out = file_name ? tfb_strfmt("%s/%s", run_dir, file_name)
                     : tfb_strfmt("%s/%s.%ld.trace.sqlite", run_dir, host,
                                  (long)getpid());
    return *out ? 0 : TFB_ENOMEM;
}

/* META rows for the n key/value pairs kv, in order, up to the first
 * failure. */
static int put_meta(tfb_trace_store *s, const char *const kv[][2], size_t n)
{
    int err = 0;
    for (size_t i = 0; i < n && !err; i++)
        err = tfb_trace_store_meta(s, kv[i][0], kv[i][1]);
    return err;
}

static int write_initial_meta(tfb_trace_store *s)
{
    char host[256] = "localhost", pid[32];
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    const char *const kv[][2] = {
        {"host", host}, {"pid", pid}, {"tfboard_version", TFB_VERSION_STRING},
        {"clock", "CLOCK_REALTIME"}, {"time_unit", "ns"},
        {"schema", "tfboard-trace-1"}};
    return put_meta(s, kv, sizeof kv / sizeof kv[0]);
}

/* ------------------------------------------------------------------------
 * Public (internal) API
 * ---------------------------------------------------------------------- */
int tfb_trace_store_open(tfb_trace_store **out, const char *run_dir,
                         const tfb_trace_store_opts *opts)
{
    if (!out || !run_dir)
        return TFB_EINVAL;
    tfb_trace_store *s = calloc(1, sizeof *s);
    if (!s)
        return TFB_ENOMEM;
    if (opts)
        s->opts = *opts;
    if (!s->opts.commit_interval_ms)
        s->opts.commit_interval_ms = 1000;
    if (!s->opts.batch_rows)
        s->opts.batch_rows = 65536;
    if (!s->opts.max_queued_rows)
        s->opts.max_queued_rows = (size_t)1 << 18;
    if (s->opts.max_queued_rows < s->opts.batch_rows)
        s->opts.max_queued_rows = s->opts.batch_rows;
    if (!s->opts.txn_rows)
        s->opts.txn_rows = s->opts.batch_rows;
    s->opts.file_name = NULL; /* not kept: the caller owns the string */
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->smu, NULL);
    /* Timed waits on CLOCK_MONOTONIC: clock steps cannot stall commits. */
    tfb_cond_init_monotonic(&s->wake);
    tfb_cond_init_monotonic(&s->done);

    int err = make_path(&s->path, run_dir, opts ? opts->file_name : NULL);
    if (err)
        goto fail;
    /* NOMUTEX: the connection is used by one thread at a time (open here,
     * then the writer thread only). */
    if (sqlite3_open_v2(s->path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                            SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        err = access(run_dir, W_OK) != 0 && errno == ENOENT ? TFB_ENOENT
                                                            : TFB_ETRACE;
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 5000);
    /* 16 KiB pages: rows are small and many (measured faster than 4 and
     * 64 KiB); page_size only takes effect on a new file, before WAL is
     * set. WAL: the server reads while we write. synchronous=NORMAL: no
     * fsync per commit, only at checkpoints; a crash or power cut can lose
     * the last commits but never corrupts the file (OFF could, on power
     * loss, and measured no faster). The cache only needs to hold one
     * transaction's dirty pages (64 Ki kernel rows ~ 5 MB): 8 MB is
     * measured faster than 64 MB, which kept faulting in fresh memory. */
    exec_sql(s->db, "PRAGMA page_size=16384");
    /* Keep the WAL small: a passive checkpoint after any commit that
     * leaves more than 256 pages (4 MB) in it (SQLite's default is 1000
     * pages, 16 MB at our page size), and the file cut back to 4 MB when
     * it restarts, so a transaction that once made it larger does not
     * keep the space. Why: the WAL is what a crashed writer leaves outside
     * the database, what a reader opening the file immutably does not
     * see, and what a power cut can lose. Each page is copied once either
     * way; 2 M kernel rows took the same time with 256 and 1000 pages
     * within this machine's noise. The statements run in order; the
     * first that fails stops them. */
    err = exec_sql(s->db, "PRAGMA journal_mode=WAL;"
                          "PRAGMA synchronous=NORMAL;"
                          "PRAGMA wal_autocheckpoint=256;"
                          "PRAGMA journal_size_limit=4194304;"
                          "PRAGMA cache_size=-8192");
    for (int t = 0; t < TFB_TT_COUNT_ && !err; t++) {
        char ddl[2048];
        err = file_ddl(ddl, sizeof ddl, &k_tables[t]);
        if (!err)
            err = exec_sql(s->db, ddl);
    }
    if (!err)
        err = exec_sql(s->db, k_memcpy_enum_sql);
    if (!err)
        err = exec_sql(s->db, k_mem_enum_sql);
    if (!err) {
        /* A reopened file (trace stopped and restarted in one process)
         * keeps its strings; new ids continue after them. */
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(s->db, "SELECT COALESCE(MAX(id), -1) FROM "
                                      "StringIds", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            s->next_id = sqlite3_column_int64(st, 0) + 1;
        else
            err = TFB_ETRACE;
        sqlite3_finalize(st);
    }
    if (!err)
        err = prepare_inserts(s);
    if (err)
        goto fail;
    if (pthread_create(&s->thread, NULL, writer_main, s) != 0) {
        err = TFB_ENOMEM;
        goto fail;
    }
    s->thread_started = 1;
    err = write_initial_meta(s);
    if (err) {
        tfb_trace_store_close(s);
        return err;
    }
    *out = s;
    return 0;
fail:
    tfb_trace_store_close(s);
    return err;
}

int tfb_trace_store_close(tfb_trace_store *s)
{
    if (!s)
        return 0;
    if (s->thread_started) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->wake);
        pthread_cond_broadcast(&s->done);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    for (size_t i = 0; i < s->pending.n; i++)
        free_row_strings(&s->pending.v[i]);
    tfb_vec_free(&s->pending);
    for (int t = 0; t < TFB_TT_COUNT_; t++)
        sqlite3_finalize(s->ins[t]);
    for (int t = 0; t < TFB_TT_COUNT_; t++)
        sqlite3_finalize(s->ins_run[t]);
    for (int t = 0; t < TFB_TT_COUNT_; t++)
        sqlite3_finalize(s->hoist[t]);
    if (s->db) {
        /* Fold the WAL back so the file is self-contained once closed. */
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE,
                                  NULL, NULL);
        sqlite3_close(s->db);
    }
    for (size_t i = 0; i < s->itab.cap; i++)
        if (s->itab.slots[i].hash)
            free((char *)s->itab.slots[i].key);
    tfb_strtab_free(&s->itab);
    int err = s->stats.sticky_error;
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->smu);
    pthread_cond_destroy(&s->wake);
    pthread_cond_destroy(&s->done);
    free(s->path);
    free(s);
    return err;
}

/* Appends under s->mu (held). own: 1 = copy the strings. */
static int push_locked(tfb_trace_store *s, const tfb_trace_row *rows, size_t n,
                       int copy)
{
    if (tfb_vec_need(&s->pending, s->pending.n + n) < 0)
        return TFB_ENOMEM;
    size_t owned = 0;
    for (size_t i = 0; i < n; i++) {
        qrow *q = &s->pending.v[s->pending.n + i];
        q->r = rows[i];
        q->own1 = q->own2 = 0;
        if (copy && rows[i].text) {
            q->r.text = tfb_strdup(rows[i].text);
            q->own1 = q->r.text != NULL;
        }
        if (copy && rows[i].text2) {
            q->r.text2 = tfb_strdup(rows[i].text2);
            q->own2 = q->r.text2 != NULL;
        }
        if ((copy && rows[i].text && !q->own1) ||
            (copy && rows[i].text2 && !q->own2)) {
            for (size_t j = 0; j <= i; j++)
                free_row_strings(&s->pending.v[s->pending.n + j]);
            return TFB_ENOMEM;
        }
        owned += q->own1 | q->own2;
    }
    s->pending_owned += owned;
    s->pending.n += n;
    s->queued_seq += n;
    s->stats.rows_queued += n;
    if (s->pending.n >= s->opts.batch_rows)
        pthread_cond_signal(&s->wake);
    return 0;
}

static int push_common(tfb_trace_store *s, const tfb_trace_row *rows, size_t n,
                       int block, int copy)
{
    if (!s || (!rows && n))
        return TFB_EINVAL;
    for (size_t i = 0; i < n; i++)
        if ((unsigned)rows[i].table >= TFB_TT_COUNT_)
            return TFB_EINVAL;
    pthread_mutex_lock(&s->mu);
    if (s->pending.n + n > s->opts.max_queued_rows) {
        if (!block) {
            s->stats.rows_dropped += n;
            pthread_mutex_unlock(&s->mu);
            return TFB_EDROPPED;
        }
        /* A batch larger than the cap goes in once the queue is empty. */
        while (!s->stop && s->pending.n > 0 &&
               s->pending.n + n > s->opts.max_queued_rows) {
            pthread_cond_signal(&s->wake);
            pthread_cond_wait(&s->done, &s->mu);
        }
    }
    int err = s->stop ? TFB_ECLOSED : push_locked(s, rows, n, copy);
    pthread_mutex_unlock(&s->mu);
    return err;
}

int tfb_trace_store_push(tfb_trace_store *s, const tfb_trace_row *rows,
                         size_t n, int block)
{
    return push_common(s, rows, n, block, 1);
}

int64_t tfb_trace_store_intern(tfb_trace_store *s, const char *str)
{
    if (!s || !str)
        return TFB_EINVAL;
    size_t len = strlen(str);
    uint64_t h = tfb_hash_bytes(str, len);
    pthread_mutex_lock(&s->smu);
    void *v = tfb_strtab_get_h(&s->itab, str, len, h);
    if (v) {
        pthread_mutex_unlock(&s->smu);
        return (int64_t)((uintptr_t)v - 1);
    }
    int64_t ret;
    char *copy = tfb_strdup(str);
    if (!copy) {
        ret = TFB_ENOMEM;
        goto out;
    }
    tfb_trace_row row;
    memset(&row, 0, sizeof row);
    row.table = TFB_TT_STRINGIDS;
    row.c[0] = s->next_id;
    row.text = copy; /* lives in the intern table until close */
    /* Queued while smu is held, so no row using the id can be queued
     * before the string itself. */
    /* Room in the table before the row is queued, so the insert after it
     * cannot fail. */
    if (tfb_strtab_reserve(&s->itab, s->itab.count + 1) < 0) {
        free(copy);
        ret = TFB_ENOMEM;
        goto out;
    }
    int err = push_common(s, &row, 1, 1, 0);
    if (err) {
        free(copy);
        ret = err;
        goto out;
    }
    (void)tfb_strtab_put_h(&s->itab, copy, len, h,
                           (void *)(uintptr_t)(s->next_id + 1));
    ret = s->next_id++;
    pthread_mutex_lock(&s->mu);
    s->stats.strings++;
    pthread_mutex_unlock(&s->mu);
out:
    pthread_mutex_unlock(&s->smu);
    return ret;
}

int tfb_trace_store_meta(tfb_trace_store *s, const char *key,
                         const char *value)
{
    if (!s || !key || !value)
        return TFB_EINVAL;
    tfb_trace_row row;
    memset(&row, 0, sizeof row);
    row.table = TFB_TT_META;
    row.text = key;
    row.text2 = value;
    return tfb_trace_store_push(s, &row, 1, 1);
}

int tfb_trace_store_flush(tfb_trace_store *s)
{
    if (!s)
        return TFB_EINVAL;
    pthread_mutex_lock(&s->mu);
    uint64_t target = s->queued_seq;
    if (target > s->flush_target)
        s->flush_target = target;
    pthread_cond_signal(&s->wake);
    while (s->committed_seq < target && !s->stop)
        pthread_cond_wait(&s->done, &s->mu);
    int err = s->stats.sticky_error;
    pthread_mutex_unlock(&s->mu);
    return err;
}

const char *tfb_trace_store_path(const tfb_trace_store *s)
{
    return s ? s->path : NULL;
}

void tfb_trace_store_get_stats(tfb_trace_store *s, tfb_trace_store_stats *out)
{
    if (!s || !out)
        return;
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------------
 * Host spans. One attachment per process (one tracing writer per process,
 * as CUPTI allows one subscriber).
 * ---------------------------------------------------------------------- */
static pthread_mutex_t g_attach_mu = PTHREAD_MUTEX_INITIALIZER;
static tfb_writer *g_attached_w;
static tfb_trace_store *g_attached_s;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/* fork(): the attach lock is held across it, so the child never finds it
 * held by a thread that is gone; the child then forgets the attachment
 * (the store and its thread are the parent's, and a writer the child opens
 * could get the freed address of the inherited one). */
static void attach_prepare(void)
{
    pthread_mutex_lock(&g_attach_mu);
}

static void attach_parent(void)
{
    pthread_mutex_unlock(&g_attach_mu);
}

static void attach_child(void)
{
    g_attached_w = NULL;
    g_attached_s = NULL;
    pthread_mutex_unlock(&g_attach_mu);
}

static void register_atfork(void)
{
    tfb_fork_guard_init();
    (void)pthread_atfork(attach_prepare, attach_parent, attach_child);
}

/* Distributed jobs: the writer's rank goes to META so a trace can be
 * matched to its rank without the event file. */
int tfb_trace_store_rank_meta(tfb_trace_store *s, const tfb_writer *w)
{
    if (!s || !w)
        return TFB_EINVAL;
    const tfb_rank_owned *r = tfb_writer_rank(w);
    if (r->rank < 0)
        return 0;
    char num[3][16];
    snprintf(num[0], sizeof num[0], "%d", r->rank);
    snprintf(num[1], sizeof num[1], "%d", r->world_size);
    snprintf(num[2], sizeof num[2], "%d", r->local_rank);
    const char *const kv[][2] = {{"rank", num[0]}, {"world_size", num[1]},
                                 {"local_rank", num[2]}, {"job", r->job}};
    return put_meta(s, kv, sizeof kv / sizeof kv[0]);
}

int tfb_trace_store_attach(tfb_writer *w, tfb_trace_store *s)
{
    if (!w)
        return TFB_EINVAL;
    int err = 0;
    pthread_once(&g_atfork_once, register_atfork);
    pthread_mutex_lock(&g_attach_mu);
    if (!s) {
        if (g_attached_w == w) {
            g_attached_w = NULL;
            g_attached_s = NULL;
        }
    } else if (g_attached_w && g_attached_w != w) {
        err = TFB_EBUSY;
    } else {
        g_attached_w = w;
        g_attached_s = s;
    }
    pthread_mutex_unlock(&g_attach_mu);
    return err;
}

/* nsys's globalTid = (pid << 24) | tid. getpid and gettid are system
 * calls (glibc caches neither), far over the step calls' budget, so each
 * thread keeps its value; a fork moves the generation on (fork_guard.h,
 * never 0) and the child's threads compute theirs again. */
static _Thread_local int64_t tl_gtid;
static _Thread_local unsigned tl_gtid_gen;

static int64_t global_tid(void)
{
    pthread_once(&g_atfork_once, register_atfork);
    unsigned gen = tfb_fork_generation();
    if (tl_gtid_gen != gen) {
        tl_gtid = ((int64_t)getpid() << 24) |
                  ((int64_t)syscall(SYS_gettid) & 0xffffff);
        tl_gtid_gen = gen;
    }
    return tl_gtid;
}

int tfb_trace_host_span(tfb_writer *w, tfb_host_span_kind kind, int64_t step,
                        int64_t start_ns, int64_t end_ns)
{
    if (!w || (kind != TFB_HOST_SPAN_STEP && kind != TFB_HOST_SPAN_INPUT &&
               kind != TFB_HOST_SPAN_COMM) ||
        end_ns < start_ns)
        return TFB_EINVAL;
    tfb_trace_row row;
    row.table = TFB_TT_HOST_SPAN;
    row.c[TFB_HS_START] = start_ns;
    row.c[TFB_HS_END] = end_ns;
    row.c[TFB_HS_STEP] = step;
    row.c[TFB_HS_GLOBALTID] = global_tid();
    row.text = kind == TFB_HOST_SPAN_STEP    ? "step"
               : kind == TFB_HOST_SPAN_INPUT ? "input"
                                             : "comm";
    row.text2 = NULL;
    int err;
    /* The attach lock is held while pushing so that detach (and the store's
     * close after it) cannot run under an add in progress. */
    pthread_mutex_lock(&g_attach_mu);
    if (g_attached_w != w || !g_attached_s)
        err = TFB_ESTATE;
    else
        err = push_common(g_attached_s, &row, 1, 0, 0); /* literal: no copy */
    pthread_mutex_unlock(&g_attach_mu);
    return err;
}
