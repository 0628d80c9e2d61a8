/*
 * pipeline_analysis.c - the input-pipeline summary: verdict, step-time
 * statistics, recommendations, and their JSON. The trace-derived figures
 * come from pipeline_trace.c.
 */
#include "analysis/pipeline_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tfb_pipeline_verdict(double input_fraction, int has_trace,
                                 double other_host_fraction)
{
    if (input_fraction >= TFB_PIPELINE_HIGHLY)
        return "highly";
    if (input_fraction >= TFB_PIPELINE_MODERATELY)
        return "moderately";
    /* Without a trace the host time outside input waits cannot be told
     * apart from device compute, so "potentially" is never claimed. */
    if (has_trace && other_host_fraction >= TFB_PIPELINE_OTHER)
        return "potentially";
    return "not";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile_sorted(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n)
        return v[n - 1];
    double frac = pos - (double)lo;
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

void tfb_pipeline_stats_of(double *v, size_t n, tfb_pipeline_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / (double)n;
    /* Two-pass variance: steps can be long (seconds) with small jitter. */
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    out->mean = mean;
    out->stddev = sqrt(ss / (double)n);
    out->min = v[0];
    out->max = v[n - 1];
    out->p50 = percentile_sorted(v, n, 0.50);
    out->p90 = percentile_sorted(v, n, 0.90);
    out->p99 = percentile_sorted(v, n, 0.99);
}

int tfb_pipeline_summarize(const tfb_pipeline_step *steps, size_t n,
                           const tfb_pipeline_trace *trace,
                           tfb_pipeline_summary *out)
{
    if (!out || (n > 0 && !steps))
        return TFB_EINVAL;
    tfb_pipeline_summary s;
    memset(&s, 0, sizeof s);
    if (trace)
        s.trace = *trace;
    s.steps = n;
    if (n == 0) {
        *out = s;
        return 0;
    }
    double *v = malloc(n * sizeof *v);
    if (!v)
        return TFB_ENOMEM;
    double sum_step = 0, sum_input = 0;
    for (size_t i = 0; i < n; i++) {
        sum_step += steps[i].step_ms;
        sum_input += steps[i].input_ms;
    }
    s.mean_step_ms = sum_step / (double)n;
    s.mean_input_ms = sum_input / (double)n;
    s.input_fraction = sum_step > 0 ? sum_input / sum_step : 0.0;
    for (size_t i = 0; i < n; i++)
        v[i] = steps[i].step_ms;
    tfb_pipeline_stats_of(v, n, &s.step_ms);
    for (size_t i = 0; i < n; i++)
        v[i] = steps[i].input_ms;
    tfb_pipeline_stats_of(v, n, &s.input_ms);
    /* What faster input would save (see saving_fraction). */
    for (size_t i = 0; i < n; i++) {
        double c = steps[i].comm_ms > 0 ? steps[i].comm_ms : 0.0;
        v[i] = steps[i].input_ms > c ? steps[i].input_ms - c : 0.0;
    }
    qsort(v, n, sizeof *v, cmp_double);
    /* The mean over the steps kept, for every step. */
    size_t kept = n - n / TFB_PIPELINE_TRIM;
    double saved = 0;
    for (size_t i = 0; i < kept; i++)
        saved += v[i];
    saved *= (double)n / (double)kept;
    s.saving_fraction = sum_step > 0 ? saved / sum_step : 0.0;
    free(v);
    s.verdict = tfb_pipeline_verdict(s.saving_fraction, s.trace.has_trace,
                                     s.trace.other_host_fraction);
    *out = s;
    return 0;
}

/* ---- recommendations --------------------------------------------------- */

/* One piece of advice: the title and advice are the same on every run (the
 * report groups runs by them); detail and sentence quote this run. */
static void put(void (*emit)(void *, const tfb_pipeline_advice *), void *user,
                const char *title, const char *advice, const char *detail,
                const char *sentence)
{
    tfb_pipeline_advice a = {title, advice, detail, sentence};
    emit(user, &a);
}

void tfb_pipeline_advise(const tfb_pipeline_summary *s,
                         void (*emit)(void *user, const tfb_pipeline_advice *a),
                         void *user)
{
    char buf[512], det[256];
    if (!s || s->steps == 0 || !s->verdict)
        return;
    double pct = 100.0 * s->input_fraction;
    double compute_ms = s->mean_step_ms - s->mean_input_ms;
    const tfb_pipeline_trace *t = &s->trace;

    if (s->saving_fraction >= TFB_PIPELINE_MODERATELY) {
        /* When input-bound in steady state, the loaders deliver one batch
         * per step; to stop the waits they must keep up with compute. */
        if (compute_ms > 0) {
            double factor = s->mean_step_ms / compute_ms;
            snprintf(det, sizeof det,
                     "steps wait %.3g ms of %.3g ms (%.1f%%); a batch is "
                     "needed every %.3g ms: about %.2gx",
                     s->mean_input_ms, s->mean_step_ms, pct, compute_ms,
                     factor);
            snprintf(buf, sizeof buf,
                     "Steps wait %.3g ms of %.3g ms (%.1f%%) for input: the "
                     "loaders deliver a batch every %.3g ms but the step "
                     "needs one every %.3g ms. Raise loader throughput about "
                     "%.2gx: add loader threads (about %.2gx as many, CPU "
                     "cores permitting) or make each batch cheaper.",
                     s->mean_input_ms, s->mean_step_ms, pct, s->mean_step_ms,
                     compute_ms, factor, factor);
            put(emit, user, "Raise loader throughput",
                "Raise loader throughput: add loader threads (CPU cores "
                "permitting) or make each batch cheaper.",
                det, buf);
        } else {
            snprintf(det, sizeof det,
                     "nearly all of each %.3g ms step waits for input "
                     "(%.1f%%)", s->mean_step_ms, pct);
            snprintf(buf, sizeof buf,
                     "Steps spend nearly all their %.3g ms waiting for input "
                     "(%.1f%%): the loaders are the whole cost; add loader "
                     "threads and cache prepared batches.",
                     s->mean_step_ms, pct);
            put(emit, user, "Loaders are the whole cost",
                "The loaders are the whole cost of a step: add loader "
                "threads and cache prepared batches.",
                det, buf);
        }
        /* Bursty waits (most steps fast, some waiting long) are what a
         * deeper prefetch buffer absorbs; steady waits it cannot fix. */
        if (s->input_ms.p90 > 2.0 * s->input_ms.p50 + 0.1 ||
            s->input_ms.max > 4.0 * (s->input_ms.mean + 0.1)) {
            snprintf(det, sizeof det,
                     "uneven waits: median %.3g ms, p90 %.3g ms, max %.3g ms",
                     s->input_ms.p50, s->input_ms.p90, s->input_ms.max);
            snprintf(buf, sizeof buf,
                     "Input waits are uneven (median %.3g ms, p90 %.3g ms, "
                     "max %.3g ms): a deeper prefetch queue (more batches in "
                     "flight) would absorb the slow batches.",
                     s->input_ms.p50, s->input_ms.p90, s->input_ms.max);
            put(emit, user, "Deeper prefetch queue",
                "Input waits are uneven: a deeper prefetch queue (more "
                "batches in flight) would absorb the slow batches.",
                det, buf);
        } else {
            snprintf(det, sizeof det,
                     "steady waits: median %.3g ms, p90 %.3g ms",
                     s->input_ms.p50, s->input_ms.p90);
            snprintf(buf, sizeof buf,
                     "Input waits are steady (median %.3g ms, p90 %.3g ms): "
                     "every step waits, so a deeper prefetch queue alone "
                     "will not help; the loaders must get faster.",
                     s->input_ms.p50, s->input_ms.p90);
            put(emit, user, "Faster loaders, not a deeper queue",
                "Input waits are steady: every step waits, so a deeper "
                "prefetch queue alone will not help; the loaders must get "
                "faster.",
                det, buf);
        }
        static const char cache[] =
            "Cache decoded or preprocessed data (in memory or on local "
            "disk) when the same samples are read every epoch, and move "
            "per-sample work (decoding, augmentation) into the loaders "
            "rather than the training step.";
        put(emit, user, "Cache prepared data", cache, "", cache);
    }
    if (t->has_trace && t->gpu_idle_ns > 0 &&
        t->gpu_idle_in_input_fraction >= 0.25) {
        snprintf(det, sizeof det,
                 "%.1f%% of the GPU's idle time inside steps (%.3g ms of "
                 "%.3g ms)",
                 100.0 * t->gpu_idle_in_input_fraction,
                 (double)t->idle_in_input_ns / 1e6,
                 (double)t->gpu_idle_ns / 1e6);
        snprintf(buf, sizeof buf,
                 "%.1f%% of the GPU's idle time inside steps falls in input "
                 "waits (%.3g ms of %.3g ms): the GPU starves for data.",
                 100.0 * t->gpu_idle_in_input_fraction,
                 (double)t->idle_in_input_ns / 1e6,
                 (double)t->gpu_idle_ns / 1e6);
        put(emit, user, "GPU starves for data",
            "The GPU sits idle while steps wait for input: it starves for "
            "data.",
            det, buf);
    }
    if (t->has_trace && t->other_host_fraction >= TFB_PIPELINE_OTHER) {
        snprintf(det, sizeof det,
                 "%.1f%% of step time is host work outside input waits "
                 "while the GPU is idle",
                 100.0 * t->other_host_fraction);
        snprintf(buf, sizeof buf,
                 "%.1f%% of step time is host work outside input waits while "
                 "the GPU is idle: move it off the step (log asynchronously, "
                 "avoid host-device synchronisation, launch kernels earlier).",
                 100.0 * t->other_host_fraction);
        put(emit, user, "Move host work off the step",
            "Host work outside input waits keeps the GPU idle: move it off "
            "the step (log asynchronously, avoid host-device "
            "synchronisation, launch kernels earlier).",
            det, buf);
    }
    if (s->saving_fraction < TFB_PIPELINE_MODERATELY &&
        !strcmp(s->verdict, "potentially")) {
        snprintf(det, sizeof det,
                 "steps wait %.3g ms of %.3g ms (%.1f%%) for input",
                 s->mean_input_ms, s->mean_step_ms, pct);
        snprintf(buf, sizeof buf,
                 "Input waits themselves are small: steps wait %.3g ms of "
                 "%.3g ms (%.1f%%) for input; the host work outside them is "
                 "what to cut.",
                 s->mean_input_ms, s->mean_step_ms, pct);
        put(emit, user, "Cut host work, not input",
            "Input waits themselves are small; the host work outside them "
            "is what to cut.",
            det, buf);
    } else if (s->saving_fraction < TFB_PIPELINE_MODERATELY) {
        snprintf(det, sizeof det,
                 "faster input would save about %.1f%% of step time "
                 "(steps wait %.3g ms of %.3g ms)",
                 100.0 * s->saving_fraction, s->mean_input_ms,
                 s->mean_step_ms);
        snprintf(buf, sizeof buf,
                 "Input is not the bottleneck: steps wait %.3g ms of %.3g ms "
                 "(%.1f%%) for input, and faster input would save about "
                 "%.1f%% of step time (under the 5%% that input advice "
                 "needs). Speed up the step's own compute; the input "
                 "pipeline can stay as it is.",
                 s->mean_input_ms, s->mean_step_ms, pct,
                 100.0 * s->saving_fraction);
        put(emit, user, "Input is not the bottleneck",
            "Input is not the bottleneck (faster input would save under the "
            "5% of step time that input advice needs): speed up the step's "
            "own compute; the input pipeline can stay as it is.",
            det, buf);
    }
    if (s->step_ms.mean > 0 && s->steps >= 2 &&
        s->step_ms.stddev > 0.5 * s->step_ms.mean) {
        snprintf(det, sizeof det,
                 "mean %.3g ms, stddev %.3g ms, max %.3g ms",
                 s->step_ms.mean, s->step_ms.stddev, s->step_ms.max);
        snprintf(buf, sizeof buf,
                 "Step time varies widely (mean %.3g ms, stddev %.3g ms, max "
                 "%.3g ms): look for periodic work (checkpoints, evaluation, "
                 "garbage collection) inside the loop.",
                 s->step_ms.mean, s->step_ms.stddev, s->step_ms.max);
        put(emit, user, "Step time varies widely",
            "Step time varies widely: look for periodic work (checkpoints, "
            "evaluation, garbage collection) inside the loop.",
            det, buf);
    }
}

typedef struct sentence_sink {
    void (*emit)(void *user, const char *text);
    void *user;
} sentence_sink;

static void emit_sentence(void *user, const tfb_pipeline_advice *a)
{
    sentence_sink *k = user;
    k->emit(k->user, a->sentence);
}

void tfb_pipeline_recommend(const tfb_pipeline_summary *s,
                            void (*emit)(void *user, const char *text),
                            void *user)
{
    sentence_sink k = {emit, user};
    tfb_pipeline_advise(s, emit_sentence, &k);
}

/* ---- JSON -------------------------------------------------------------- */

static const tfb_json_field stats_fields[] = {
    TFB_JSON_FIELD(tfb_pipeline_stats, mean, DOUBLE),
    TFB_JSON_FIELD(tfb_pipeline_stats, stddev, DOUBLE),
    TFB_JSON_FIELD(tfb_pipeline_stats, min, DOUBLE),
    TFB_JSON_FIELD(tfb_pipeline_stats, max, DOUBLE),
    TFB_JSON_FIELD(tfb_pipeline_stats, p50, DOUBLE),
    TFB_JSON_FIELD(tfb_pipeline_stats, p90, DOUBLE),
    TFB_JSON_FIELD(tfb_pipeline_stats, p99, DOUBLE),
};

static void stats_json(tfb_json *j, const tfb_pipeline_stats *st, int have)
{
    if (have)
        TFB_JSON_STRUCT(j, st, stats_fields);
    else
        tfb_json_null(j);
}

static void num_or_null(tfb_json *j, int have, double v)
{
    if (have)
        tfb_json_double(j, v);
    else
        tfb_json_null(j);
}

static void emit_json_str(void *user, const char *text)
{
    tfb_json_str((tfb_json *)user, text);
}

static void emit_json_advice(void *user, const tfb_pipeline_advice *a)
{
    static const tfb_json_field fields[] = {
        TFB_JSON_FIELD(tfb_pipeline_advice, title, STR),
        TFB_JSON_FIELD(tfb_pipeline_advice, advice, STR),
        TFB_JSON_FIELD(tfb_pipeline_advice, detail, STR),
    };
    TFB_JSON_STRUCT((tfb_json *)user, a, fields);
}

void tfb_pipeline_summary_json(tfb_json *j, const tfb_pipeline_summary *s)
{
    int have = s->steps > 0;
    tfb_json_object_begin(j);
    tfb_json_key(j, "steps");
    tfb_json_u64(j, s->steps);
    tfb_json_key(j, "mean_step_ms");
    num_or_null(j, have, s->mean_step_ms);
    tfb_json_key(j, "mean_input_ms");
    num_or_null(j, have, s->mean_input_ms);
    tfb_json_key(j, "input_fraction");
    num_or_null(j, have, s->input_fraction);
    tfb_json_key(j, "saving_fraction");
    num_or_null(j, have, s->saving_fraction);
    tfb_json_key(j, "verdict");
    tfb_json_str(j, have ? s->verdict : NULL);
    tfb_json_key(j, "step_ms");
    stats_json(j, &s->step_ms, have);
    tfb_json_key(j, "input_ms");
    stats_json(j, &s->input_ms, have);
    static const tfb_json_field trace_fields[] = {
        TFB_JSON_FIELD(tfb_pipeline_trace, has_trace, BOOL),
        TFB_JSON_FIELD_IF("other_host_fraction", tfb_pipeline_trace,
                          other_host_fraction, DOUBLE, has_trace),
        TFB_JSON_FIELD_IF("gpu_idle_in_input_fraction", tfb_pipeline_trace,
                          gpu_idle_in_input_fraction, DOUBLE, has_trace),
    };
    TFB_JSON_FIELDS(j, &s->trace, trace_fields);
    tfb_json_key(j, "recommendations");
    tfb_json_array_begin(j);
    tfb_pipeline_recommend(s, emit_json_str, j);
    tfb_json_array_end(j);
    tfb_json_key(j, "advice");
    tfb_json_array_begin(j);
    tfb_pipeline_advise(s, emit_json_advice, j);
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

void tfb_pipeline_steps_json(tfb_json *j, const tfb_pipeline_step *steps,
                             size_t n)
{
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i++) {
        tfb_json_array_begin(j);
        tfb_json_i64(j, steps[i].step);
        tfb_json_double(j, steps[i].step_ms);
        tfb_json_double(j, steps[i].input_ms);
        tfb_json_array_end(j);
    }
    tfb_json_array_end(j);
}
