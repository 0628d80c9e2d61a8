/*
 * test_trace_load_parallel.c - a trace store's load with its reader thread
 * (the runtime calls read on a second thread and connection while the
 * kernels are read, then merged) gives the very trace of the serial load
 * (tfb_trace_set_load_serial(1): all on one thread): the same spans,
 * lanes, trees, calls, kernel descriptions, strings, devices and
 * aggregates, compared as the bytes of the columnar cache file each
 * writes, and both hold what the test wrote (no row dropped, lanes
 * sorted, the summary's figures computed here). Two files in one load, so
 * the second file's correlation ids are offset in both paths alike; rows
 * written out of time order, calls without a correlation id or with
 * nonsense times (left out), names as StringIds ids and as text.
 * Every call keeps its name (the reader's names are renamed into the
 * builder's in the finish). A trace of 200,000 kernels (a few seconds
 * under the sanitizers).
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

#include "test_util.h"
#include "trace/trace_colcache.h"
#include "trace/trace_internal.h"

#define B INT64_C(1700000000000000000)
#define NAMES 40

typedef struct expect {
    int64_t kernels, kernel_ns, calls, copies, memsets;
    int64_t memcpy_calls; /* calls named cudaMemcpyAsync */
} expect;

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    assert_int_equal(rc, SQLITE_OK);
}

/* A store of n kernels on two devices and three streams each; rows in
 * blocks of 64 written in reverse time order (the load sorts them); a
 * runtime call a kernel (every 97th without a correlation id, every
 * 101st ending before it starts: both left out), a copy every 50th and a
 * memset every 300th kernel. Every 7th kernel's name is text, the others
 * StringIds ids. */
static void write_store(const char *path, int64_t n, int64_t t0, expect *e)
{
    sqlite3 *db;
    remove(path);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec(db,
         "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
         "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
         "CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT, smCount "
         "INTEGER);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end "
         "INTEGER, deviceId INTEGER, streamId INTEGER, correlationId "
         "INTEGER, demangledName, registersPerThread INTEGER, gridX "
         "INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY "
         "INTEGER, blockZ INTEGER, staticSharedMemory INTEGER, "
         "dynamicSharedMemory INTEGER);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end "
         "INTEGER, deviceId INTEGER, streamId INTEGER, correlationId "
         "INTEGER, bytes INTEGER, copyKind INTEGER);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER, end "
         "INTEGER, deviceId INTEGER, streamId INTEGER, correlationId "
         "INTEGER, bytes INTEGER);"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end "
         "INTEGER, correlationId INTEGER, nameId INTEGER);"
         "INSERT INTO TARGET_INFO_GPU VALUES(0, 'GPU zero', 108),"
         "(1, 'GPU one', 132);"
         "BEGIN;");
    sqlite3_stmt *s;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "INSERT INTO StringIds VALUES(?,?)",
                                        -1, &s, NULL),
                     SQLITE_OK);
    for (int k = 0; k <= NAMES + 1; k++) {
        char name[64];
        if (k < NAMES)
            snprintf(name, sizeof name, "kernel_%02d(float*)", k);
        else
            snprintf(name, sizeof name,
                     k == NAMES ? "cudaLaunchKernel" : "cudaMemcpyAsync");
        sqlite3_bind_int(s, 1, k);
        sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(s), SQLITE_DONE);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    sqlite3_stmt *k, *r, *m, *ms;
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
                           "(?,?,?,?,?,?,32,?,1,1,128,1,1,?,0)",
                           -1, &k, NULL),
        SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
                           "(?,?,?,?)",
                           -1, &r, NULL),
        SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES"
                           "(?,?,?,99,?,4096,1)",
                           -1, &m, NULL),
        SQLITE_OK);
    assert_int_equal(
        sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES"
                           "(?,?,0,98,NULL,512)",
                           -1, &ms, NULL),
        SQLITE_OK);
    memset(e, 0, sizeof *e);
    for (int64_t j = 0; j < n; j++) {
        /* block-reversed order: 63, 62, ..., 0, 127, 126, ... */
        int64_t i = (j / 64) * 64 + 63 - j % 64;
        if (i >= n)
            continue;
        int64_t t = t0 + 1000 * i, dur = 150 + 40 * (i % 9);
        int dev = (int)(i % 5 == 0);
        sqlite3_bind_int64(k, 1, t);
        sqlite3_bind_int64(k, 2, t + dur);
        sqlite3_bind_int(k, 3, dev);
        sqlite3_bind_int(k, 4, 7 + (int)(i % 3));
        sqlite3_bind_int64(k, 5, i);
        if (i % 7 == 0) {
            char name[64];
            snprintf(name, sizeof name, "kernel_%02d(float*)",
                     (int)(i % NAMES));
            sqlite3_bind_text(k, 6, name, -1, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_int(k, 6, (int)(i % NAMES));
        }
        sqlite3_bind_int(k, 7, (int)(i % 13) + 1);
        sqlite3_bind_int(k, 8, (int)(i % 4) * 1024);
        assert_int_equal(sqlite3_step(k), SQLITE_DONE);
        sqlite3_reset(k);
        e->kernels++;
        e->kernel_ns += dur;
        int64_t c = t - (i % 2 ? 700 : 300);
        sqlite3_bind_int64(r, 1, c);
        sqlite3_bind_int64(r, 2, i % 101 == 0 ? c - 1 : c + 40);
        if (i % 97 == 0)
            sqlite3_bind_null(r, 3);
        else
            sqlite3_bind_int64(r, 3, i);
        sqlite3_bind_int(r, 4, i % 11 == 0 ? NAMES + 1 : NAMES);
        assert_int_equal(sqlite3_step(r), SQLITE_DONE);
        sqlite3_reset(r);
        e->calls += i % 97 != 0 && i % 101 != 0;
        e->memcpy_calls += i % 97 != 0 && i % 101 != 0 && i % 11 == 0;
        if (i % 50 == 0) {
            sqlite3_bind_int64(m, 1, t + 600);
            sqlite3_bind_int64(m, 2, t + 610);
            sqlite3_bind_int(m, 3, dev);
            sqlite3_bind_int64(m, 4, i);
            assert_int_equal(sqlite3_step(m), SQLITE_DONE);
            sqlite3_reset(m);
            e->copies++;
        }
        if (i % 300 == 0) {
            sqlite3_bind_int64(ms, 1, t + 800);
            sqlite3_bind_int64(ms, 2, t + 820);
            assert_int_equal(sqlite3_step(ms), SQLITE_DONE);
            sqlite3_reset(ms);
            e->memsets++;
        }
    }
    sqlite3_finalize(k);
    sqlite3_finalize(r);
    sqlite3_finalize(m);
    sqlite3_finalize(ms);
    exec(db, "COMMIT;");
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* What the test wrote is what was loaded: counts, order, figures. */
static void check_trace(const tfb_trace *t, const expect *e)
{
    assert_int_equal(t->files_read, 2);
    assert_int_equal(t->nspans, e->kernels + e->copies + e->memsets);
    assert_int_equal(t->ncalls, e->calls);
    int64_t memcpy_calls = 0;
    for (size_t i = 0; i < t->ncalls; i++) {
        assert_true(i == 0 || t->calls[i - 1].start <= t->calls[i].start);
        const char *name = tfb_trace_str(t, t->calls[i].name, "");
        memcpy_calls += strcmp(name, "cudaMemcpyAsync") == 0;
        if (strcmp(name, "cudaMemcpyAsync") != 0)
            assert_string_equal(name, "cudaLaunchKernel");
    }
    assert_int_equal(memcpy_calls, e->memcpy_calls);
    for (size_t l = 0; l < t->nlanes; l++)
        for (size_t i = 1; i < t->lanes[l].n; i++)
            assert_true(t->spans[t->lanes[l].off + i - 1].start <=
                        t->spans[t->lanes[l].off + i].start);
    tfb_trace_summary s;
    assert_int_equal(tfb_trace_summarize(t, &s), 0);
    int64_t kernels = 0, kernel_ns = 0;
    for (size_t d = 0; d < s.n_devices; d++) {
        kernels += s.devices[d].kernels;
        kernel_ns += s.devices[d].kernel_ns;
    }
    tfb_trace_summary_free(&s);
    assert_int_equal(kernels, e->kernels);
    assert_int_equal(kernel_ns, e->kernel_ns);
    /* Every kernel with a kept call finds it (the second file's ids are
     * offset in both the kernels and the calls). */
    size_t found = 0, kernels_seen = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_trace_span *sp = &t->spans[i];
        if (sp->kind != TFB_TRACE_KERNEL)
            continue;
        kernels_seen++;
        const tfb_trace_call *c = tfb_trace_call_of(t, sp->correlation);
        if (c) {
            assert_true(c->start < sp->start);
            found++;
        }
    }
    assert_int_equal(kernels_seen, e->kernels);
    assert_int_equal(found, e->calls);
}

static uint8_t *load_bytes(char *const *paths, int serial, const char *out,
                           const expect *e, size_t *len)
{
    tfb_trace_set_load_serial(serial);
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 2, &t), 0);
    tfb_trace_set_load_serial(0);
    check_trace(t, e);
    assert_int_equal(tfb_trace_colcache_write_file(out, "sig", t, 1), 0);
    tfb_trace_free(t);
    uint8_t *b = tu_read_file(out, len);
    assert_non_null(b);
    return b;
}

static void test_parallel_equals_serial(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char a[512], b2[512], oa[512], ob[512];
    snprintf(a, sizeof a, "%s/a.sqlite", dir);
    snprintf(b2, sizeof b2, "%s/b.sqlite", dir);
    snprintf(oa, sizeof oa, "%s/serial.tfbc", dir);
    snprintf(ob, sizeof ob, "%s/parallel.tfbc", dir);
    expect ea, eb, e;
    write_store(a, 200000, B, &ea);
    write_store(b2, 3000, B + INT64_C(300000000), &eb);
    e.kernels = ea.kernels + eb.kernels;
    e.kernel_ns = ea.kernel_ns + eb.kernel_ns;
    e.calls = ea.calls + eb.calls;
    e.copies = ea.copies + eb.copies;
    e.memsets = ea.memsets + eb.memsets;
    e.memcpy_calls = ea.memcpy_calls + eb.memcpy_calls;
    char *paths[2] = {a, b2};
    size_t ls, lp;
    uint8_t *s = load_bytes(paths, 1, oa, &e, &ls);
    uint8_t *p = load_bytes(paths, 0, ob, &e, &lp);
    assert_int_equal(ls, lp);
    /* The first difference past the header's checksum (bytes 24-27,
     * which differs whenever anything does) says where to look. */
    size_t diff = 0;
    while (diff < ls && (s[diff] == p[diff] || (diff >= 24 && diff < 28)))
        diff++;
    if (diff < ls)
        fprintf(stderr, "cache files differ at byte %zu of %zu\n", diff, ls);
    assert_int_equal(diff, ls);
    assert_memory_equal(s, p, ls);
    free(s);
    free(p);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_equals_serial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
