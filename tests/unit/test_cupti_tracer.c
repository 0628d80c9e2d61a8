/*
 * test_cupti_tracer.c - tfb_gpu_trace_* where tracing cannot run: no CUPTI
 * at the given path, or (on a machine without a GPU) the real libcupti
 * refusing cuptiActivityEnable. Each failure gives its code and a message,
 * leaves no trace file, and the writer keeps logging. On a machine with a
 * GPU the same test checks a clean start/stop instead.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/cupti_internal.h"
#include "test_util.h"
#include "collector/trace_store.h"

static int count_trace_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".trace.sqlite"))
            n++;
    closedir(d);
    return n;
}

static void test_opts_defaults(void **state)
{
    (void)state;
    tfb_gpu_opts o;
    memset(&o, 0x5a, sizeof o);
    tfb_gpu_opts_init(&o);
    assert_null(o.cupti_path);
    assert_int_equal(o.buffer_bytes, (size_t)8 << 20);
    assert_int_equal(o.max_buffers, 32);
    assert_int_equal(o.flush_interval_ms, 1000);
    assert_int_equal(o.utilization_interval_ms, 1000);
    assert_int_equal(o.record_runtime, 1);
    tfb_gpu_opts_init(NULL);
}

static void test_missing_cupti(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_string_equal(tfb_gpu_trace_error(w), "");
    tfb_gpu_opts o;
    tfb_gpu_opts_init(&o);
    o.cupti_path = "/nonexistent/libcupti.so.13";
    assert_int_equal(tfb_gpu_trace_start(w, &o), TFB_ENOCUPTI);
    assert_non_null(strstr(tfb_gpu_trace_error(w), "/nonexistent/libcupti.so.13"));
    /* The environment variable is honoured when opts gives no path. */
    setenv("TFB_CUPTI_PATH", "/nonexistent/env/libcupti.so", 1);
    assert_int_equal(tfb_gpu_trace_start(w, NULL), TFB_ENOCUPTI);
    assert_non_null(strstr(tfb_gpu_trace_error(w), "/nonexistent/env/libcupti.so"));
    unsetenv("TFB_CUPTI_PATH");
    /* Logging goes on. */
    assert_int_equal(tfb_scalar(w, "loss", 1.5, 1), 0);
    assert_int_equal(tfb_gpu_trace_stop(w), 0);
    tfb_gpu_stats st;
    tfb_gpu_stats_init(&st);
    assert_int_equal(tfb_gpu_trace_get_stats(w, &st), 0);
    assert_int_equal(st.kernels, 0);
    assert_int_equal(tfb_trace_host_span(w, TFB_HOST_SPAN_STEP, 1, 1, 2),
                     TFB_ESTATE);
    assert_int_equal(count_trace_files(dir), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    assert_int_equal(tfb_gpu_trace_start(NULL, NULL), TFB_EINVAL);
    assert_int_equal(tfb_gpu_trace_stop(NULL), TFB_EINVAL);
    assert_string_equal(tfb_gpu_trace_error(NULL), "");
    tu_rmtree(dir);
    free(dir);
}

static void test_real_cupti(void **state)
{
    (void)state;
    tfb_cupti_api api;
    char msg[512];
    if (tfb_cupti_load(&api, NULL, msg, sizeof msg) != 0)
        skip();
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    int rc = tfb_gpu_trace_start(w, NULL);
    if (rc == 0) {
        /* A GPU is present: tracing runs; the store exists and host spans
         * reach it until stop. */
        assert_int_equal(count_trace_files(dir), 1);
        assert_int_equal(tfb_gpu_trace_start(w, NULL), TFB_ESTATE);
        assert_int_equal(tfb_trace_host_span(w, TFB_HOST_SPAN_STEP, 1, 1, 2), 0);
        assert_int_equal(tfb_gpu_trace_stop(w), 0);
        assert_int_equal(tfb_gpu_trace_stop(w), 0); /* idempotent */
    } else {
        /* No GPU: the library loads, enabling fails, CUPTI is released. */
        assert_int_equal(rc, TFB_ENOGPU);
        assert_non_null(strstr(tfb_gpu_trace_error(w), "cuptiActivityEnable"));
        assert_non_null(strstr(tfb_gpu_trace_error(w), "CUPTI_ERROR"));
        assert_int_equal(count_trace_files(dir), 0);
        /* A second try fails the same way (nothing left half-started). */
        assert_int_equal(tfb_gpu_trace_start(w, NULL), TFB_ENOGPU);
        assert_int_equal(tfb_trace_host_span(w, TFB_HOST_SPAN_STEP, 1, 1, 2),
                         TFB_ESTATE);
    }
    assert_int_equal(tfb_scalar(w, "loss", 2.5, 2), 0);
    assert_int_equal(tfb_flush(w), 0);
    assert_int_equal(tfb_writer_close(w), 0); /* also stops tracing */
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_defaults),
        cmocka_unit_test(test_missing_cupti),
        cmocka_unit_test(test_real_cupti),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
