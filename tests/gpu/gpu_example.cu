/*
 * gpu_example.cu - a small CUDA program traced by libtfboard, for
 * tests/gpu/run_gpu_test.sh (needs a GPU; not part of `meson test`).
 *
 * usage: gpu_example RUN_DIR trace|notrace|full ITERATIONS
 *   full = trace, and always-on NVML metrics (every 100 ms), for the checks
 *   (the overhead runs compare trace with notrace only).
 *
 * 0. Memory of known sizes: cudaMalloc/cudaFree of MEM_A and MEM_B bytes,
 *    and a stream-ordered (pool) cudaMallocAsync/cudaFreeAsync of MEM_POOL
 *    bytes, for the CUDA_GPU_MEMORY_USAGE_EVENTS checks.
 * 1. Copies (HtoD, DtoH), a memset and a few named kernels, inside an NVTX
 *    range, each iteration also timed as a tfboard step.
 * 2. A kernel-bound loop: ITERATIONS launches of a compute-heavy kernel
 *    (a fraction of a ms each) back to back, timed on the host from the first
 *    launch to the final synchronize. Its time, with and without tracing,
 *    gives the tracing overhead.
 * Prints one line of key=value pairs the script reads: the wall-clock window
 * (ns since the Unix epoch), loop_ms, and the tracer's counters.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfboard.h"

#define CHECK(x)                                                              \
    do {                                                                      \
        cudaError_t e_ = (x);                                                 \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));          \
            exit(3);                                                          \
        }                                                                     \
    } while (0)

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

__global__ void saxpy(float alpha, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}

/* Compute bound: `rounds` dependent FMAs per thread. */
__global__ void busy_kernel(float *out, int rounds)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (float)i * 1e-6f, w = 1.0001f;
    for (int r = 0; r < rounds; r++)
        v = fmaf(v, w, 1e-7f);
    out[i] = v;
}

/* Sizes the script looks for in CUDA_GPU_MEMORY_USAGE_EVENTS. */
#define MEM_A ((size_t)3 * 1048576 + 512)
#define MEM_B ((size_t)7 * 1048576)
#define MEM_POOL ((size_t)1048576)

static long long wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s RUN_DIR trace|notrace|full ITERATIONS\n",
                argv[0]);
        return 2;
    }
    int full = strcmp(argv[2], "full") == 0;
    int trace = full || strcmp(argv[2], "trace") == 0;
    int iters = atoi(argv[3]);
    if (iters <= 0)
        iters = 200;
    const int n = 1 << 20;
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0)); /* create the context before timing anything */

    tfb_writer *w = NULL;
    int rc = tfb_writer_open(&w, argv[1], NULL);
    if (rc) {
        fprintf(stderr, "writer: %s\n", tfb_strerror(rc));
        return 2;
    }
    if (trace) {
        tfb_gpu_opts o;
        tfb_gpu_opts_init(&o);
        o.utilization_interval_ms = 100;
        rc = tfb_gpu_trace_start(w, &o);
        if (rc) {
            fprintf(stderr, "tfb_gpu_trace_start: %s: %s\n", tfb_strerror(rc),
                    tfb_gpu_trace_error(w));
            return 4;
        }
    }
    int metrics_rc = -1;
    if (full) {
        tfb_gpu_metrics_opts mo;
        tfb_gpu_metrics_opts_init(&mo);
        mo.interval_ms = 100;
        metrics_rc = tfb_gpu_metrics_start(w, &mo);
        if (metrics_rc)
            fprintf(stderr, "tfb_gpu_metrics_start: %s: %s\n",
                    tfb_strerror(metrics_rc), tfb_gpu_metrics_error());
    }
    long long t_begin = wall_ns();

    /* Memory of known sizes (allocated and released while traced). */
    void *ma = NULL, *mb = NULL, *mp = NULL;
    CHECK(cudaMalloc(&ma, MEM_A));
    CHECK(cudaMalloc(&mb, MEM_B));
    CHECK(cudaFree(ma));
    CHECK(cudaFree(mb));
    int pools = 0;
    CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
    if (pools) {
        CHECK(cudaMallocAsync(&mp, MEM_POOL, 0));
        CHECK(cudaFreeAsync(mp, 0));
        CHECK(cudaStreamSynchronize(0));
    }

    float *ha = (float *)malloc(n * sizeof(float));
    float *hb = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        ha[i] = (float)i;
        hb[i] = 2.0f;
    }
    float *da, *db, *dc, *dout;
    CHECK(cudaMalloc(&da, n * sizeof(float)));
    CHECK(cudaMalloc(&db, n * sizeof(float)));
    CHECK(cudaMalloc(&dc, n * sizeof(float)));
    CHECK(cudaMalloc(&dout, n * sizeof(float)));

    nvtxRangePushA("setup");
    for (int step = 0; step < 5; step++) {
        tfb_step_begin(w, step);
        tfb_input_begin(w);
        CHECK(cudaMemcpy(da, ha, n * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(db, hb, n * sizeof(float), cudaMemcpyHostToDevice));
        tfb_input_end(w);
        CHECK(cudaMemset(dc, 0, n * sizeof(float)));
        vec_add<<<n / 256, 256>>>(da, db, dc, n);
        saxpy<<<n / 256, 256>>>(0.5f, da, dc, n);
        CHECK(cudaMemcpy(hb, dc, n * sizeof(float), cudaMemcpyDeviceToHost));
        tfb_step_end(w);
    }
    nvtxRangePop();
    CHECK(cudaDeviceSynchronize());
    if (hb[10] != 10.0f + 2.0f + 0.5f * 10.0f) {
        fprintf(stderr, "wrong result %f\n", hb[10]);
        return 3;
    }

    /* Kernel-bound loop. */
    const int rounds = 100000; /* about 0.25 ms a kernel on an H100 */
    busy_kernel<<<1024, 256>>>(dout, rounds); /* warm-up */
    CHECK(cudaDeviceSynchronize());
    long long l0 = mono_ns();
    for (int i = 0; i < iters; i++)
        busy_kernel<<<1024, 256>>>(dout, rounds);
    CHECK(cudaDeviceSynchronize());
    double loop_ms = (double)(mono_ns() - l0) / 1e6;
    long long t_end = wall_ns();

    tfb_gpu_metrics_stats ms;
    tfb_gpu_metrics_stats_init(&ms);
    memset(&ms, 0, sizeof ms);
    if (full)
        tfb_gpu_metrics_get_stats(w, &ms);
    tfb_gpu_stats st;
    tfb_gpu_stats_init(&st);
    memset(&st, 0, sizeof st);
    if (trace) {
        rc = tfb_gpu_trace_stop(w);
        tfb_gpu_trace_get_stats(w, &st);
        if (rc)
            fprintf(stderr, "stop: %s\n", tfb_strerror(rc));
    }
    rc = tfb_writer_close(w);
    printf("window_start_ns=%lld window_end_ns=%lld loop_ms=%.3f iters=%d "
           "kernels=%llu memcpys=%llu memsets=%llu syncs=%llu api_calls=%llu "
           "markers=%llu overheads=%llu dropped=%llu buffers=%llu "
           "memory_events=%llu memory_pool_events=%llu pools=%d "
           "metrics_rc=%d metrics_samples=%llu metrics_read_errors=%llu\n",
           t_begin, t_end, loop_ms, iters, (unsigned long long)st.kernels,
           (unsigned long long)st.memcpys, (unsigned long long)st.memsets,
           (unsigned long long)st.syncs, (unsigned long long)st.api_calls,
           (unsigned long long)st.markers, (unsigned long long)st.overheads,
           (unsigned long long)st.records_dropped,
           (unsigned long long)st.buffers_completed,
           (unsigned long long)st.memory_events,
           (unsigned long long)st.memory_pool_events, pools, metrics_rc,
           (unsigned long long)ms.samples,
           (unsigned long long)ms.read_errors);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dout);
    free(ha);
    free(hb);
    return rc ? 5 : 0;
}
