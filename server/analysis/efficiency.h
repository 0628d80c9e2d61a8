/*
 * efficiency.h - how well one run uses its hardware (issue 29): throughput,
 * MFU against the device's peak, goodput (where the wall time went) and
 * energy, from the run's store series and records. The Efficiency
 * dashboard, the Ranks view, `tfboard report` and `tfboard query` share it.
 *
 * Inputs (the data contract of include/tfboard.h, "Work per step"):
 *  - scalars pipeline/step_ms, pipeline/input_ms, comm/ms (TFB_TAG_COMM_MS),
 *    each at its step's END wall time (collector/pipeline.c);
 *  - scalars perf/samples_per_s, perf/tokens_per_s, perf/tflops, perf/mfu
 *    (percent), perf/energy_j, gpu/<dev>/energy_j, goodput/checkpoint_ms
 *    (at the checkpoint's end wall time);
 *  - texts gpu/<dev>/name and gpu/<dev>/energy_source;
 *  - the plugin record tfboard_perf / perf/work (key=value lines:
 *    flops_per_step, samples_per_step, tokens_per_step, dtype, peak_tflops,
 *    peak_source, device; unknown keys skipped);
 *  - hparams (analysis/hparams_analysis.h): the model size and tokens per
 *    step for the 6 N T estimate, the dtype, the device name.
 *
 * The definitions (server/API.md "Efficiency" has them for users):
 *  - MFU % = achieved TFLOP/s / peak TFLOP/s x 100, per step: perf/mfu
 *    when logged (and no --peak_tflops flag overrides the peak), else
 *    perf/tflops / peak, else perf/work's flops_per_step / step time,
 *    else 6 x params x tokens_per_step / step time from hparams
 *    (flops_estimated = 1). The run's figure is the mean over its steps.
 *  - Peak, first known of: the flag (opts->peak_tflops, "flag"); perf/work's
 *    peak_tflops (its peak_source, "opts" or "table"); the device name
 *    (perf/work's device, else the first gpu/<dev>/name text, else the
 *    GPU trace's (tfb_eff_run_compute_dev), else the hparams gpu/device, gpu,
 *    device, gpu_name, device_name) looked up in
 *    base/gpu_peaks.h's table for the dtype ("table"). The dtype is
 *    perf/work's, else the hparams dtype / precision / mixed_precision
 *    (or a true bf16 / fp16 / tf32 / fp8 flag), else bf16 ASSUMED
 *    (dtype_assumed = 1). A device not in the table, or a dtype it lacks,
 *    is "unknown": MFU NaN, never a guess.
 *  - Goodput: wall_s runs from the run start (tfb_run_first_wall) to the
 *    last step end. Each step is the span [end - step_ms, end], clipped so
 *    it begins no earlier than the run start nor before the end of every
 *    step laid down before it (steps ordered by start): steps that overlap
 *    (two writers) or go back in wall time (a clock jump) only add the
 *    part past what was counted, never a negative part; input and comm are
 *    capped at the step's length and shrink with its clipped share. Then
 *      productive = step - input - comm;  input;  comm;
 *      startup = first step start - run start;
 *      between two steps: checkpoint = the part of the gap covered by
 *        goodput/checkpoint_ms spans [end - ms, end] (merged), gap = the
 *        rest (restarts, unlogged work);
 *    and productive + input + comm + startup + gap + checkpoint = wall_s.
 *    goodput = productive_s / wall_s.
 *  - Energy: the sum of every gpu/<dev>/energy_j point (else of
 *    perf/energy_j); Wh = J / 3600; gCO2 = kWh x grid intensity (opts,
 *    NaN without); J/sample and J/token = energy / the run's samples or
 *    tokens (per step: rate x step time, summed over the steps with both).
 *    energy_source is "power_x_time" when any device says so, else
 *    "counter" when one says so, else "".
 *
 * Bounds: TFB_EFF_MAX_DEVICES gpu/<dev>/ series are read per run (a run
 * with more has a tag per device beyond any machine's GPUs: the rest are
 * skipped, not an error); values that are NaN, infinite or negative are
 * skipped; step_ms above TFB_EFF_MAX_STEP_MS is skipped (hostile input
 * cannot make a step longer than a week).
 *
 * Thread-safety: every function is reentrant; the store functions it calls
 * pin series briefly (store.h). Results are the caller's.
 */
#ifndef TFB_SERVER_EFFICIENCY_H
#define TFB_SERVER_EFFICIENCY_H

#include <stddef.h>
#include <stdint.h>

#include "base/gpu_peaks.h"
#include "store/store.h"

/* Tags of the data contract (the collector writes exactly these). */
#define TFB_EFF_TAG_SAMPLES_PER_S "perf/samples_per_s"
#define TFB_EFF_TAG_TOKENS_PER_S "perf/tokens_per_s"
#define TFB_EFF_TAG_TFLOPS "perf/tflops"
#define TFB_EFF_TAG_MFU "perf/mfu"
#define TFB_EFF_TAG_ENERGY_J "perf/energy_j"
#define TFB_EFF_TAG_CHECKPOINT_MS "goodput/checkpoint_ms"
#define TFB_EFF_PERF_PLUGIN "tfboard_perf"
#define TFB_EFF_PERF_TAG "perf/work"

/* gpu/<dev>/ series read per run at most (see the top of this file): 4096
 * is far above any node's GPUs (a rank sees its own, 8-16), and keeps a
 * hostile run with a million gpu/<n>/energy_j tags to a bounded pass. */
#define TFB_EFF_MAX_DEVICES 4096
/* A longer step_ms is not a step (7 days, in ms). */
#define TFB_EFF_MAX_STEP_MS (7.0 * 24 * 3600 * 1000)

typedef struct tfb_eff_opts {
    double peak_tflops;        /* --peak_tflops; 0 = from perf/work or the table */
    double grid_gco2_per_kwh;  /* --grid_gco2_per_kwh; 0 = no CO2 figure */
} tfb_eff_opts;

typedef struct tfb_eff_goodput {
    double wall_s;  /* run start (tfb_run_first_wall) .. last step end */
    double productive_s, input_s, comm_s, startup_s, gap_s, checkpoint_s; /* sum = wall_s */
    double goodput;  /* productive_s / wall_s; NaN with no steps */
} tfb_eff_goodput;

typedef struct tfb_eff_run {
    int64_t steps;                    /* steps with pipeline/step_ms */
    double samples_per_s, tokens_per_s, tflops;   /* means over the steps; NaN absent */
    double mfu_pct;                   /* NaN = peak unknown */
    double peak_tflops;               /* NaN unknown */
    char peak_source[16];             /* "opts","table","flag","unknown" */
    char device[128];                 /* "" unknown */
    char dtype[16];  int dtype_assumed;   /* bf16 assumed when not given: said so */
    int flops_estimated;              /* 1: 6 x params x tokens from hparams (said on the page) */
    tfb_eff_goodput goodput;
    double energy_j, energy_wh, gco2, j_per_sample, j_per_token;   /* NaN absent */
    char energy_source[16];           /* "counter","power_x_time","" */
} tfb_eff_run;

/* Everything above for one run, from its store series/records. 0, TFB_ENOENT when the run has no
   step timing and no perf scalars, TFB_ENOMEM. Thread-safe (pins series briefly). */
int tfb_eff_run_compute(tfb_run *r, const tfb_eff_opts *o, tfb_eff_run *out);
/* The same, with the device name the run's GPU trace gives
 * (tfb_eff_trace_device, for a caller that holds the store), tried after
 * gpu/<dev>/name and before the hparams; NULL or "" = none. */
int tfb_eff_run_compute_dev(tfb_run *r, const tfb_eff_opts *o,
                            const char *trace_device, tfb_eff_run *out);

/* The name of the first device of run r's GPU trace that has one
 * (trace.h: CUPTI's device table, nsys's TARGET_INFO_GPU, Kineto's
 * deviceProperties) into buf (cap bytes), waiting at most wait_ms for a
 * load (trace.h's tfb_trace_get: 0 = only a trace already read, < 0 =
 * until the load ends). 1 when found, 0 when not (no trace, still
 * loading, no name), TFB_ENOMEM. Thread-safe. */
int tfb_eff_trace_device(tfb_store *s, tfb_run *r, int wait_ms, char *buf,
                         size_t cap);

/* Per-step MFU % (perf/mfu, else perf/tflops / peak), malloc'd; n = 0 when the peak is unknown.
 * The same rules as the run's figure (top of this file), one value a step
 * ordered by step. 0 or TFB_ENOMEM. */
int tfb_eff_mfu_series(tfb_run *r, const tfb_eff_opts *o, tfb_step_value **out, size_t *n);

/* ---- formulas (unit-tested) --------------------------------------------- */

double tfb_eff_mfu_pct(double achieved_tflops, double peak_tflops);  /* NaN when peak <= 0 */
double tfb_eff_flops_6nt(double params, double tokens);             /* 6 N T */

/* One step for the goodput decomposition: its end wall time (s since the
 * epoch) and its step, input and comm time in seconds (input/comm 0 when
 * not logged). */
typedef struct tfb_eff_step_span {
    double end, step_s, input_s, comm_s;
} tfb_eff_step_span;

/* One logged checkpoint: its end wall time and length in seconds. */
typedef struct tfb_eff_ckpt_span {
    double end, len_s;
} tfb_eff_ckpt_span;

/* The goodput decomposition (rules at the top of this file) of n steps
 * and nc checkpoints (both in any order; both arrays are reordered) from
 * run_start (NaN: the first step's start). Every part is >= 0 and they sum
 * to wall_s. n == 0 gives zeros and goodput NaN. */
void tfb_eff_goodput_of(tfb_eff_step_span *steps, size_t n,
                        tfb_eff_ckpt_span *ckpts, size_t nc, double run_start,
                        tfb_eff_goodput *out);

/* Energy figures from a total in joules: Wh, and grams of CO2 at
 * gco2_per_kwh (NaN when it is <= 0 or the energy is NaN). */
double tfb_eff_wh(double joules);
double tfb_eff_gco2(double joules, double gco2_per_kwh);

/* The dtype named by s as a peak-table dtype, tolerant of how frameworks
 * say it ("bf16-mixed", "amp_bf16", "torch.float16", "16-mixed", "fp8",
 * "tf32"): 0 with *out set, TFB_EINVAL when s names none of them. */
int tfb_eff_dtype_guess(const char *s, size_t len, tfb_peak_dtype *out);

#endif
