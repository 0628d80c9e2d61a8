/*
 * test_trace_store.c - the SQLite trace store: schema (nsys names), WAL,
 * batched rows read back with sqlite3, string interning, META, host spans
 * and their attachment, the queue cap, bad arguments, and a batch of
 * interleaved tables split into several transactions read back value by
 * value while the store still has the file open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "collector/trace_store.h"

static sqlite3 *open_ro(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    return db;
}

static int64_t q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("prepare failed: %s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Copies the first column of the first row into buf ("" for NULL). */
static void q_text(sqlite3 *db, const char *sql, char *buf, size_t cap)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("prepare failed: %s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(buf, cap, "%s", t ? (const char *)t : "");
    sqlite3_finalize(st);
}

static void test_open_schema_meta(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    assert_int_equal(tfb_trace_store_open(&s, dir, NULL), 0);
    const char *path = tfb_trace_store_path(s);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char expect[1024];
    snprintf(expect, sizeof expect, "%s/%s.%ld.trace.sqlite", dir, host,
             (long)getpid());
    assert_string_equal(path, expect);
    char pathcopy[1024];
    snprintf(pathcopy, sizeof pathcopy, "%s", path);
    assert_int_equal(tfb_trace_store_meta(s, "rank", "3"), 0);
    assert_int_equal(tfb_trace_store_meta(s, "rank", "4"), 0); /* replaces */
    assert_int_equal(tfb_trace_store_flush(s), 0);

    /* Readable while open (WAL). */
    sqlite3 *db = open_ro(pathcopy);
    char buf[256];
    q_text(db, "PRAGMA journal_mode", buf, sizeof buf);
    assert_string_equal(buf, "wal");
    q_text(db, "SELECT value FROM META WHERE key='rank'", buf, sizeof buf);
    assert_string_equal(buf, "4");
    q_text(db, "SELECT value FROM META WHERE key='tfboard_version'", buf,
           sizeof buf);
    assert_string_equal(buf, TFB_VERSION_STRING);
    q_text(db, "SELECT value FROM META WHERE key='time_unit'", buf, sizeof buf);
    assert_string_equal(buf, "ns");
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    q_text(db, "SELECT value FROM META WHERE key='pid'", buf, sizeof buf);
    assert_string_equal(buf, pid);
    /* Every table and the nsys column names SQL is written against. */
    const char *cols[] = {
        "SELECT start, end, deviceId, contextId, streamId, correlationId, "
        "globalPid, demangledName, shortName, mangledName, gridX, gridY, gridZ, "
        "blockX, blockY, blockZ, registersPerThread, staticSharedMemory, "
        "dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL",
        "SELECT start, end, deviceId, contextId, streamId, correlationId, "
        "bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY",
        "SELECT start, end, deviceId, streamId, value, bytes FROM "
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "SELECT start, end, contextId, streamId, syncType, eventId FROM "
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "SELECT start, end, globalTid, correlationId, nameId, returnValue "
        "FROM CUPTI_ACTIVITY_KIND_RUNTIME",
        "SELECT start, end, text, textId, eventType, rangeId, globalTid FROM "
        "NVTX_EVENTS",
        "SELECT id, name, smCount FROM TARGET_INFO_GPU",
        "SELECT id, value FROM StringIds",
        "SELECT start, end, kind, step FROM TFB_HOST_SPANS",
        "SELECT start, end, overheadKind FROM PROFILER_OVERHEAD",
        "SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER",
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, cols[i], -1, &st, NULL) != SQLITE_OK)
            fail_msg("schema: %s: %s", cols[i], sqlite3_errmsg(db));
        sqlite3_finalize(st);
    }
    q_text(db, "SELECT label FROM ENUM_CUDA_MEMCPY_OPER WHERE id=1", buf,
           sizeof buf);
    assert_string_equal(buf, "Host-to-Device");
    sqlite3_close(db);
    assert_int_equal(tfb_trace_store_close(s), 0);
    /* Checkpointed on close: no WAL file left behind. */
    char wal[1100];
    snprintf(wal, sizeof wal, "%s-wal", pathcopy);
    assert_int_not_equal(access(wal, F_OK), 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_rows_and_strings(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    tfb_trace_store_opts o = {0};
    o.batch_rows = 100; /* several transactions */
    o.file_name = "t.sqlite";
    assert_int_equal(tfb_trace_store_open(&s, dir, &o), 0);
    int64_t a = tfb_trace_store_intern(s, "gemm");
    int64_t b = tfb_trace_store_intern(s, "relu");
    assert_true(a >= 0 && b >= 0 && a != b);
    assert_int_equal(tfb_trace_store_intern(s, "gemm"), a);

    const int n = 1000;
    tfb_trace_row *rows = calloc((size_t)n, sizeof *rows);
    assert_non_null(rows);
    const int64_t base = INT64_C(1700000000123456789);
    for (int i = 0; i < n; i++) {
        rows[i].table = TFB_TT_KERNEL;
        rows[i].c[TFB_K_START] = base + i * 1000;
        rows[i].c[TFB_K_END] = base + i * 1000 + 500;
        rows[i].c[TFB_K_DEVICE] = i % 2;
        rows[i].c[TFB_K_STREAM] = 7;
        rows[i].c[TFB_K_DEMANGLED] = i % 3 ? a : b;
        rows[i].c[TFB_K_SHORTNAME] = i % 3 ? a : b;
        rows[i].c[TFB_K_MANGLED] = TFB_TRACE_NULL;
        rows[i].c[TFB_K_GRAPH_NODE] = TFB_TRACE_NULL;
        rows[i].c[TFB_K_GRIDX] = i;
    }
    /* Ten pushes, each committed before the next: ten transactions. */
    for (int i = 0; i < n; i += 100) {
        assert_int_equal(tfb_trace_store_push(s, rows + i, 100, 1), 0);
        assert_int_equal(tfb_trace_store_flush(s), 0);
    }
    tfb_trace_row nv;
    memset(&nv, 0, sizeof nv);
    nv.table = TFB_TT_NVTX;
    nv.c[TFB_NV_START] = base;
    nv.c[TFB_NV_END] = TFB_TRACE_NULL;
    nv.c[TFB_NV_EVENTTYPE] = TFB_NVTX_MARK;
    nv.c[TFB_NV_TEXTID] = TFB_TRACE_NULL;
    char text[] = "it's \"quoted\"";
    nv.text = text;
    assert_int_equal(tfb_trace_store_push(s, &nv, 1, 0), 0);
    text[0] = 'X'; /* the store copied it */
    assert_int_equal(tfb_trace_store_flush(s), 0);

    tfb_trace_store_stats st;
    tfb_trace_store_get_stats(s, &st);
    assert_int_equal(st.strings, 2);
    assert_true(st.transactions >= 11);
    assert_int_equal(st.rows_written, st.rows_queued);
    assert_int_equal(st.rows_dropped, 0);

    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    sqlite3 *db = open_ro(path);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                     n);
    assert_int_equal(q_int(db, "SELECT MIN(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                     base);
    assert_int_equal(q_int(db, "SELECT SUM(gridX) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                     (int64_t)n * (n - 1) / 2);
    /* nsys-style name join. */
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                               " JOIN StringIds s ON s.id = k.demangledName"
                               " WHERE s.value = 'relu'"),
                     334);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"
                               " WHERE mangledName IS NULL AND graphNodeId IS NULL"),
                     n);
    char buf[128];
    q_text(db, "SELECT text FROM NVTX_EVENTS", buf, sizeof buf);
    assert_string_equal(buf, "it's \"quoted\"");
    assert_int_equal(q_int(db, "SELECT end IS NULL FROM NVTX_EVENTS"), 1);
    sqlite3_close(db);
    free(rows);
    assert_int_equal(tfb_trace_store_close(s), 0);

    /* Reopening the same file continues the string ids. */
    assert_int_equal(tfb_trace_store_open(&s, dir, &o), 0);
    int64_t c = tfb_trace_store_intern(s, "other");
    assert_true(c > a && c > b);
    assert_int_equal(tfb_trace_store_close(s), 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_host_spans(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    /* The writer is only a key here: any distinct non-NULL pointer. */
    int k1, k2;
    tfb_writer *w1 = (tfb_writer *)(void *)&k1;
    tfb_writer *w2 = (tfb_writer *)(void *)&k2;
    assert_int_equal(tfb_trace_host_span(w1, TFB_HOST_SPAN_STEP, 1, 10, 20),
                     TFB_ESTATE);
    assert_int_equal(tfb_trace_host_span(NULL, TFB_HOST_SPAN_STEP, 1, 10, 20),
                     TFB_EINVAL);
    tfb_trace_store *s = NULL;
    assert_int_equal(tfb_trace_store_open(&s, dir, NULL), 0);
    assert_int_equal(tfb_trace_store_attach(w1, s), 0);
    assert_int_equal(tfb_trace_store_attach(w2, s), TFB_EBUSY);
    assert_int_equal(tfb_trace_host_span(w2, TFB_HOST_SPAN_STEP, 1, 10, 20),
                     TFB_ESTATE);
    assert_int_equal(tfb_trace_host_span(w1, TFB_HOST_SPAN_STEP, 5, 100, 900),
                     0);
    assert_int_equal(tfb_trace_host_span(w1, TFB_HOST_SPAN_INPUT, 5, 100, 300),
                     0);
    assert_int_equal(tfb_trace_host_span(w1, TFB_HOST_SPAN_INPUT, 5, 300, 100),
                     TFB_EINVAL);
    assert_int_equal(tfb_trace_host_span(w1, (tfb_host_span_kind)7, 5, 1, 2),
                     TFB_EINVAL);
    assert_int_equal(tfb_trace_store_flush(s), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    assert_int_equal(tfb_trace_store_attach(w1, NULL), 0);
    assert_int_equal(tfb_trace_host_span(w1, TFB_HOST_SPAN_STEP, 6, 1, 2),
                     TFB_ESTATE);
    assert_int_equal(tfb_trace_store_close(s), 0);

    sqlite3 *db = open_ro(path);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM TFB_HOST_SPANS"), 2);
    assert_int_equal(q_int(db, "SELECT end - start FROM TFB_HOST_SPANS WHERE "
                               "kind = 'step' AND step = 5"),
                     800);
    assert_int_equal(q_int(db, "SELECT end FROM TFB_HOST_SPANS WHERE "
                               "kind = 'input'"),
                     300);
    assert_int_equal(q_int(db, "SELECT globalTid >> 24 FROM TFB_HOST_SPANS "
                               "LIMIT 1"),
                     (int64_t)getpid());
    sqlite3_close(db);
    tu_rmtree(dir);
    free(dir);
}

static void test_queue_cap_and_bad_args(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    tfb_trace_store_opts o = {0};
    o.commit_interval_ms = 60000; /* nothing commits on its own */
    o.batch_rows = 8;
    o.max_queued_rows = 8;
    assert_int_equal(tfb_trace_store_open(&s, dir, &o), 0);
    /* Let the writer take the META rows, so the queue starts empty. */
    assert_int_equal(tfb_trace_store_flush(s), 0);
    tfb_trace_row rows[9];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 9; i++) {
        rows[i].table = TFB_TT_OVERHEAD;
        rows[i].c[TFB_OV_START] = i;
        rows[i].c[TFB_OV_END] = i + 1;
    }
    /* Non-blocking push past the cap: dropped and counted. */
    assert_int_equal(tfb_trace_store_push(s, rows, 9, 0), TFB_EDROPPED);
    /* Blocking push of more than the cap goes in once the queue is empty. */
    assert_int_equal(tfb_trace_store_push(s, rows, 9, 1), 0);
    assert_int_equal(tfb_trace_store_flush(s), 0);
    tfb_trace_store_stats st;
    tfb_trace_store_get_stats(s, &st);
    assert_int_equal(st.rows_dropped, 9);
    tfb_trace_row bad;
    memset(&bad, 0, sizeof bad);
    bad.table = TFB_TT_COUNT_;
    assert_int_equal(tfb_trace_store_push(s, &bad, 1, 1), TFB_EINVAL);
    assert_int_equal(tfb_trace_store_push(NULL, rows, 1, 1), TFB_EINVAL);
    assert_int_equal(tfb_trace_store_intern(s, NULL), TFB_EINVAL);
    assert_int_equal(tfb_trace_store_meta(s, "k", NULL), TFB_EINVAL);
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    assert_int_equal(tfb_trace_store_close(s), 0);
    sqlite3 *db = open_ro(path);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM PROFILER_OVERHEAD"), 9);
    sqlite3_close(db);

    assert_int_equal(tfb_trace_store_close(NULL), 0);
    assert_int_equal(tfb_trace_store_open(NULL, dir, NULL), TFB_EINVAL);
    tfb_trace_store *none = NULL;
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/no/such/dir", dir);
    assert_true(tfb_trace_store_open(&none, missing, NULL) < 0);
    assert_null(none);
    tu_rmtree(dir);
    free(dir);
}


/* Expected value of kernel column c of the i-th kernel row pushed. Some
 * columns are NULL on some rows, some hold one value on every row of a
 * transaction (the store binds those once) and which ones changes from
 * one transaction to the next, the rest differ from row to row, so a
 * value that lands in the wrong column or row is seen. */
static int64_t kval(int i, int c)
{
    if (c == TFB_K_DEVICE)
        return 3;
    if (c == TFB_K_CONTEXT)
        return i < 300 ? 9 : i;
    if (c == TFB_K_LOCAL_MEM_PER_THREAD)
        return i < 300 ? TFB_TRACE_NULL : 1;
    if (c == TFB_K_GRAPH_NODE && (i < 300 || i % 2))
        return TFB_TRACE_NULL;
    if (c == TFB_K_MANGLED && i % 5 == 0)
        return TFB_TRACE_NULL;
    if (c == TFB_K_START)
        return INT64_C(1700000000000000000) + (int64_t)i * 1000;
    return (int64_t)i * 100 + c + (c == TFB_K_END ? INT64_C(1) << 40 : 0);
}

static void test_interleaved_batch(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    tfb_trace_store_opts o = {0};
    o.commit_interval_ms = 60000; /* one batch, taken at the flush */
    o.batch_rows = 100000;
    o.txn_rows = 900; /* about 300 rows of each table per transaction */
    o.file_name = "mix.sqlite";
    assert_int_equal(tfb_trace_store_open(&s, dir, &o), 0);
    assert_int_equal(tfb_trace_store_flush(s), 0); /* the initial META */
    tfb_trace_store_stats st0;
    tfb_trace_store_get_stats(s, &st0);

    /* Kernels, runtime calls and NVTX marks interleaved as a tracer queues
     * them, with META rows that replace each other in between. */
    enum { N = 2700 };
    tfb_trace_row *rows = calloc(N, sizeof *rows);
    char(*texts)[32] = calloc(N, sizeof *texts);
    assert_non_null(rows);
    assert_non_null(texts);
    int nk = 0, nr = 0, nn = 0, nm = 0;
    for (int i = 0; i < N; i++) {
        tfb_trace_row *r = &rows[i];
        if (i % 37 == 36) {
            r->table = TFB_TT_META;
            snprintf(texts[i], sizeof texts[i], "v%d", nm++);
            r->text = "mixkey";
            r->text2 = texts[i];
        } else if (i % 3 == 0) {
            r->table = TFB_TT_KERNEL;
            for (int c = 0; c < TFB_K_NCOLS_; c++)
                r->c[c] = kval(nk, c);
            nk++;
        } else if (i % 3 == 1) {
            r->table = TFB_TT_RUNTIME;
            r->c[TFB_RT_START] = i;
            r->c[TFB_RT_END] = i + 1;
            r->c[TFB_RT_EVENTCLASS] = 1;
            r->c[TFB_RT_CORRELATION] = nr++;
            r->c[TFB_RT_NAMEID] = i < 900 ? 0 : i;
            r->c[TFB_RT_CBID] = TFB_TRACE_NULL;
        } else {
            r->table = TFB_TT_NVTX;
            r->c[TFB_NV_START] = i;
            r->c[TFB_NV_END] = TFB_TRACE_NULL;
            r->c[TFB_NV_EVENTTYPE] = TFB_NVTX_MARK;
            r->c[TFB_NV_RANGEID] = nn;
            r->c[TFB_NV_TEXTID] = TFB_TRACE_NULL;
            snprintf(texts[i], sizeof texts[i], "mark %d", nn++);
            r->text = texts[i];
        }
    }
    assert_int_equal(tfb_trace_store_push(s, rows, N, 1), 0);
    memset(texts, 'X', N * sizeof *texts - 1); /* the store copied them */
    assert_int_equal(tfb_trace_store_flush(s), 0);
    tfb_trace_store_stats st;
    tfb_trace_store_get_stats(s, &st);
    assert_int_equal(st.rows_written, st.rows_queued);
    assert_int_equal(st.transactions - st0.transactions, N / 900);

    /* Read while the store still has the file open (WAL). */
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    sqlite3 *db = open_ro(path);
    sqlite3_stmt *q = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT start, end, deviceId, contextId, streamId,"
                           " correlationId, globalPid, demangledName,"
                           " shortName, gridX, gridY, gridZ, blockX, blockY,"
                           " blockZ, registersPerThread, staticSharedMemory,"
                           " dynamicSharedMemory, localMemoryPerThread,"
                           " gridId, launchType, graphNodeId, mangledName"
                           " FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid",
                           -1, &q, NULL),
        SQLITE_OK);
    int k = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        assert_true(k < nk);
        for (int c = 0; c < TFB_K_NCOLS_; c++) {
            int64_t want = kval(k, c);
            if (want == TFB_TRACE_NULL)
                assert_int_equal(sqlite3_column_type(q, c), SQLITE_NULL);
            else
                assert_int_equal(sqlite3_column_int64(q, c), want);
        }
        k++;
    }
    sqlite3_finalize(q);
    assert_int_equal(k, nk);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
                               " WHERE cbid IS NULL AND eventClass = 1"),
                     nr);
    /* Each table's rows keep their queue order. */
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
                               " WHERE correlationId != rowid - 1"),
                     0);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM NVTX_EVENTS WHERE"
                               " text != 'mark ' || rangeId OR end IS NOT NULL"),
                     0);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM NVTX_EVENTS"), nn);
    char buf[64], want[64];
    snprintf(want, sizeof want, "v%d", nm - 1); /* the last one wins */
    q_text(db, "SELECT value FROM META WHERE key = 'mixkey'", buf, sizeof buf);
    assert_string_equal(buf, want);
    /* The writer's virtual table never reaches the file's schema. */
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE"
                               " sql LIKE '%tfb_rows%'"),
                     0);
    sqlite3_close(db);
    assert_int_equal(tfb_trace_store_close(s), 0);
    free(rows);
    free(texts);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_schema_meta),
        cmocka_unit_test(test_rows_and_strings),
        cmocka_unit_test(test_host_spans),
        cmocka_unit_test(test_queue_cap_and_bad_args),
        cmocka_unit_test(test_interleaved_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
