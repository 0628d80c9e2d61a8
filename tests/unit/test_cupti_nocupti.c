/*
 * test_cupti_nocupti.c - a build without the CUDA headers: GPU tracing
 * answers TFB_ENOTSUP with a message, and the writer keeps working.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "collector/trace_store.h"

static void test_not_supported(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_gpu_trace_start(w, NULL), TFB_ENOTSUP);
    assert_non_null(strstr(tfb_gpu_trace_error(w), "without the CUDA headers"));
    assert_int_equal(tfb_gpu_trace_stop(w), 0);
    tfb_gpu_stats st;
    tfb_gpu_stats_init(&st);
    memset(&st, 0xff, sizeof st);
    assert_int_equal(tfb_gpu_trace_get_stats(w, &st), 0);
    assert_int_equal(st.kernels, 0);
    assert_int_equal(tfb_trace_host_span(w, TFB_HOST_SPAN_STEP, 1, 1, 2),
                     TFB_ESTATE);
    tfb_gpu_opts o;
    tfb_gpu_opts_init(&o);
    assert_int_equal(o.max_buffers, 32);
    assert_int_equal(tfb_scalar(w, "loss", 1.0, 1), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    assert_int_equal(tfb_gpu_trace_start(NULL, NULL), TFB_EINVAL);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_supported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
