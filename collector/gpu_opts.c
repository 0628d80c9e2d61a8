/*
 * gpu_opts.c - the GPU tracer's option defaults and stats init, built
 * with and without the CUDA headers: cupti_tracer.c and its stub
 * (gpu_nocupti.c) give the same defaults (see tfboard.h).
 */
#include <string.h>

#include "tfboard.h"

void tfb_gpu_opts_init(tfb_gpu_opts *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
    opts->buffer_bytes = (size_t)8 << 20;
    opts->max_buffers = 32;
    opts->flush_interval_ms = 1000;
    opts->utilization_interval_ms = 1000;
    opts->record_runtime = 1;
}

void tfb_gpu_stats_init(tfb_gpu_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
}
