/*
 * precursors.h - what came before a loss spike or a first NaN (issue 23):
 * "gradient norms grew 10^4x from step 56 (fc3 first); NaN at 61". Shared
 * by the alerts plugin (spikes, alerts, report) and the health plugin (its
 * NaN alerts), so it lives below the plugins and reads the store's series
 * directly.
 *
 * For an event at step `at` (a spike's first step, or the first
 * non-finite step) and a look-back of k steps, the window is [at - k, at]
 * and each series' baseline is the median of its finite values in the 50
 * steps before the window ([at - k - 50, at - k)):
 *  - gradient norms (scalar tags grad_norm/..., tfboard.h): the norm grew
 *    when every finite value from some step s of the window up to `at` is
 *    above 10 x the baseline; `grad_from` is the earliest such s of
 *    grad_norm/global (else of any layer), `grad_factor` the largest value
 *    of the window over the baseline, `grad_first` the layer whose growth
 *    started first (ties: the larger factor);
 *  - learning rate (tags matching (^|/)(lr|learning_rate)$, any case): a
 *    value in the window that differs from the point before it (in file
 *    order, whatever its step: an lr logged every 100 steps counts) by
 *    > 1 %;
 *  - non-finite: the earliest first NaN/Inf of any series in the window;
 *  - input-pipeline stall: pipeline/input_ms above 10 x its baseline and
 *    above 10 ms in the window;
 *  - batch ids: the text values of tag batch/id (tfb_step_batch) at the
 *    steps [from, at]: the batches the spike rose on (at most
 *    TFB_PRECURSOR_MAX_BATCHES).
 *
 * Cost: only the points with steps in [at - k - 50, at] are read (at most
 * 1,024 a series; tfb_series_scalar_in_steps), never a pin of a whole
 * series, and the non-finite statistics without a pin.
 *
 * Thread-safety: reentrant.
 */
#ifndef TFB_SERVER_PRECURSORS_H
#define TFB_SERVER_PRECURSORS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define TFB_PRECURSOR_MAX_BATCHES 16
#define TFB_PRECURSOR_K_DEFAULT 20

typedef struct tfb_precursors {
    int grad;                 /* 1: the gradient norms grew */
    int64_t grad_from;
    double grad_factor;
    const char *grad_first;   /* layer name (after grad_norm/); store-owned */
    int lr;                   /* 1: the learning rate changed */
    int64_t lr_step;
    double lr_before, lr_after;
    int nonfinite;
    int64_t nonfinite_step;
    const char *nonfinite_tag;
    int stall;
    int64_t stall_step;
    double stall_ms, stall_baseline_ms;
    size_t n_batches;
    int64_t batch_step[TFB_PRECURSOR_MAX_BATCHES];
    char batch_id[TFB_PRECURSOR_MAX_BATCHES][64];
} tfb_precursors;

/* The precursors of an event of run r that began at step `from` and
 * peaked or turned non-finite at step `at` (from <= at), looking k steps
 * back. Returns 0 or TFB_ENOMEM. */
int tfb_precursors_find(tfb_run *r, int64_t from, int64_t at, int k,
                        tfb_precursors *out);

/* One line for people: "gradient norms grew 10^4x from step 56 (fc3
 * first); lr 0.1 -> 1 at step 50; input stall at step 55 (80 ms, median
 * 4 ms)" (what was found, "; "-separated; "" when nothing). Writes at
 * most len bytes (NUL included). Strings from files are copied as they
 * are: the caller escapes for its medium. */
void tfb_precursors_text(const tfb_precursors *p, char *buf, size_t len);

#endif
