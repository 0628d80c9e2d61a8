/*
 * gradients_analysis.h - "which layer's gradients vanished or exploded, and
 * when": the per-layer gradient-norm table and its flags, shared by
 * GET /data/plugin/gradients/norms and `tfboard report`.
 *
 *
 *
 * Data: the scalar series grad_norm/<layer> and grad_norm/global of a run
 * (DESIGN.md conventions; tfb_grad_norms writes them, any tool may).
 * Layers are listed in first-seen order; steps are the sorted union of the
 * steps of all those series; when a series holds a step more than once
 * (a restarted job), its last value in file order wins.
 *
 * Flags: for every present value of every layer and of the global norm
 * (layer "global"): "nonfinite" (NaN or ±Inf), else "vanishing"
 * (value < vanish), else "exploding" (value > explode). Ordered by step,
 * then layer order, global last.
 *
 * When the run logged no grad_norm/global but has layers, the global norm
 * of a step is computed as sqrt(Σ layer²) over the steps where every layer
 * is present (null elsewhere), so files from other writers get one too.
 *
 * Thread-safety: reentrant; may run on many threads at once (it pins each
 * series briefly).
 */
#ifndef TFB_SERVER_GRADIENTS_ANALYSIS_H
#define TFB_SERVER_GRADIENTS_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "store/store.h"

#define TFB_GRAD_VANISH_DEFAULT 1e-6
#define TFB_GRAD_EXPLODE_DEFAULT 1e2

typedef enum {
    TFB_GRAD_FLAG_VANISHING = 0,
    TFB_GRAD_FLAG_EXPLODING,
    TFB_GRAD_FLAG_NONFINITE
} tfb_grad_flag_kind;

typedef struct tfb_grad_flag {
    size_t layer;  /* index into layers; n_layers means "global" */
    size_t step;   /* index into steps */
    tfb_grad_flag_kind kind;
} tfb_grad_flag;

/* The table. norms[l * n_steps + s] is layer l at steps[s]; present[] says
 * whether that cell holds a value (else null in JSON). Same for global. */
typedef struct tfb_gradients {
    size_t n_layers, n_steps, n_flags;
    char **layers;        /* names without the grad_norm/ prefix */
    int64_t *steps;
    float *norms;
    unsigned char *present;
    float *global;
    unsigned char *global_present;
    int global_computed;  /* 1 when computed from the layers (see above) */
    tfb_grad_flag *flags;
} tfb_gradients;

/* The name of a flag kind: "vanishing", "exploding", "nonfinite". */
const char *tfb_grad_flag_name(tfb_grad_flag_kind k);

/* Builds the table for run with the given thresholds (vanish >= 0,
 * explode > vanish; else TFB_EINVAL). On success *out is owned by the
 * caller (tfb_gradients_free). Returns 0, TFB_EINVAL or TFB_ENOMEM. */
int tfb_gradients_analyze(tfb_run *run, double vanish, double explode,
                          tfb_gradients **out);
/* NULL-safe. */
void tfb_gradients_free(tfb_gradients *g);

/* Writes {"layers": [...], "steps": [...], "norms": [[...], ...],
 * "global": [...], "global_computed": bool,
 * "flags": [{"layer", "step", "kind"}, ...]}
 * (non-finite norms as "NaN"/"Infinity"/"-Infinity", missing as null;
 * "step" in a flag is the step number, not its index). */
void tfb_gradients_json(tfb_json *j, const tfb_gradients *g);

#endif
