/*
 * test_gpu_metrics.c - always-on GPU metrics against a stand-in NVML
 * (test_nvml_fakelib.c, path in argv[1]): the values logged (read back from
 * the event file with the reader), the sample period (loosely), stop and
 * writer close, start twice, and the errors (no library, a library without
 * NVML's functions, init failures, a device call that fails).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tfboard.h"
#include "test_util.h"

static const char *g_fake;
static void (*g_counts)(int *, int *, int *);

/* What the event file holds for one tag. */
typedef struct tag_log {
    char tag[64];
    int n;
    double first, last;
    int64_t first_step, last_step;
    double first_wall;
    char text[64];
} tag_log;

typedef struct file_log {
    tag_log t[64];
    int ntags;
    int nscalars;
} file_log;

static tag_log *tag_get(file_log *f, const char *tag, size_t len)
{
    for (int i = 0; i < f->ntags; i++)
        if (strlen(f->t[i].tag) == len && memcmp(f->t[i].tag, tag, len) == 0)
            return &f->t[i];
    assert_true(f->ntags < 64);
    tag_log *t = &f->t[f->ntags++];
    memset(t, 0, sizeof *t);
    snprintf(t->tag, sizeof t->tag, "%.*s", (int)len, tag);
    return t;
}

static const tag_log *find(const file_log *f, const char *tag)
{
    for (int i = 0; i < f->ntags; i++)
        if (strcmp(f->t[i].tag, tag) == 0)
            return &f->t[i];
    return NULL;
}

static void read_log(const char *dir, file_log *f)
{
    memset(f, 0, sizeof *f);
    char *path = tu_find_event_file(dir);
    assert_non_null(path);
    tfb_reader *r = NULL;
    assert_int_equal(tfb_reader_open(&r, path), 0);
    tfb_event ev = {.size = sizeof ev};
    while (tfb_reader_next(r, &ev) == 1) {
        if (ev.kind != TFB_EVENT_SUMMARY)
            continue;
        size_t pos = 0;
        tfb_value v = {.size = sizeof v};
        while (tfb_summary_next(ev.summary, ev.summary_len, &pos, &v) == 1) {
            tag_log *t = tag_get(f, v.tag.ptr, v.tag.len);
            if (v.kind == TFB_VALUE_SCALAR) {
                if (t->n == 0) {
                    t->first = v.scalar;
                    t->first_step = ev.step;
                    t->first_wall = ev.wall_time;
                }
                t->last = v.scalar;
                t->last_step = ev.step;
                f->nscalars++;
            } else if (v.kind == TFB_VALUE_TEXT) {
                tfb_strview s;
                assert_int_equal(tfb_value_string(&v, 0, &s), 1);
                snprintf(t->text, sizeof t->text, "%.*s", (int)s.len, s.ptr);
            }
            t->n++;
        }
    }
    tfb_reader_close(r);
    free(path);
}

static void opts_fake(tfb_gpu_metrics_opts *o, unsigned ms)
{
    tfb_gpu_metrics_opts_init(o);
    o->nvml_path = g_fake;
    o->interval_ms = ms;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void test_values_logged(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    int i0, s0, n0;
    g_counts(&i0, &s0, &n0);
    tfb_gpu_metrics_opts o;
    opts_fake(&o, 60000); /* only the first sample, taken in start */
    double before = (double)time(NULL);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), 0);
    tfb_gpu_metrics_stats st;
    tfb_gpu_metrics_stats_init(&st);
    assert_int_equal(tfb_gpu_metrics_get_stats(w, &st), 0);
    assert_int_equal(st.devices, 2);
    assert_int_equal(st.samples, 1);
    assert_int_equal(st.read_errors, 0);
    assert_int_equal(tfb_gpu_metrics_stop(w), 0);
    int i1, s1, n1;
    g_counts(&i1, &s1, &n1);
    assert_int_equal(i1 - i0, 1);
    assert_int_equal(s1 - s0, 1); /* stop shut NVML down */
    assert_int_equal(n1 - n0, 2); /* one sample, two devices */
    assert_int_equal(tfb_writer_close(w), 0);

    file_log f;
    read_log(dir, &f);
    assert_int_equal(f.nscalars, 2 * 7);
    static const struct {
        const char *tag;
        double v;
    } want[] = {
        {"gpu/0/" TFB_TAG_GPU_SM_UTIL, 40},
        {"gpu/0/" TFB_TAG_GPU_MEM_UTIL, 20},
        {"gpu/0/" TFB_TAG_GPU_MEM_USED, 1073741824.0},
        {"gpu/0/" TFB_TAG_GPU_MEM_TOTAL, 85899345920.0},
        {"gpu/0/" TFB_TAG_GPU_POWER, 250.0},
        {"gpu/0/" TFB_TAG_GPU_TEMP, 60},
        {"gpu/0/" TFB_TAG_GPU_SM_CLOCK, 1500},
        {"gpu/1/sm_util", 41},
        {"gpu/1/mem_util", 21},
        {"gpu/1/mem_used_bytes", 2147483648.0},
        {"gpu/1/mem_total_bytes", 85899345920.0},
        {"gpu/1/power_w", 251.0},
        {"gpu/1/temp_c", 61},
        {"gpu/1/sm_clock_mhz", 1510},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const tag_log *t = find(&f, want[i].tag);
        if (!t)
            fail_msg("tag %s missing", want[i].tag);
        assert_int_equal(t->n, 1);
        assert_true(t->first == want[i].v);
        assert_int_equal(t->first_step, 0);
        assert_true(t->first_wall >= before - 1 &&
                    t->first_wall <= (double)time(NULL) + 1);
    }
    const tag_log *name = find(&f, "gpu/1/" TFB_TAG_GPU_NAME);
    assert_non_null(name);
    assert_string_equal(name->text, "Fake GPU 1");
    assert_non_null(find(&f, "gpu/0/name"));
    tu_rmtree(dir);
    free(dir);
}

static void test_period_and_stop(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    tfb_gpu_metrics_opts o;
    opts_fake(&o, 20);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), 0);
    sleep_ms(400);
    assert_int_equal(tfb_gpu_metrics_stop(w), 0);
    /* Counters are gone with the sampler; count from the file. */
    tfb_gpu_metrics_stats st;
    tfb_gpu_metrics_stats_init(&st);
    assert_int_equal(tfb_gpu_metrics_get_stats(w, &st), 0);
    assert_int_equal(st.samples, 0);
    assert_int_equal(tfb_flush(w), 0);
    file_log f1;
    read_log(dir, &f1);
    const tag_log *t = find(&f1, "gpu/0/sm_util");
    assert_non_null(t);
    /* 400 ms at 20 ms: about 20 samples; loosely, for a loaded machine. */
    printf("samples in 400 ms at 20 ms: %d\n", t->n);
    assert_true(t->n >= 3 && t->n <= 25);
    assert_int_equal(t->first_step, 0);
    assert_int_equal(t->last_step, t->n - 1);
    assert_int_equal(f1.nscalars, t->n * 2 * 7);
    /* Stopped: nothing more arrives. */
    sleep_ms(100);
    assert_int_equal(tfb_flush(w), 0);
    file_log f2;
    read_log(dir, &f2);
    assert_int_equal(f2.nscalars, f1.nscalars);
    /* Stop again, and a restart after a stop, are fine. */
    assert_int_equal(tfb_gpu_metrics_stop(w), 0);
    opts_fake(&o, 60000);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), 0);
    assert_int_equal(tfb_gpu_metrics_stop(w), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_close_stops(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    tfb_gpu_metrics_opts o;
    opts_fake(&o, 10);
    int i0, s0, n0;
    g_counts(&i0, &s0, &n0);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), 0);
    /* Twice on one writer: refused, the first keeps running. */
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ESTATE);
    sleep_ms(50);
    assert_int_equal(tfb_writer_close(w), 0);
    int i1, s1, n1;
    g_counts(&i1, &s1, &n1);
    assert_int_equal(i1 - i0, 1);
    assert_int_equal(s1 - s0, 1);
    file_log f;
    read_log(dir, &f);
    const tag_log *t = find(&f, "gpu/1/temp_c");
    assert_non_null(t);
    /* Every sample taken reached the file before close returned. */
    assert_int_equal(t->n * 2, n1 - n0);
    tu_rmtree(dir);
    free(dir);
}

static void test_errors(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    tfb_gpu_metrics_opts o;
    tfb_gpu_metrics_opts_init(&o);
    assert_int_equal(o.interval_ms, 500);
    assert_null(o.nvml_path);
    assert_int_equal(tfb_gpu_metrics_start(NULL, &o), TFB_EINVAL);
    assert_int_equal(tfb_gpu_metrics_stop(NULL), TFB_EINVAL);

    /* No library. */
    o.nvml_path = "/nonexistent/libnvidia-ml.so.1";
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ENONVML);
    assert_non_null(strstr(tfb_gpu_metrics_error(), "/nonexistent/"));
    assert_string_equal(tfb_strerror(TFB_ENONVML),
                        "NVML library could not be loaded");
    /* ... named by the environment. */
    setenv("TFB_NVML_PATH", "/nonexistent/env-nvml.so", 1);
    o.nvml_path = NULL;
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ENONVML);
    assert_non_null(strstr(tfb_gpu_metrics_error(), "env-nvml"));
    /* ... and the environment leads to the stand-in. */
    setenv("TFB_NVML_PATH", g_fake, 1);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), 0);
    assert_int_equal(tfb_gpu_metrics_stop(w), 0);
    unsetenv("TFB_NVML_PATH");
    /* A library that is not NVML. */
    o.nvml_path = "libm.so.6";
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ENONVML);
    assert_non_null(strstr(tfb_gpu_metrics_error(), "nvmlInit_v2"));

    /* Init failures. */
    int i0, s0, n0;
    g_counts(&i0, &s0, &n0);
    o.nvml_path = g_fake;
    setenv("TFB_FAKE_NVML_FAIL", "init", 1);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ENOGPU);
    assert_non_null(strstr(tfb_gpu_metrics_error(), "Driver Not Loaded"));
    setenv("TFB_FAKE_NVML_FAIL", "noperm", 1);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_EACCES);
    setenv("TFB_FAKE_NVML_FAIL", "none", 1);
    setenv("TFB_FAKE_NVML_DEVICES", "0", 1);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ENOGPU);
    unsetenv("TFB_FAKE_NVML_DEVICES");
    int i1, s1, n1;
    g_counts(&i1, &s1, &n1);
    assert_int_equal(i1 - i0, 1); /* only the no-device start got NVML up */
    assert_int_equal(s1 - s0, 1); /* ... and shut it down again */
    assert_int_equal(n1 - n0, 0);
    tfb_gpu_metrics_stats st;
    tfb_gpu_metrics_stats_init(&st);
    assert_int_equal(tfb_gpu_metrics_get_stats(w, &st), 0);
    assert_int_equal(st.samples, 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);

    /* A fresh writer: failed starts log nothing at all. */
    dir = tu_mkdtemp();
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    o.nvml_path = "/nonexistent/libnvidia-ml.so.1";
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ENONVML);
    o.nvml_path = g_fake;
    setenv("TFB_FAKE_NVML_FAIL", "init", 1);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ENOGPU);
    /* A device call that fails: that scalar is left out and counted. */
    setenv("TFB_FAKE_NVML_FAIL", "power", 1);
    o.interval_ms = 60000;
    assert_int_equal(tfb_gpu_metrics_start(w, &o), 0);
    assert_int_equal(tfb_gpu_metrics_get_stats(w, &st), 0);
    assert_int_equal(st.samples, 1);
    assert_int_equal(st.read_errors, 2);
    assert_int_equal(st.log_errors, 0);
    unsetenv("TFB_FAKE_NVML_FAIL");
    assert_int_equal(tfb_writer_close(w), 0);
    file_log f;
    read_log(dir, &f);
    assert_null(find(&f, "gpu/0/power_w"));
    assert_non_null(find(&f, "gpu/0/temp_c"));
    assert_int_equal(f.nscalars, 2 * 6);
    tu_rmtree(dir);
    free(dir);
}

static void test_fork_child_leaves_sampler(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    tfb_gpu_metrics_opts o;
    opts_fake(&o, 10);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), 0);
    int i0, s0, n0;
    g_counts(&i0, &s0, &n0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The child sees no sampler: zeros, and stop only forgets it (no
         * join of a thread that is not there, no NVML shutdown). */
        tfb_gpu_metrics_stats st;
        tfb_gpu_metrics_stats_init(&st);
        int ok = tfb_gpu_metrics_get_stats(w, &st) == 0 && st.samples == 0 &&
                 tfb_gpu_metrics_stop(w) == 0;
        int i1, s1, n1;
        g_counts(&i1, &s1, &n1);
        _exit(ok && s1 == s0 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The parent's sampler still runs. */
    tfb_gpu_metrics_stats st;
    tfb_gpu_metrics_stats_init(&st);
    assert_int_equal(tfb_gpu_metrics_get_stats(w, &st), 0);
    assert_true(st.samples >= 1);
    assert_int_equal(tfb_gpu_metrics_start(w, &o), TFB_ESTATE);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_gpu_metrics <stand-in NVML .so>\n");
        return 1;
    }
    g_fake = argv[1];
    /* Held open, so its counters live across the tests. */
    void *h = dlopen(g_fake, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cannot load %s: %s\n", g_fake, dlerror());
        return 1;
    }
    void *fn = dlsym(h, "tfb_fake_nvml_counts");
    if (!fn)
        return 1;
    memcpy(&g_counts, &fn, sizeof fn);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_logged),
        cmocka_unit_test(test_period_and_stop),
        cmocka_unit_test(test_close_stops),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_fork_child_leaves_sampler),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    dlclose(h);
    return rc;
}
