/*
 * test_gpu_analysis.c - the server's GPU analyses on small Kineto traces
 * written here: exact µs -> ns conversion, busy intervals (union per device
 * and over all devices), GPU idle time inside given intervals (what the
 * input-pipeline analysis lays against input waits), the timeline's
 * merging and truncation at a tiny max; SQLite trace files read safely
 * (views refused, row and time budgets, nothing written next to them);
 * every kind of kernel and runtime row value read as it is (names as
 * StringIds ids small and large, as text, unknown or NULL; one name with
 * two launch geometries; streams and devices that alternate);
 * the lane index against a brute-force count on random spans.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <sqlite3.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/gpu/gpu_analysis.h"
#include "test_util.h"
#include "trace/trace_internal.h"

/* Writes a Kineto trace with the given kernel events (ts/dur as µs text)
 * and loads it. */
static tfb_trace *load(const char *dir, const char *events)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/w.pt.trace.json", dir);
    char text[8192];
    int n = snprintf(text, sizeof text, "{\"traceEvents\": [%s]}", events);
    assert_int_equal(tu_write_file(path, text, (size_t)n), 0);
    char *paths[1] = {path};
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_non_null(t);
    assert_int_equal(t->files_read, 1);
    return t;
}

#define K(dev, ts, dur)                                                       \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":" #dev           \
    ",\"tid\":1,\"ts\":" ts ",\"dur\":" dur "}"

static void test_exact_ns(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_trace *t = load(dir, K(0, "1700000000000000.001",
                               "0.999") "," K(0, "1700000000000001", "2"));
    assert_int_equal(t->nspans, 2);
    assert_int_equal(t->spans[0].start, INT64_C(1700000000000000001));
    assert_int_equal(t->spans[0].end, INT64_C(1700000000000001000));
    assert_int_equal(t->spans[1].start, INT64_C(1700000000000001000));
    assert_int_equal(t->spans[1].end, INT64_C(1700000000000003000));
    tfb_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

static void test_busy_and_idle(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    /* dev 0: [0,10] [5,20] [30,40]; dev 1: [15,35] (ns). */
    tfb_trace *t =
        load(dir, K(0, "0.000", "0.010") "," K(0, "0.005", "0.015") "," K(
                      0, "0.030", "0.010") "," K(1, "0.015", "0.020"));
    int64_t *p = NULL;
    size_t n = 0;
    assert_int_equal(tfb_trace_busy_intervals(t, 0, &p, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], 20);
    assert_int_equal(p[2], 30);
    assert_int_equal(p[3], 40);
    free(p);
    assert_int_equal(tfb_trace_busy_intervals(t, -1, &p, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], 40);
    free(p);
    assert_int_equal(tfb_trace_busy_intervals(t, 7, &p, &n), 0);
    assert_int_equal(n, 0);
    assert_null(p);

    /* Device 0 idle in [0,50): [20,30) and [40,50) = 20 ns. */
    int64_t inside = -1, total = -1;
    const int64_t in1[] = {25, 45};
    assert_int_equal(
        tfb_trace_idle_within(t, 0, 0, 50, in1, 1, &inside, &total), 0);
    assert_int_equal(total, 20);
    assert_int_equal(inside, 10);
    /* Unsorted, overlapping intervals count once. */
    const int64_t in2[] = {44, 48, 25, 45, 26, 27};
    assert_int_equal(
        tfb_trace_idle_within(t, 0, 0, 50, in2, 3, &inside, &total), 0);
    assert_int_equal(inside, 5 + 8);
    /* All devices: idle only in [40,50). */
    assert_int_equal(
        tfb_trace_idle_within(t, -1, 0, 50, in1, 1, &inside, &total), 0);
    assert_int_equal(total, 10);
    assert_int_equal(inside, 5);
    /* A window inside a busy stretch has no idle time. */
    assert_int_equal(
        tfb_trace_idle_within(t, 0, 2, 18, in1, 1, &inside, &total), 0);
    assert_int_equal(total, 0);
    assert_int_equal(inside, 0);
    assert_int_equal(
        tfb_trace_idle_within(t, 0, 10, 5, NULL, 0, &inside, &total),
        TFB_EINVAL);
    tfb_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

static void test_timeline_merge(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_trace *t =
        load(dir, K(0, "0.000", "0.010") "," K(0, "0.100", "0.010") "," K(
                      0, "0.115", "0.010") "," K(1, "0.000", "0.500"));
    tfb_json j;
    tfb_json_init(&j);
    assert_int_equal(tfb_gpu_timeline_json(t, INT64_MIN, INT64_MAX, 100, &j), 0);
    size_t len;
    char *s = tfb_json_take(&j, &len);
    assert_non_null(strstr(s, "\"total\":4"));
    assert_non_null(strstr(s, "\"merged\":false"));
    free(s);
    /* max 3: the smallest bin width that leaves 3 spans is 20 ns (bins
     * [100,120) holds the kernels at 100 and 115); the merged span's busy
     * time is the union of its kernels. */
    tfb_json_init(&j);
    assert_int_equal(tfb_gpu_timeline_json(t, INT64_MIN, INT64_MAX, 3, &j), 0);
    s = tfb_json_take(&j, &len);
    assert_non_null(strstr(s, "\"merged\":true"));
    assert_non_null(strstr(s, "\"start_ns\":100,\"end_ns\":125,\"count\":2,"
                              "\"busy_ns\":20"));
    assert_non_null(strstr(s, "\"resolution_ns\":20,"));
    assert_non_null(strstr(s, "\"truncated\":false"));
    free(s);
    /* max 1 with two lanes: truncated. */
    tfb_json_init(&j);
    assert_int_equal(tfb_gpu_timeline_json(t, INT64_MIN, INT64_MAX, 1, &j), 0);
    s = tfb_json_take(&j, &len);
    assert_non_null(strstr(s, "\"truncated\":true"));
    free(s);
    tfb_json_init(&j);
    assert_int_equal(tfb_gpu_timeline_json(t, 0, 10, 0, &j), TFB_EINVAL);
    tfb_json_free(&j);
    tfb_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

/* ---- SQLite trace files ------------------------------------------------ */

static void exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "sql: %s\n", msg ? msg : "?");
    sqlite3_free(msg);
    assert_int_equal(rc, SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

#define KTABLE                                                                \
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, "    \
    "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, "             \
    "demangledName TEXT);"

/* n kernels 1000 ns apart, 500 ns long, on stream 1 (a recursive insert:
 * fast). */
static void write_kernels(const char *path, int n, const char *extra)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "PRAGMA journal_mode=WAL;" KTABLE
             "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL "
             "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r "
             "WHERE i + 1 < %d) SELECT 1000 * i, 1000 * i + 500, 0, 1, i, "
             "'k' FROM r;%s",
             n, extra ? extra : "");
    exec_sql(path, sql);
}

static int load_err(const char *path, tfb_trace_load_ctl *ctl)
{
    char *paths[1] = {(char *)path};
    tfb_trace *t = NULL;
    tfb_trace_load_ctl_init(ctl, 1);
    int rc = tfb_trace_load_files_ctl(paths, 1, ctl, &t);
    if (rc == 0) {
        assert_non_null(t);
        tfb_trace_release(t);
    }
    return rc;
}

static void test_sqlite_view_refused(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/h.trace.sqlite", dir);
    exec_sql(path,
             "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE "
             "r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT 100 AS "
             "start, 50 AS \"end\", 0 AS deviceId, 1 AS streamId, i AS "
             "correlationId, 'k' AS demangledName FROM r;");
    tfb_trace_load_ctl ctl;
    assert_int_equal(load_err(path, &ctl), TFB_ECORRUPT);
    assert_non_null(strstr(ctl.error, "h.trace.sqlite"));
    assert_non_null(strstr(ctl.error, "is a view"));
    /* A real kernel table with a view for the copies: refused too. */
    snprintf(path, sizeof path, "%s/g.sqlite", dir);
    write_kernels(path, 10,
                  "CREATE VIEW CUPTI_ACTIVITY_KIND_MEMCPY AS SELECT * FROM "
                  "CUPTI_ACTIVITY_KIND_KERNEL;");
    assert_int_equal(load_err(path, &ctl), TFB_ECORRUPT);
    assert_non_null(strstr(ctl.error, "CUPTI_ACTIVITY_KIND_MEMCPY is a view"));
    tu_rmtree(dir);
    free(dir);
}

static void test_sqlite_budgets(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024], side[1100];
    snprintf(path, sizeof path, "%s/b.trace.sqlite", dir);
    write_kernels(path, 300000, NULL);
    /* Written in WAL mode and closed: nothing may appear next to it when
     * it is read (immutable, read-only). */
    snprintf(side, sizeof side, "%s-wal", path);
    assert_int_not_equal(access(side, F_OK), 0);
    tfb_trace_load_ctl ctl;
    assert_int_equal(load_err(path, &ctl), 0);
    assert_int_not_equal(access(side, F_OK), 0);
    snprintf(side, sizeof side, "%s-shm", path);
    assert_int_not_equal(access(side, F_OK), 0);
    assert_int_equal(atomic_load(&ctl.progress_ppm), 1000000);

    tfb_trace_load_limits lim = {1000, 0};
    tfb_trace_set_load_limits(&lim);
    assert_int_equal(load_err(path, &ctl), TFB_ETOOBIG);
    assert_non_null(strstr(ctl.error, "more than 1000 rows"));
    lim = (tfb_trace_load_limits){0, 1e-6};
    tfb_trace_set_load_limits(&lim);
    assert_int_equal(load_err(path, &ctl), TFB_ETOOBIG);
    assert_non_null(strstr(ctl.error, "longer than the load budget"));
    tfb_trace_set_load_limits(NULL);
    assert_int_equal(load_err(path, &ctl), 0);
    tu_rmtree(dir);
    free(dir);
}

/* The kernel and runtime rows come through the loader's row functions and
 * the builder's look-up memos: every value must land where it belongs. */
static void test_sqlite_kernel_rows(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/rows.sqlite", dir);
    exec_sql(path,
             "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
             "INSERT INTO StringIds VALUES(3, 'small'), (5000, 'large'),"
             " (7, 'launch');"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER,"
             " end INTEGER, deviceId INTEGER, streamId INTEGER,"
             " correlationId INTEGER, demangledName, gridX INTEGER,"
             " gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,"
             " blockZ INTEGER, registersPerThread INTEGER,"
             " staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);"
             /* streams 3 and 19 share a memo slot; devices alternate; name
              * 3 launches with grid 1 then 2 then 1 again. */
             "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
             " (100, 200, 0, 3, 1, 3, 1, 1, 1, 64, 1, 1, 16, 8, 8),"
             " (300, 400, 1, 19, 2, 3, 2, 1, 1, 64, 1, 1, 16, 8, 8),"
             " (500, 600, 0, 19, 3, 3, 1, 1, 1, 64, 1, 1, 16, 8, 8),"
             " (700, 800, 1, 3, NULL, 5000, 4, 5, 6, 7, 8, 9, 10, 11, 12),"
             " (900, 950, 0, 3, 5, 'texty', 1, 1, 1, 1, 1, 1, 1, 0, 0),"
             " (1000, 1100, 0, 3, 6, 99, 1, 1, 1, 1, 1, 1, 1, 0, 0),"
             " (1200, 1300, 0, 3, 7, NULL, 1, 1, 1, 1, 1, 1, 1, 0, 0);"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER,"
             " end INTEGER, correlationId INTEGER, nameId);"
             "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
             " (50, 60, 1, 7), (250, 260, 2, 'cudaLaunchText'),"
             " (450, 460, NULL, 7), (650, 660, 4, 4242);");
    char *paths[1] = {path};
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_int_equal(t->nspans, 7);
    /* Lanes (device, stream): (0,3), (0,19), (1,3), (1,19). */
    assert_int_equal(t->nlanes, 4);
    assert_int_equal(t->ndevices, 2);
    static const int32_t lane_dev[4] = {0, 0, 1, 1};
    static const int32_t lane_str[4] = {3, 19, 3, 19};
    static const size_t lane_n[4] = {4, 1, 1, 1};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(t->lanes[i].device, lane_dev[i]);
        assert_int_equal(t->lanes[i].stream, lane_str[i]);
        assert_int_equal(t->lanes[i].n, lane_n[i]);
    }
    /* Each span by its start: name, geometry, correlation. */
    static const struct {
        int64_t start;
        const char *name;
        int32_t grid0, regs, shared;
        int64_t corr;
    } want[] = {
        {100, "small", 1, 16, 16, 1}, {300, "small", 2, 16, 16, 2},
        {500, "small", 1, 16, 16, 3}, {700, "large", 4, 10, 23, -1},
        {900, "texty", 1, 1, 0, 5},   {1000, "?", 1, 1, 0, 6},
        {1200, "?", 1, 1, 0, 7},
    };
    const tfb_trace_kinfo *k100 = NULL, *k300 = NULL, *k500 = NULL;
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        const tfb_trace_span *sp = NULL;
        for (size_t i = 0; i < t->nspans; i++)
            if (t->spans[i].start == want[w].start)
                sp = &t->spans[i];
        assert_non_null(sp);
        const tfb_trace_kinfo *ki = tfb_trace_span_kinfo(t, sp);
        assert_non_null(ki);
        assert_string_equal(tfb_trace_str(t, ki->name, "?"), want[w].name);
        assert_int_equal(ki->grid[0], want[w].grid0);
        assert_int_equal(ki->registers, want[w].regs);
        assert_int_equal(ki->shared_mem, want[w].shared);
        assert_int_equal(sp->correlation, want[w].corr);
        if (want[w].start == 100)
            k100 = ki;
        if (want[w].start == 300)
            k300 = ki;
        if (want[w].start == 500)
            k500 = ki;
    }
    const tfb_trace_span *s700 = NULL;
    for (size_t i = 0; i < t->nspans; i++)
        if (t->spans[i].start == 700)
            s700 = &t->spans[i];
    const tfb_trace_kinfo *k700 = tfb_trace_span_kinfo(t, s700);
    assert_int_equal(k700->grid[1], 5);
    assert_int_equal(k700->grid[2], 6);
    assert_int_equal(k700->block[0], 7);
    assert_int_equal(k700->block[1], 8);
    assert_int_equal(k700->block[2], 9);
    assert_int_equal(tfb_trace_span_device(t, s700), 1);
    assert_int_equal(tfb_trace_span_stream(t, s700), 3);
    /* One name, two geometries: two descriptions, the first one shared. */
    assert_ptr_equal(k100, k500);
    assert_ptr_not_equal(k100, k300);
    /* Runtime calls: the one without a correlation id is dropped. */
    assert_int_equal(t->ncalls, 3);
    const tfb_trace_call *c = tfb_trace_call_of(t, 1);
    assert_non_null(c);
    assert_string_equal(tfb_trace_str(t, c->name, "?"), "launch");
    c = tfb_trace_call_of(t, 2);
    assert_non_null(c);
    assert_string_equal(tfb_trace_str(t, c->name, "?"), "cudaLaunchText");
    c = tfb_trace_call_of(t, 4);
    assert_non_null(c);
    assert_int_equal(c->start, 650);
    assert_string_equal(tfb_trace_str(t, c->name, "?"), "?");
    tfb_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

/* ---- the lane index against brute force -------------------------------- */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t json_num(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    assert_non_null(p);
    return (size_t)strtoull(p + strlen(key), NULL, 10);
}

static void test_window_index(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/r.sqlite", dir);
    enum { N = 5000 };
    static int64_t st[N], en[N];
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, KTABLE "BEGIN;", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_stmt *ins = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
                           "(?,?,0,?,?,'k')",
                           -1, &ins, NULL),
        SQLITE_OK);
    for (int i = 0; i < N; i++) {
        /* Mostly short spans, some long ones and instants, 3 streams. */
        st[i] = (int64_t)(rnd() % 1000000);
        uint64_t r = rnd() % 100;
        en[i] = st[i] + (r < 5 ? 0 : r < 10 ? (int64_t)(rnd() % 300000)
                                            : (int64_t)(rnd() % 500));
        sqlite3_bind_int64(ins, 1, st[i]);
        sqlite3_bind_int64(ins, 2, en[i]);
        sqlite3_bind_int(ins, 3, i % 3);
        sqlite3_bind_int(ins, 4, i);
        assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    char *paths[1] = {path};
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_int_equal(t->nspans, N);
    for (int q = 0; q < 300; q++) {
        int64_t w0 = (int64_t)(rnd() % 1100000) - 50000;
        int64_t w1 = q % 10 == 0 ? w0 : w0 + (int64_t)(rnd() % 200000);
        size_t want = 0;
        for (int i = 0; i < N; i++) {
            int in = en[i] > st[i] ? st[i] < w1 && en[i] > w0
                                   : st[i] >= w0 && st[i] <= w1;
            /* As the timeline always had it: with w1 > w0 a span that
             * starts at w1 is out, an instant too. */
            if (w1 > w0 && st[i] >= w1)
                in = 0;
            want += in;
        }
        tfb_json j;
        tfb_json_init(&j);
        assert_int_equal(tfb_gpu_timeline_json(t, w0, w1, 100, &j), 0);
        size_t len;
        char *s = tfb_json_take(&j, &len);
        assert_int_equal(json_num(s, "\"total\":"), want);
        free(s);
        if (w1 > w0) {
            tfb_json_init(&j);
            assert_int_equal(tfb_gpu_chrome_trace_json(t, w0, w1, 50, &j), 0);
            s = tfb_json_take(&j, &len);
            assert_int_equal(json_num(s, "\"events_total\":"), want);
            size_t ev = json_num(s, "\"events\":");
            assert_true(ev <= 50 && ev == (want < 50 ? want : ev));
            free(s);
        }
    }
    tfb_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_ns),
        cmocka_unit_test(test_busy_and_idle),
        cmocka_unit_test(test_timeline_merge),
        cmocka_unit_test(test_sqlite_view_refused),
        cmocka_unit_test(test_sqlite_budgets),
        cmocka_unit_test(test_sqlite_kernel_rows),
        cmocka_unit_test(test_window_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
