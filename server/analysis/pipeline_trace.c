/*
 * pipeline_trace.c - interval arithmetic for the trace-derived pipeline
 * figures: host step/input spans laid against GPU busy time.
 */
#include "analysis/pipeline_trace.h"

#include <stdlib.h>
#include <string.h>

int64_t tfb_intervals_length(const tfb_interval *v, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += v[i].end - v[i].start;
    return t;
}

/* Walks the intersection of two normalized lists; writes it to out when
 * out is not NULL (it has room for na + nb pieces). Returns its length. */
static int64_t intersect(const tfb_interval *a, size_t na,
                         const tfb_interval *b, size_t nb, tfb_interval *out,
                         size_t *nout)
{
    size_t i = 0, k = 0, m = 0;
    int64_t len = 0;
    while (i < na && k < nb) {
        int64_t s = a[i].start > b[k].start ? a[i].start : b[k].start;
        int64_t e = a[i].end < b[k].end ? a[i].end : b[k].end;
        if (s < e) {
            len += e - s;
            if (out)
                out[m++] = (tfb_interval){s, e};
        }
        if (a[i].end < b[k].end)
            i++;
        else
            k++;
    }
    if (nout)
        *nout = m;
    return len;
}

int64_t tfb_intervals_overlap(const tfb_interval *a, size_t na,
                              const tfb_interval *b, size_t nb)
{
    return intersect(a, na, b, nb, NULL, NULL);
}

int tfb_pipeline_trace_compute(tfb_interval *steps, size_t ns,
                               tfb_interval *inputs, size_t ni,
                               tfb_interval *busy, size_t nb,
                               tfb_pipeline_trace *out)
{
    memset(out, 0, sizeof *out);
    ns = tfb_intervals_normalize(steps, ns);
    ni = tfb_intervals_normalize(inputs, ni);
    nb = tfb_intervals_normalize(busy, nb);
    int64_t w = tfb_intervals_length(steps, ns);
    if (w <= 0)
        return 0;
    tfb_interval *wi = NULL;
    size_t nwi = 0;
    if (ns + ni > 0) {
        wi = malloc((ns + ni) * sizeof *wi);
        if (!wi)
            return TFB_ENOMEM;
    }
    int64_t w_in = intersect(steps, ns, inputs, ni, wi, &nwi);
    int64_t w_busy = tfb_intervals_overlap(steps, ns, busy, nb);
    int64_t w_in_busy = tfb_intervals_overlap(wi, nwi, busy, nb);
    free(wi);

    out->has_trace = 1;
    out->step_ns = w;
    out->input_ns = w_in;
    out->gpu_busy_ns = w_busy;
    out->gpu_idle_ns = w - w_busy;
    out->idle_in_input_ns = w_in - w_in_busy;
    out->gpu_idle_in_input_fraction =
        out->gpu_idle_ns > 0
            ? (double)out->idle_in_input_ns / (double)out->gpu_idle_ns
            : 0.0;
    /* |W \ (I ∪ B)| = |W| - |W∩I| - |W∩B| + |W∩I∩B| */
    int64_t other = w - w_in - w_busy + w_in_busy;
    out->other_host_fraction = (double)other / (double)w;
    return 0;
}
