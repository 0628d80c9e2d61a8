/*
 * compare_json.c - the comparison as JSON: the answer of
 * /data/plugin/compare/compare and of `tfboard report --compare --format
 * json`, and the data the html page draws from (one writer for all).
 * A change is null when unknown (NaN), else the number ("Infinity" when A
 * was 0); a value of a side without data is null.
 */
#include "plugins/compare/compare_analysis.h"

/* A shared tag has at least one point on each side, so last is data
 * (possibly NaN, written as "NaN"). */
static const tfb_json_field scalar_fields[] = {
    TFB_JSON_FIELD(tfb_compare_scalar, tag, STR),
    TFB_JSON_FIELD(tfb_compare_scalar, last_a, DOUBLE),
    TFB_JSON_FIELD(tfb_compare_scalar, last_b, DOUBLE),
    TFB_JSON_FIELD(tfb_compare_scalar, last_change, NUM),
    TFB_JSON_FIELD_IF("min_a", tfb_compare_scalar, min_a, DOUBLE, has_min_a),
    TFB_JSON_FIELD_IF("min_b", tfb_compare_scalar, min_b, DOUBLE, has_min_b),
    TFB_JSON_FIELD(tfb_compare_scalar, min_change, NUM),
    TFB_JSON_FIELD(tfb_compare_scalar, count_a, SIZE),
    TFB_JSON_FIELD(tfb_compare_scalar, count_b, SIZE),
};

/* A side without step timings has NaN means (null). */
static const tfb_json_field eff_fields[] = {
    TFB_JSON_FIELD(tfb_compare_eff, has_a, BOOL),
    TFB_JSON_FIELD(tfb_compare_eff, has_b, BOOL),
    TFB_JSON_FIELD(tfb_compare_eff, mfu_a, NUM),
    TFB_JSON_FIELD(tfb_compare_eff, mfu_b, NUM),
    TFB_JSON_FIELD(tfb_compare_eff, mfu_change, NUM),
    TFB_JSON_FIELD_AS("tokens_per_s_a", tfb_compare_eff, tokens_a, NUM),
    TFB_JSON_FIELD_AS("tokens_per_s_b", tfb_compare_eff, tokens_b, NUM),
    TFB_JSON_FIELD_AS("tokens_per_s_change", tfb_compare_eff, tokens_change,
                      NUM),
    TFB_JSON_FIELD_AS("j_per_token_a", tfb_compare_eff, jpt_a, NUM),
    TFB_JSON_FIELD_AS("j_per_token_b", tfb_compare_eff, jpt_b, NUM),
    TFB_JSON_FIELD_AS("j_per_token_change", tfb_compare_eff, jpt_change,
                      NUM),
};

static const tfb_json_field pipeline_fields[] = {
    TFB_JSON_FIELD(tfb_compare_pipeline, steps_a, SIZE),
    TFB_JSON_FIELD(tfb_compare_pipeline, steps_b, SIZE),
    TFB_JSON_FIELD(tfb_compare_pipeline, step_ms_a, NUM),
    TFB_JSON_FIELD(tfb_compare_pipeline, step_ms_b, NUM),
    TFB_JSON_FIELD_AS("step_ms_change", tfb_compare_pipeline, step_change,
                      NUM),
    TFB_JSON_FIELD(tfb_compare_pipeline, input_ms_a, NUM),
    TFB_JSON_FIELD(tfb_compare_pipeline, input_ms_b, NUM),
    TFB_JSON_FIELD(tfb_compare_pipeline, input_ms_change, NUM),
    TFB_JSON_FIELD_AS("input_share_a", tfb_compare_pipeline, share_a, NUM),
    TFB_JSON_FIELD_AS("input_share_b", tfb_compare_pipeline, share_b, NUM),
    TFB_JSON_FIELD_AS("input_share_change", tfb_compare_pipeline,
                      share_change, NUM),
    TFB_JSON_FIELD(tfb_compare_pipeline, verdict_a, STR),
    TFB_JSON_FIELD(tfb_compare_pipeline, verdict_b, STR),
};

static const tfb_json_field gpu_fields[] = {
    TFB_JSON_FIELD(tfb_compare, traced_a, BOOL),
    TFB_JSON_FIELD(tfb_compare, traced_b, BOOL),
    TFB_JSON_FIELD(tfb_compare, loading_a, BOOL),
    TFB_JSON_FIELD(tfb_compare, loading_b, BOOL),
    TFB_JSON_FIELD_AS("error_a", tfb_compare, gpu_error_a, STR),
    TFB_JSON_FIELD_AS("error_b", tfb_compare, gpu_error_b, STR),
    TFB_JSON_FIELD_IF("kernel_ns_a", tfb_compare, kernel_ns_a, I64, traced_a),
    TFB_JSON_FIELD_IF("kernel_ns_b", tfb_compare, kernel_ns_b, I64, traced_b),
    TFB_JSON_FIELD(tfb_compare, kernel_change, NUM),
};

/* mean_ns is NaN (null) on a side without the kernel. */
static const tfb_json_field kernel_fields[] = {
    TFB_JSON_FIELD(tfb_compare_kernel, name, STR),
    TFB_JSON_FIELD(tfb_compare_kernel, count_a, I64),
    TFB_JSON_FIELD(tfb_compare_kernel, count_b, I64),
    TFB_JSON_FIELD(tfb_compare_kernel, total_ns_a, I64),
    TFB_JSON_FIELD(tfb_compare_kernel, total_ns_b, I64),
    TFB_JSON_FIELD(tfb_compare_kernel, mean_ns_a, NUM),
    TFB_JSON_FIELD(tfb_compare_kernel, mean_ns_b, NUM),
    TFB_JSON_FIELD(tfb_compare_kernel, change, NUM),
    TFB_JSON_FIELD(tfb_compare_kernel, slower, BOOL),
};

static const tfb_json_field hparam_fields[] = {
    TFB_JSON_FIELD(tfb_compare_hparam, name, STR),
    TFB_JSON_FIELD(tfb_compare_hparam, a, STR),
    TFB_JSON_FIELD(tfb_compare_hparam, b, STR),
};

static const tfb_json_field diff_row_fields[] = {
    TFB_JSON_FIELD(tfb_trace_diff_row, name, STR),
    TFB_JSON_FIELD(tfb_trace_diff_row, device, STR),
    TFB_JSON_FIELD(tfb_trace_diff_row, change, STR),
    TFB_JSON_FIELD(tfb_trace_diff_row, count_a, I64),
    TFB_JSON_FIELD(tfb_trace_diff_row, count_b, I64),
    TFB_JSON_FIELD(tfb_trace_diff_row, total_ns_a, I64),
    TFB_JSON_FIELD(tfb_trace_diff_row, total_ns_b, I64),
    TFB_JSON_FIELD(tfb_trace_diff_row, diff_count, I64),
    TFB_JSON_FIELD(tfb_trace_diff_row, diff_ns, I64),
};

/* HTA's TraceDiff; null unless both runs have a trace. */
static void trace_diff_json(tfb_json *j, const tfb_trace_diff *d)
{
    if (!d->has_a || !d->has_b) {
        tfb_json_null(j);
        return;
    }
    tfb_json_object_begin(j);
    tfb_json_key(j, "names");
    tfb_json_u64(j, d->names);
    tfb_json_key(j, "rows_max");
    tfb_json_u64(j, TFB_TRACE_DIFF_ROWS_MAX);
    static const char *const sides[2] = {"kernels", "ops"};
    for (int s = 0; s < 2; s++) {
        tfb_json_key(j, sides[s]);
        tfb_json_object_begin(j);
        for (int k = 0; k < TFB_TRACE_DIFF_KINDS; k++) {
            tfb_json_key(j, tfb_trace_diff_kind_name(k));
            tfb_json_u64(j, d->kinds[s][k]);
        }
        tfb_json_object_end(j);
    }
    tfb_json_key(j, "rows");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < d->n; i++)
        TFB_JSON_STRUCT(j, &d->rows[i], diff_row_fields);
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
    tfb_json_key(j, "scalars");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < c->n_scalars; i++)
        TFB_JSON_STRUCT(j, &c->scalars[i], scalar_fields);
    tfb_json_array_end(j);
    tfb_json_key(j, "scalars_only_a");
    tfb_json_u64(j, c->only_a);
    tfb_json_key(j, "scalars_only_b");
    tfb_json_u64(j, c->only_b);
    tfb_json_key(j, "pipeline");
    TFB_JSON_STRUCT(j, &c->pipeline, pipeline_fields);
    tfb_json_key(j, "efficiency");
    TFB_JSON_STRUCT(j, &c->eff, eff_fields);
    tfb_json_key(j, "gpu");
    tfb_json_object_begin(j);
    TFB_JSON_FIELDS(j, c, gpu_fields);
    tfb_json_key(j, "kernels");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < c->n_kernels; i++)
        TFB_JSON_STRUCT(j, &c->kernels[i], kernel_fields);
    tfb_json_array_end(j);
    tfb_json_object_end(j);
    tfb_json_key(j, "trace_diff");
    trace_diff_json(j, &c->diff);
    tfb_json_key(j, "hparams");
    tfb_json_object_begin(j);
    tfb_json_key(j, "count_a");
    tfb_json_u64(j, c->hparams_a);
    tfb_json_key(j, "count_b");
    tfb_json_u64(j, c->hparams_b);
    tfb_json_key(j, "differ");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < c->n_hparams; i++)
        TFB_JSON_STRUCT(j, &c->hparams[i], hparam_fields);
    tfb_json_array_end(j);
    tfb_json_object_end(j);
    tfb_json_object_end(j);
}
