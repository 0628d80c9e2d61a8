/*
 * pipeline_collect.c - the pipeline analysis's inputs from the store: the
 * run's pipeline/step_ms and pipeline/input_ms scalars joined by step, and,
 * from the run's GPU trace (trace.h: our trace stores, nsys exports),
 * the host step/input spans (TFB_HOST_SPANS, written by the step timer
 * while GPU tracing runs) and the GPU busy intervals (the GPU analysis's
 * union of kernel intervals over all devices).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "analysis/pipeline_analysis.h"
#include "analysis/pipeline_trace.h"

/* ---- from the store ---------------------------------------------------- */

static int usable(double v)
{
    return isfinite(v) && v >= 0.0;
}

int tfb_pipeline_collect(tfb_run *run, tfb_pipeline_step **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    tfb_step_value *st = NULL, *in = NULL, *cm = NULL;
    size_t ns = 0, ni = 0, nc = 0;
    int rc = tfb_series_by_step(
        tfb_run_find_series(run, TFB_SERIES_SCALAR, TFB_TAG_STEP_MS),
        &st, &ns);
    if (rc == 0)
        rc = tfb_series_by_step(
            tfb_run_find_series(run, TFB_SERIES_SCALAR, TFB_TAG_INPUT_MS),
            &in, &ni);
    if (rc == 0)
        rc = tfb_series_by_step(
            tfb_run_find_series(run, TFB_SERIES_SCALAR, TFB_TAG_COMM_MS),
            &cm, &nc);
    if (rc < 0) {
        free(st);
        free(in);
        free(cm);
        return rc;
    }
    tfb_pipeline_step *r = NULL;
    size_t m = 0;
    if (ns > 0 && ni > 0) {
        r = malloc((ns < ni ? ns : ni) * sizeof *r);
        if (!r) {
            free(st);
            free(in);
            free(cm);
            return TFB_ENOMEM;
        }
        /* Both sorted by step: merge-join. */
        size_t i = 0, k = 0, c = 0;
        while (i < ns && k < ni) {
            if (st[i].step < in[k].step) {
                i++;
            } else if (st[i].step > in[k].step) {
                k++;
            } else {
                /* The step's collective wait, when the run logs one. */
                while (c < nc && cm[c].step < st[i].step)
                    c++;
                double comm = c < nc && cm[c].step == st[i].step &&
                                      usable(cm[c].v)
                                  ? cm[c].v
                                  : 0.0;
                if (usable(st[i].v) && usable(in[k].v))
                    r[m++] = (tfb_pipeline_step){st[i].step, st[i].v, in[k].v,
                                                 comm};
                i++;
                k++;
            }
        }
        if (m == 0) {
            free(r);
            r = NULL;
        }
    }
    free(st);
    free(in);
    free(cm);
    *out = r;
    *n = m;
    return 0;
}

int tfb_pipeline_analyze_run(tfb_store *store, tfb_run *run,
                             tfb_pipeline_summary *out)
{
    tfb_pipeline_step *steps;
    size_t n;
    int rc = tfb_pipeline_collect(run, &steps, &n);
    if (rc < 0)
        return rc;
    tfb_pipeline_trace tr;
    memset(&tr, 0, sizeof tr);
    if (n > 0) {
        rc = tfb_pipeline_trace_of_run(store, run, &tr);
        if (rc < 0) {
            free(steps);
            return rc;
        }
    }
    rc = tfb_pipeline_summarize(steps, n, &tr, out);
    free(steps);
    return rc;
}

/* ---- from the run's GPU trace -------------------------------------------- */

int tfb_pipeline_trace_of_run(tfb_store *store, tfb_run *run,
                              tfb_pipeline_trace *out)
{
    memset(out, 0, sizeof *out);
    tfb_trace *t = NULL;
    /* The GPU trace loads in the background (trace.h): wait a moment
     * for it, never for a whole big load (an HTTP thread would be held;
     * the figures stay unknown until it is read). `tfboard report` writes
     * the GPU section, which waits for the trace, before this one. */
    tfb_trace_status gst;
    int rc = tfb_trace_get(store, run, 1000, &t, &gst);
    if (rc < 0 || !t)
        return rc == TFB_ENOMEM ? rc : 0; /* no usable trace: unknown */
    size_t ns = 0, ni = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        ns += t->spans[i].kind == TFB_TRACE_HOST_STEP;
        ni += t->spans[i].kind == TFB_TRACE_HOST_INPUT;
    }
    int64_t *busy = NULL;
    size_t nb = 0;
    tfb_interval *steps = NULL, *inputs = NULL, *bv = NULL;
    if (ns == 0)
        goto done;
    rc = tfb_trace_busy_intervals(t, -1, &busy, &nb);
    /* Without kernels there is no GPU to lay the spans against (a trace
     * that recorded nothing): the figures stay unknown. */
    if (rc < 0 || nb == 0)
        goto done;
    steps = malloc(ns * sizeof *steps);
    inputs = malloc((ni ? ni : 1) * sizeof *inputs);
    bv = malloc(nb * sizeof *bv);
    if (!steps || !inputs || !bv) {
        rc = TFB_ENOMEM;
        goto done;
    }
    ns = ni = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_trace_span *sp = &t->spans[i];
        if (sp->kind == TFB_TRACE_HOST_STEP)
            steps[ns++] = (tfb_interval){sp->start, sp->end};
        else if (sp->kind == TFB_TRACE_HOST_INPUT)
            inputs[ni++] = (tfb_interval){sp->start, sp->end};
    }
    for (size_t i = 0; i < nb; i++)
        bv[i] = (tfb_interval){busy[2 * i], busy[2 * i + 1]};
    rc = tfb_pipeline_trace_compute(steps, ns, inputs, ni, bv, nb, out);
done:
    free(steps);
    free(inputs);
    free(bv);
    free(busy);
    tfb_trace_release(t);
    return rc == TFB_ENOMEM ? rc : 0;
}
