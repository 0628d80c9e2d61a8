/*
 * test_gpu_memory_run.c - a run's memory data for the memory view
 * (server/trace/trace_memory.c): events of two nsys-schema files
 * merged in time order, kernels and steps taken from the run's trace (only
 * the kernels holding an allocation), NVTX ranges from the files (only
 * those holding an allocation, names copied), unreadable files skipped,
 * the row budget refusing a memory table before it is read; and the view
 * (gpu_memory_routes.c): the post-mortem rule.
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

#include "plugins/gpu/gpu_memory_routes.h"
#include "trace/trace_internal.h"
#include "tfboard.h"
#include "test_util.h"

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fail_msg("sql: %s: %s", sql, err ? err : "?");
}

/* A file with kernels (so it is a trace), memory events and NVTX ranges:
 * mem is "t dev op addr bytes;" items. */
static char *write_file(const char *dir, const char *name, const char *mem,
                        int with_kernel)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec(db, "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
             "INSERT INTO StringIds VALUES(0, 'fwd'), (1, 'outer'), "
             "(2, 'inner');"
             "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end "
             "INTEGER, deviceId INTEGER, contextId INTEGER, streamId "
             "INTEGER, correlationId INTEGER, globalPid INTEGER, "
             "demangledName INTEGER, shortName INTEGER, registersPerThread "
             "INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX "
             "INTEGER, blockY INTEGER, blockZ INTEGER, staticSharedMemory "
             "INTEGER, dynamicSharedMemory INTEGER);"
             "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INTEGER, "
             "deviceId INTEGER, streamId INTEGER, address INTEGER, bytes "
             "INTEGER, memoryOperationType INTEGER);"
             "CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType "
             "INTEGER, textId INTEGER, text TEXT);"
             "CREATE TABLE TFB_HOST_SPANS(start INTEGER, end INTEGER, kind "
             "TEXT, step INTEGER, globalTid INTEGER);");
    if (with_kernel) {
        /* fwd on device 0 stream 7: [100, 200) and [300, 400); steps. */
        exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
                 "(100, 200, 0, 1, 7, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0),"
                 "(300, 400, 0, 1, 7, 2, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0);"
                 "INSERT INTO TFB_HOST_SPANS VALUES(0, 250, 'step', 1, 1),"
                 "(250, 600, 'step', 2, 1);"
                 /* outer holds 150; inner (by text) holds 150; a range
                  * that holds no allocation; a mark. */
                 "INSERT INTO NVTX_EVENTS VALUES(140, 500, 59, 1, NULL),"
                 "(145, 160, 59, NULL, 'inner'), (700, 800, 59, 2, NULL),"
                 "(150, NULL, 34, NULL, 'mark');");
    }
    char sql[256];
    const char *p = mem;
    while (*p) {
        long long t, dev, op, addr, bytes;
        int used = 0;
        if (sscanf(p, " %lld %lld %lld %lld %lld;%n", &t, &dev, &op, &addr,
                   &bytes, &used) != 5 || used == 0)
            break;
        snprintf(sql, sizeof sql,
                 "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES(%lld, "
                 "%lld, 7, %lld, %lld, %lld)",
                 t, dev, addr, bytes, op);
        exec(db, sql);
        p += used;
    }
    sqlite3_close(db);
    return path;
}

static void test_load_merge_context(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    /* a.sqlite: device 0 allocations at 150 (in fwd, outer, inner) and 350
     * (in fwd, outer); b.sqlite (no kernels): device 1 at 120 and 900,
     * and a free at 360 of device 0's 150 block. */
    char *a = write_file(dir, "a.sqlite", "150 0 0 16 1000; 350 0 0 32 3000;",
                         1);
    char *b = write_file(dir, "b.sqlite", "120 1 0 64 500; 360 0 1 16 1000; "
                         "900 1 0 96 700;", 0);
    char junk[4096];
    snprintf(junk, sizeof junk, "%s/junk.sqlite", dir);
    assert_int_equal(tu_write_file(junk, "not sqlite at all, not at all....",
                                   33), 0);
    char *paths[] = {a, b, junk};
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 2, &t), 0);
    tfb_trace_memory *m = NULL;
    tfb_trace_load_ctl ctl;
    tfb_trace_load_ctl_init(&ctl, 3);
    assert_int_equal(tfb_trace_memory_load_files(paths, 3, t, &ctl, &m), 0);
    assert_int_equal(m->files, 2);
    assert_int_equal(m->files_skipped, 1);
    assert_int_equal(m->events.n, 5);
    static const int64_t times[] = {120, 150, 350, 360, 900};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(m->events.v[i].t_ns, times[i]);
    assert_int_equal(m->first_ns, 120);
    assert_int_equal(m->last_ns, 900);
    assert_true(m->has_trace);
    /* Both fwd launches hold an allocation; steps 1 and 2. */
    assert_int_equal(m->n_kernels, 2);
    assert_string_equal(m->kernels[0].name, "fwd");
    assert_int_equal(m->kernels[1].start_ns, 300);
    assert_int_equal(m->n_steps, 2);
    /* outer and inner, not the range without allocation, not the mark. */
    assert_int_equal(m->n_ranges, 2);

    tfb_gpu_memory_opts o;
    tfb_gpu_memory_opts_init(&o);
    tfb_gpu_memory_view v;
    assert_int_equal(tfb_gpu_memory_view_build(m, &o, &v), 0);
    assert_int_equal(v.res->n_devices, 2);
    const tfb_gpu_memory_device *d0 = &v.res->devices[0];
    assert_int_equal(d0->peak_bytes, 4000);
    assert_int_equal(d0->n_live_at_peak, 2);
    assert_string_equal(d0->live_at_peak[1].kernel, "fwd");
    assert_string_equal(d0->live_at_peak[1].range, "inner");
    assert_string_equal(d0->live_at_peak[0].range, "outer");
    /* Device 0 ends with a free (no post-mortem); device 1 with an
     * allocation at its peak (post-mortem). */
    assert_false(v.post_mortem[0]);
    assert_false(v.last_is_alloc[0]);
    assert_true(v.post_mortem[1]);
    tfb_gpu_memory_view_free(&v);
    /* A window ending at 355: device 0 last allocated (350) at its peak. */
    o.end_ns = 355;
    assert_int_equal(tfb_gpu_memory_view_build(m, &o, &v), 0);
    assert_true(v.post_mortem[0]);
    assert_true(v.post_mortem[1]); /* 500 allocated at 120, its last */
    tfb_gpu_memory_view_free(&v);

    tfb_trace_memory_free(m);
    tfb_trace_release(t);
    free(a);
    free(b);
    tu_rmtree(dir);
    free(dir);
}

static void test_row_budget(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *a = write_file(dir, "a.sqlite", "1 0 0 16 10; 2 0 0 32 10; "
                         "3 0 0 48 10; 4 0 0 64 10;", 0);
    char *paths[] = {a};
    tfb_trace_load_limits l = {3, 0};
    tfb_trace_set_load_limits(&l);
    tfb_trace_load_ctl ctl;
    tfb_trace_load_ctl_init(&ctl, 1);
    tfb_trace_memory *m = NULL;
    assert_int_equal(tfb_trace_memory_load_files(paths, 1, NULL, &ctl, &m),
                     TFB_ETOOBIG);
    assert_null(m);
    assert_non_null(strstr(ctl.error, "a.sqlite"));
    assert_non_null(strstr(ctl.error, "4 memory events"));
    tfb_trace_set_load_limits(NULL);
    tfb_trace_load_ctl_init(&ctl, 1);
    assert_int_equal(tfb_trace_memory_load_files(paths, 1, NULL, &ctl, &m), 0);
    assert_int_equal(m->events.n, 4);
    assert_false(m->has_trace);
    tfb_trace_memory_free(m);
    free(a);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_merge_context),
        cmocka_unit_test(test_row_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
