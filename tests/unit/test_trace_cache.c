/*
 * test_trace_cache.c - the trace layer's one per-run cache
 * (server/trace/trace_cache.c): a run's trace and memory data are two
 * parts of one entry, each loaded once and answered from the cache while
 * the run's files are unchanged; a changed file is read again while what
 * a request holds stays valid; evicting a run's entry drops both parts,
 * and references held across the eviction stay readable (ASan checks the
 * reads); a run without trace files answers NONE for both; the server's
 * stop ends the loads in flight and starts none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test_util.h"
#include "tfboard.h"
#include "trace/trace.h"

/* One store for the whole file: the cache keys entries by (store, run). */
static tfb_store *g_store;
static char *g_dir;

/* A Kineto trace with nk kernels (kernel i at 10 + 10 i µs, 5 µs long)
 * and one allocation on device 0 at 12 µs (inside kernel 0). */
static void write_trace(const char *path, int nk)
{
    char buf[8192];
    size_t o = (size_t)snprintf(buf, sizeof buf,
                                "{\"schemaVersion\": 1, \"traceEvents\": [\n");
    for (int i = 0; i < nk; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o,
                              "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                              "\"k%d\", \"pid\": 0, \"tid\": 7, \"ts\": %d, "
                              "\"dur\": 5, \"args\": {\"device\": 0}},\n",
                              i, 10 + 10 * i);
    o += (size_t)snprintf(
        buf + o, sizeof buf - o,
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, "
        "\"tid\": 1, \"ts\": 12, \"args\": {\"Total Reserved\": 4096, "
        "\"Total Allocated\": 1024, \"Bytes\": 1024, \"Addr\": 4096, "
        "\"Device Id\": 0, \"Device Type\": 1}}\n]}\n");
    assert_true(o < sizeof buf);
    assert_int_equal(tu_write_file(path, buf, o), 0);
}

/* Run `name` with one trace file of nk kernels (its path in *path_out
 * when not NULL, malloc'd). */
static tfb_run *make_run(const char *name, int nk, char **path_out)
{
    char *path = malloc(strlen(g_dir) + strlen(name) + 32);
    assert_non_null(path);
    sprintf(path, "%s/%s.pt.trace.json", g_dir, name);
    write_trace(path, nk);
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(g_store, name, &r), 0);
    assert_int_equal(tfb_run_set_trace_files(r, &path, 1), 0);
    if (path_out)
        *path_out = path;
    else
        free(path);
    return r;
}

static tfb_trace *trace_of(tfb_run *r)
{
    tfb_trace *t = NULL;
    tfb_trace_status st;
    assert_int_equal(tfb_trace_get(g_store, r, -1, &t, &st), 0);
    assert_int_equal(st.state, TFB_TRACE_READY);
    assert_non_null(t);
    return t;
}

/* The memory part, handed a reference of the run's trace (taken). */
static tfb_trace_memory *memory_of(tfb_run *r, tfb_trace *t)
{
    tfb_trace_memory *m = NULL;
    tfb_trace_status st;
    assert_int_equal(tfb_trace_memory_get(g_store, r, &t, -1, &m, &st), 0);
    assert_null(t); /* the call took the reference */
    assert_int_equal(st.state, TFB_TRACE_READY);
    assert_non_null(m);
    return m;
}

static void test_both_parts_one_entry(void **state)
{
    (void)state;
    tfb_run *r = make_run("both", 2, NULL);
    tfb_trace *t = trace_of(r);
    assert_int_equal(t->nspans, 2);
    tfb_trace_memory *m = memory_of(r, trace_of(r));
    assert_int_equal(m->events.n, 1);
    /* The memory part was built with the trace's kernel around the
     * allocation. */
    assert_true(m->has_trace);
    assert_int_equal(m->n_kernels, 1);
    /* Asked again with the files unchanged: the same data, not a reload. */
    tfb_trace *t2 = trace_of(r);
    assert_ptr_equal(t2, t);
    tfb_trace_memory *m2 = memory_of(r, NULL);
    assert_ptr_equal(m2, m);
    tfb_trace_memory_release(m2);
    tfb_trace_memory_release(m);
    tfb_trace_release(t2);
    tfb_trace_release(t);
}

static void test_changed_file_reloads(void **state)
{
    (void)state;
    char *path;
    tfb_run *r = make_run("changing", 2, &path);
    tfb_trace *t1 = trace_of(r);
    tfb_trace_memory *m1 = memory_of(r, trace_of(r));
    /* Three kernels now: the file's size (its signature) changes. */
    write_trace(path, 3);
    tfb_trace *t2 = trace_of(r);
    assert_ptr_not_equal(t2, t1);
    assert_int_equal(t2->nspans, 3);
    assert_int_equal(t1->nspans, 2); /* the held trace is intact */
    tfb_trace_memory *m2 = memory_of(r, trace_of(r));
    assert_ptr_not_equal(m2, m1);
    assert_int_equal(m1->events.n, 1);
    assert_int_equal(m2->events.n, 1);
    tfb_trace_memory_release(m1);
    tfb_trace_memory_release(m2);
    tfb_trace_release(t1);
    tfb_trace_release(t2);
    free(path);
}

static void test_eviction_drops_both_parts(void **state)
{
    (void)state;
    tfb_run *r0 = make_run("evicted", 1, NULL);
    tfb_trace *t0 = trace_of(r0);
    tfb_trace_memory *m0 = memory_of(r0, trace_of(r0));
    /* 64 other runs take every slot (the cache holds 64 runs): the least
     * recently used entry, r0's, goes with both its parts. */
    for (int i = 0; i < 64; i++) {
        char name[32];
        snprintf(name, sizeof name, "filler%d", i);
        tfb_trace_release(trace_of(make_run(name, 1, NULL)));
    }
    tfb_trace *t1 = trace_of(r0);
    assert_ptr_not_equal(t1, t0); /* loaded again: t0 was dropped */
    tfb_trace_memory *m1 = memory_of(r0, trace_of(r0));
    assert_ptr_not_equal(m1, m0);
    /* What was held across the eviction is still readable. */
    assert_int_equal(t0->nspans, 1);
    assert_int_equal(m0->events.n, 1);
    assert_int_equal(m0->n_kernels, 1);
    tfb_trace_release(t0);
    tfb_trace_memory_release(m0);
    tfb_trace_release(t1);
    tfb_trace_memory_release(m1);
}

static void test_no_trace_files(void **state)
{
    (void)state;
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(g_store, "plain", &r), 0);
    tfb_trace *t = (tfb_trace *)1;
    tfb_trace_status st;
    assert_int_equal(tfb_trace_get(g_store, r, -1, &t, &st), 0);
    assert_int_equal(st.state, TFB_TRACE_NONE);
    assert_null(t);
    tfb_trace_memory *m = (tfb_trace_memory *)1;
    assert_int_equal(tfb_trace_memory_get(g_store, r, NULL, -1, &m, &st), 0);
    assert_int_equal(st.state, TFB_TRACE_NONE);
    assert_null(m);
    /* Bad arguments are refused (and a handed trace is still taken). */
    assert_int_equal(tfb_trace_get(g_store, r, 0, NULL, &st),
                     TFB_EINVAL);
    assert_int_equal(tfb_trace_memory_get(g_store, r, NULL, 0, NULL, &st),
                     TFB_EINVAL);
}

/* The server's stop (tfb_trace_loads_stop; the last test: no load starts
 * after it): a load in flight ends, before the call returns, with its
 * trace or with "the server is stopping"; a load asked for after the stop
 * is refused, and no thread is left to race with the process's exit. */
static void test_stop_ends_loads(void **state)
{
    (void)state;
    char *path = malloc(strlen(g_dir) + 32);
    assert_non_null(path);
    sprintf(path, "%s/big.pt.trace.json", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
    for (int i = 0; i < 300000; i++)
        fprintf(f,
                "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", "
                "\"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 5, "
                "\"args\": {\"device\": 0}}\n",
                i ? "," : "", i % 97, 10 + 10 * i);
    fprintf(f, "]}\n");
    assert_int_equal(fclose(f), 0);
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(g_store, "big", &r), 0);
    assert_int_equal(tfb_run_set_trace_files(r, &path, 1), 0);
    free(path);

    tfb_trace *t = NULL;
    tfb_trace_status st;
    assert_int_equal(tfb_trace_get(g_store, r, 0, &t, &st), 0);
    assert_int_equal(st.state, TFB_TRACE_LOADING);
    assert_int_equal(tfb_trace_loads_stop(60000), 0);
    /* the load ended (no wait): its trace, or the stop's message */
    assert_int_equal(tfb_trace_get(g_store, r, 0, &t, &st), 0);
    if (st.state == TFB_TRACE_READY) {
        assert_non_null(t);
        tfb_trace_release(t);
    } else {
        assert_int_equal(st.state, TFB_TRACE_FAILED);
        assert_non_null(strstr(st.error, "the server is stopping"));
    }
    /* a run never loaded: no load starts now */
    tfb_run *late = make_run("late", 3, NULL);
    assert_int_equal(tfb_trace_get(g_store, late, 0, &t, &st), TFB_ESTATE);
    assert_null(t);
    assert_int_equal(tfb_trace_loads_stop(0), 0);
}

static int setup(void **state)
{
    (void)state;
    g_dir = tu_mkdtemp();
    return tfb_store_create(&g_store, g_dir) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tfb_store_destroy(g_store);
    tu_rmtree(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_parts_one_entry),
        cmocka_unit_test(test_changed_file_reloads),
        cmocka_unit_test(test_eviction_drops_both_parts),
        cmocka_unit_test(test_no_trace_files),
        cmocka_unit_test(test_stop_ends_loads), /* last: stops the loads */
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
