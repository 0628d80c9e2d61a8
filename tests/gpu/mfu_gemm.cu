/*
 * mfu_gemm.cu - a GEMM loop of known FLOPs for tests/gpu/run_mfu_check.sh
 * (issue 29; needs a GPU; not part of `meson test`).
 *
 * usage: mfu_gemm RUN_DIR STEPS GEMMS_PER_STEP N
 *
 * Each step: GEMMS_PER_STEP cuBLAS BF16 GEMMs (N x N x N, FP32 accumulate,
 * tensor cores: the dtype of the peak table's bf16 column), between
 * tfb_step_begin and tfb_step_end, with tfb_step_work(w, 2 N^3 x GEMMS, 0,
 * 0), so the collector logs perf/tflops (and perf/mfu when NVML names a
 * device of the peak table) from the step's host span. The same GEMMs are
 * timed on the GPU with CUDA events around them (cuBLAS's own time, no
 * launch or host overhead). Step 0 warms cuBLAS up (its heuristics and
 * workspace) and is left out of the event timing by the script.
 * Prints one line of key=value pairs: flops_per_step, event_ms (the
 * summed event time of steps 1..STEPS-1), steps, device.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#include "tfboard.h"

#define CHECK(x)                                                              \
    do {                                                                      \
        cudaError_t e_ = (x);                                                 \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));          \
            exit(3);                                                          \
        }                                                                     \
    } while (0)
#define CHECK_BLAS(x)                                                         \
    do {                                                                      \
        cublasStatus_t s_ = (x);                                              \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                    \
            fprintf(stderr, "%s: cuBLAS status %d\n", #x, (int)s_);           \
            exit(3);                                                          \
        }                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: mfu_gemm RUN_DIR STEPS GEMMS_PER_STEP N\n");
        return 2;
    }
    int steps = atoi(argv[2]), gemms = atoi(argv[3]), n = atoi(argv[4]);
    if (steps < 2 || gemms < 1 || n < 256) {
        fprintf(stderr, "need STEPS >= 2, GEMMS_PER_STEP >= 1, N >= 256\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));

    tfb_writer_opts wo;
    tfb_writer_opts_init(&wo);
    wo.dtype = "bf16";
    tfb_writer *w = NULL;
    int rc = tfb_writer_open(&w, argv[1], &wo);
    if (rc) {
        fprintf(stderr, "writer: %s\n", tfb_strerror(rc));
        return 2;
    }
    /* NVML names the device: the collector's peak for perf/mfu, and the
     * energy per step. */
    tfb_gpu_metrics_opts mo;
    tfb_gpu_metrics_opts_init(&mo);
    mo.interval_ms = 100;
    int metrics_rc = tfb_gpu_metrics_start(w, &mo);
    if (metrics_rc)
        fprintf(stderr, "tfb_gpu_metrics_start: %s: %s\n",
                tfb_strerror(metrics_rc), tfb_gpu_metrics_error());

    size_t elems = (size_t)n * (size_t)n;
    __nv_bfloat16 *a, *b, *c;
    CHECK(cudaMalloc(&a, elems * sizeof *a));
    CHECK(cudaMalloc(&b, elems * sizeof *b));
    CHECK(cudaMalloc(&c, elems * sizeof *c));
    CHECK(cudaMemset(a, 0, elems * sizeof *a));
    CHECK(cudaMemset(b, 0, elems * sizeof *b));
    cublasHandle_t h;
    CHECK_BLAS(cublasCreate(&h));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    const float one = 1.0f, zero = 0.0f;
    double flops = 2.0 * (double)n * (double)n * (double)n * gemms;
    double event_ms = 0;
    for (int s = 0; s < steps; s++) {
        tfb_step_begin(w, s);
        CHECK(cudaEventRecord(e0));
        for (int g = 0; g < gemms; g++)
            CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                                    a, CUDA_R_16BF, n, b, CUDA_R_16BF, n,
                                    &zero, c, CUDA_R_16BF, n,
                                    CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        tfb_step_work(w, flops, 0, 0);
        tfb_step_end(w);
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (s > 0)
            event_ms += ms;
    }
    tfb_flush(w);
    tfb_writer_close(w);
    printf("flops_per_step=%.17g event_ms=%.6f steps=%d metrics_rc=%d "
           "device=%s\n",
           flops, event_ms, steps - 1, metrics_rc, prop.name);
    cublasDestroy(h);
    return 0;
}
