/*
 * report_compare.h - two runs side by side: `tfboard report --compare A B`
 * and the compare dashboard (/data/plugin/compare/compare?a=..&b=..).
 *
 * The comparison is built once as structs (tfb_compare_runs, in
 * server/plugins/compare/compare_analysis.h, shared with the route); the
 * JSON (compare_json.c there), text/Markdown (report_compare_text.c) and html
 * (report_compare_html.c) writers render the same structs, and the
 * regression gate (tfb_compare_gate_*) judges them.
 *
 * Facts compared (A is the baseline, B the new run):
 *  - every scalar tag the two runs share: its final value (last point in
 *    file order) and its minimum over finite values;
 *  - the input pipeline (pipeline_analysis.h): mean step time, mean input
 *    wait and the input share (Σ input / Σ step) with its verdict;
 *  - GPU kernel time by kernel name (gpu_analysis.h), over the union of
 *    the names of both traces;
 *  - the hparams whose values differ (or that only one run has).
 *
 * Changes: `change` is the relative change (B - A) / |A|; it is 0 when
 * both are 0, +-Infinity when only A is 0, and NaN when either side is
 * not finite or missing. The input share's change is in share points
 * (B - A), since it is already a fraction.
 *
 * Thread-safety: a tfb_compare is built and read by one thread; building
 * reads the stores as any analysis does (safe alongside the loader).
 */
#ifndef TFB_SERVER_REPORT_COMPARE_H
#define TFB_SERVER_REPORT_COMPARE_H

#include <stddef.h>
#include <stdio.h>

/* The comparison itself and its JSON (the compare plugin's folder). */
#include "plugins/compare/compare_analysis.h"

/* ---- writers of the report -------------------------------------------- */

/* How a run diverged, for the headline the compare dashboard shows
 * ("B diverged at step 6: train/loss NaN"): its first non-finite value
 * from the health alerts, the earliest step, a loss-like tag first at the
 * same step. tag is owned by the run's store. */
typedef struct tfb_compare_diverged {
    int diverged;     /* 0: no non-finite value, the rest unset */
    long long step;
    const char *tag;
    const char *kind; /* "NaN", "+Inf" or "-Inf" (static) */
} tfb_compare_diverged;

/* Text (markdown 0) or Markdown; div[0] for A, div[1] for B (NULL: no
 * headline). Returns 0 or TFB_EIO. */
int tfb_compare_text(FILE *f, const tfb_compare *c,
                     const tfb_compare_diverged *div, int markdown);

/* One self-contained html page (same rules as report_html.h). Returns 0,
 * TFB_ENOMEM or TFB_EIO. */
int tfb_compare_html(FILE *f, const tfb_compare *c);

/* ---- the regression gate ---------------------------------------------- */

/*
 * --fail_on 'regress:METRIC>LIMIT' or 'regress:METRIC<LIMIT':
 *  - '>' means higher is worse (loss, step_ms): B fails when it is above
 *    A by more than LIMIT; '<' means higher is better (accuracy): B fails
 *    when it is below A by more than LIMIT.
 *  - LIMIT "2%" is relative to |A|; a plain number ("0.01") is an
 *    absolute difference. LIMIT >= 0.
 *  - METRIC: step_ms (mean step time), input_ms (mean input wait),
 *    input_share (the input share, a fraction), kernel_ms (total GPU
 *    kernel time), mfu (mean MFU in percent: regress:mfu<2%),
 *    tokens_per_s (mean tokens/s: regress:tokens_per_s<5%), j_per_token
 *    (J/token: regress:j_per_token>5%) (analysis/efficiency.h; an MFU with
 *    the peak unknown, or a run without the figure, fails the gate as
 *    missing); anything else is a scalar tag, compared by its final
 *    value; "tag:NAME" names a scalar tag that is spelled like one of
 *    those.
 *  - A final value that is NaN/Inf in B but finite in A is a regression;
 *    a metric missing from either run fails the gate (it cannot be
 *    checked, so it is not passed silently).
 */
typedef enum {
    TFB_GATE_SCALAR,
    TFB_GATE_STEP_MS,
    TFB_GATE_INPUT_MS,
    TFB_GATE_INPUT_SHARE,
    TFB_GATE_KERNEL_MS,
    TFB_GATE_MFU,
    TFB_GATE_TOKENS_PER_S,
    TFB_GATE_J_PER_TOKEN,
} tfb_gate_metric;

typedef struct tfb_compare_gate {
    tfb_gate_metric metric;
    char tag[256];        /* TFB_GATE_SCALAR */
    int higher_is_worse;  /* '>' */
    int relative;         /* LIMIT had '%' */
    double limit;         /* a fraction when relative (2% = 0.02) */
} tfb_compare_gate;

/* Parses the text after "regress:". Returns 0, or TFB_EINVAL with the
 * reason in err. */
int tfb_compare_gate_parse(const char *spec, tfb_compare_gate *out,
                           char *err, size_t err_len);

/* 1 when the gate fails (the reason in why), 0 when it passes (why holds
 * the figure that passed). */
int tfb_compare_gate_check(const tfb_compare *c, const tfb_compare_gate *g,
                           char *why, size_t why_len);

#endif
