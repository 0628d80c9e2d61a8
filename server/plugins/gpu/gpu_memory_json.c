/*
 * gpu_memory_json.c - JSON of the GPU memory view (gpu_memory_routes.h),
 * written from the typed structs; the shape is documented in
 * server/API.md. Addresses and pool ids are hex strings (64-bit values do
 * not survive a JavaScript number).
 */
#include <inttypes.h>
#include <stdio.h>

#include "plugins/gpu/gpu_memory_routes.h"

static void hex(tfb_json *j, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "0x%" PRIx64, v);
    tfb_json_str(j, b);
}

static void kv_i64(tfb_json *j, const char *k, int64_t v)
{
    tfb_json_key(j, k);
    tfb_json_i64(j, v);
}

static void kv_u64(tfb_json *j, const char *k, uint64_t v)
{
    tfb_json_key(j, k);
    tfb_json_u64(j, v);
}

static void alloc_json(tfb_json *j, const tfb_gpu_memory_alloc *a,
                       int with_end)
{
    tfb_json_object_begin(j);
    tfb_json_key(j, "address");
    hex(j, a->address);
    kv_i64(j, "bytes", a->bytes);
    kv_i64(j, "t_ns", a->t_ns);
    tfb_json_key(j, "stream");
    if (a->stream >= 0)
        tfb_json_i64(j, a->stream);
    else
        tfb_json_null(j);
    tfb_json_key(j, "pool");
    if (a->pool)
        hex(j, a->pool);
    else
        tfb_json_null(j);
    tfb_json_key(j, "kernel");
    tfb_json_str(j, a->kernel);
    tfb_json_key(j, "range");
    tfb_json_str(j, a->range);
    if (with_end) {
        tfb_json_key(j, "live_at_end");
        tfb_json_bool(j, a->live_at_end);
    }
    tfb_json_object_end(j);
}

void tfb_gpu_memory_allocs_json(tfb_json *j, const char *key,
                                const tfb_gpu_memory_alloc *a, size_t n,
                                int with_end)
{
    tfb_json_key(j, key);
    tfb_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        alloc_json(j, &a[i], with_end);
    tfb_json_array_end(j);
}

static void device_json(tfb_json *j, const tfb_gpu_memory_device *d, int pm,
                        int last_alloc)
{
    tfb_json_object_begin(j);
    kv_i64(j, "device", d->device);
    /* [t_ns, bytes, reserved]: the value holds from t_ns to the next. */
    tfb_json_key(j, "points");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < d->n_points; i++) {
        tfb_json_array_begin(j);
        tfb_json_i64(j, d->points[i].t_ns);
        tfb_json_i64(j, d->points[i].bytes);
        tfb_json_i64(j, d->points[i].reserved);
        tfb_json_array_end(j);
    }
    tfb_json_array_end(j);
    kv_u64(j, "changes", d->n_changes);
    kv_i64(j, "peak_bytes", d->peak_bytes);
    kv_i64(j, "peak_t_ns", d->peak_t_ns);
    kv_i64(j, "peak_reserved", d->peak_reserved);
    kv_u64(j, "live_at_peak_total", d->live_at_peak_total);
    tfb_gpu_memory_allocs_json(j, "live_at_peak", d->live_at_peak,
                               d->n_live_at_peak, 0);
    kv_i64(j, "end_bytes", d->end_bytes);
    kv_i64(j, "end_reserved", d->end_reserved);
    kv_u64(j, "live_at_end", d->live_at_end);
    tfb_json_key(j, "last_event_alloc");
    tfb_json_bool(j, last_alloc);
    tfb_json_key(j, "post_mortem");
    tfb_json_bool(j, pm);
    tfb_gpu_memory_allocs_json(j, "last_allocs", d->last_allocs,
                               d->n_last_allocs, 1);
    kv_u64(j, "allocs", d->allocs);
    kv_u64(j, "frees", d->frees);
    kv_u64(j, "replaced", d->replaced);
    kv_u64(j, "unmatched_frees", d->unmatched_frees);
    kv_i64(j, "alloc_bytes", d->alloc_bytes);
    kv_i64(j, "free_bytes", d->free_bytes);
    kv_i64(j, "unmatched_free_bytes", d->unmatched_free_bytes);
    kv_u64(j, "pool_allocs", d->pool_allocs);
    tfb_json_object_end(j);
}

void tfb_gpu_memory_view_json(tfb_json *j, const tfb_gpu_memory_view *v)
{
    tfb_json_object_begin(j);
    kv_u64(j, "files", v->files);
    kv_u64(j, "files_skipped", v->files_skipped);
    kv_u64(j, "events", v->events);
    kv_u64(j, "events_skipped", v->events_skipped);
    tfb_json_key(j, "notes");
    tfb_json_array_begin(j);
    if (v->events_skipped) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "%llu memory event(s) skipped: a size no device has (over "
                 "2^50 bytes, or sizes past int64 in sum) or a device id "
                 "outside int32",
                 (unsigned long long)v->events_skipped);
        tfb_json_str(j, msg);
    }
    tfb_json_array_end(j);
    kv_i64(j, "start_ns", v->first_ns);
    kv_i64(j, "end_ns", v->last_ns);
    tfb_json_key(j, "has_trace");
    tfb_json_bool(j, v->has_trace);
    tfb_json_key(j, "context");
    tfb_json_object_begin(j);
    kv_u64(j, "kernels", v->kernels);
    kv_u64(j, "ranges", v->ranges);
    kv_u64(j, "steps", v->steps);
    tfb_json_object_end(j);
    tfb_json_key(j, "post_mortem_rule");
    tfb_json_str(j, "bytes in use at the end >= 90% of the peak, and the "
                    "device's last memory event is an allocation");
    tfb_json_key(j, "devices");
    tfb_json_array_begin(j);
    for (size_t d = 0; d < v->res->n_devices; d++)
        device_json(j, &v->res->devices[d], v->post_mortem[d],
                    v->last_is_alloc[d]);
    tfb_json_array_end(j);
    tfb_json_key(j, "churn");
    tfb_json_array_begin(j);
    for (size_t i = 0; i < v->res->n_churn; i++) {
        const tfb_gpu_memory_churn *c = &v->res->churn[i];
        tfb_json_object_begin(j);
        kv_i64(j, "step", c->step);
        kv_i64(j, "device", c->device);
        kv_u64(j, "allocs", c->allocs);
        kv_u64(j, "frees", c->frees);
        kv_i64(j, "alloc_bytes", c->alloc_bytes);
        kv_i64(j, "free_bytes", c->free_bytes);
        tfb_json_object_end(j);
    }
    tfb_json_array_end(j);
    kv_u64(j, "events_outside_steps", v->res->events_outside_steps);
    tfb_json_object_end(j);
}
