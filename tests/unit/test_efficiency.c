/*
 * test_efficiency.c - the efficiency analysis (server/analysis/
 * efficiency.c, issue 29): its formulas on hand-computed cases (MFU, 6 N T,
 * Wh, gCO2, dtype spellings), the goodput decomposition (startup, a gap
 * with a checkpoint in it, input and comm, steps that overlap or go back
 * in time: no negative part, the parts sum to the wall time), and the
 * peak's resolution on runs filled through the store's own API (flag,
 * perf/work record, device name in the table, unknown device, bf16
 * assumed, 6 N T from hparams-less perf/work).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/efficiency.h"
#include "store/store.h"

#define EPS 1e-9

/* ---- formulas ------------------------------------------------------------- */

static void test_mfu_formula(void **st)
{
    (void)st;
    /* 250 of 1000 TFLOP/s: 25 %; 494.7 of 989.4: 50 %. */
    assert_true(fabs(tfb_eff_mfu_pct(250, 1000) - 25.0) < EPS);
    assert_true(fabs(tfb_eff_mfu_pct(494.7, 989.4) - 50.0) < EPS);
    /* No peak: unknown, never a figure. */
    assert_true(isnan(tfb_eff_mfu_pct(250, 0)));
    assert_true(isnan(tfb_eff_mfu_pct(250, -1)));
    assert_true(isnan(tfb_eff_mfu_pct(250, NAN)));
    assert_true(isnan(tfb_eff_mfu_pct(NAN, 1000)));
}

static void test_6nt(void **st)
{
    (void)st;
    /* 7e9 parameters, 8 x 4096 tokens: 6 x 7e9 x 32768 = 1.376256e15. */
    assert_true(fabs(tfb_eff_flops_6nt(7e9, 8 * 4096) - 1.376256e15) < 1.0);
    assert_true(tfb_eff_flops_6nt(1, 1) == 6.0);
}

static void test_energy_formulas(void **st)
{
    (void)st;
    assert_true(fabs(tfb_eff_wh(7200) - 2.0) < EPS);
    /* 3.6e6 J is 1 kWh: at 400 g/kWh, 400 g; 9e5 J at 250: 62.5 g. */
    assert_true(fabs(tfb_eff_gco2(3.6e6, 400) - 400.0) < EPS);
    assert_true(fabs(tfb_eff_gco2(9e5, 250) - 62.5) < EPS);
    assert_true(isnan(tfb_eff_gco2(3.6e6, 0)));
    assert_true(isnan(tfb_eff_gco2(NAN, 400)));
}

static void dtype_is(const char *s, int want)
{
    tfb_peak_dtype d = TFB_PEAK_DTYPE_COUNT;
    int rc = tfb_eff_dtype_guess(s, strlen(s), &d);
    if (want < 0) {
        if (rc == 0)
            fail_msg("%s parsed as %d", s, (int)d);
        return;
    }
    if (rc != 0 || (int)d != want)
        fail_msg("%s: rc %d dtype %d, want %d", s, rc, (int)d, want);
}

static void test_dtype_spellings(void **st)
{
    (void)st;
    dtype_is("bf16", TFB_PEAK_BF16);
    dtype_is("torch.bfloat16", TFB_PEAK_BF16);
    dtype_is("bf16-mixed", TFB_PEAK_BF16);
    dtype_is("amp_bf16", TFB_PEAK_BF16);
    dtype_is("BF16", TFB_PEAK_BF16);
    dtype_is("torch.float16", TFB_PEAK_FP16);
    dtype_is("16-mixed", TFB_PEAK_FP16);
    dtype_is("half", TFB_PEAK_FP16);
    dtype_is("tf32", TFB_PEAK_TF32);
    dtype_is("float8_e4m3fn", TFB_PEAK_FP8);
    dtype_is("fp8", TFB_PEAK_FP8);
    dtype_is("fp32", -1);
    dtype_is("32-true", -1);
    dtype_is("", -1);
    dtype_is("a very long string that names no dtype at all, past 64 bytes ...", -1);
}

/* ---- goodput ---------------------------------------------------------------- */

static void parts_sum(const tfb_eff_goodput *g)
{
    double parts[] = {g->productive_s, g->input_s, g->comm_s, g->startup_s,
                      g->gap_s, g->checkpoint_s};
    double sum = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!(parts[i] >= 0))
            fail_msg("part %zu is %g", i, parts[i]);
        sum += parts[i];
    }
    if (fabs(sum - g->wall_s) > 1e-6)
        fail_msg("parts sum to %.9f, wall %.9f", sum, g->wall_s);
}

/* The hand case: run start 1000; steps of 1 s (input 0.2, comm 0.1)
 * [1010,1011] [1011,1012] [1012,1013], a 5 s gap holding a 2 s checkpoint
 * [1014.5,1016.5], then [1018,1019]. wall 19 = productive 4 x 0.7 +
 * input 0.8 + comm 0.4 + startup 10 + checkpoint 2 + gap 3. */
static void test_goodput_hand(void **st)
{
    (void)st;
    /* given out of order: the function sorts */
    tfb_eff_step_span s[] = {{1019, 1, 0.2, 0.1},
                             {1011, 1, 0.2, 0.1},
                             {1013, 1, 0.2, 0.1},
                             {1012, 1, 0.2, 0.1}};
    tfb_eff_ckpt_span c[] = {{1016.5, 2}};
    tfb_eff_goodput g;
    tfb_eff_goodput_of(s, 4, c, 1, 1000, &g);
    assert_true(fabs(g.wall_s - 19) < 1e-9);
    assert_true(fabs(g.productive_s - 2.8) < 1e-9);
    assert_true(fabs(g.input_s - 0.8) < 1e-9);
    assert_true(fabs(g.comm_s - 0.4) < 1e-9);
    assert_true(fabs(g.startup_s - 10) < 1e-9);
    assert_true(fabs(g.checkpoint_s - 2) < 1e-9);
    assert_true(fabs(g.gap_s - 3) < 1e-9);
    assert_true(fabs(g.goodput - 2.8 / 19) < 1e-12);
    parts_sum(&g);
}

/* Checkpoints over each other count once; one outside every gap (inside
 * a step, or after the last) counts nothing; one across a gap's edge only
 * its part in the gap. */
static void test_goodput_checkpoints(void **st)
{
    (void)st;
    tfb_eff_step_span s[] = {{1, 1, 0, 0}, {7, 1, 0, 0}};
    /* gap [1,6]: [2,4] and [3,5] merge to [2,5] (3 s); [0.5,1.5] reaches
     * 0.5 s into it; [6.5,6.8] is inside the step; [8,9] after the end. */
    tfb_eff_ckpt_span c[] = {{5, 2}, {4, 2}, {1.5, 1}, {6.8, 0.3}, {9, 1}};
    tfb_eff_goodput g;
    tfb_eff_goodput_of(s, 2, c, 5, 0, &g);
    assert_true(fabs(g.wall_s - 7) < 1e-9);
    assert_true(fabs(g.checkpoint_s - 3.5) < 1e-9);
    assert_true(fabs(g.gap_s - 1.5) < 1e-9);
    assert_true(fabs(g.productive_s - 2) < 1e-9);
    parts_sum(&g);
}

/* Two writers logging the same step, a step that overlaps the one before,
 * a step that went back in time (a clock jump), input + comm longer than
 * the step, a step that began before the run start: only what lies past
 * the counted time counts, nothing is negative, the parts still sum. */
static void test_goodput_overlap_and_backwards(void **st)
{
    (void)st;
    tfb_eff_step_span s[] = {
        {11, 1, 0.5, 0},     /* [10,11] */
        {11, 1, 0.5, 0},     /* the same, from a second writer: 0 */
        {11.5, 1, 0.5, 0},   /* [10.5,11.5]: its last half, input 0.25 */
        {10.8, 0.3, 0.1, 0}, /* inside what is counted (clock went back) */
        {13, 1, 0.8, 0.5},   /* input 0.8, comm capped at 0.2 */
    };
    tfb_eff_goodput g;
    tfb_eff_goodput_of(s, 5, NULL, 0, 9, &g);
    parts_sum(&g);
    assert_true(fabs(g.wall_s - 4) < 1e-9);
    assert_true(fabs(g.startup_s - 1) < 1e-9);
    assert_true(fabs(g.gap_s - 0.5) < 1e-9);   /* [11.5,12] */
    assert_true(fabs(g.input_s - (0.5 + 0.25 + 0.8)) < 1e-9);
    assert_true(fabs(g.comm_s - 0.2) < 1e-9);
    assert_true(fabs(g.productive_s - (0.5 + 0.25 + 0)) < 1e-9);

    /* A step that began before the run start is cut at it: no negative
     * startup; a step that ended before it counts nothing. */
    tfb_eff_step_span b[] = {{105, 10, 0, 0}, {99, 1, 0, 0}};
    tfb_eff_goodput_of(b, 2, NULL, 0, 100, &g);
    parts_sum(&g);
    assert_true(fabs(g.wall_s - 5) < 1e-9);
    assert_true(g.startup_s == 0);
    assert_true(fabs(g.productive_s - 5) < 1e-9);

    /* No run start known: the first step's start. */
    tfb_eff_step_span one[] = {{50, 2, 0, 0}};
    tfb_eff_goodput_of(one, 1, NULL, 0, NAN, &g);
    assert_true(fabs(g.wall_s - 2) < 1e-9 && g.startup_s == 0);
    assert_true(fabs(g.goodput - 1) < 1e-12);

    /* No steps: zeros and NaN. */
    tfb_eff_goodput_of(NULL, 0, NULL, 0, 0, &g);
    assert_true(g.wall_s == 0 && isnan(g.goodput));
}

/* ---- runs in a store -------------------------------------------------------- */

static tfb_series *series(tfb_run *r, tfb_series_kind k, const char *tag)
{
    tfb_series *s = NULL;
    const char *plugin = k == TFB_SERIES_TEXT ? "text" : "";
    assert_int_equal(tfb_run_get_series(r, k, tag, strlen(tag), plugin,
                                        strlen(plugin), "", 0, "", 0, &s),
                     0);
    return s;
}

static void scalar(tfb_run *r, const char *tag, int64_t step, double wall,
                   double v)
{
    tfb_run_note_event(r, wall, step);
    assert_int_equal(tfb_series_append_scalar(series(r, TFB_SERIES_SCALAR, tag),
                                              step, wall, v),
                     0);
}

static void text(tfb_run *r, const char *tag, const char *t)
{
    assert_int_equal(tfb_series_append_text(series(r, TFB_SERIES_TEXT, tag), 0,
                                            1000, t, strlen(t)),
                     0);
}

/* The perf/work record: a rank-0 DT_STRING TensorProto (dtype = 7,
 * string_val = the lines). */
static void work(tfb_run *r, const char *lines)
{
    uint8_t t[512];
    size_t n = strlen(lines), k = 0;
    assert_true(n < 256);
    t[k++] = 0x08; /* dtype, varint */
    t[k++] = 7;    /* DT_STRING */
    t[k++] = 0x12; /* tensor_shape {} */
    t[k++] = 0;
    t[k++] = 0x42; /* string_val, length-delimited */
    if (n < 128) {
        t[k++] = (uint8_t)n;
    } else {
        t[k++] = (uint8_t)(0x80 | (n & 0x7f));
        t[k++] = (uint8_t)(n >> 7);
    }
    memcpy(t + k, lines, n);
    k += n;
    assert_int_equal(tfb_run_put_record(r, TFB_EFF_PERF_PLUGIN,
                                        strlen(TFB_EFF_PERF_PLUGIN),
                                        TFB_EFF_PERF_TAG,
                                        strlen(TFB_EFF_PERF_TAG), 1, 1001, "",
                                        0, t, k),
                     0);
}

/* 10 steps of 500 ms from wall 1000 (first event at 1000). */
static tfb_run *steps_run(tfb_store *st, const char *name, int tflops)
{
    tfb_run *r = NULL;
    assert_int_equal(tfb_store_get_run(st, name, &r), 0);
    tfb_run_note_event(r, 1000, 0);
    for (int i = 1; i <= 10; i++) {
        scalar(r, TFB_TAG_STEP_MS, i, 1000 + 0.5 * i, 500);
        if (tflops)
            scalar(r, TFB_EFF_TAG_TFLOPS, i, 1000 + 0.5 * i, 100 + 10 * (i % 2));
    }
    return r;
}

static void test_peak_resolution(void **st)
{
    (void)st;
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, "/nonexistent"), 0);
    tfb_eff_run e;
    tfb_eff_opts none = {0, 0};

    /* A device of the table, dtype from perf/work. */
    tfb_run *a = steps_run(s, "known", 1);
    text(a, "gpu/0/name", "NVIDIA H100 80GB HBM3");
    work(a, "version=1\nflops_per_step=varies\ndtype=bf16\n"
            "peak_tflops=unknown\npeak_source=unknown\ndevice=\n");
    const tfb_gpu_peak *h100 = tfb_gpu_peak_find("NVIDIA H100 80GB HBM3");
    assert_non_null(h100);
    double peak = h100->tflops[TFB_PEAK_BF16];
    assert_true(peak > 0);
    assert_int_equal(tfb_eff_run_compute(a, &none, &e), 0);
    assert_int_equal(e.steps, 10);
    assert_true(fabs(e.tflops - 105) < 1e-9);
    assert_true(fabs(e.peak_tflops - peak) < 1e-9);
    assert_true(fabs(e.mfu_pct - 105 / peak * 100) < 1e-9);
    assert_string_equal(e.peak_source, "table");
    assert_string_equal(e.device, "NVIDIA H100 80GB HBM3");
    assert_string_equal(e.dtype, "bf16");
    assert_int_equal(e.dtype_assumed, 0);
    assert_int_equal(e.flops_estimated, 0);
    /* Per step: 110 at odd steps, 100 at even. */
    tfb_step_value *v;
    size_t n;
    assert_int_equal(tfb_eff_mfu_series(a, &none, &v, &n), 0);
    assert_int_equal(n, 10);
    assert_true(v[0].step == 1 && fabs(v[0].v - 110 / peak * 100) < 1e-9);
    assert_true(v[1].step == 2 && fabs(v[1].v - 100 / peak * 100) < 1e-9);
    free(v);

    /* The flag wins over the table. */
    tfb_eff_opts flag = {200, 0};
    assert_int_equal(tfb_eff_run_compute(a, &flag, &e), 0);
    assert_true(fabs(e.mfu_pct - 52.5) < 1e-9);
    assert_string_equal(e.peak_source, "flag");

    /* An unknown device: peak unknown, MFU NaN, no series; bf16 assumed
     * when nothing names the dtype. */
    tfb_run *b = steps_run(s, "unknown", 1);
    text(b, "gpu/0/name", "Imaginary Accelerator 9000");
    assert_int_equal(tfb_eff_run_compute(b, &none, &e), 0);
    assert_true(isnan(e.mfu_pct) && isnan(e.peak_tflops));
    assert_string_equal(e.peak_source, "unknown");
    assert_string_equal(e.dtype, "bf16");
    assert_int_equal(e.dtype_assumed, 1);
    assert_true(fabs(e.tflops - 105) < 1e-9);
    assert_int_equal(tfb_eff_mfu_series(b, &none, &v, &n), 0);
    assert_int_equal(n, 0);
    assert_null(v);

    /* The collector's peak (perf/work peak_tflops, its opts) and its
     * flops per step without perf/tflops: 5e14 FLOP / 0.5 s = 1000 TFLOP/s
     * of 2000: 50 %. */
    tfb_run *c = steps_run(s, "work", 0);
    work(c, "version=1\nflops_per_step=5e14\ndtype=fp16\npeak_tflops=2000\n"
            "peak_source=opts\ndevice=Imaginary\nfuture_key=1\n");
    assert_int_equal(tfb_eff_run_compute(c, &none, &e), 0);
    assert_true(fabs(e.tflops - 1000) < 1e-9);
    assert_true(fabs(e.mfu_pct - 50) < 1e-9);
    assert_string_equal(e.peak_source, "opts");
    assert_string_equal(e.dtype, "fp16");
    assert_string_equal(e.device, "Imaginary");

    /* perf/mfu as logged wins (no flag). */
    scalar(c, TFB_EFF_TAG_MFU, 1, 1000.5, 40);
    scalar(c, TFB_EFF_TAG_MFU, 2, 1001, 44);
    assert_int_equal(tfb_eff_run_compute(c, &none, &e), 0);
    assert_true(fabs(e.mfu_pct - 42) < 1e-9);
    /* ... unless the flag sets the peak: then achieved / flag, from the
     * record's flops per step (1000 of 4000 TFLOP/s). */
    tfb_eff_opts f4 = {4000, 0};
    assert_int_equal(tfb_eff_run_compute(c, &f4, &e), 0);
    assert_true(fabs(e.mfu_pct - 25) < 1e-9);
    assert_string_equal(e.peak_source, "flag");

    /* Nothing at all: ENOENT. */
    tfb_run *d = NULL;
    assert_int_equal(tfb_store_get_run(s, "empty", &d), 0);
    assert_int_equal(tfb_eff_run_compute(d, &none, &e), TFB_ENOENT);
    tfb_store_destroy(s);
}

/* A hostile perf/work record: a device name longer than the field (cut
 * at a UTF-8 boundary), lines without '=', numbers
 * that are infinite, negative or NaN, a record that is no string tensor:
 * no crash, nothing made up. */
static void test_hostile_work(void **st)
{
    (void)st;
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, "/nonexistent"), 0);
    tfb_run *r = steps_run(s, "hostile", 1);
    char lines[250];
    size_t k = (size_t)snprintf(lines, sizeof lines,
                                "garbage\n=\npeak_tflops=1e400\n"
                                "flops_per_step=-5\ndtype=nan\ndevice=");
    while (k + 3 < 240) { /* "é" (2 bytes) repeated past 127 bytes */
        lines[k++] = (char)0xC3;
        lines[k++] = (char)0xA9;
    }
    lines[k] = 0;
    work(r, lines);
    tfb_eff_run e;
    assert_int_equal(tfb_eff_run_compute(r, NULL, &e), 0);
    assert_true(isnan(e.peak_tflops) && isnan(e.mfu_pct));
    assert_string_equal(e.peak_source, "unknown");
    assert_int_equal(e.dtype_assumed, 1);
    size_t dl = strlen(e.device);
    assert_true(dl > 0 && dl < sizeof e.device && dl % 2 == 0);
    assert_true(fabs(e.tflops - 105) < 1e-9);

    /* A record whose tensor is not a string: skipped. */
    tfb_run *r2 = steps_run(s, "notstring", 1);
    const uint8_t t[] = {0x08, 0x01, 0x2a, 0x01, 0x00};
    assert_int_equal(tfb_run_put_record(r2, TFB_EFF_PERF_PLUGIN,
                                        strlen(TFB_EFF_PERF_PLUGIN),
                                        TFB_EFF_PERF_TAG,
                                        strlen(TFB_EFF_PERF_TAG), 1, 1001, "",
                                        0, t, sizeof t),
                     0);
    assert_int_equal(tfb_eff_run_compute(r2, NULL, &e), 0);
    assert_string_equal(e.peak_source, "unknown");
    tfb_store_destroy(s);
}

/* Energy: per-device joules summed, J/sample from the per-step rates, the
 * weaker source named, gCO2 with a grid intensity. Hostile values (NaN,
 * negative, a step of a year) are skipped. */
static void test_energy_run(void **st)
{
    (void)st;
    tfb_store *s;
    assert_int_equal(tfb_store_create(&s, "/nonexistent"), 0);
    tfb_run *r = steps_run(s, "e", 0);
    for (int i = 1; i <= 10; i++) {
        scalar(r, "gpu/0/energy_j", i, 1000 + 0.5 * i, 100);
        scalar(r, "gpu/1/energy_j", i, 1000 + 0.5 * i, 80);
        scalar(r, TFB_EFF_TAG_SAMPLES_PER_S, i, 1000 + 0.5 * i, 64);
        /* perf/energy_j is the same joules summed: not counted twice */
        scalar(r, TFB_EFF_TAG_ENERGY_J, i, 1000 + 0.5 * i, 180);
    }
    scalar(r, "gpu/1/energy_j", 11, 1006, NAN);
    scalar(r, "gpu/1/energy_j", 12, 1006, -5);
    scalar(r, TFB_TAG_STEP_MS, 13, 1007, 3.2e10);
    text(r, "gpu/0/energy_source", "counter");
    text(r, "gpu/1/energy_source", "power_x_time");
    tfb_eff_opts o = {0, 400};
    tfb_eff_run e;
    assert_int_equal(tfb_eff_run_compute(r, &o, &e), 0);
    assert_true(fabs(e.energy_j - 1800) < 1e-9);
    assert_true(fabs(e.energy_wh - 0.5) < 1e-9);
    assert_true(fabs(e.gco2 - 1800 / 3.6e6 * 400) < 1e-12);
    /* 64 samples/s x 0.5 s x 10 steps = 320 samples */
    assert_true(fabs(e.j_per_sample - 1800.0 / 320) < 1e-9);
    assert_true(fabs(e.samples_per_s - 64) < 1e-9);
    assert_true(isnan(e.j_per_token));
    assert_string_equal(e.energy_source, "power_x_time");
    parts_sum(&e.goodput);
    tfb_store_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mfu_formula),
        cmocka_unit_test(test_6nt),
        cmocka_unit_test(test_energy_formulas),
        cmocka_unit_test(test_dtype_spellings),
        cmocka_unit_test(test_goodput_hand),
        cmocka_unit_test(test_goodput_checkpoints),
        cmocka_unit_test(test_goodput_overlap_and_backwards),
        cmocka_unit_test(test_peak_resolution),
        cmocka_unit_test(test_hostile_work),
        cmocka_unit_test(test_energy_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
