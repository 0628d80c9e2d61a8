/*
 * trace_host_kineto.c - the host side of a Kineto trace into the host
 * model (trace.h): complete events ("ph":"X") of the host categories
 * (cpu_op, python_function, Operator: ops; cuda_runtime, cuda_driver,
 * Runtime: calls, with args.correlation; user_annotation: NVTX-style
 * ranges) and thread_name metadata, read by the Kineto scanner the device
 * side uses (trace_kineto_scan.h). A legacy bare array of events
 * (torch.profiler without Kineto, e.g. Debian's python3-torch) has no
 * categories: all its events are ops.
 */
#include <stdlib.h>

#include "trace/trace_internal.h"
#include "trace/trace_kineto_scan.h"

static int host_kind(const tfb_trace_kineto_tok *cat)
{
    if (tfb_trace_kineto_tok_is(cat, "cpu_op") ||
        tfb_trace_kineto_tok_is(cat, "python_function") ||
        tfb_trace_kineto_tok_is(cat, "Operator"))
        return TFB_TRACE_HOST_OP;
    if (tfb_trace_kineto_tok_is(cat, "cuda_runtime") ||
        tfb_trace_kineto_tok_is(cat, "cuda_driver") ||
        tfb_trace_kineto_tok_is(cat, "Runtime") ||
        /* other accelerators' launch calls (trace_load_kineto.c) */
        tfb_trace_kineto_tok_is(cat, "mtia_runtime") ||
        tfb_trace_kineto_tok_is(cat, "xpu_runtime") ||
        tfb_trace_kineto_tok_is(cat, "privateuse1_runtime"))
        return TFB_TRACE_HOST_RUNTIME;
    if (tfb_trace_kineto_tok_is(cat, "user_annotation"))
        return TFB_TRACE_HOST_RANGE;
    return -1;
}

static int32_t intern(tfb_trace_host_builder *b, const tfb_trace_kineto_tok *t)
{
    char buf[512], *heap;
    size_t n;
    const char *s = tfb_trace_kineto_tok_text(t, buf, sizeof buf, &n, &heap);
    int32_t id = s ? tfb_trace_host_builder_str(b, s, n) : -1;
    free(heap);
    return id;
}

/* One event (the scanner's callback; ctx is the builder). */
static int add_event(void *ctx, const tfb_trace_kineto_event *e,
                     int64_t base_ns, int legacy)
{
    tfb_trace_host_builder *b = ctx;
    int64_t pid = tfb_trace_kineto_tok_i64(&e->pid, 0),
            tid = tfb_trace_kineto_tok_i64(&e->tid, 0);
    if (tfb_trace_kineto_tok_is(&e->ph, "M")) {
        if (!tfb_trace_kineto_tok_is(&e->name, "thread_name") ||
            !e->a_name.is_str)
            return 0;
        int32_t name = intern(b, &e->a_name);
        return name < 0
                   ? TFB_ENOMEM
                   : tfb_trace_host_builder_thread_name(b, pid, tid, name);
    }
    if (!tfb_trace_kineto_tok_is(&e->ph, "X") || !e->name.is_str)
        return 0;
    int kind = legacy && !e->cat.s ? TFB_TRACE_HOST_OP : host_kind(&e->cat);
    int64_t ts, dur, start, end;
    if (kind < 0 || !tfb_trace_kineto_us_to_ns(&e->ts, &ts) ||
        !tfb_trace_kineto_us_to_ns(&e->dur, &dur) || dur < 0 ||
        __builtin_add_overflow(ts, base_ns, &start) ||
        __builtin_add_overflow(start, dur, &end))
        return 0; /* another kind, or nonsense times: skipped */
    int32_t name = intern(b, &e->name);
    if (name < 0)
        return TFB_ENOMEM;
    return tfb_trace_host_builder_span(
        b, pid, tid, kind, name, start, end,
        kind == TFB_TRACE_HOST_RUNTIME
            ? tfb_trace_kineto_tok_i64(&e->a_corr, -1)
            : -1);
}

int tfb_trace_host_load_kineto(tfb_trace_host_builder *b, const char *path)
{
    return tfb_trace_kineto_scan(path, 1, tfb_trace_host_builder_ctl(b),
                                 add_event, b);
}
