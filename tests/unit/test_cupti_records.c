/*
 * test_cupti_records.c - the record-processing path without a GPU: hand-built
 * CUpti_ActivityKernel10 / Memcpy6 / Memset4 / API / Marker2 /
 * Synchronization2 / Overhead3 / Device5 records in an aligned buffer, walked
 * by the real libcupti (cuptiActivityGetNextRecord) into the trace store;
 * rows, names, times and utilization figures are checked exactly. Also the
 * utilization tracker on its own. Skips (77) only when libcupti cannot be
 * loaded at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/cupti_internal.h"
#include "test_util.h"

static tfb_cupti_api g_api;
static const int64_t B = INT64_C(1700000000000000000); /* epoch ns */

/* ------------------------------------------------------------------------
 * Buffer building
 * ---------------------------------------------------------------------- */
typedef struct buf {
    alignas(8) uint8_t data[1 << 16];
    size_t len;
} buf;

static void put(buf *b, const void *rec, size_t n)
{
    assert_true(b->len + n <= sizeof b->data);
    memcpy(b->data + b->len, rec, n);
    b->len += n;
}

static void put_kernel(buf *b, const char *name, uint32_t dev, uint32_t stream,
                       int64_t start, int64_t end, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.deviceId = dev;
    k.contextId = 1;
    k.streamId = stream;
    k.start = (uint64_t)start;
    k.end = (uint64_t)end;
    k.correlationId = corr;
    k.gridX = 4;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 128;
    k.dynamicSharedMemory = 1024;
    put(b, &k, sizeof k);
}

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

static void q_text(sqlite3 *db, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("prepare failed: %s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(out, cap, "%s", t ? (const char *)t : "(null)");
    sqlite3_finalize(st);
}

typedef struct util_log {
    int n;
    uint32_t dev[64];
    int64_t bucket[64], end[64];
    double busy[64];
} util_log;

static void on_util(void *user, uint32_t device, int64_t bucket,
                    int64_t bucket_end_ns, double busy)
{
    util_log *l = user;
    assert_true(l->n < 64);
    l->dev[l->n] = device;
    l->bucket[l->n] = bucket;
    l->end[l->n] = bucket_end_ns;
    l->busy[l->n] = busy;
    l->n++;
}

/* ------------------------------------------------------------------------
 * Tests
 * ---------------------------------------------------------------------- */
static void test_walk_all_kinds(void **state)
{
    (void)state;
    static buf b;
    memset(&b, 0, sizeof b);
    const char *vec_add = "_Z6vecAddPKfS0_Pfi"; /* shared, as CUPTI does */

    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = 0;
    d.name = "Test GPU";
    d.numMultiprocessors = 132;
    d.globalMemorySize = UINT64_C(80) << 30;
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    put(&b, &d, sizeof d);

    /* Two overlapping kernels on two streams, then one later. */
    put_kernel(&b, vec_add, 0, 7, B + 1000, B + 1500, 11);
    put_kernel(&b, vec_add, 0, 8, B + 1200, B + 2000, 12);
    put_kernel(&b, "plain_c_kernel", 0, 7, B + 3000, B + 3500, 13);

    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 4096;
    m.start = (uint64_t)(B + 100);
    m.end = (uint64_t)(B + 600);
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = 7;
    m.correlationId = 10;
    put(&b, &m, sizeof m);

    CUpti_ActivityMemset4 ms;
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.value = 0;
    ms.bytes = 65536;
    ms.start = (uint64_t)(B + 700);
    ms.end = (uint64_t)(B + 800);
    ms.deviceId = 0;
    ms.contextId = 1;
    ms.streamId = 7;
    ms.correlationId = 9;
    put(&b, &ms, sizeof ms);

    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = (uint64_t)(B + 900);
    a.end = (uint64_t)(B + 950);
    a.processId = 4242;
    a.threadId = 77;
    a.correlationId = 11;
    put(&b, &a, sizeof a);

    CUpti_ActivityMarker2 mk;
    memset(&mk, 0, sizeof mk);
    mk.kind = CUPTI_ACTIVITY_KIND_MARKER;
    mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    mk.timestamp = (uint64_t)(B + 50);
    mk.id = 5;
    mk.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    mk.objectId.pt.processId = 4242;
    mk.objectId.pt.threadId = 77;
    mk.name = "forward";
    put(&b, &mk, sizeof mk);
    mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
    mk.timestamp = (uint64_t)(B + 60);
    mk.id = 6;
    mk.name = "checkpoint";
    put(&b, &mk, sizeof mk);
    mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    mk.timestamp = (uint64_t)(B + 4000);
    mk.id = 5;
    mk.name = NULL;
    put(&b, &mk, sizeof mk);
    mk.id = 99; /* END whose START was never seen: skipped */
    put(&b, &mk, sizeof mk);

    CUpti_ActivitySynchronization2 sy;
    memset(&sy, 0, sizeof sy);
    sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sy.start = (uint64_t)(B + 2100);
    sy.end = (uint64_t)(B + 2200);
    sy.contextId = 1;
    sy.streamId = 7;
    sy.cudaEventId = (uint32_t)-1;
    sy.correlationId = 14;
    put(&b, &sy, sizeof sy);

    CUpti_ActivityOverhead3 ov;
    memset(&ov, 0, sizeof ov);
    ov.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    ov.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    ov.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    ov.objectId.pt.processId = 4242;
    ov.objectId.pt.threadId = 78;
    ov.start = (uint64_t)(B + 5000);
    ov.end = (uint64_t)(B + 5100);
    put(&b, &ov, sizeof ov);

    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    tfb_trace_store_opts o = {0};
    o.file_name = "walk.trace.sqlite";
    assert_int_equal(tfb_trace_store_open(&s, dir, &o), 0);
    tfb_gpu_util *u = tfb_gpu_util_new(B, 1000);
    assert_non_null(u);
    tfb_cupti_proc *p = NULL;
    assert_int_equal(tfb_cupti_proc_new(&p, &g_api, s, u), 0);

    int64_t n = tfb_cupti_process_buffer(p, b.data, b.len);
    assert_int_equal(n, 13); /* every record, found by the library's walk */
    tfb_cupti_counts c;
    tfb_cupti_proc_counts(p, &c);
    assert_int_equal(c.kernels, 3);
    assert_int_equal(c.memcpys, 1);
    assert_int_equal(c.memsets, 1);
    assert_int_equal(c.api_calls, 1);
    assert_int_equal(c.markers, 2);
    assert_int_equal(c.syncs, 1);
    assert_int_equal(c.overheads, 1);
    assert_int_equal(c.devices, 1);
    assert_int_equal(c.other, 1); /* the orphan END */

    /* Utilization over 1000 ns buckets: [0,1000) idle, [1000,2000) busy
     * (two overlapping kernels counted once), [2000,3000) idle,
     * [3000,4000) half. */
    util_log ul = {0};
    tfb_gpu_util_emit_until(u, B + 4000, on_util, &ul);
    assert_int_equal(ul.n, 4);
    const double want[4] = {0.0, 1.0, 0.0, 0.5};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ul.dev[i], 0);
        assert_int_equal(ul.bucket[i], i);
        assert_int_equal(ul.end[i], B + 1000 * (i + 1));
        assert_true(ul.busy[i] == want[i]);
    }

    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    tfb_cupti_proc_free(p);
    tfb_gpu_util_free(u);
    assert_int_equal(tfb_trace_store_close(s), 0);

    sqlite3 *db = open_ro(path);
    char t[256];
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                     3);
    assert_int_equal(q_int(db, "SELECT SUM(end - start) FROM "
                               "CUPTI_ACTIVITY_KIND_KERNEL"),
                     500 + 800 + 500);
    assert_int_equal(q_int(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL "
                               "WHERE correlationId = 12"),
                     B + 1200);
    assert_int_equal(q_int(db, "SELECT gridX * gridY * blockX FROM "
                               "CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId "
                               "= 11"),
                     4 * 2 * 256);
    assert_int_equal(q_int(db, "SELECT registersPerThread + staticSharedMemory"
                               " + dynamicSharedMemory FROM "
                               "CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId "
                               "= 11"),
                     32 + 128 + 1024);
    assert_int_equal(q_int(db, "SELECT globalPid >> 24 FROM "
                               "CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1"),
                     (int64_t)getpid());
    /* Names through StringIds, as in nsys exports. */
    q_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds"
               " s ON s.id = k.shortName WHERE k.correlationId = 12",
           t, sizeof t);
    assert_string_equal(t, "vecAdd");
    q_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds"
               " s ON s.id = k.mangledName WHERE k.correlationId = 12",
           t, sizeof t);
    assert_string_equal(t, "_Z6vecAddPKfS0_Pfi");
    q_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds"
               " s ON s.id = k.demangledName WHERE k.correlationId = 12",
           t, sizeof t);
    if (g_api.demangle)
        assert_string_equal(t, "vecAdd(float const*, float const*, float*, int)");
    else
        assert_string_equal(t, "_Z6vecAddPKfS0_Pfi");
    q_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds"
               " s ON s.id = k.demangledName WHERE k.correlationId = 13",
           t, sizeof t);
    assert_string_equal(t, "plain_c_kernel");
    /* One string per distinct name: vecAdd's three, plain_c_kernel once,
     * cudaLaunchKernel, forward, checkpoint. */
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM StringIds WHERE value = "
                               "'_Z6vecAddPKfS0_Pfi'"),
                     1);

    assert_int_equal(q_int(db, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"),
                     4096);
    assert_int_equal(q_int(db, "SELECT copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"),
                     CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    q_text(db, "SELECT e.label FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN "
               "ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind",
           t, sizeof t);
    assert_string_equal(t, "Host-to-Device");
    assert_int_equal(q_int(db, "SELECT end - start FROM "
                               "CUPTI_ACTIVITY_KIND_MEMCPY"),
                     500);
    assert_int_equal(q_int(db, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMSET"),
                     65536);
    assert_int_equal(q_int(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_MEMSET"),
                     B + 700);

    q_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
               "StringIds s ON s.id = r.nameId",
           t, sizeof t);
    assert_non_null(strstr(t, "cudaLaunchKernel"));
    assert_int_equal(q_int(db, "SELECT correlationId FROM "
                               "CUPTI_ACTIVITY_KIND_RUNTIME"),
                     11);
    assert_int_equal(q_int(db, "SELECT globalTid FROM "
                               "CUPTI_ACTIVITY_KIND_RUNTIME"),
                     (INT64_C(4242) << 24) | 77);

    /* NVTX: the range closed at its END; the mark has no end. */
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM NVTX_EVENTS"), 2);
    q_text(db, "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id ="
               " n.textId WHERE n.eventType = 59",
           t, sizeof t);
    assert_string_equal(t, "forward");
    assert_int_equal(q_int(db, "SELECT end - start FROM NVTX_EVENTS WHERE "
                               "eventType = 59"),
                     3950);
    assert_int_equal(q_int(db, "SELECT end IS NULL FROM NVTX_EVENTS WHERE "
                               "eventType = 34"),
                     1);
    q_text(db, "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id ="
               " n.textId WHERE n.eventType = 34",
           t, sizeof t);
    assert_string_equal(t, "checkpoint");

    /* The sync learned its device from the kernels' context. */
    assert_int_equal(q_int(db, "SELECT deviceId FROM "
                               "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
                     0);
    assert_int_equal(q_int(db, "SELECT eventId IS NULL FROM "
                               "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
                     1);
    assert_int_equal(q_int(db, "SELECT syncType FROM "
                               "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
                     CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
    assert_int_equal(q_int(db, "SELECT end - start FROM PROFILER_OVERHEAD"),
                     100);
    assert_int_equal(q_int(db, "SELECT overheadKind FROM PROFILER_OVERHEAD"),
                     CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH);
    q_text(db, "SELECT name FROM TARGET_INFO_GPU WHERE id = 0", t, sizeof t);
    assert_string_equal(t, "Test GPU");
    assert_int_equal(q_int(db, "SELECT smCount FROM TARGET_INFO_GPU"), 132);
    sqlite3_close(db);
    tu_rmtree(dir);
    free(dir);
}

static void test_walk_many_buffers(void **state)
{
    (void)state;
    /* 2000 kernels over several buffers: names cached, rows batched. */
    static buf b;
    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    assert_int_equal(tfb_trace_store_open(&s, dir, NULL), 0);
    tfb_cupti_proc *p = NULL;
    assert_int_equal(tfb_cupti_proc_new(&p, &g_api, s, NULL), 0);
    const char *names[3] = {"_Z4gemmv", "_Z4reluv", "_ZN2ns7softmaxIfEEvPT_"};
    int64_t total = 0;
    for (int round = 0; round < 10; round++) {
        memset(&b, 0, sizeof b);
        for (int i = 0; i < 200; i++) {
            int64_t st = B + (round * 200 + i) * 100;
            put_kernel(&b, names[i % 3], (uint32_t)(i % 2), 1, st, st + 50,
                       (uint32_t)(round * 200 + i));
        }
        int64_t n = tfb_cupti_process_buffer(p, b.data, b.len);
        assert_int_equal(n, 200);
        total += n;
    }
    assert_int_equal(tfb_trace_store_flush(s), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    tfb_cupti_proc_free(p);
    assert_int_equal(tfb_trace_store_close(s), 0);
    sqlite3 *db = open_ro(path);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                     total);
    assert_int_equal(q_int(db, "SELECT COUNT(DISTINCT correlationId) FROM "
                               "CUPTI_ACTIVITY_KIND_KERNEL"),
                     total);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM StringIds"), 9);
    char t[128];
    q_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds"
               " s ON s.id = k.shortName WHERE k.correlationId = 2",
           t, sizeof t);
    assert_string_equal(t, "softmax");
    sqlite3_close(db);
    /* An empty buffer walks to nothing. */
    tu_rmtree(dir);
    free(dir);
}

static void test_incomplete_records(void **state)
{
    (void)state;
    /* A forced flush hands over records of activities still running: no
     * end time yet. They are skipped, not stored with a negative length. */
    static buf b;
    memset(&b, 0, sizeof b);
    put_kernel(&b, "_Z4gemmv", 0, 1, B + 100, 0, 1);
    put_kernel(&b, "_Z4gemmv", 0, 1, 0, 0, 2);
    put_kernel(&b, "_Z4gemmv", 0, 1, B + 100, B + 300, 3);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.start = (uint64_t)(B + 10);
    put(&b, &m, sizeof m);
    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    assert_int_equal(tfb_trace_store_open(&s, dir, NULL), 0);
    tfb_gpu_util *u = tfb_gpu_util_new(B, 1000);
    tfb_cupti_proc *p = NULL;
    assert_int_equal(tfb_cupti_proc_new(&p, &g_api, s, u), 0);
    assert_int_equal(tfb_cupti_process_buffer(p, b.data, b.len), 4);
    tfb_cupti_counts c;
    tfb_cupti_proc_counts(p, &c);
    assert_int_equal(c.kernels, 1);
    assert_int_equal(c.memcpys, 0);
    assert_int_equal(c.other, 3);
    util_log ul = {0};
    tfb_gpu_util_emit_until(u, B + 1000, on_util, &ul);
    assert_int_equal(ul.n, 1);
    assert_true(ul.busy[0] == 0.2);
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    tfb_cupti_proc_free(p);
    tfb_gpu_util_free(u);
    assert_int_equal(tfb_trace_store_close(s), 0);
    sqlite3 *db = open_ro(path);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                     1);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"),
                     0);
    sqlite3_close(db);
    tu_rmtree(dir);
    free(dir);
}

static void test_short_names(void **state)
{
    (void)state;
    char out[128];
    struct {
        const char *in, *want;
    } cases[] = {
        {"vecAdd(float const*, float const*, float*, int)", "vecAdd"},
        {"void ns::gemm<float, 128>(float*, int)", "gemm"},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::"
         "FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::"
         "FillFunctor<float>, std::array<char*, 1ul>)",
         "vectorized_elementwise_kernel"},
        {"plain_c_kernel", "plain_c_kernel"},
        {"ns::Outer<int>::inner(int)", "inner"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tfb_cupti_short_name(cases[i].in, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
    tfb_cupti_short_name("abcdefgh", out, 4);
    assert_string_equal(out, "abc");
}

static void test_utilization_tracker(void **state)
{
    (void)state;
    assert_null(tfb_gpu_util_new(0, 0));
    tfb_gpu_util *u = tfb_gpu_util_new(1000, 100);
    assert_non_null(u);
    assert_int_equal(tfb_gpu_util_add_device(u, 3), 0);
    /* Kernel spanning two buckets; kernels out of order; nested ones. */
    assert_int_equal(tfb_gpu_util_add(u, 1, 1150, 1250), 0);
    assert_int_equal(tfb_gpu_util_add(u, 1, 1000, 1010), 0);
    assert_int_equal(tfb_gpu_util_add(u, 1, 1160, 1170), 0);
    assert_int_equal(tfb_gpu_util_add(u, 1, 1005, 1020), 0);
    assert_int_equal(tfb_gpu_util_add(u, 1, 10, 5), TFB_EINVAL);
    util_log l = {0};
    tfb_gpu_util_emit_until(u, 1199, on_util, &l); /* bucket 1 not done */
    /* Devices in id order: 1 then 3 (registered, idle). */
    assert_int_equal(l.n, 2);
    assert_int_equal(l.dev[0], 1);
    assert_true(fabs(l.busy[0] - 0.2) < 1e-12); /* [1000,1020) */
    assert_int_equal(l.dev[1], 3);
    assert_true(l.busy[1] == 0.0);
    /* Late: a kernel in the emitted bucket 0 only counts its tail. */
    assert_int_equal(tfb_gpu_util_add(u, 1, 1090, 1110), 0);
    assert_int_equal(tfb_gpu_util_late_ns(u), 10);
    l.n = 0;
    tfb_gpu_util_emit_until(u, 1200, on_util, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.bucket[0], 1);
    assert_int_equal(l.end[0], 1200);
    /* [1100,1110) + [1150,1200) = 60 of 100. */
    assert_true(fabs(l.busy[0] - 0.6) < 1e-12);
    /* finish: the kernel's tail [1200,1250) in a partial last bucket that
     * ends at t = 1240 (the kernel ends later: t moves to 1250). */
    l.n = 0;
    tfb_gpu_util_finish(u, 1240, on_util, &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.dev[0], 1);
    assert_int_equal(l.end[0], 1250);
    assert_true(l.busy[0] == 1.0);
    assert_true(l.busy[1] == 0.0);
    tfb_gpu_util_free(u);
    tfb_gpu_util_free(NULL);
}

static void test_bad_args(void **state)
{
    (void)state;
    tfb_cupti_proc *p = NULL;
    assert_int_equal(tfb_cupti_proc_new(&p, &g_api, NULL, NULL), TFB_EINVAL);
    assert_int_equal(tfb_cupti_process_buffer(NULL, NULL, 0), TFB_EINVAL);
    tfb_cupti_api none;
    char msg[256];
    assert_int_equal(tfb_cupti_load(&none, "/nonexistent/libcupti.so.13", msg,
                                    sizeof msg),
                     TFB_ENOCUPTI);
    assert_non_null(strstr(msg, "/nonexistent/libcupti.so.13"));
    /* A library that is not CUPTI: found, but it lacks the symbols. */
    assert_int_equal(tfb_cupti_load(&none, "libm.so.6", msg, sizeof msg),
                     TFB_ENOCUPTI);
    assert_non_null(strstr(msg, "lacks cupti"));
    assert_int_equal(tfb_cupti_map_error(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
                     TFB_EBUSY);
    assert_int_equal(tfb_cupti_map_error(CUPTI_ERROR_UNKNOWN), TFB_ENOGPU);
    assert_int_equal(tfb_cupti_map_error(CUPTI_ERROR_NOT_INITIALIZED),
                     TFB_ENOGPU);
    assert_int_equal(tfb_cupti_map_error(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
                     TFB_EACCES);
}

/* ------------------------------------------------------------------------
 * GPU memory (issue 13): Memory4 and MemoryPool3 records
 * ---------------------------------------------------------------------- */
static void put_mem(buf *b, int op, uint64_t addr, uint64_t bytes,
                    uint32_t dev, uint32_t stream, int64_t ts, uint32_t corr,
                    int pool_type, uint64_t pool_addr)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = (CUpti_ActivityMemoryOperationType)op;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = corr;
    m.address = addr;
    m.bytes = bytes;
    m.timestamp = (uint64_t)ts;
    m.PC = 0;
    m.processId = 4242;
    m.deviceId = dev;
    m.contextId = 3;
    m.streamId = stream;
    m.isAsync = pool_type != 0;
    m.memoryPoolConfig.memoryPoolType = (CUpti_ActivityMemoryPoolType)pool_type;
    if (pool_type == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
        m.memoryPoolConfig.address = pool_addr;
        m.memoryPoolConfig.releaseThreshold = 1 << 20;
        m.memoryPoolConfig.pool.size = UINT64_C(64) << 20;
        m.memoryPoolConfig.utilizedSize = bytes;
    }
    put(b, &m, sizeof m);
}

static void test_memory_records(void **state)
{
    (void)state;
    static buf b;
    memset(&b, 0, sizeof b);
    const uint64_t A = UINT64_C(0x7f1200000000);
    put_mem(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, A, 4096, 0, 7,
            B + 100, 21, 0, 0);
    put_mem(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, A + 8192,
            UINT64_C(3) << 30, 1, 9, B + 200, 22, 0, 0);
    put_mem(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, A, 4096, 0, 7,
            B + 300, 23, 0, 0);
    put_mem(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
            UINT64_C(0x7f3000000000), 1000, 0, 13, B + 400, 24,
            CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL, UINT64_C(0x7f3000000000));
    /* A named static variable. */
    CUpti_ActivityMemory4 sv;
    memset(&sv, 0, sizeof sv);
    sv.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    sv.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    sv.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
    sv.address = A + 65536;
    sv.bytes = 256;
    sv.timestamp = (uint64_t)(B + 50);
    sv.PC = 0x1234;
    sv.name = "g_table";
    put(&b, &sv, sizeof sv);

    CUpti_ActivityMemoryPool3 mp;
    memset(&mp, 0, sizeof mp);
    mp.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    mp.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
    mp.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    mp.correlationId = 30;
    mp.processId = 4242;
    mp.deviceId = 0;
    mp.minBytesToKeep = 0;
    mp.address = UINT64_C(0x7f3000000000);
    mp.size = UINT64_C(64) << 20;
    mp.releaseThreshold = 1 << 20;
    mp.timestamp = (uint64_t)(B + 350);
    mp.utilizedSize = 0;
    put(&b, &mp, sizeof mp);
    mp.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
    mp.minBytesToKeep = 4096;
    mp.size = UINT64_C(32) << 20;
    mp.timestamp = (uint64_t)(B + 900);
    put(&b, &mp, sizeof mp);

    char *dir = tu_mkdtemp();
    tfb_trace_store *s = NULL;
    assert_int_equal(tfb_trace_store_open(&s, dir, NULL), 0);
    tfb_cupti_proc *p = NULL;
    assert_int_equal(tfb_cupti_proc_new(&p, &g_api, s, NULL), 0);
    assert_int_equal(tfb_cupti_process_buffer(p, b.data, b.len), 7);
    tfb_cupti_counts c;
    tfb_cupti_proc_counts(p, &c);
    assert_int_equal(c.memory, 5);
    assert_int_equal(c.memory_pools, 2);
    assert_int_equal(c.other, 0);
    assert_int_equal(tfb_trace_store_flush(s), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    tfb_cupti_proc_free(p);
    assert_int_equal(tfb_trace_store_close(s), 0);

    sqlite3 *db = open_ro(path);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS"),
                     5);
    /* Every column of the first allocation, exactly. */
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT start, globalPid, deviceId, contextId, "
                           "streamId, correlationId, address, pc, bytes, "
                           "memKind, memoryOperationType, name, isAsync, "
                           "memoryPoolType, localMemoryPoolAddress, "
                           "localMemoryPoolSize, importedMemoryPoolAddress "
                           "FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                           "correlationId = 21",
                           -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), B + 100);
    assert_int_equal(sqlite3_column_int64(st, 1), INT64_C(4242) << 24);
    assert_int_equal(sqlite3_column_int64(st, 2), 0);
    assert_int_equal(sqlite3_column_int64(st, 3), 3);
    assert_int_equal(sqlite3_column_int64(st, 4), 7);
    assert_int_equal(sqlite3_column_int64(st, 5), 21);
    assert_int_equal(sqlite3_column_int64(st, 6), (int64_t)A);
    assert_int_equal(sqlite3_column_type(st, 7), SQLITE_NULL);
    assert_int_equal(sqlite3_column_int64(st, 8), 4096);
    assert_int_equal(sqlite3_column_int64(st, 9),
                     CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(sqlite3_column_int64(st, 10), TFB_MEM_OP_ALLOCATION);
    assert_int_equal(sqlite3_column_type(st, 11), SQLITE_NULL);
    assert_int_equal(sqlite3_column_int64(st, 12), 0);
    for (int i = 13; i <= 16; i++)
        assert_int_equal(sqlite3_column_type(st, i), SQLITE_NULL);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);

    /* The release, the 3 GiB allocation on device 1, and the labels. */
    assert_int_equal(q_int(db, "SELECT memoryOperationType FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                               "correlationId = 23"),
                     TFB_MEM_OP_DEALLOCATION);
    assert_int_equal(q_int(db, "SELECT bytes FROM CUDA_GPU_MEMORY_USAGE_EVENTS"
                               " WHERE deviceId = 1"),
                     INT64_C(3) << 30);
    char t[128];
    q_text(db, "SELECT o.label FROM CUDA_GPU_MEMORY_USAGE_EVENTS e JOIN "
               "ENUM_CUDA_DEV_MEM_EVENT_OPER o ON o.id = e.memoryOperationType"
               " WHERE e.correlationId = 23",
           t, sizeof t);
    assert_string_equal(t, "Deallocation");
    /* Bytes in use on device 0 after the three plain events: 0. */
    assert_int_equal(q_int(db, "SELECT SUM(CASE memoryOperationType WHEN 0 "
                               "THEN bytes ELSE -bytes END) FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE deviceId"
                               " = 0 AND memKind = 3 AND memoryPoolType IS "
                               "NULL"),
                     0);
    /* Pool-backed allocation: the pool's fields. */
    assert_int_equal(q_int(db, "SELECT localMemoryPoolAddress FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                               "correlationId = 24"),
                     INT64_C(0x7f3000000000));
    assert_int_equal(q_int(db, "SELECT localMemoryPoolSize FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                               "correlationId = 24"),
                     INT64_C(64) << 20);
    assert_int_equal(q_int(db, "SELECT localMemoryPoolReleaseThreshold FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                               "correlationId = 24"),
                     1 << 20);
    assert_int_equal(q_int(db, "SELECT localMemoryPoolUtilizedSize FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                               "correlationId = 24"),
                     1000);
    assert_int_equal(q_int(db, "SELECT streamId FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                               "correlationId = 24"),
                     13);
    /* The static variable: name through StringIds, pc, memKind; no pid in
     * the record -> this process's globalPid. */
    q_text(db, "SELECT s.value FROM CUDA_GPU_MEMORY_USAGE_EVENTS e JOIN "
               "StringIds s ON s.id = e.name",
           t, sizeof t);
    assert_string_equal(t, "g_table");
    assert_int_equal(q_int(db, "SELECT pc FROM CUDA_GPU_MEMORY_USAGE_EVENTS "
                               "WHERE name IS NOT NULL"),
                     0x1234);
    assert_int_equal(q_int(db, "SELECT globalPid FROM "
                               "CUDA_GPU_MEMORY_USAGE_EVENTS WHERE name IS "
                               "NOT NULL"),
                     (int64_t)getpid() << 24);
    q_text(db, "SELECT k.label FROM CUDA_GPU_MEMORY_USAGE_EVENTS e JOIN "
               "ENUM_CUDA_MEM_KIND k ON k.id = e.memKind WHERE e.name IS NOT "
               "NULL",
           t, sizeof t);
    assert_string_equal(t, "Device Static");

    /* Pool events. */
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM "
                               "CUDA_GPU_MEMORY_POOL_EVENTS"),
                     2);
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "SELECT start, globalPid, deviceId, correlationId, "
                           "operationType, poolType, address, size, "
                           "releaseThreshold, utilizedSize, minBytesToKeep, "
                           "isManagedPool FROM CUDA_GPU_MEMORY_POOL_EVENTS "
                           "ORDER BY start",
                           -1, &st, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), B + 350);
    assert_int_equal(sqlite3_column_int64(st, 1), INT64_C(4242) << 24);
    assert_int_equal(sqlite3_column_int64(st, 2), 0);
    assert_int_equal(sqlite3_column_int64(st, 3), 30);
    assert_int_equal(sqlite3_column_int64(st, 4),
                     CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED);
    assert_int_equal(sqlite3_column_int64(st, 5),
                     CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL);
    assert_int_equal(sqlite3_column_int64(st, 6), INT64_C(0x7f3000000000));
    assert_int_equal(sqlite3_column_int64(st, 7), INT64_C(64) << 20);
    assert_int_equal(sqlite3_column_int64(st, 8), 1 << 20);
    assert_int_equal(sqlite3_column_int64(st, 9), 0);
    assert_int_equal(sqlite3_column_int64(st, 10), 0);
    assert_int_equal(sqlite3_column_int64(st, 11), 0);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), B + 900);
    assert_int_equal(sqlite3_column_int64(st, 4),
                     CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED);
    assert_int_equal(sqlite3_column_int64(st, 7), INT64_C(32) << 20);
    assert_int_equal(sqlite3_column_int64(st, 10), 4096);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    char msg[512];
    if (tfb_cupti_load(&g_api, NULL, msg, sizeof msg) != 0) {
        fprintf(stderr, "skip: %s\n", msg);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_all_kinds),
        cmocka_unit_test(test_walk_many_buffers),
        cmocka_unit_test(test_incomplete_records),
        cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_utilization_tracker),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_memory_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
