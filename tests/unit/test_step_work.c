/*
 * test_step_work.c - work per step, checkpoints and comm bytes (issue 29
 * items 2, 3, 5), read back from the event file: perf/samples_per_s,
 * tokens_per_s and tflops per step from the step's own step_ms; perf/mfu
 * only with a known peak; the perf/work record (constant, then "varies";
 * peak unknown without opts or a known device); opts' constant work and
 * its validation; opts.device for the peak table; goodput/checkpoint_ms at the last step begun; the
 * cumulative comm/collectives record decoded back, by name and bucket,
 * names copied (not kept by pointer), the table's "other" past its size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <time.h>

#include "collector/perf_work.h"
#include "tu_perf_log.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static tu_log g_log;

static void near(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("%s: %.9g, want %.9g", what, got, want);
}

/* The value of key in a record's "key=value" lines, into out. */
static int rec_get(const char *rec, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *p = rec; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t ll = nl ? (size_t)(nl - p) : strlen(p);
        if (ll > kl && memcmp(p, key, kl) == 0 && p[kl] == '=') {
            snprintf(out, cap, "%.*s", (int)(ll - kl - 1), p + kl + 1);
            return 1;
        }
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

static void expect_key(const char *rec, const char *key, const char *want)
{
    char v[256];
    if (!rec)
        fail_msg("no record (want %s=%s)", key, want);
    if (!rec_get(rec, key, v, sizeof v) || strcmp(v, want) != 0)
        fail_msg("record %s=[%s], want [%s]; record:\n%s", key,
                 rec_get(rec, key, v, sizeof v) ? v : "(none)", want, rec);
}

static void perf_scalars(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.peak_tflops = 100;
    o.dtype = "torch.bfloat16";
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    /* Outside a step: refused, ignored. */
    assert_int_equal(tfb_step_work(w, 1, 1, 1), TFB_ESTATE);
    for (int s = 1; s <= 4; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_step_work(w, -1, 0, 0), TFB_EINVAL);
        assert_int_equal(tfb_step_work(w, NAN, 0, 0), TFB_EINVAL);
        sleep_ms(3);
        /* Steps 1-3 do the same work; step 4 more flops. */
        assert_int_equal(
            tfb_step_work(w, s == 4 ? 3e12 : 2e12, 32, s == 2 ? 0 : 4096),
            0);
        assert_int_equal(tfb_step_end(w), 0);
    }
    assert_int_equal(tfb_flush(w), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_read_log(dir, &g_log);
    for (int s = 1; s <= 4; s++) {
        int f;
        double ms = tu_at(&g_log, TFB_TAG_STEP_MS, s, &f);
        assert_true(f && ms > 0);
        double t = ms / 1e3, flops = s == 4 ? 3e12 : 2e12;
        /* Scalars are float32 in the file: 1e-6 relative. */
        near(tu_at(&g_log, TFB_TAG_PERF_SAMPLES_PER_S, s, &f), 32 / t, 1e-5,
             "samples_per_s");
        assert_true(f);
        near(tu_at(&g_log, TFB_TAG_PERF_TFLOPS, s, &f), flops / t / 1e12,
             1e-5, "tflops");
        near(tu_at(&g_log, TFB_TAG_PERF_MFU, s, &f),
             flops / t / 1e12 / 100 * 100, 1e-5, "mfu");
        assert_true(f);
        double tps = tu_at(&g_log, TFB_TAG_PERF_TOKENS_PER_S, s, &f);
        if (s == 2) {
            assert_false(f); /* no tokens that step: no scalar */
        } else {
            near(tps, 4096 / t, 1e-5, "tokens_per_s");
        }
    }
    const char *rec = tu_text(&g_log, TFB_PERF_WORK_TAG);
    expect_key(rec, "version", "1");
    expect_key(rec, "flops_per_step", "varies");
    expect_key(rec, "samples_per_step", "32");
    expect_key(rec, "tokens_per_step", "varies");
    expect_key(rec, "dtype", "bf16");
    expect_key(rec, "peak_tflops", "100");
    expect_key(rec, "peak_source", "opts");
    expect_key(rec, "device", "");
    tu_rmtree(dir);
    free(dir);
}

static void opts_work_and_unknown_peak(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    tfb_writer *w = NULL;
    /* Hostile opts: refused at open with a clear code. */
    o.dtype = "int4";
    assert_int_equal(tfb_writer_open(&w, dir, &o), TFB_EINVAL);
    o.dtype = NULL;
    o.flops_per_step = -5;
    assert_int_equal(tfb_writer_open(&w, dir, &o), TFB_EINVAL);
    o.flops_per_step = INFINITY;
    assert_int_equal(tfb_writer_open(&w, dir, &o), TFB_EINVAL);
    /* Constant work from opts; no peak anywhere (no opts, no NVML). */
    o.flops_per_step = 5e11;
    o.tokens_per_step = 1000;
    o.dtype = "bf16";
    assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        sleep_ms(2);
        assert_int_equal(tfb_step_end(w), 0);
    }
    assert_int_equal(tfb_writer_close(w), 0);
    tu_read_log(dir, &g_log);
    assert_int_equal(tu_count(&g_log, TFB_TAG_PERF_TFLOPS), 3);
    assert_int_equal(tu_count(&g_log, TFB_TAG_PERF_TOKENS_PER_S), 3);
    assert_int_equal(tu_count(&g_log, TFB_TAG_PERF_SAMPLES_PER_S), 0);
    /* Peak unknown: never an MFU. */
    assert_int_equal(tu_count(&g_log, TFB_TAG_PERF_MFU), 0);
    const char *rec = tu_text(&g_log, TFB_PERF_WORK_TAG);
    expect_key(rec, "flops_per_step", "500000000000");
    expect_key(rec, "samples_per_step", "0");
    expect_key(rec, "tokens_per_step", "1000");
    expect_key(rec, "peak_tflops", "unknown");
    expect_key(rec, "peak_source", "unknown");
    /* Written once: at the first step with work (no change after). */
    assert_int_equal(g_log.work_records, 1);
    tu_rmtree(dir);
    free(dir);
}

/* opts.device names the GPU when no NVML sampler runs: its table entry
 * gives the peak; a name the table does not know gives none. */
static void opts_device(void **state)
{
    (void)state;
    static const struct {
        const char *device;
        double peak; /* 0 = unknown */
    } cases[] = {{"NVIDIA A100-SXM4-80GB", 156}, {"NVIDIA A10G", 0}};
    for (size_t i = 0; i < 2; i++) {
        char *dir = tu_mkdtemp();
        tfb_writer_opts o;
        tfb_writer_opts_init(&o);
        o.dtype = "tf32";
        o.device = cases[i].device;
        o.flops_per_step = 1e10;
        tfb_writer *w = NULL;
        assert_int_equal(tfb_writer_open(&w, dir, &o), 0);
        assert_int_equal(tfb_step_begin(w, 1), 0);
        sleep_ms(2);
        assert_int_equal(tfb_step_end(w), 0);
        assert_int_equal(tfb_writer_close(w), 0);
        tu_read_log(dir, &g_log);
        const char *rec = tu_text(&g_log, TFB_PERF_WORK_TAG);
        char want[128];
        snprintf(want, sizeof want, "%s", cases[i].device);
        expect_key(rec, "device", want);
        int f;
        double mfu = tu_at(&g_log, TFB_TAG_PERF_MFU, 1, &f);
        if (cases[i].peak > 0) {
            expect_key(rec, "peak_tflops", "156");
            expect_key(rec, "peak_source", "table");
            double t = tu_at(&g_log, TFB_TAG_STEP_MS, 1, NULL) / 1e3;
            near(mfu, 1e10 / t / 1e12 / 156 * 100, 1e-5, "mfu");
        } else {
            expect_key(rec, "peak_tflops", "unknown");
            assert_false(f);
        }
        tu_rmtree(dir);
        free(dir);
    }
}

static void checkpoints(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_checkpoint_end(w), TFB_ESTATE);
    /* Before any step: step 0. */
    assert_int_equal(tfb_checkpoint_begin(w), 0);
    assert_int_equal(tfb_step_begin(w, 1), TFB_ESTATE);
    assert_int_equal(tfb_step_work(w, 1, 1, 1), TFB_ESTATE);
    sleep_ms(5);
    assert_int_equal(tfb_checkpoint_end(w), 0);
    for (int s = 1; s <= 7; s++) {
        assert_int_equal(tfb_step_begin(w, s), 0);
        assert_int_equal(tfb_checkpoint_begin(w), TFB_ESTATE);
        assert_int_equal(tfb_step_end(w), 0);
    }
    assert_int_equal(tfb_checkpoint_begin(w), 0);
    sleep_ms(12);
    assert_int_equal(tfb_checkpoint_end(w), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_read_log(dir, &g_log);
    assert_int_equal(tu_count(&g_log, TFB_TAG_CHECKPOINT_MS), 2);
    int f;
    double a = tu_at(&g_log, TFB_TAG_CHECKPOINT_MS, 0, &f);
    assert_true(f && a >= 5);
    double b = tu_at(&g_log, TFB_TAG_CHECKPOINT_MS, 7, &f);
    assert_true(f && b >= 12);
    assert_int_equal(tu_count(&g_log, TFB_TAG_STEP_MS), 7);
    tu_rmtree(dir);
    free(dir);
}

/* One line of the comm record: count, bytes, ns of (name, bucket). */
static int comm_line(const char *rec, const char *name, uint64_t lo,
                     uint64_t *count, uint64_t *bytes, long long *ns)
{
    for (const char *p = strchr(rec, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        char nm[64];
        unsigned long long l, c, b;
        long long t;
        if (sscanf(p + 1, "%63[^\t]\t%llu\t%llu\t%llu\t%lld", nm, &l, &c, &b,
                   &t) == 5 &&
            strcmp(nm, name) == 0 && l == lo) {
            *count = c;
            *bytes = b;
            *ns = t;
            return 1;
        }
    }
    return 0;
}

static void comm_record(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    tfb_writer *w = NULL;
    assert_int_equal(tfb_writer_open(&w, dir, NULL), 0);
    assert_int_equal(tfb_comm_begin_bytes(w, "all_reduce", 8), TFB_ESTATE);
    char name[80];
    assert_int_equal(tfb_step_begin(w, 1), 0);
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "all_reduce");
        assert_int_equal(tfb_comm_begin_bytes(w, name, 1000), 0);
        /* The name is the caller's again at once: it was copied. */
        snprintf(name, sizeof name, "XXXXXXXXXX");
        sleep_ms(1);
        assert_int_equal(tfb_comm_end(w), 0);
    }
    assert_int_equal(tfb_comm_begin_bytes(w, "all_gather", 4096), 0);
    assert_int_equal(tfb_comm_end(w), 0);
    assert_int_equal(tfb_comm_begin_bytes(w, "all_gather", 8191), 0);
    assert_int_equal(tfb_comm_end(w), 0);
    assert_int_equal(tfb_comm_begin_bytes(w, "all_reduce", 0), 0);
    assert_int_equal(tfb_comm_end(w), 0);
    /* A name that would break the record's lines is cleaned. */
    assert_int_equal(tfb_comm_begin_bytes(w, "evil\tname\n3\t4", 5), 0);
    assert_int_equal(tfb_comm_end(w), 0);
    /* A plain span is timed as before but not in the table. */
    assert_int_equal(tfb_comm_begin(w, "barrier"), 0);
    assert_int_equal(tfb_comm_end(w), 0);
    /* A long name is cut; names past the table are "other". */
    assert_int_equal(tfb_comm_begin_bytes(w, "a_very_long_collective_name_"
                                             "that_goes_on_and_on_and_on",
                                          1 << 20),
                     0);
    assert_int_equal(tfb_comm_end(w), 0);
    for (int i = 0; i < TFB_COMM_NAMES_MAX + 5; i++) {
        snprintf(name, sizeof name, "pg%d", i);
        assert_int_equal(tfb_comm_begin_bytes(w, name, 2), 0);
        assert_int_equal(tfb_comm_end(w), 0);
    }
    assert_int_equal(tfb_step_end(w), 0);
    assert_int_equal(tfb_flush(w), 0);
    tu_read_log(dir, &g_log);
    const char *rec = tu_text(&g_log, TFB_COMM_COLLECTIVES_TAG);
    assert_non_null(rec);
    assert_true(strncmp(rec, "version=1\n", 10) == 0);
    uint64_t c, b;
    long long ns;
    assert_true(comm_line(rec, "all_reduce", 512, &c, &b, &ns));
    assert_int_equal(c, 3);
    assert_int_equal(b, 3000);
    double comm_ms = tu_at(&g_log, TFB_TAG_COMM_MS, 1, NULL);
    assert_true(ns >= 3000000 && ns <= comm_ms * 1e6 + 1);
    assert_true(comm_line(rec, "all_reduce", 0, &c, &b, &ns));
    assert_int_equal(c, 1);
    assert_int_equal(b, 0);
    assert_true(comm_line(rec, "all_gather", 4096, &c, &b, &ns));
    assert_int_equal(c, 2);
    assert_int_equal(b, 4096 + 8191);
    assert_false(comm_line(rec, "barrier", 0, &c, &b, &ns));
    assert_true(comm_line(rec, "evil_name_3_4", 4, &c, &b, &ns));
    assert_int_equal(b, 5);
    assert_false(strstr(rec, "XXXX"));
    static const char longname[] =
        "a_very_long_collective_name_that_goes_on_and_on_and_on";
    char cut[TFB_COMM_NAME_MAX];
    memcpy(cut, longname, TFB_COMM_NAME_MAX - 1);
    cut[TFB_COMM_NAME_MAX - 1] = 0;
    assert_true(comm_line(rec, cut, 1 << 20, &c, &b, &ns));
    /* 4 names so far + pg0.. fill the table to TFB_COMM_NAMES_MAX - 1;
     * the rest, 10 of them, are "other". */
    int named = TFB_COMM_NAMES_MAX - 1 - 4;
    assert_true(comm_line(rec, "pg0", 2, &c, &b, &ns));
    snprintf(name, sizeof name, "pg%d", named - 1);
    assert_true(comm_line(rec, name, 2, &c, &b, &ns));
    snprintf(name, sizeof name, "pg%d", named);
    assert_false(comm_line(rec, name, 2, &c, &b, &ns));
    assert_true(comm_line(rec, "other", 2, &c, &b, &ns));
    assert_int_equal(c, TFB_COMM_NAMES_MAX + 5 - named);
    /* Cumulative: another step adds to the same rows. */
    assert_int_equal(tfb_step_begin(w, 2), 0);
    assert_int_equal(tfb_comm_begin_bytes(w, "all_reduce", 600), 0);
    assert_int_equal(tfb_comm_end(w), 0);
    assert_int_equal(tfb_step_end(w), 0);
    assert_int_equal(tfb_writer_close(w), 0);
    tu_read_log(dir, &g_log);
    rec = tu_text(&g_log, TFB_COMM_COLLECTIVES_TAG);
    assert_true(comm_line(rec, "all_reduce", 512, &c, &b, &ns));
    assert_int_equal(c, 4);
    assert_int_equal(b, 3600);
    assert_int_equal(tfb_perf_bucket_lo(0), 0);
    assert_int_equal(tfb_perf_bucket_lo(1), 1);
    assert_int_equal(tfb_perf_bucket_lo(1023), 512);
    assert_int_equal(tfb_perf_bucket_lo(UINT64_MAX), (uint64_t)1 << 63);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(perf_scalars),
        cmocka_unit_test(opts_work_and_unknown_peak),
        cmocka_unit_test(opts_device),
        cmocka_unit_test(checkpoints),
        cmocka_unit_test(comm_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
