/*
 * test_gpu_energy.c - energy per step and the job's devices (issue 29
 * item 4), against the stand-in NVML (test_nvml_fakelib.c; argv[1] with
 * the energy counter, argv[2] built without it):
 *  - counter: gpu/<d>/energy_j / step time is the counter's power
 *    (300 + d W), perf/energy_j their sum, perf/j_per_token, and
 *    energy_source "counter";
 *  - no counter (the function missing, or NOT_SUPPORTED): power x time
 *    (250 + d W) and energy_source "power_x_time";
 *  - MFU from the peak table when the device name is a known one (and
 *    the dtype given); a stand-in's unknown name gives no perf/mfu;
 *  - CUDA_VISIBLE_DEVICES by index, GPU UUID (and its prefix) and MIG
 *    UUID: only those devices, in that order, gpu/<n>/physical naming the
 *    physical device; a list naming no device is refused (TFB_ENOGPU).
 * Power is compared as joules / step time: exact up to float32 and the
 * counter's mJ, whatever the machine's load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <time.h>

#include "tu_perf_log.h"

static const char *g_fake, *g_fake_noenergy;
static tu_log g_log;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void clear_env(void)
{
    unsetenv("TFB_FAKE_NVML_FAIL");
    unsetenv("TFB_FAKE_NVML_NAME");
    unsetenv("TFB_FAKE_NVML_MIG");
    unsetenv("TFB_FAKE_NVML_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* Opens a writer with (dtype, tokens) work, starts NVML from lib, runs
 * `steps` steps of ~25 ms (more than the counter's read interval), flushes
 * and reads the file into g_log. Returns the metrics start's code. */
static int run_steps(const char *lib, int steps, const char *dtype)
{
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.dtype = dtype;
    o.tokens_per_step = 2048;
    o.flops_per_step = 6.0 * 1e9 * 2048;
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    tfb_gpu_metrics_opts mo;
    tfb_gpu_metrics_opts_init(&mo);
    mo.nvml_path = lib;
    mo.interval_ms = 10000; /* the periodic samples are not under test */
    int rc = tfb_gpu_metrics_start(w, &mo);
    for (int s = 1; rc == 0 && s <= steps; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        sleep_ms(25);
        assert_int_equal(tfb_step_end(w), 0);
        sleep_ms(1);
    }
    assert_int_equal(tfb_flush(w), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_read_log(dir, &g_log);
    tu_rmtree(dir);
    free(dir);
    return rc;
}

/* Mean watts of gpu/<dev>/energy_j over the steps that have it; the
 * number of such steps in *n. */
static double watts(int dev, int steps, int *n)
{
    char tag[48];
    snprintf(tag, sizeof tag, "gpu/%d/energy_j", dev);
    double sum = 0;
    *n = 0;
    for (int s = 1; s <= steps; s++) {
        int f, g;
        double j = tu_at(&g_log, tag, s, &f);
        double ms = tu_at(&g_log, TFB_TAG_STEP_MS, s, &g);
        if (f && g) {
            sum += j / (ms / 1e3);
            (*n)++;
        }
    }
    return *n ? sum / *n : 0;
}

static void expect_watts(int dev, int steps, double want)
{
    int n;
    double w = watts(dev, steps, &n);
    /* Every step but possibly the first (the counter's first read needs
     * ENERGY_READ_MIN_MS since the baseline) has its energy. */
    if (n < steps - 1)
        fail_msg("gpu/%d: energy in %d of %d steps", dev, n, steps);
    if (fabs(w - want) > want * 0.01)
        fail_msg("gpu/%d: %.3f W, want %.1f W", dev, w, want);
}

static void counter(void **state)
{
    (void)state;
    clear_env();
    setenv("TFB_FAKE_NVML_NAME", "NVIDIA H100 80GB HBM3", 1);
    assert_int_equal(run_steps(g_fake, 6, "bf16"), 0);
    expect_watts(0, 6, 300);
    expect_watts(1, 6, 301);
    assert_string_equal(tu_text(&g_log, "gpu/0/energy_source"), "counter");
    for (int s = 2; s <= 6; s++) {
        int f;
        double e = tu_at(&g_log, TFB_TAG_PERF_ENERGY_J, s, &f);
        assert_true(f);
        double e0 = tu_at(&g_log, "gpu/0/energy_j", s, NULL);
        double e1 = tu_at(&g_log, "gpu/1/energy_j", s, NULL);
        assert_true(fabs(e - (e0 + e1)) <= 1e-5 * e);
        double jt = tu_at(&g_log, TFB_TAG_PERF_J_PER_TOKEN, s, &f);
        assert_true(f && fabs(jt - e / 2048) <= 1e-5 * jt);
        /* A known device and dtype: MFU against the table's 989.5. */
        double ms = tu_at(&g_log, TFB_TAG_STEP_MS, s, NULL);
        double tflops = 6.0 * 1e9 * 2048 / (ms / 1e3) / 1e12;
        double mfu = tu_at(&g_log, TFB_TAG_PERF_MFU, s, &f);
        assert_true(f && fabs(mfu - tflops / 989.5 * 100) <= 1e-5 * mfu);
    }
    /* No samples given: no joules per sample. */
    assert_int_equal(tu_count(&g_log, TFB_TAG_PERF_J_PER_SAMPLE), 0);
    const char *rec = tu_text(&g_log, TFB_PERF_WORK_TAG);
    assert_non_null(rec);
    assert_non_null(strstr(rec, "peak_tflops=989.5\n"));
    assert_non_null(strstr(rec, "peak_source=table\n"));
    assert_non_null(strstr(rec, "device=NVIDIA H100 80GB HBM3\n"));
    clear_env();
}

static void fallback(void **state)
{
    (void)state;
    clear_env();
    /* The function missing (a pre-Volta driver). */
    assert_int_equal(run_steps(g_fake_noenergy, 5, NULL), 0);
    expect_watts(0, 5, 250);
    expect_watts(1, 5, 251);
    assert_string_equal(tu_text(&g_log, "gpu/1/energy_source"),
                        "power_x_time");
    /* Unknown device name ("Fake GPU 0") and no dtype: no MFU. */
    assert_int_equal(tu_count(&g_log, TFB_TAG_PERF_MFU), 0);
    assert_non_null(strstr(tu_text(&g_log, TFB_PERF_WORK_TAG),
                           "peak_tflops=unknown\n"));
    /* Present but NOT_SUPPORTED. */
    setenv("TFB_FAKE_NVML_FAIL", "energy", 1);
    assert_int_equal(run_steps(g_fake, 4, "bf16"), 0);
    expect_watts(0, 4, 250);
    assert_string_equal(tu_text(&g_log, "gpu/0/energy_source"),
                        "power_x_time");
    /* Known dtype but a device the table does not know: still no MFU. */
    assert_int_equal(tu_count(&g_log, TFB_TAG_PERF_MFU), 0);
    clear_env();
}

static void visible_devices(void **state)
{
    (void)state;
    clear_env();
    setenv("TFB_FAKE_NVML_DEVICES", "3", 1);
    /* By index: only device 2, as gpu/0. */
    setenv("CUDA_VISIBLE_DEVICES", "2", 1);
    assert_int_equal(run_steps(g_fake, 3, NULL), 0);
    assert_string_equal(
        tu_text(&g_log, "gpu/0/physical"),
        "cuda=0 nvml=2 uuid=GPU-00000003-0000-4000-8000-000000000000");
    assert_null(tu_text(&g_log, "gpu/1/name"));
    expect_watts(0, 3, 302); /* device 2's counter */
    /* By UUID prefix and index, in that order; the list ends at the
     * first entry CUDA would not take. */
    setenv("CUDA_VISIBLE_DEVICES", "GPU-00000002, 0,bogus,2", 1);
    assert_int_equal(run_steps(g_fake, 2, NULL), 0);
    assert_string_equal(
        tu_text(&g_log, "gpu/0/physical"),
        "cuda=0 nvml=1 uuid=GPU-00000002-0000-4000-8000-000000000000");
    assert_string_equal(
        tu_text(&g_log, "gpu/1/physical"),
        "cuda=1 nvml=0 uuid=GPU-00000001-0000-4000-8000-000000000000");
    assert_null(tu_text(&g_log, "gpu/2/name"));
    /* A MIG instance: its parent named, metrics it lacks left out. */
    setenv("TFB_FAKE_NVML_MIG", "1", 1);
    setenv("CUDA_VISIBLE_DEVICES",
           "MIG-00000002-0000-4000-8000-000000000002", 1);
    assert_int_equal(run_steps(g_fake, 2, NULL), 0);
    assert_string_equal(
        tu_text(&g_log, "gpu/0/physical"),
        "cuda=0 nvml=1 uuid=GPU-00000002-0000-4000-8000-000000000000 "
        "mig=MIG-00000002-0000-4000-8000-000000000002");
    assert_string_equal(tu_text(&g_log, "gpu/0/name"),
                        "Fake GPU 1 MIG 3g.40gb");
    assert_int_equal(tu_count(&g_log, "gpu/0/power_w"), 0);
    assert_int_equal(tu_count(&g_log, "gpu/0/energy_j"), 0);
    assert_true(tu_count(&g_log, "gpu/0/mem_used_bytes") >= 1);
    /* Lists naming no device of this machine: refused, said so. */
    static const char *const none[] = {"", "7", "GPU-ffff", "-1",
                                       "MIG-GPU-00000002/1/0"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        setenv("CUDA_VISIBLE_DEVICES", none[i], 1);
        assert_int_equal(run_steps(g_fake, 1, NULL), TFB_ENOGPU);
        assert_non_null(strstr(tfb_gpu_metrics_error(),
                               "CUDA_VISIBLE_DEVICES"));
    }
    clear_env();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FAKE_NVML FAKE_NVML_NO_ENERGY\n", argv[0]);
        return 2;
    }
    g_fake = argv[1];
    g_fake_noenergy = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counter),
        cmocka_unit_test(fallback),
        cmocka_unit_test(visible_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
