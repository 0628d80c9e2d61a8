/*
 * trace_store.c - the per-process SQLite trace store: schema, row queue,
 * string interning, the batching writer thread, and host-span attachment.
 */
#include "trace_store.h"

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
 * Schema. Integer columns first (tfb_trace_row.c order), then the text
 * columns (text, text2). Names follow the nsys SQLite export.
 * ---------------------------------------------------------------------- */
typedef struct table_spec {
    const char *name;
    const char *create; /* CREATE TABLE statement */
    const char *const *icols;
    int nicols;
    const char *tcol;  /* column bound to row.text, or NULL */
    const char *tcol2; /* column bound to row.text2, or NULL */
    int replace;       /* INSERT OR REPLACE */
} table_spec;

static const char *const strings_cols[] = {"id"};
static const char *const kernel_cols[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId",
    "globalPid", "demangledName", "shortName", "gridX", "gridY", "gridZ",
    "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
    "dynamicSharedMemory", "localMemoryPerThread", "gridId", "launchType",
    "graphNodeId", "mangledName"};
static const char *const memcpy_cols[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId",
    "globalPid", "bytes", "copyKind", "srcKind", "dstKind", "srcDeviceId",
    "dstDeviceId", "graphNodeId"};
static const char *const memset_cols[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId",
    "globalPid", "value", "bytes", "memKind", "graphNodeId"};
static const char *const sync_cols[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId",
    "globalPid", "syncType", "eventId"};
static const char *const runtime_cols[] = {
    "start", "end", "eventClass", "globalTid", "correlationId", "nameId",
    "returnValue", "cbid"};
static const char *const nvtx_cols[] = {
    "start", "end", "eventType", "rangeId", "globalTid", "textId", "domainId"};
static const char *const overhead_cols[] = {
    "start", "end", "globalTid", "overheadKind", "objectKind", "objectId"};
static const char *const gpuinfo_cols[] = {
    "id", "smCount", "totalMemory", "clockRate", "computeMajor",
    "computeMinor", "l2CacheSize", "memoryBandwidth"};
static const char *const hostspan_cols[] = {"start", "end", "step",
                                            "globalTid"};

#define NCOLS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const table_spec k_tables[TFB_TT_COUNT_] = {
    [TFB_TT_STRINGIDS] = {"StringIds",
        "CREATE TABLE IF NOT EXISTS StringIds(id INTEGER NOT NULL PRIMARY KEY,"
        " value TEXT NOT NULL)",
        strings_cols, NCOLS(strings_cols), "value", NULL, 0},
    [TFB_TT_KERNEL] = {"CUPTI_ACTIVITY_KIND_KERNEL",
        "CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_KERNEL("
        "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
        " contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER,"
        " demangledName INTEGER NOT NULL REFERENCES StringIds(id),"
        " shortName INTEGER NOT NULL REFERENCES StringIds(id),"
        " gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
        " blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
        " registersPerThread INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,"
        " dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER,"
        " gridId INTEGER, launchType INTEGER, graphNodeId INTEGER,"
        " mangledName INTEGER REFERENCES StringIds(id))",
        kernel_cols, NCOLS(kernel_cols), NULL, NULL, 0},
    [TFB_TT_MEMCPY] = {"CUPTI_ACTIVITY_KIND_MEMCPY",
        "CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_MEMCPY("
        "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
        " contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,"
        " copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER,"
        " srcDeviceId INTEGER, dstDeviceId INTEGER, graphNodeId INTEGER)",
        memcpy_cols, NCOLS(memcpy_cols), NULL, NULL, 0},
    [TFB_TT_MEMSET] = {"CUPTI_ACTIVITY_KIND_MEMSET",
        "CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_MEMSET("
        "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
        " contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,"
        " bytes INTEGER NOT NULL, memKind INTEGER, graphNodeId INTEGER)",
        memset_cols, NCOLS(memset_cols), NULL, NULL, 0},
    [TFB_TT_SYNC] = {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_SYNCHRONIZATION("
        "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,"
        " contextId INTEGER, streamId INTEGER, correlationId INTEGER,"
        " globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER)",
        sync_cols, NCOLS(sync_cols), NULL, NULL, 0},
    [TFB_TT_RUNTIME] = {"CUPTI_ACTIVITY_KIND_RUNTIME",
        "CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_RUNTIME("
        "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,"
        " globalTid INTEGER, correlationId INTEGER,"
        " nameId INTEGER NOT NULL REFERENCES StringIds(id),"
        " returnValue INTEGER NOT NULL, cbid INTEGER)",
        runtime_cols, NCOLS(runtime_cols), NULL, NULL, 0},
    [TFB_TT_NVTX] = {"NVTX_EVENTS",
        "CREATE TABLE IF NOT EXISTS NVTX_EVENTS("
        "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
        " rangeId INTEGER, globalTid INTEGER,"
        " textId INTEGER REFERENCES StringIds(id), domainId INTEGER, text TEXT)",
        nvtx_cols, NCOLS(nvtx_cols), "text", NULL, 0},
    [TFB_TT_OVERHEAD] = {"PROFILER_OVERHEAD",
        "CREATE TABLE IF NOT EXISTS PROFILER_OVERHEAD("
        "start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER,"
        " overheadKind INTEGER, objectKind INTEGER, objectId INTEGER)",
        overhead_cols, NCOLS(overhead_cols), NULL, NULL, 0},
    [TFB_TT_GPU_INFO] = {"TARGET_INFO_GPU",
        "CREATE TABLE IF NOT EXISTS TARGET_INFO_GPU("
        "id INTEGER NOT NULL PRIMARY KEY, smCount INTEGER, totalMemory INTEGER,"
        " clockRate INTEGER, computeMajor INTEGER, computeMinor INTEGER,"
        " l2CacheSize INTEGER, memoryBandwidth INTEGER, name TEXT)",
        gpuinfo_cols, NCOLS(gpuinfo_cols), "name", NULL, 1},
    [TFB_TT_HOST_SPAN] = {"TFB_HOST_SPANS",
        "CREATE TABLE IF NOT EXISTS TFB_HOST_SPANS("
        "start INTEGER NOT NULL, end INTEGER NOT NULL, step INTEGER,"
        " globalTid INTEGER, kind TEXT NOT NULL)",
        hostspan_cols, NCOLS(hostspan_cols), "kind", NULL, 0},
    [TFB_TT_META] = {"META",
        "CREATE TABLE IF NOT EXISTS META(key TEXT NOT NULL PRIMARY KEY,"
        " value TEXT)",
        NULL, 0, "key", "value", 1},
};

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

/* A queued row. `owned` tells whether text/text2 were copied by the store
 * (freed after the insert) or point at storage that outlives the queue
 * (string literals, the intern table). */
typedef struct qrow {
    tfb_trace_row r;
    unsigned char own1, own2;
} qrow;

typedef struct rowvec {
    qrow *v;
    size_t n, cap;
} rowvec;

typedef struct intern_entry {
    char *str; /* NULL = empty slot */
    uint64_t hash;
    int64_t id;
} intern_entry;

struct tfb_trace_store {
    char *path;
    sqlite3 *db;
    sqlite3_stmt *ins[TFB_TT_COUNT_];
    sqlite3_stmt *ins_multi[TFB_TT_COUNT_];
    tfb_trace_store_opts opts;

    pthread_t thread;
    int thread_started;
    pthread_mutex_t mu;
    pthread_cond_t wake;  /* writer: work, flush, stop */
    pthread_cond_t done;  /* flushers and blocked pushers */
    rowvec pending;
    uint64_t queued_seq;    /* rows accepted so far */
    uint64_t committed_seq; /* rows written (or discarded after an error) */
    uint64_t flush_target;
    int stop;

    tfb_trace_store_stats stats;

    pthread_mutex_t smu; /* intern table */
    intern_entry *itab;
    size_t icap, icount;
    int64_t next_id;
};

/* ------------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------- */
static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int vec_reserve(rowvec *v, size_t need)
{
    if (need <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap : 1024;
    while (cap < need)
        cap *= 2;
    qrow *nv = realloc(v->v, cap * sizeof *nv);
    if (!nv)
        return TFB_ENOMEM;
    v->v = nv;
    v->cap = cap;
    return 0;
}

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

/* Rows of one table written by one multi-row INSERT: the per-statement
 * cost (step, reset, VM start) is paid once per MULTI_ROWS rows. */
#define MULTI_ROWS 32

static int table_ncols(const table_spec *ts)
{
    return ts->nicols + (ts->tcol ? 1 : 0) + (ts->tcol2 ? 1 : 0);
}

static int prepare_one(tfb_trace_store *s, const table_spec *ts, int rows,
                       sqlite3_stmt **out)
{
    int ncol = table_ncols(ts);
    size_t cap = 1024 + (size_t)rows * ((size_t)ncol * 2 + 4);
    char *sql = malloc(cap);
    if (!sql)
        return TFB_ENOMEM;
    int len = snprintf(sql, cap, "INSERT %sINTO %s(",
                       ts->replace ? "OR REPLACE " : "", ts->name);
    int c = 0;
    for (int i = 0; i < ts->nicols; i++, c++)
        len += snprintf(sql + len, cap - (size_t)len, "%s\"%s\"",
                        c ? "," : "", ts->icols[i]);
    if (ts->tcol)
        len += snprintf(sql + len, cap - (size_t)len, "%s\"%s\"",
                        c++ ? "," : "", ts->tcol);
    if (ts->tcol2)
        len += snprintf(sql + len, cap - (size_t)len, "%s\"%s\"",
                        c++ ? "," : "", ts->tcol2);
    len += snprintf(sql + len, cap - (size_t)len, ") VALUES");
    for (int r = 0; r < rows; r++) {
        len += snprintf(sql + len, cap - (size_t)len, "%s(", r ? "," : "");
        for (int i = 0; i < ncol; i++)
            len += snprintf(sql + len, cap - (size_t)len, "%s?", i ? "," : "");
        len += snprintf(sql + len, cap - (size_t)len, ")");
    }
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out,
                                NULL);
    free(sql);
    return rc == SQLITE_OK ? 0 : TFB_ETRACE;
}

static int prepare_inserts(tfb_trace_store *s)
{
    for (int t = 0; t < TFB_TT_COUNT_; t++) {
        int err = prepare_one(s, &k_tables[t], 1, &s->ins[t]);
        if (!err)
            err = prepare_one(s, &k_tables[t], MULTI_ROWS, &s->ins_multi[t]);
        if (err)
            return err;
    }
    return 0;
}

/* Binds r's columns from parameter `col` on; returns the next one. */
static int bind_row(sqlite3_stmt *st, int col, const tfb_trace_row *r)
{
    const table_spec *ts = &k_tables[r->table];
    for (int i = 0; i < ts->nicols; i++, col++) {
        if (r->c[i] == TFB_TRACE_NULL)
            sqlite3_bind_null(st, col);
        else
            sqlite3_bind_int64(st, col, r->c[i]);
    }
    if (ts->tcol) {
        if (r->text)
            sqlite3_bind_text(st, col, r->text, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, col);
        col++;
    }
    if (ts->tcol2) {
        if (r->text2)
            sqlite3_bind_text(st, col, r->text2, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, col);
        col++;
    }
    return col;
}

static int step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : TFB_ETRACE;
}

/* Writes one batch in one transaction. Runs on the writer thread only, the
 * only user of the connection after open. */
static int write_batch(tfb_trace_store *s, qrow *rows, size_t n)
{
    int err = exec_sql(s->db, "BEGIN");
    size_t i = 0;
    while (i < n && !err) {
        tfb_trace_table t = rows[i].r.table;
        size_t run = 1;
        while (run < MULTI_ROWS && i + run < n && rows[i + run].r.table == t)
            run++;
        /* META rows replace each other: they go one by one, in order. */
        if (run == MULTI_ROWS && t != TFB_TT_META) {
            sqlite3_stmt *st = s->ins_multi[t];
            int col = 1;
            for (size_t k = 0; k < run; k++)
                col = bind_row(st, col, &rows[i + k].r);
            err = step_reset(st);
            i += run;
        } else {
            sqlite3_stmt *st = s->ins[t];
            bind_row(st, 1, &rows[i].r);
            err = step_reset(st);
            i++;
        }
    }
    if (!err)
        err = exec_sql(s->db, "COMMIT");
    else
        exec_sql(s->db, "ROLLBACK");
    return err;
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
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t ns = (uint64_t)ts.tv_nsec +
                          (uint64_t)s->opts.commit_interval_ms * 1000000u;
            ts.tv_sec += (time_t)(ns / 1000000000u);
            ts.tv_nsec = (long)(ns % 1000000000u);
            if (pthread_cond_timedwait(&s->wake, &s->mu, &ts) == ETIMEDOUT)
                break;
        }
        if (s->pending.n == 0) {
            if (s->stop)
                break;
            continue;
        }
        /* Take the whole queue; producers refill an empty vector. */
        rowvec tmp = s->pending;
        s->pending = work;
        s->pending.n = 0;
        work = tmp;
        pthread_cond_broadcast(&s->done); /* room for blocked pushers */
        int sticky = s->stats.sticky_error;
        pthread_mutex_unlock(&s->mu);

        int err = sticky ? sticky : write_batch(s, work.v, work.n);
        for (size_t i = 0; i < work.n; i++)
            free_row_strings(&work.v[i]);

        pthread_mutex_lock(&s->mu);
        if (err && !s->stats.sticky_error)
            s->stats.sticky_error = err;
        if (!err) {
            s->stats.rows_written += work.n;
            s->stats.transactions++;
        }
        s->committed_seq += work.n;
        work.n = 0;
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    free(work.v);
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
    size_t n = strlen(run_dir) + strlen(host) + 64 +
               (file_name ? strlen(file_name) : 0);
    char *p = malloc(n);
    if (!p)
        return TFB_ENOMEM;
    if (file_name)
        snprintf(p, n, "%s/%s", run_dir, file_name);
    else
        snprintf(p, n, "%s/%s.%ld.trace.sqlite", run_dir, host,
                 (long)getpid());
    *out = p;
    return 0;
}

static int write_initial_meta(tfb_trace_store *s)
{
    char host[256] = "localhost", pid[32];
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    int err = tfb_trace_store_meta(s, "host", host);
    if (!err)
        err = tfb_trace_store_meta(s, "pid", pid);
    if (!err)
        err = tfb_trace_store_meta(s, "tfboard_version", TFB_VERSION_STRING);
    if (!err)
        err = tfb_trace_store_meta(s, "clock", "CLOCK_REALTIME");
    if (!err)
        err = tfb_trace_store_meta(s, "time_unit", "ns");
    if (!err)
        err = tfb_trace_store_meta(s, "schema", "tfboard-trace-1");
    return err;
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
    s->opts.file_name = NULL; /* not kept: the caller owns the string */
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->smu, NULL);
    pthread_cond_init(&s->wake, NULL);
    pthread_cond_init(&s->done, NULL);

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
    /* Bigger pages and cache: rows are small and many; page_size only
     * takes effect on a new file, before WAL is set. */
    exec_sql(s->db, "PRAGMA page_size=16384");
    err = exec_sql(s->db, "PRAGMA journal_mode=WAL");
    if (!err)
        err = exec_sql(s->db, "PRAGMA synchronous=NORMAL");
    if (!err)
        err = exec_sql(s->db, "PRAGMA cache_size=-65536");
    for (int t = 0; t < TFB_TT_COUNT_ && !err; t++)
        err = exec_sql(s->db, k_tables[t].create);
    if (!err)
        err = exec_sql(s->db, k_memcpy_enum_sql);
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
    free(s->pending.v);
    for (int t = 0; t < TFB_TT_COUNT_; t++)
        sqlite3_finalize(s->ins[t]);
    for (int t = 0; t < TFB_TT_COUNT_; t++)
        sqlite3_finalize(s->ins_multi[t]);
    if (s->db) {
        /* Fold the WAL back so the file is self-contained once closed. */
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE,
                                  NULL, NULL);
        sqlite3_close(s->db);
    }
    for (size_t i = 0; i < s->icap; i++)
        free(s->itab ? s->itab[i].str : NULL);
    free(s->itab);
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
    int err = vec_reserve(&s->pending, s->pending.n + n);
    if (err)
        return err;
    for (size_t i = 0; i < n; i++) {
        qrow *q = &s->pending.v[s->pending.n + i];
        q->r = rows[i];
        q->own1 = q->own2 = 0;
        if (copy && rows[i].text) {
            q->r.text = dupstr(rows[i].text);
            q->own1 = q->r.text != NULL;
        }
        if (copy && rows[i].text2) {
            q->r.text2 = dupstr(rows[i].text2);
            q->own2 = q->r.text2 != NULL;
        }
        if ((copy && rows[i].text && !q->own1) ||
            (copy && rows[i].text2 && !q->own2)) {
            for (size_t j = 0; j <= i; j++)
                free_row_strings(&s->pending.v[s->pending.n + j]);
            return TFB_ENOMEM;
        }
    }
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

static uint64_t hash_str(const char *p)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ull;
    }
    return h;
}

static int intern_grow(tfb_trace_store *s)
{
    size_t ncap = s->icap ? s->icap * 2 : 1024;
    intern_entry *nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return TFB_ENOMEM;
    for (size_t i = 0; i < s->icap; i++) {
        if (!s->itab[i].str)
            continue;
        size_t j = (size_t)s->itab[i].hash & (ncap - 1);
        while (nt[j].str)
            j = (j + 1) & (ncap - 1);
        nt[j] = s->itab[i];
    }
    free(s->itab);
    s->itab = nt;
    s->icap = ncap;
    return 0;
}

int64_t tfb_trace_store_intern(tfb_trace_store *s, const char *str)
{
    if (!s || !str)
        return TFB_EINVAL;
    uint64_t h = hash_str(str);
    pthread_mutex_lock(&s->smu);
    if (s->icap) {
        size_t j = (size_t)h & (s->icap - 1);
        while (s->itab[j].str) {
            if (s->itab[j].hash == h && strcmp(s->itab[j].str, str) == 0) {
                int64_t id = s->itab[j].id;
                pthread_mutex_unlock(&s->smu);
                return id;
            }
            j = (j + 1) & (s->icap - 1);
        }
    }
    int64_t ret;
    if ((s->icount + 1) * 2 > s->icap && intern_grow(s) != 0) {
        ret = TFB_ENOMEM;
        goto out;
    }
    char *copy = dupstr(str);
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
    int err = push_common(s, &row, 1, 1, 0);
    if (err) {
        free(copy);
        ret = err;
        goto out;
    }
    size_t j = (size_t)h & (s->icap - 1);
    while (s->itab[j].str)
        j = (j + 1) & (s->icap - 1);
    s->itab[j].str = copy;
    s->itab[j].hash = h;
    s->itab[j].id = s->next_id;
    s->icount++;
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

int tfb_trace_store_attach(tfb_writer *w, tfb_trace_store *s)
{
    if (!w)
        return TFB_EINVAL;
    int err = 0;
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
 * thread keeps its value; a fork moves the generation on and the child's
 * threads compute theirs again. */
static atomic_uint g_fork_gen = 1;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
static _Thread_local int64_t tl_gtid;
static _Thread_local unsigned tl_gtid_gen;

static void after_fork_child(void)
{
    atomic_fetch_add(&g_fork_gen, 1);
}

static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

static int64_t global_tid(void)
{
    pthread_once(&g_atfork_once, register_atfork);
    unsigned gen = atomic_load_explicit(&g_fork_gen, memory_order_relaxed);
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
    if (!w || (kind != TFB_HOST_SPAN_STEP && kind != TFB_HOST_SPAN_INPUT) ||
        end_ns < start_ns)
        return TFB_EINVAL;
    tfb_trace_row row;
    row.table = TFB_TT_HOST_SPAN;
    row.c[TFB_HS_START] = start_ns;
    row.c[TFB_HS_END] = end_ns;
    row.c[TFB_HS_STEP] = step;
    row.c[TFB_HS_GLOBALTID] = global_tid();
    row.text = kind == TFB_HOST_SPAN_STEP ? "step" : "input";
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
