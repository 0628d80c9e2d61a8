/*
 * gpu_json.c - the GPU analyses' structs as the JSON of the
 * /data/plugin/gpu/ routes (formats in gpu_analysis.h and server/API.md).
 */
#include <stdio.h>

#include "plugins/gpu/gpu_analysis.h"

static const tfb_json_field copy_fields[] = {
    TFB_JSON_FIELD(tfb_trace_copy_stat, count, I64),
    TFB_JSON_FIELD(tfb_trace_copy_stat, bytes, I64),
    TFB_JSON_FIELD(tfb_trace_copy_stat, ns, I64),
};

/* A device between its name and its copies. */
static const tfb_json_field device_fields[] = {
    TFB_JSON_FIELD(tfb_trace_device_summary, sm_count, POS),
    TFB_JSON_FIELD(tfb_trace_device_summary, kernels, I64),
    TFB_JSON_FIELD(tfb_trace_device_summary, kernel_ns, I64),
    TFB_JSON_FIELD(tfb_trace_device_summary, busy_ns, I64),
    TFB_JSON_FIELD(tfb_trace_device_summary, span_ns, I64),
    TFB_JSON_FIELD(tfb_trace_device_summary, idle_ns, I64),
    TFB_JSON_FIELD_IF("start_ns", tfb_trace_device_summary, start_ns, I64,
                      has_events),
    TFB_JSON_FIELD_IF("end_ns", tfb_trace_device_summary, end_ns, I64,
                      has_events),
    TFB_JSON_FIELD(tfb_trace_device_summary, busy_fraction, DOUBLE),
};

static const tfb_json_field idle_fields[] = {
    TFB_JSON_FIELD_AS("host_wait_ns", tfb_trace_device_summary,
                      idle_host_wait_ns, I64),
    TFB_JSON_FIELD_AS("kernel_wait_ns", tfb_trace_device_summary,
                      idle_kernel_wait_ns, I64),
    TFB_JSON_FIELD_AS("other_ns", tfb_trace_device_summary, idle_other_ns,
                      I64),
};

static const tfb_json_field stream_fields[] = {
    TFB_JSON_FIELD(tfb_trace_stream_idle, stream, INT),
    TFB_JSON_FIELD(tfb_trace_stream_idle, events, I64),
    TFB_JSON_FIELD(tfb_trace_stream_idle, host_wait_ns, I64),
    TFB_JSON_FIELD(tfb_trace_stream_idle, kernel_wait_ns, I64),
    TFB_JSON_FIELD(tfb_trace_stream_idle, other_ns, I64),
};

static void device_json(tfb_json *j, const tfb_trace_device_summary *d)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "id");
    tfb_json_i64(j, d->id);
    tfb_json_key(j, "name");
    if (d->name) {
        tfb_json_str(j, d->name);
    } else {
        char buf[32];
        snprintf(buf, sizeof buf, "GPU %d", (int)d->id);
        tfb_json_str(j, buf);
    }
    TFB_JSON_FIELDS(j, d, device_fields);
    tfb_trace_device_props_json(j, d);
    tfb_json_key(j, "memcpy");
    tfb_json_object_begin(j);
    for (int k = 0; k < 256; k++) {
        if (!d->memcpy[k].count)
            continue;
        tfb_json_key(j, tfb_trace_copy_kind_label(k));
        TFB_JSON_STRUCT(j, &d->memcpy[k], copy_fields);
    }
    tfb_json_object_end(j);
    tfb_json_key(j, "memset");
    TFB_JSON_STRUCT(j, &d->memset, copy_fields);
    tfb_json_key(j, "idle");
    TFB_JSON_STRUCT(j, d, idle_fields);
    tfb_json_key(j, "streams");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < d->nstreams; i++)
        TFB_JSON_STRUCT(j, &d->streams[i], stream_fields);
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

void tfb_gpu_devices_json(tfb_json *j, const tfb_trace_summary *s)
{
    tfb_json_array_begin(j);
    for (size_t i = 0; i < s->n_devices; i++)
        device_json(j, &s->devices[i]);
    tfb_json_array_end(j);
}

void tfb_gpu_trace_meta_json(tfb_json *j, const tfb_trace *t)
{
    tfb_json_key(j, "notes");
    tfb_trace_notes_json(j, t);
    tfb_json_key(j, "distributed");
    tfb_trace_dist_json(j, t);
}

void tfb_gpu_summary_json(tfb_json *j, const tfb_trace_summary *s,
                          const tfb_trace *t)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "devices");
    tfb_gpu_devices_json(j, s);
    tfb_json_key(j, "files");
    tfb_json_u64(j, s->files);
    tfb_gpu_trace_meta_json(j, t);
    tfb_json_object_end(j);
}

static const tfb_json_field kernel_fields[] = {
    TFB_JSON_FIELD(tfb_trace_kernel_stat, name, STR),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, count, I64),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, total_ns, I64),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, mean_ns, DOUBLE),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, min_ns, I64),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, max_ns, I64),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, std_ns, DOUBLE),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, share, DOUBLE),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, grid, INT3),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, block, INT3),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, registers, INT),
    TFB_JSON_FIELD(tfb_trace_kernel_stat, shared_mem, INT),
};

void tfb_gpu_kernel_list_json(tfb_json *j, const tfb_trace_kernels *k)
{
    tfb_json_array_begin(j);
    for (size_t i = 0; i < k->n; i++)
        TFB_JSON_STRUCT(j, &k->v[i], kernel_fields);
    tfb_json_array_end(j);
}

void tfb_gpu_kernels_json(tfb_json *j, const tfb_trace_kernels *k)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "kernels");
    tfb_gpu_kernel_list_json(j, k);
    tfb_json_key(j, "total");
    tfb_json_u64(j, k->distinct);
    tfb_json_key(j, "total_ns");
    tfb_json_i64(j, k->total_ns);
    tfb_json_object_end(j);
}

void tfb_gpu_utilization_json(tfb_json *j,
                              const tfb_trace_utilization_buckets *u)
{
    static const tfb_json_field fields[] = {
        TFB_JSON_FIELD(tfb_trace_utilization_buckets, device, INT),
        TFB_JSON_FIELD(tfb_trace_utilization_buckets, start_ns, I64),
        TFB_JSON_FIELD(tfb_trace_utilization_buckets, bucket_ns, I64),
    };
    tfb_json_object_begin(j);
    TFB_JSON_FIELDS(j, u, fields);
    tfb_json_key(j, "busy");
    tfb_json_array_begin(j);
    for (size_t b = 0; b < u->n; b++)
        tfb_json_double(j, u->busy[b]);
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}

void tfb_gpu_window_json(tfb_json *j, const tfb_trace_window *w)
{
    tfb_json_key(j, "window");
    tfb_trace_window_json(j, w);
}

void tfb_gpu_add_window(tfb_json *j, const tfb_trace_window *w)
{
    if (tfb_json_object_reopen(j) < 0)
        return;
    tfb_gpu_window_json(j, w);
    tfb_json_object_end(j);
}
