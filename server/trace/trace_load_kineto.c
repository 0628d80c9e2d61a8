/*
 * trace_load_kineto.c - the device side of a PyTorch profiler (Kineto)
 * trace, *.pt.trace.json or *.pt.trace.json.gz, into the GPU trace:
 * complete events ("ph":"X") of categories kernel, gpu_memcpy, gpu_memset,
 * cuda_runtime and cuda_driver. The file is read by the one Kineto
 * scanner (trace_kineto_scan.h), which the host side
 * (trace_host_kineto.c) shares; times are exact ns plus
 * baseTimeNanoseconds.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/trace_internal.h"
#include "trace/trace_kineto_scan.h"

typedef tfb_trace_kineto_tok tok;
typedef tfb_trace_kineto_event ev;

/* Interns a string token, decoding escapes. */
static int32_t intern_tok(tfb_trace_builder *b, const tok *t)
{
    if (!t->has_esc)
        return tfb_trace_builder_str(b, t->s, t->len);
    char buf[256], *heap;
    size_t n;
    const char *o = tfb_trace_kineto_tok_text(t, buf, sizeof buf, &n, &heap);
    int32_t id = o ? tfb_trace_builder_str(b, o, n) : -1;
    free(heap);
    return id;
}

/* One event (the scanner's callback; ctx is the builder). */
static int add_event(void *ctx, const ev *e, int64_t base_ns, int legacy)
{
    (void)legacy; /* not accepted: a bare array has no device events */
    tfb_trace_builder *b = ctx;
    if (!tfb_trace_kineto_tok_is(&e->ph, "X"))
        return 0;
    int kind;
    if (tfb_trace_kineto_tok_ieq(&e->cat, "kernel"))
        kind = TFB_TRACE_KERNEL;
    else if (tfb_trace_kineto_tok_ieq(&e->cat, "gpu_memcpy") ||
             tfb_trace_kineto_tok_ieq(&e->cat, "memcpy"))
        kind = TFB_TRACE_MEMCPY;
    else if (tfb_trace_kineto_tok_ieq(&e->cat, "gpu_memset") ||
             tfb_trace_kineto_tok_ieq(&e->cat, "memset"))
        kind = TFB_TRACE_MEMSET;
    else if (tfb_trace_kineto_tok_ieq(&e->cat, "cuda_runtime") ||
             tfb_trace_kineto_tok_ieq(&e->cat, "runtime") ||
             tfb_trace_kineto_tok_ieq(&e->cat, "cuda_driver") ||
             tfb_trace_kineto_tok_ieq(&e->cat, "driver"))
        kind = -1;
    else
        return 0;
    int64_t ts, dur = 0;
    if (!tfb_trace_kineto_us_to_ns(&e->ts, &ts))
        return 0;
    if (e->dur.s && !tfb_trace_kineto_us_to_ns(&e->dur, &dur))
        return 0;
    int64_t end;
    if (dur < 0 || __builtin_add_overflow(ts, base_ns, &ts) ||
        __builtin_add_overflow(ts, dur, &end))
        return 0; /* nonsense times: skipped */
    int64_t corr = tfb_trace_kineto_tok_i64(&e->a_corr, -1);
    if (kind < 0) {
        tfb_trace_call c;
        c.start = ts;
        c.end = end;
        c.correlation = corr;
        c.name = e->name.s ? intern_tok(b, &e->name) : -1;
        if (e->name.s && c.name < 0)
            return TFB_ENOMEM;
        return tfb_trace_builder_call(b, &c);
    }
    tfb_trace_span_in s;
    memset(&s, 0, sizeof s);
    s.kind = (uint8_t)kind;
    s.start = ts;
    s.end = end;
    s.correlation = corr;
    s.device = (int32_t)tfb_trace_kineto_tok_i64(
        &e->a_dev, tfb_trace_kineto_tok_i64(&e->pid, 0));
    s.stream = (int32_t)tfb_trace_kineto_tok_i64(
        &e->a_stream, tfb_trace_kineto_tok_i64(&e->tid, 0));
    s.step = -1;
    s.name = -1;
    if (kind == TFB_TRACE_KERNEL) {
        s.name = e->name.s ? intern_tok(b, &e->name) : -1;
        if (e->name.s && s.name < 0)
            return TFB_ENOMEM;
        for (int i = 0; i < 3; i++) {
            s.grid[i] = (int32_t)e->grid[i];
            s.block[i] = (int32_t)e->block[i];
        }
        s.registers = (int32_t)tfb_trace_kineto_tok_i64(&e->a_regs, 0);
        s.shared_mem = (int32_t)tfb_trace_kineto_tok_i64(&e->a_smem, 0);
    } else {
        s.bytes = tfb_trace_kineto_tok_i64(&e->a_bytes, 0);
        if (kind == TFB_TRACE_MEMCPY && e->name.s)
            s.copy_kind =
                (uint8_t)tfb_trace_copy_kind_from_text(e->name.s, e->name.len);
    }
    return tfb_trace_builder_span(b, &s);
}

int tfb_trace_load_kineto(tfb_trace_builder *b, const char *path)
{
    return tfb_trace_kineto_scan(path, 0, tfb_trace_builder_ctl(b), add_event,
                                 b);
}
