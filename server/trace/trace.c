/*
 * trace.c - reading a built trace: strings, a span's device, stream, bytes,
 * step and kernel description, the runtime call of a correlation id, and
 * CUPTI's copy-kind labels. Calls nothing else of the trace layer: the
 * builder, the aggregates and the dashboards all read traces through it.
 */
#include <string.h>

#include "trace/trace_internal.h"

const tfb_trace_collective *tfb_trace_collectives(const tfb_trace *t,
                                                  size_t *n)
{
    *n = t ? t->ncolls : 0;
    return t && t->ncolls ? t->colls : NULL;
}

const char *tfb_trace_str(const tfb_trace *t, int32_t i, const char *fallback)
{
    if (!t || i < 0 || (size_t)i >= t->nstrings)
        return fallback;
    return t->strings[i];
}

int32_t tfb_trace_span_device(const tfb_trace *t, const tfb_trace_span *s)
{
    return s->lane < t->nlanes ? t->lanes[s->lane].device : -1;
}

int32_t tfb_trace_span_stream(const tfb_trace *t, const tfb_trace_span *s)
{
    return s->lane < t->nlanes ? t->lanes[s->lane].stream : -1;
}

static int64_t value_of(const tfb_trace *t, const tfb_trace_span *s,
                        int64_t def)
{
    return s->kind != TFB_TRACE_KERNEL && s->info >= 0 &&
                   (size_t)s->info < t->nvalues
               ? t->values[s->info]
               : def;
}

int64_t tfb_trace_span_bytes(const tfb_trace *t, const tfb_trace_span *s)
{
    return s->kind == TFB_TRACE_MEMCPY || s->kind == TFB_TRACE_MEMSET
               ? value_of(t, s, 0)
               : 0;
}

int64_t tfb_trace_span_step(const tfb_trace *t, const tfb_trace_span *s)
{
    return s->kind == TFB_TRACE_HOST_STEP || s->kind == TFB_TRACE_HOST_INPUT
               ? value_of(t, s, -1)
               : -1;
}

const tfb_trace_kinfo *tfb_trace_span_kinfo(const tfb_trace *t,
                                            const tfb_trace_span *s)
{
    return s->kind == TFB_TRACE_KERNEL && s->info >= 0 &&
                   (size_t)s->info < t->nkinfo
               ? &t->kinfo[s->info]
               : NULL;
}

size_t tfb_trace_call_rank(const tfb_trace *t, int64_t corr)
{
    size_t lo = 0, hi = t->ncalls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->calls[t->calls_by_corr[mid]].correlation < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->ncalls && t->calls[t->calls_by_corr[lo]].correlation == corr)
        return lo;
    return t->ncalls;
}

const tfb_trace_call *tfb_trace_call_of(const tfb_trace *t, int64_t corr)
{
    if (!t || corr < 0 || !t->calls_by_corr)
        return NULL;
    size_t k = tfb_trace_call_rank(t, corr);
    return k < t->ncalls ? &t->calls[t->calls_by_corr[k]] : NULL;
}

static const char *const k_copy_labels[] = {
    "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
    "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};

const char *tfb_trace_copy_kind_label(int k)
{
    if (k < 0 || k >= (int)(sizeof k_copy_labels / sizeof k_copy_labels[0]))
        return "Unknown";
    return k_copy_labels[k];
}

int tfb_trace_copy_kind_from_text(const char *s, size_t len)
{
    for (int k = 1; k < (int)(sizeof k_copy_labels / sizeof k_copy_labels[0]);
         k++) {
        size_t ll = strlen(k_copy_labels[k]);
        for (size_t i = 0; i + ll <= len; i++)
            if (memcmp(s + i, k_copy_labels[k], ll) == 0)
                return k;
    }
    return 0;
}

size_t tfb_trace_calls_from(const tfb_trace *t, int64_t x)
{
    size_t lo = 0, hi = t->ncalls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->calls[mid].start < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
