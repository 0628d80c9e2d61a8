/*
 * gpu_nocupti.c - GPU tracing in a build without the CUDA headers: every
 * call says TFB_ENOTSUP (with a message) and the library works otherwise.
 */
#include "collector/abi.h"
#include "collector/writer_internal.h"

static const char k_msg[] =
    "tfboard was built without the CUDA headers (-Dcupti=disabled or "
    "cupti_activity.h not found): GPU tracing is not available";

int tfb_gpu_trace_start(tfb_writer *w, const tfb_gpu_opts *opts)
{
    (void)opts;
    if (!w)
        return TFB_EINVAL;
    return tfb_writer_forked(w) ? TFB_EFORKED : TFB_ENOTSUP;
}

int tfb_gpu_trace_stop(tfb_writer *w)
{
    if (!w)
        return TFB_EINVAL;
    return tfb_writer_forked(w) ? TFB_EFORKED : 0;
}

int tfb_gpu_trace_get_stats(tfb_writer *w, tfb_gpu_stats *out)
{
    if (!w || !out)
        return TFB_EINVAL;
    if (tfb_writer_forked(w))
        return TFB_EFORKED;
    tfb_gpu_stats st;
    tfb_gpu_stats_init(&st);
    return tfb_abi_write(out, &st, sizeof st);
}

const char *tfb_gpu_trace_error(const tfb_writer *w)
{
    if (!w)
        return "";
    return tfb_writer_forked(w) ? tfb_strerror(TFB_EFORKED) : k_msg;
}

