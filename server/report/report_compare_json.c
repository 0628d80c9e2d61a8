/*
 * report_compare_json.c - the comparison as JSON: the answer of
 * /data/plugin/compare/compare and of `tfboard report --compare --format
 * json`, and the data the html page draws from (one writer for all).
 */
#include <math.h>

#include "report/report_compare.h"

/* A change: null when unknown (NaN), else the number ("Infinity" when A
 * was 0). */
static void change(tfb_json *j, double v)
{
    if (isnan(v))
        tfb_json_null(j);
    else
        tfb_json_double(j, v);
}

static void known(tfb_json *j, int has, double v)
{
    if (has)
        tfb_json_double(j, v);
    else
        tfb_json_null(j);
}

static void scalars_json(tfb_json *j, const tfb_compare *c)
{
    tfb_json_key(j, "scalars");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < c->n_scalars; i++) {
        const tfb_compare_scalar *s = &c->scalars[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "tag");
        tfb_json_str(j, s->tag);
        /* A shared tag has at least one point on each side, so last is
         * data (possibly NaN, written as "NaN"). */
        tfb_json_key(j, "last_a");
        tfb_json_double(j, s->last_a);
        tfb_json_key(j, "last_b");
        tfb_json_double(j, s->last_b);
        tfb_json_key(j, "last_change");
        change(j, s->last_change);
        tfb_json_key(j, "min_a");
        known(j, s->has_min_a, s->min_a);
        tfb_json_key(j, "min_b");
        known(j, s->has_min_b, s->min_b);
        tfb_json_key(j, "min_change");
        change(j, s->min_change);
        tfb_json_key(j, "count_a");
        tfb_json_u64(j, s->count_a);
        tfb_json_key(j, "count_b");
        tfb_json_u64(j, s->count_b);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_key(j, "scalars_only_a");
    tfb_json_u64(j, c->only_a);
    tfb_json_key(j, "scalars_only_b");
    tfb_json_u64(j, c->only_b);
}

static void pipeline_json(tfb_json *j, const tfb_compare_pipeline *p)
{
    tfb_json_key(j, "pipeline");
    tfb_json_object_begin(j);
    tfb_json_key(j, "steps_a");
    tfb_json_u64(j, p->steps_a);
    tfb_json_key(j, "steps_b");
    tfb_json_u64(j, p->steps_b);
    tfb_json_key(j, "step_ms_a");
    known(j, p->steps_a > 0, p->step_ms_a);
    tfb_json_key(j, "step_ms_b");
    known(j, p->steps_b > 0, p->step_ms_b);
    tfb_json_key(j, "step_ms_change");
    change(j, p->step_change);
    tfb_json_key(j, "input_ms_a");
    known(j, p->steps_a > 0, p->input_ms_a);
    tfb_json_key(j, "input_ms_b");
    known(j, p->steps_b > 0, p->input_ms_b);
    tfb_json_key(j, "input_ms_change");
    change(j, p->input_ms_change);
    tfb_json_key(j, "input_share_a");
    known(j, p->steps_a > 0, p->share_a);
    tfb_json_key(j, "input_share_b");
    known(j, p->steps_b > 0, p->share_b);
    tfb_json_key(j, "input_share_change");
    change(j, p->share_change);
    tfb_json_key(j, "verdict_a");
    tfb_json_str(j, p->verdict_a);
    tfb_json_key(j, "verdict_b");
    tfb_json_str(j, p->verdict_b);
    tfb_json_object_end(j);
}

static void gpu_json(tfb_json *j, const tfb_compare *c)
{
    tfb_json_key(j, "gpu");
    tfb_json_object_begin(j);
    tfb_json_key(j, "traced_a");
    tfb_json_bool(j, c->traced_a);
    tfb_json_key(j, "traced_b");
    tfb_json_bool(j, c->traced_b);
    tfb_json_key(j, "loading_a");
    tfb_json_bool(j, c->loading_a);
    tfb_json_key(j, "loading_b");
    tfb_json_bool(j, c->loading_b);
    tfb_json_key(j, "error_a");
    tfb_json_str(j, c->gpu_error_a);
    tfb_json_key(j, "error_b");
    tfb_json_str(j, c->gpu_error_b);
    tfb_json_key(j, "kernel_ns_a");
    if (c->traced_a)
        tfb_json_i64(j, c->kernel_ns_a);
    else
        tfb_json_null(j);
    tfb_json_key(j, "kernel_ns_b");
    if (c->traced_b)
        tfb_json_i64(j, c->kernel_ns_b);
    else
        tfb_json_null(j);
    tfb_json_key(j, "kernel_change");
    change(j, c->kernel_change);
    tfb_json_key(j, "kernels");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < c->n_kernels; i++) {
        const tfb_compare_kernel *k = &c->kernels[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "name");
        tfb_json_str(j, k->name);
        tfb_json_key(j, "count_a");
        tfb_json_i64(j, k->count_a);
        tfb_json_key(j, "count_b");
        tfb_json_i64(j, k->count_b);
        tfb_json_key(j, "total_ns_a");
        tfb_json_i64(j, k->total_ns_a);
        tfb_json_key(j, "total_ns_b");
        tfb_json_i64(j, k->total_ns_b);
        tfb_json_key(j, "mean_ns_a");
        known(j, k->count_a > 0, k->mean_ns_a);
        tfb_json_key(j, "mean_ns_b");
        known(j, k->count_b > 0, k->mean_ns_b);
        tfb_json_key(j, "change");
        change(j, k->change);
        tfb_json_key(j, "slower");
        tfb_json_bool(j, k->slower);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

static void hparams_json(tfb_json *j, const tfb_compare *c)
{
    tfb_json_key(j, "hparams");
    tfb_json_object_begin(j);
    tfb_json_key(j, "count_a");
    tfb_json_u64(j, c->hparams_a);
    tfb_json_key(j, "count_b");
    tfb_json_u64(j, c->hparams_b);
    tfb_json_key(j, "differ");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < c->n_hparams; i++) {
        tfb_json_object_begin(j);
        tfb_json_key(j, "name");
        tfb_json_str(j, c->hparams[i].name);
        tfb_json_key(j, "a");
        tfb_json_str(j, c->hparams[i].a);
        tfb_json_key(j, "b");
        tfb_json_str(j, c->hparams[i].b);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

void tfb_compare_json(tfb_json *j, const tfb_compare *c)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "a");
    tfb_json_str(j, c->name_a);
    tfb_json_key(j, "b");
    tfb_json_str(j, c->name_b);
    scalars_json(j, c);
    pipeline_json(j, &c->pipeline);
    gpu_json(j, c);
    hparams_json(j, c);
    tfb_json_object_end(j);
}
