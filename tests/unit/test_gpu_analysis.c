/*
 * test_gpu_analysis.c - the server's GPU analyses on small Kineto traces
 * written here: exact µs -> ns conversion, busy intervals (union per device
 * and over all devices), GPU idle time inside given intervals (what the
 * input-pipeline analysis lays against input waits), and the timeline's
 * merging and truncation at a tiny max.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_analysis.h"
#include "test_util.h"

/* Writes a Kineto trace with the given kernel events (ts/dur as µs text)
 * and loads it. */
static tfb_gpu_trace *load(const char *dir, const char *events)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/w.pt.trace.json", dir);
    char text[8192];
    int n = snprintf(text, sizeof text, "{\"traceEvents\": [%s]}", events);
    assert_int_equal(tu_write_file(path, text, (size_t)n), 0);
    char *paths[1] = {path};
    tfb_gpu_trace *t = NULL;
    assert_int_equal(tfb_gpu_trace_load_files(paths, 1, &t), 0);
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
    tfb_gpu_trace *t = load(dir, K(0, "1700000000000000.001", "0.999") ","
                                 K(0, "1700000000000001", "2"));
    assert_int_equal(t->nspans, 2);
    assert_int_equal(t->spans[0].start, INT64_C(1700000000000000001));
    assert_int_equal(t->spans[0].end, INT64_C(1700000000000001000));
    assert_int_equal(t->spans[1].start, INT64_C(1700000000000001000));
    assert_int_equal(t->spans[1].end, INT64_C(1700000000000003000));
    tfb_gpu_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

static void test_busy_and_idle(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    /* dev 0: [0,10] [5,20] [30,40]; dev 1: [15,35] (ns). */
    tfb_gpu_trace *t = load(dir, K(0, "0.000", "0.010") "," K(0, "0.005", "0.015")
                                 "," K(0, "0.030", "0.010") ","
                                 K(1, "0.015", "0.020"));
    int64_t *p = NULL;
    size_t n = 0;
    assert_int_equal(tfb_gpu_busy_intervals(t, 0, &p, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], 20);
    assert_int_equal(p[2], 30);
    assert_int_equal(p[3], 40);
    free(p);
    assert_int_equal(tfb_gpu_busy_intervals(t, -1, &p, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], 40);
    free(p);
    assert_int_equal(tfb_gpu_busy_intervals(t, 7, &p, &n), 0);
    assert_int_equal(n, 0);
    assert_null(p);

    /* Device 0 idle in [0,50): [20,30) and [40,50) = 20 ns. */
    int64_t inside = -1, total = -1;
    const int64_t in1[] = {25, 45};
    assert_int_equal(tfb_gpu_idle_within(t, 0, 0, 50, in1, 1, &inside, &total),
                     0);
    assert_int_equal(total, 20);
    assert_int_equal(inside, 10);
    /* Unsorted, overlapping intervals count once. */
    const int64_t in2[] = {44, 48, 25, 45, 26, 27};
    assert_int_equal(tfb_gpu_idle_within(t, 0, 0, 50, in2, 3, &inside, &total),
                     0);
    assert_int_equal(inside, 5 + 8);
    /* All devices: idle only in [40,50). */
    assert_int_equal(tfb_gpu_idle_within(t, -1, 0, 50, in1, 1, &inside, &total),
                     0);
    assert_int_equal(total, 10);
    assert_int_equal(inside, 5);
    /* A window inside a busy stretch has no idle time. */
    assert_int_equal(tfb_gpu_idle_within(t, 0, 2, 18, in1, 1, &inside, &total),
                     0);
    assert_int_equal(total, 0);
    assert_int_equal(inside, 0);
    assert_int_equal(tfb_gpu_idle_within(t, 0, 10, 5, NULL, 0, &inside, &total),
                     TFB_EINVAL);
    tfb_gpu_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

static void test_timeline_merge(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_gpu_trace *t = load(dir, K(0, "0.000", "0.010") "," K(0, "0.100", "0.010")
                                 "," K(0, "0.115", "0.010") ","
                                 K(1, "0.000", "0.500"));
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
    tfb_gpu_trace_release(t);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_ns),
        cmocka_unit_test(test_busy_and_idle),
        cmocka_unit_test(test_timeline_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
