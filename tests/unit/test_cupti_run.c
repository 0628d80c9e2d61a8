/*
 * test_cupti_run.c - the whole tracing path without a GPU: tfb_gpu_trace_
 * start/stop with a stand-in libcupti (test_cupti_fakelib.c, given as
 * argv[1]) that hands queued records over in the tracer's own buffers when
 * the tracer flushes; the records are walked by the real libcupti. Checks
 * what CUPTI is asked to enable, the trace store's rows, host spans from
 * the step timer, the gpu/<device>/utilization scalars in the event file,
 * the buffer cap (drop and count), one tracer per process, and the
 * finalize at stop. Skips (77) when the real libcupti cannot be loaded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/cupti_internal.h"
#include "test_util.h"
#include "collector/writer_internal.h"

static const char *g_fake_path;
static void (*fake_reset)(void);
static int (*fake_queue)(const void *, size_t);
static void (*fake_state)(int *, int, int *, int *, int *, int *);

static void queue_kernel(const char *name, uint32_t dev, int64_t s, int64_t e,
                         uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.deviceId = dev;
    k.contextId = 1;
    k.streamId = 7;
    k.start = (uint64_t)s;
    k.end = (uint64_t)e;
    k.correlationId = corr;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = k.blockY = k.blockZ = 1;
    assert_int_equal(fake_queue(&k, sizeof k), 0);
}

static void sleep_until(int64_t t_ns)
{
    for (;;) {
        int64_t now = tfb_now_ns();
        if (now >= t_ns)
            return;
        struct timespec ts = {0, (long)((t_ns - now) < 5000000 ? t_ns - now
                                                                : 5000000)};
        nanosleep(&ts, NULL);
    }
}

static char *trace_file(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *found = NULL;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".trace.sqlite") &&
            !strstr(e->d_name, "-wal") && !strstr(e->d_name, "-shm")) {
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            found = malloc(n);
            snprintf(found, n, "%s/%s", dir, e->d_name);
        }
    closedir(d);
    return found;
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

/* Values of gpu/0/utilization by step, read back with the library's
 * reader. Returns how many steps were found (n <= cap). */
static int read_util(const char *dir, double *v, int cap)
{
    char *path = tu_find_event_file(dir);
    assert_non_null(path);
    tfb_reader *r = NULL;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    int n = 0;
    tfb_event ev;
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value val;
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &val) == 1) {
            if (val.tag.len == 17 &&
                memcmp(val.tag.ptr, "gpu/0/utilization", 17) == 0 &&
                val.kind == TFB_VALUE_SCALAR && ev.step >= 0 && ev.step < cap) {
                v[ev.step] = val.scalar;
                if (ev.step + 1 > n)
                    n = (int)ev.step + 1;
            }
        }
    }
    tfb_reader_close(r);
    free(path);
    return n;
}

static void test_full_run(void **state)
{
    (void)state;
    fake_reset();
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    /* Records are queued before start and handed over at the tracer's
     * first flush; their times are relative to t_ref, taken just before
     * start (the utilization buckets begin a little after it: each kernel
     * sits wholly inside one 50 ms bucket whatever that small offset). */
    int64_t t_ref = tfb_now_ns();
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = 0;
    d.name = "Fake GPU";
    d.numMultiprocessors = 8;
    assert_int_equal(fake_queue(&d, sizeof d), 0);
    queue_kernel("_Z4gemmv", 0, t_ref + 10000000, t_ref + 40000000, 1);
    queue_kernel("_Z4reluv", 0, t_ref + 110000000, t_ref + 135000000, 2);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.bytes = 1000;
    m.start = (uint64_t)(t_ref + 1000000);
    m.end = (uint64_t)(t_ref + 2000000);
    assert_int_equal(fake_queue(&m, sizeof m), 0);

    tfb_gpu_opts o;
    tfb_gpu_opts_init(&o);
    o.cupti_path = g_fake_path;
    o.flush_interval_ms = 10;
    o.utilization_interval_ms = 50;
    o.buffer_bytes = 65536;
    o.max_buffers = 4;
    int rc = tfb_gpu_trace_start(w, &o);
    if (rc)
        fail_msg("start: %s: %s", tfb_strerror(rc), tfb_gpu_trace_error(w));
    assert_int_equal(tfb_gpu_trace_start(w, &o), TFB_ESTATE);

    int en[64], rt, fin, fl, forced;
    fake_state(en, 64, &rt, &fin, &fl, &forced);
    assert_true(en[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
    assert_false(en[CUPTI_ACTIVITY_KIND_KERNEL]); /* it serializes kernels */
    assert_true(en[CUPTI_ACTIVITY_KIND_MEMCPY] && en[CUPTI_ACTIVITY_KIND_MEMSET]);
    assert_true(en[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]);
    assert_true(en[CUPTI_ACTIVITY_KIND_MARKER] && en[CUPTI_ACTIVITY_KIND_OVERHEAD]);
    /* Runtime calls: chosen ids only, not the whole RUNTIME kind. */
    assert_true(rt > 10);
    assert_false(en[CUPTI_ACTIVITY_KIND_RUNTIME]);

    /* One tracing writer per process. */
    char *dir2 = tu_mkdtemp();
    tfb_writer *w2 = NULL;
    assert_int_equal(tfb_writer_open(&w2, dir2, NULL), 0);
    assert_int_equal(tfb_gpu_trace_start(w2, &o), TFB_EBUSY);
    assert_non_null(strstr(tfb_gpu_trace_error(w2), "another writer"));
    assert_int_equal(tfb_writer_close(w2), 0);
    tu_rmtree(dir2);
    free(dir2);

    /* The step timer's spans go to the store while tracing runs. */
    assert_int_equal(tfb_step_begin(w, 1), 0);
    assert_int_equal(tfb_input_begin(w), 0);
    assert_int_equal(tfb_input_end(w), 0);
    assert_int_equal(tfb_step_end(w), 0);

    sleep_until(t_ref + 320000000);
    assert_int_equal(tfb_gpu_trace_stop(w), 0);
    assert_int_equal(tfb_gpu_trace_stop(w), 0); /* idempotent */
    fake_state(en, 64, &rt, &fin, &fl, &forced);
    assert_int_equal(fin, 1);
    assert_int_equal(forced, 1);
    assert_true(fl >= 2); /* a periodic flush ran, then the forced one */
    assert_false(en[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
    assert_int_equal(rt, 0);

    tfb_gpu_stats st;
    tfb_gpu_stats_init(&st);
    assert_int_equal(tfb_gpu_trace_get_stats(w, &st), 0);
    assert_int_equal(st.kernels, 2);
    assert_int_equal(st.memcpys, 1);
    assert_int_equal(st.records_dropped, 0);
    assert_int_equal(st.buffers_completed, 1);
    assert_int_equal(st.sticky_error, 0);
    assert_int_equal(tfb_writer_close(w), 0);

    char *path = trace_file(dir);
    assert_non_null(path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
                     2);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT MIN(start) - %lld FROM CUPTI_ACTIVITY_KIND_KERNEL",
             (long long)t_ref);
    assert_int_equal(q_int(db, sql), 10000000);
    assert_int_equal(q_int(db, "SELECT bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY"),
                     1000);
    assert_int_equal(q_int(db, "SELECT smCount FROM TARGET_INFO_GPU WHERE id=0"),
                     8);
    assert_int_equal(q_int(db, "SELECT COUNT(*) FROM TFB_HOST_SPANS WHERE "
                               "step = 1 AND kind IN ('step', 'input')"),
                     2);
    assert_int_equal(q_int(db, "SELECT CAST(value AS INTEGER) FROM META WHERE "
                               "key = 'cupti_version'"),
                     CUPTI_API_VERSION);
    sqlite3_close(db);
    free(path);

    /* Utilization: bucket 0 holds 30 of 50 ms, bucket 2 25 of 50 ms. */
    double v[64];
    memset(v, 0xff, sizeof v);
    int n = read_util(dir, v, 64);
    for (int i = 0; i < n; i++)
        if (n < 6 || v[i] != (i == 0 ? (double)0.6f : i == 2 ? 0.5 : 0.0))
            fprintf(stderr, "util[%d] = %.9g\n", i, v[i]);
    assert_true(n >= 6);
    assert_true(v[0] == (double)0.6f);
    assert_true(v[1] == 0.0);
    assert_true(v[2] == 0.5);
    for (int i = 3; i < n; i++)
        assert_true(v[i] == 0.0);
    tu_rmtree(dir);
    free(dir);
}

static void test_buffer_cap(void **state)
{
    (void)state;
    fake_reset();
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    int64_t t = tfb_now_ns();
    for (int i = 0; i < 30; i++)
        queue_kernel("_Z4gemmv", 0, t + i * 1000, t + i * 1000 + 500,
                     (uint32_t)i);
    tfb_gpu_opts o;
    tfb_gpu_opts_init(&o);
    o.cupti_path = g_fake_path;
    o.flush_interval_ms = 10;
    o.buffer_bytes = 4096; /* 18 kernel records */
    o.max_buffers = 1;
    assert_int_equal(tfb_gpu_trace_start(w, &o), 0);
    /* Wait for the tracer's own periodic flush (its thread is then busy
     * in the flush and cannot give the buffer back), however loaded the
     * machine is; stop's forced flush would race with that thread. */
    int en[64], rt, fin, fl = 0, forced;
    for (int i = 0; i < 2000 && fl == 0; i++) {
        sleep_until(tfb_now_ns() + 5000000);
        fake_state(en, 64, &rt, &fin, &fl, &forced);
    }
    assert_true(fl >= 1);
    assert_int_equal(tfb_gpu_trace_stop(w), 0);
    tfb_gpu_stats st;
    tfb_gpu_stats_init(&st);
    assert_int_equal(tfb_gpu_trace_get_stats(w, &st), 0);
    /* The one buffer was still being walked when the next was asked
     * for: the rest were dropped and counted, memory stayed bounded. */
    assert_int_equal(st.kernels, 4096 / sizeof(CUpti_ActivityKernel10));
    assert_int_equal(st.records_dropped,
                     30 - 4096 / sizeof(CUpti_ActivityKernel10));
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    void *real = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!real) {
        fprintf(stderr, "skip: no libcupti.so.13\n");
        return 77;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s FAKE_CUPTI_SO\n", argv[0]);
        return 2;
    }
    g_fake_path = argv[1];
    void *h = dlopen(g_fake_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cannot load %s: %s\n", g_fake_path, dlerror());
        return 1;
    }
    *(void **)&fake_reset = dlsym(h, "fake_cupti_reset");
    *(void **)&fake_queue = dlsym(h, "fake_cupti_queue");
    *(void **)&fake_state = dlsym(h, "fake_cupti_state");
    if (!fake_reset || !fake_queue || !fake_state)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_run),
        cmocka_unit_test(test_buffer_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
