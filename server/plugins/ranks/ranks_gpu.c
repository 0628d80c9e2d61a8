/*
 * ranks_gpu.c - the GPU side of a job: each rank's trace (through the gpu
 * plugin's trace cache, gpu_trace.h) turned into the analysis's device
 * intervals, then HTA's temporal breakdown and the comm/compute overlap
 * (ranks_overlap.c). The only file of the plugin that knows the trace API.
 */
#include "ranks_job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_trace.h"
#include "tfboard.h"

void tfb_ranks_gpu_view_free(tfb_ranks_gpu_view *v)
{
    if (!v)
        return;
    free(v->ranks);
    memset(v, 0, sizeof *v);
}

/* The device intervals of trace t, kernels classed by name (one class
 * per string, computed once). */
static int intervals_of(const tfb_gpu_trace *t, tfb_ranks_interval **out,
                        size_t *n_out, size_t *n_comm)
{
    *out = NULL;
    *n_out = 0;
    *n_comm = 0;
    int8_t *cls = calloc(t->nstrings ? t->nstrings : 1, 1);
    if (!cls)
        return TFB_ENOMEM;
    for (size_t i = 0; i < t->nstrings; i++)
        cls[i] = (int8_t)tfb_ranks_classify_kernel(t->strings[i]);
    size_t n = 0;
    for (size_t i = 0; i < t->nspans; i++)
        n += t->spans[i].kind <= TFB_GPU_MEMSET;
    tfb_ranks_interval *iv = malloc((n ? n : 1) * sizeof *iv);
    if (!iv) {
        free(cls);
        return TFB_ENOMEM;
    }
    size_t m = 0, comm = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const tfb_gpu_span *s = &t->spans[i];
        int32_t c;
        if (s->kind == TFB_GPU_KERNEL)
            c = s->name >= 0 && (size_t)s->name < t->nstrings
                    ? cls[s->name]
                    : TFB_RANKS_COMPUTE;
        else if (s->kind == TFB_GPU_MEMCPY || s->kind == TFB_GPU_MEMSET)
            c = TFB_RANKS_MEMORY;
        else
            continue;
        comm += c == TFB_RANKS_COMM;
        iv[m++] = (tfb_ranks_interval){s->start, s->end, s->device,
                                       s->stream, c};
    }
    free(cls);
    *out = iv;
    *n_out = m;
    *n_comm = comm;
    return 0;
}

int tfb_ranks_job_gpu(tfb_store *s, const tfb_ranks_job *job,
                      tfb_ranks_gpu_view *out)
{
    memset(out, 0, sizeof *out);
    out->overlap = NAN;
    size_t n = job->n_members;
    out->ranks = calloc(n ? n : 1, sizeof *out->ranks);
    if (!out->ranks)
        return TFB_ENOMEM;
    out->n_ranks = n;
    for (size_t i = 0; i < n; i++) {
        const tfb_ranks_member *m = &job->members[i];
        tfb_ranks_gpu_rank *g = &out->ranks[i];
        g->rank = m->rank;
        g->run_name = m->run_name;
        g->gpu.busy_pct = NAN;
        g->gpu.overlap = NAN;
        tfb_gpu_trace *t = NULL;
        int rc = tfb_gpu_trace_of_run(s, m->run, &t);
        if (rc == TFB_ENOMEM) {
            tfb_ranks_gpu_view_free(out);
            return rc;
        }
        if (rc < 0 || !t)
            continue; /* no usable trace file */
        tfb_ranks_interval *iv;
        size_t niv, ncomm;
        rc = intervals_of(t, &iv, &niv, &ncomm);
        tfb_gpu_trace_release(t);
        if (rc == 0)
            rc = tfb_ranks_gpu_breakdown(iv, niv, &g->gpu, &g->bad_intervals);
        free(iv);
        if (rc < 0) {
            tfb_ranks_gpu_view_free(out);
            return rc;
        }
        g->has_trace = 1;
        g->gpu.has_trace = 1;
        g->n_comm_kernels = ncomm;
        out->n_traced++;
        out->compute_ns += g->gpu.compute_ns;
        out->comm_ns += g->gpu.comm_ns;
        out->memory_ns += g->gpu.memory_ns;
        out->idle_ns += g->gpu.idle_ns;
        out->comm_union_ns += g->gpu.comm_union_ns;
        out->overlap_ns += g->gpu.overlap_ns;
    }
    if (out->comm_union_ns > 0)
        out->overlap = (double)out->overlap_ns / (double)out->comm_union_ns;
    return 0;
}
