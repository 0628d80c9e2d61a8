/*
 * test_trace_host.c - the trace layer's host side (server/trace/
 * trace.h): each file's runtime calls are linked into the GPU
 * trace's correlation space (two Kineto files whose ids collide get
 * different offsets, and each call maps to the call of the same start in
 * the trace); without a trace nothing is linked; the row budget fails a
 * load with a message; the cache answers the same host trace while the
 * files are unchanged, a new one after a change, and a reference held
 * across the change stays readable (ASan checks the reads).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test_util.h"
#include "tfboard.h"
#include "trace/trace_internal.h"

static char *g_dir;

/* A Kineto trace: for each i < n, a cpu_op [100 i + off, +50) µs holding
 * a launch [100 i + off + 10, +5) with correlation i + 1, and its kernel
 * at 100 i + off + 30. */
static char *write_trace(const char *name, int n, int off)
{
    char *path = malloc(strlen(g_dir) + strlen(name) + 32);
    assert_non_null(path);
    sprintf(path, "%s/%s.pt.trace.json", g_dir, name);
    size_t cap = 256 + (size_t)n * 600, o = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    o += (size_t)snprintf(buf, cap, "{\"traceEvents\": [\n");
    for (int i = 0; i < n; i++) {
        int t = 100 * i + off;
        o += (size_t)snprintf(
            buf + o, cap - o,
            "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", "
            "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 50},\n"
            "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
            "\"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": %d, "
            "\"dur\": 5, \"args\": {\"correlation\": %d}},\n"
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": "
            "0, \"tid\": 7, \"ts\": %d, \"dur\": 5, \"args\": {\"device\": "
            "0, \"stream\": 7, \"correlation\": %d}}",
            i ? ",\n" : "", t, t + 10, i + 1, t + 30, i + 1);
    }
    o += (size_t)snprintf(buf + o, cap - o, "\n]}\n");
    assert_true(o < cap);
    assert_int_equal(tu_write_file(path, buf, o), 0);
    free(buf);
    return path;
}

static void test_link_two_files(void **state)
{
    (void)state;
    char *paths[2] = {write_trace("a", 3, 0), write_trace("b", 4, 1000)};
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 2, &t), 0);
    tfb_trace_host *h = NULL;
    char err[256];
    assert_int_equal(tfb_trace_host_load_files(paths, 2, &h, err, sizeof err),
                     0);
    assert_non_null(h);
    assert_int_equal(h->nfiles, 2);
    int64_t bases[2];
    tfb_trace_host_link(h, t, bases);
    /* The ids collide (1..3 and 1..4): the second file's sit above. */
    assert_int_equal(bases[0], 0);
    assert_true(bases[1] >= 4);
    size_t linked = 0;
    for (size_t i = 0; i < h->n; i++) {
        const tfb_trace_host_event *s = &h->spans[i];
        int64_t c = tfb_trace_host_correlation(s, bases);
        if (s->kind != TFB_TRACE_HOST_RUNTIME) {
            assert_int_equal(c, -1);
            continue;
        }
        const tfb_trace_call *call = tfb_trace_call_of(t, c);
        assert_non_null(call);
        assert_int_equal(call->start, s->start);
        assert_int_equal(call->end, s->end);
        assert_int_equal(s->depth, 1); /* inside its op */
        linked++;
    }
    assert_int_equal(linked, 7);
    /* No trace: nothing links. */
    tfb_trace_host_link(h, NULL, bases);
    assert_int_equal(bases[0], -1);
    assert_int_equal(bases[1], -1);
    tfb_trace_host_release(h);
    tfb_trace_release(t);
    free(paths[0]);
    free(paths[1]);
}

static void test_row_budget(void **state)
{
    (void)state;
    char *path = write_trace("budget", 10, 0);
    tfb_trace_load_limits l = {5, 0};
    tfb_trace_set_load_limits(&l);
    tfb_trace_host *h = NULL;
    char err[256];
    int rc = tfb_trace_host_load_files(&path, 1, &h, err, sizeof err);
    tfb_trace_set_load_limits(NULL);
    assert_int_equal(rc, TFB_ETOOBIG);
    assert_null(h);
    assert_non_null(strstr(err, "budget"));
    free(path);
}

static void test_cache_by_signature(void **state)
{
    (void)state;
    tfb_store *store = NULL;
    assert_int_equal(tfb_store_create(&store, g_dir), 0);
    char *path = write_trace("cached", 2, 0);
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(store, "cached", &r), 0);
    assert_int_equal(tfb_run_set_trace_files(r, &path, 1), 0);
    tfb_trace_host *h1 = NULL, *h2 = NULL, *h3 = NULL;
    assert_int_equal(tfb_trace_host_get(store, r, &h1, NULL, 0), 0);
    assert_int_equal(tfb_trace_host_get(store, r, &h2, NULL, 0), 0);
    assert_non_null(h1);
    assert_ptr_equal(h1, h2);
    assert_int_equal(h1->n, 4);
    /* A changed file (another size) is read again; h1 stays valid. */
    free(write_trace("cached", 5, 0));
    assert_int_equal(tfb_trace_host_get(store, r, &h3, NULL, 0), 0);
    assert_non_null(h3);
    assert_ptr_not_equal(h3, h1);
    assert_int_equal(h3->n, 10);
    assert_string_equal(h1->strings[h1->spans[0].name], "op");
    tfb_trace_host_release(h1);
    tfb_trace_host_release(h2);
    tfb_trace_host_release(h3);
    tfb_store_destroy(store);
    free(path);
}

typedef struct getter {
    tfb_store *store;
    tfb_run *r;
    pthread_barrier_t *go;
    tfb_trace_host *h;
    int rc;
} getter;

static void *get_main(void *arg)
{
    getter *g = arg;
    pthread_barrier_wait(g->go);
    g->rc = tfb_trace_host_get(g->store, g->r, &g->h, NULL, 0);
    return NULL;
}

static void test_concurrent_requests_share_one_load(void **state)
{
    (void)state;
    tfb_store *store = NULL;
    assert_int_equal(tfb_store_create(&store, g_dir), 0);
    /* Big enough that the read outlasts the threads' start. */
    char *path = write_trace("together", 20000, 0);
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(store, "together", &r), 0);
    assert_int_equal(tfb_run_set_trace_files(r, &path, 1), 0);
    enum { N = 4 };
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, N);
    getter g[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        g[i] = (getter){store, r, &go, NULL, -1};
        assert_int_equal(pthread_create(&th[i], NULL, get_main, &g[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < N; i++) {
        assert_int_equal(g[i].rc, 0);
        assert_non_null(g[i].h);
        assert_ptr_equal(g[i].h, g[0].h);
    }
    assert_int_equal(g[0].h->n, 40000);
    for (int i = 0; i < N; i++)
        tfb_trace_host_release(g[i].h);
    tfb_store_destroy(store);
    free(path);
}

static int setup(void **state)
{
    (void)state;
    g_dir = tu_mkdtemp();
    return g_dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_two_files),
        cmocka_unit_test(test_row_budget),
        cmocka_unit_test(test_cache_by_signature),
        cmocka_unit_test(test_concurrent_requests_share_one_load),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
