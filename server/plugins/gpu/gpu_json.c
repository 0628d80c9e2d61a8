/*
 * gpu_json.c - the GPU analyses' structs as the JSON of the
 * /data/plugin/gpu/ routes (formats in gpu_analysis.h and server/API.md).
 */
#include <stdio.h>

#include "plugins/gpu/gpu_analysis.h"

static void i64_or_null(tfb_json *j, int have, int64_t v)
{
    if (have)
        tfb_json_i64(j, v);
    else
        tfb_json_null(j);
}

static void copy_stat(tfb_json *j, const tfb_trace_copy_stat *c)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "count");
    tfb_json_i64(j, c->count);
    tfb_json_key(j, "bytes");
    tfb_json_i64(j, c->bytes);
    tfb_json_key(j, "ns");
    tfb_json_i64(j, c->ns);
    tfb_json_object_end(j);
}

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
    tfb_json_key(j, "sm_count");
    i64_or_null(j, d->sm_count > 0, d->sm_count);
    tfb_json_key(j, "kernels");
    tfb_json_i64(j, d->kernels);
    tfb_json_key(j, "kernel_ns");
    tfb_json_i64(j, d->kernel_ns);
    tfb_json_key(j, "busy_ns");
    tfb_json_i64(j, d->busy_ns);
    tfb_json_key(j, "span_ns");
    tfb_json_i64(j, d->span_ns);
    tfb_json_key(j, "start_ns");
    i64_or_null(j, d->has_kernels, d->start_ns);
    tfb_json_key(j, "end_ns");
    i64_or_null(j, d->has_kernels, d->end_ns);
    tfb_json_key(j, "busy_fraction");
    tfb_json_double(j, d->busy_fraction);
    tfb_json_key(j, "memcpy");
    tfb_json_object_begin(j);
    for (int k = 0; k < 256; k++) {
        if (!d->memcpy[k].count)
            continue;
        tfb_json_key(j, tfb_trace_copy_kind_label(k));
        copy_stat(j, &d->memcpy[k]);
    }
    tfb_json_object_end(j);
    tfb_json_key(j, "memset");
    copy_stat(j, &d->memset);
    tfb_json_key(j, "idle");
    tfb_json_object_begin(j);
    tfb_json_key(j, "host_wait_ns");
    tfb_json_i64(j, d->idle_host_wait_ns);
    tfb_json_key(j, "kernel_wait_ns");
    tfb_json_i64(j, d->idle_kernel_wait_ns);
    tfb_json_key(j, "other_ns");
    tfb_json_i64(j, d->idle_other_ns);
    tfb_json_object_end(j);
    tfb_json_object_end(j);
}

void tfb_gpu_devices_json(tfb_json *j, const tfb_trace_summary *s)
{
    tfb_json_array_begin(j);
    for (size_t i = 0; i < s->n_devices; i++)
        device_json(j, &s->devices[i]);
    tfb_json_array_end(j);
}

void tfb_gpu_summary_json(tfb_json *j, const tfb_trace_summary *s)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "devices");
    tfb_gpu_devices_json(j, s);
    tfb_json_key(j, "files");
    tfb_json_u64(j, s->files);
    tfb_json_object_end(j);
}

static void triple(tfb_json *j, const int32_t v[3])
{
    tfb_json_array_begin(j);
    for (int i = 0; i < 3; i++)
        tfb_json_i64(j, v[i]);
    tfb_json_array_end(j);
}

void tfb_gpu_kernel_list_json(tfb_json *j, const tfb_trace_kernels *k)
{
    tfb_json_array_begin(j);
    for (size_t i = 0; i < k->n; i++) {
        const tfb_trace_kernel_stat *s = &k->v[i];
        tfb_json_object_begin(j);
        tfb_json_key(j, "name");
        tfb_json_str(j, s->name);
        tfb_json_key(j, "count");
        tfb_json_i64(j, s->count);
        tfb_json_key(j, "total_ns");
        tfb_json_i64(j, s->total_ns);
        tfb_json_key(j, "mean_ns");
        tfb_json_double(j, s->mean_ns);
        tfb_json_key(j, "min_ns");
        tfb_json_i64(j, s->min_ns);
        tfb_json_key(j, "max_ns");
        tfb_json_i64(j, s->max_ns);
        tfb_json_key(j, "std_ns");
        tfb_json_double(j, s->std_ns);
        tfb_json_key(j, "share");
        tfb_json_double(j, s->share);
        tfb_json_key(j, "grid");
        triple(j, s->grid);
        tfb_json_key(j, "block");
        triple(j, s->block);
        tfb_json_key(j, "registers");
        tfb_json_i64(j, s->registers);
        tfb_json_key(j, "shared_mem");
        tfb_json_i64(j, s->shared_mem);
        tfb_json_object_end(j);
    }
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
    tfb_json_object_begin(j);
    tfb_json_key(j, "device");
    tfb_json_i64(j, u->device);
    tfb_json_key(j, "start_ns");
    tfb_json_i64(j, u->start_ns);
    tfb_json_key(j, "bucket_ns");
    tfb_json_i64(j, u->bucket_ns);
    tfb_json_key(j, "busy");
    tfb_json_array_begin(j);
    for (size_t b = 0; b < u->n; b++)
        tfb_json_double(j, u->busy[b]);
    tfb_json_array_end(j);
    tfb_json_object_end(j);
}
