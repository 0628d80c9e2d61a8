/*
 * gpu_sample_trace.c - writes a SAMPLE GPU trace, for machines without a
 * GPU: a Kineto (torch.profiler) Chrome-trace JSON file of a few training
 * steps of a small convolutional network on one GPU, as torch.profiler
 * writes it. Nothing here is measured; the durations are typical of such a
 * model on a data-centre GPU and vary a little from step to step (a fixed
 * seed, so the file is the same on every run).
 *
 * The file name starts with "SAMPLE" and the GPU page says so: a trace file
 * named SAMPLE*.pt.trace.json is labelled a sample, never taken for a
 * measurement.
 *
 * What it holds, per step:
 *   - CPU thread "python" (main): ProfilerStep#N, the aten:: ops of the
 *     forward, backward and optimizer (cpu_op), NVTX-style ranges
 *     (user_annotation: forward, backward, optimizer), and under each op the
 *     CUDA runtime calls (cudaLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync)
 *     with correlation ids and launch -> kernel flow events (ac2g);
 *   - CPU thread "pt_data_worker": the loader's collate op;
 *   - GPU 0 stream 7 (compute): the kernels; stream 20 (copies): the
 *     host-to-device batch copy, the loss copy back, a memset;
 *   - [memory] events: activations allocated in the forward, freed in the
 *     backward, so the memory view shows a saw-tooth.
 *
 * Beside the trace, an event file of the same steps (issue 29), so the
 * Efficiency views have a GPU run to show: each step is timed by the
 * pipeline calls over a sleep of the trace's step duration, with the work
 * (tfb_step_work), the device named in opts (the SAMPLE's 108-SM, 80 GB
 * part is an A100 SXM4 80GB, whose TF32 peak the collector's table gives:
 * its kernels are TF32), so perf/mfu and the perf/work record appear; and
 * gpu/0/energy_j at a sample power, logged as "power_x_time". All of it
 * SAMPLE figures (the run is named so, gpu/0/name says so), not measured.
 *
 * Usage: gpu_sample_trace --out DIR [--steps N]   (writes
 *        DIR/SAMPLE_gpu.pt.trace.json and DIR/events.out.tfevents.*)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <tfboard.h>

/* The sample's work and power (not measured): a small CNN at batch 256
 * whose forward pass is ~0.33 GFLOP per image, 3 x that for forward and
 * backward: 2.5e11 FLOPs a step; an A100 drawing 310 W. At the trace's
 * ~4.6 ms steps that is ~54 TFLOP/s, ~35 % of the TF32 peak. */
#define SAMPLE_FLOPS_PER_STEP 2.5e11
#define SAMPLE_BATCH 256
#define SAMPLE_POWER_W 310.0
#define SAMPLE_DEVICE "NVIDIA A100-SXM4-80GB"
#define MAX_STEPS 10000

enum { PID = 4242, TID_MAIN = 4242, TID_LOADER = 4250, STREAM = 7,
       COPY_STREAM = 20 };

static uint64_t rng = 0x9e3779b97f4a7c15u;

/* A factor in [1 - j, 1 + j] (xorshift64). */
static double jitter(double j)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    double u = (double)(rng >> 11) * 0x1p-53;
    return 1.0 + j * (2.0 * u - 1.0);
}

typedef struct out {
    FILE *f;
    int first;
    long corr;
    double gpu_t;  /* when the compute stream is next free, µs */
    double copy_t; /* the copy stream */
    uint64_t addr; /* next allocation address */
    int64_t allocated, reserved;
} out;

static void sep(out *o)
{
    fputs(o->first ? "\n  " : ",\n  ", o->f);
    o->first = 0;
}

static void cpu_event(out *o, const char *cat, const char *name, int tid,
                      double ts, double dur)
{
    sep(o);
    fprintf(o->f,
            "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, "
            "\"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {}}",
            cat, name, PID, tid, ts, dur);
}

/* A runtime call at host time ts that starts a GPU event on stream at the
 * earliest at ts + launch latency; returns the GPU event's start. */
static double launch(out *o, const char *api, double ts, double api_dur,
                     double *stream_t, long *corr_out)
{
    long corr = ++o->corr;
    sep(o);
    fprintf(o->f,
            "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", "
            "\"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
            "\"args\": {\"correlation\": %ld, \"cbid\": 211}}",
            api, PID, TID_MAIN, ts, api_dur, corr);
    sep(o);
    fprintf(o->f,
            "{\"ph\": \"s\", \"id\": %ld, \"pid\": %d, \"tid\": %d, "
            "\"ts\": %.3f, \"cat\": \"ac2g\", \"name\": \"ac2g\"}",
            corr, PID, TID_MAIN, ts);
    double start = ts + 4.0 * jitter(0.3);
    if (start < *stream_t)
        start = *stream_t;
    *corr_out = corr;
    return start;
}

static void flow_end(out *o, long corr, int stream, double ts)
{
    sep(o);
    fprintf(o->f,
            "{\"ph\": \"f\", \"id\": %ld, \"pid\": 0, \"tid\": %d, "
            "\"ts\": %.3f, \"cat\": \"ac2g\", \"name\": \"ac2g\", "
            "\"bp\": \"e\"}",
            corr, stream, ts);
}

/* One kernel: its launch on the host at ts, the kernel on the compute
 * stream. Returns the host time after the launch call. */
static double kernel(out *o, const char *name, double ts, double gpu_us,
                     int gx, int bx, int regs)
{
    long corr;
    double api = 5.0 * jitter(0.4);
    double start = launch(o, "cudaLaunchKernel", ts, api, &o->gpu_t, &corr);
    double dur = gpu_us * jitter(0.08);
    sep(o);
    fprintf(o->f,
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", "
            "\"pid\": 0, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
            "\"args\": {\"device\": 0, \"stream\": %d, \"correlation\": %ld, "
            "\"registers per thread\": %d, \"shared memory\": %d, "
            "\"grid\": [%d, 1, 1], \"block\": [%d, 1, 1]}}",
            name, STREAM, start, dur, STREAM, corr, regs, 16384, gx, bx);
    flow_end(o, corr, STREAM, start);
    o->gpu_t = start + dur + 1.5;
    return ts + api + 2.0;
}

static double copy(out *o, const char *cat, const char *name, int kind_is_d2h,
                   double ts, double gpu_us, long bytes)
{
    long corr;
    double api = 7.0 * jitter(0.3);
    double *st = &o->copy_t;
    /* A device-to-host copy of a result waits for the compute stream. */
    if (kind_is_d2h && o->copy_t < o->gpu_t)
        o->copy_t = o->gpu_t;
    double start = launch(o, strcmp(cat, "gpu_memset") ? "cudaMemcpyAsync"
                                                        : "cudaMemsetAsync",
                          ts, api, st, &corr);
    double dur = gpu_us * jitter(0.05);
    sep(o);
    fprintf(o->f,
            "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, "
            "\"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {"
            "\"device\": 0, \"stream\": %d, \"correlation\": %ld, "
            "\"bytes\": %ld}}",
            cat, name, COPY_STREAM, start, dur, COPY_STREAM, corr, bytes);
    flow_end(o, corr, COPY_STREAM, start);
    o->copy_t = start + dur + 1.0;
    /* The compute stream waits for the batch to arrive. */
    if (!kind_is_d2h && o->gpu_t < o->copy_t)
        o->gpu_t = o->copy_t;
    return ts + api + 2.0;
}

static void memory(out *o, double ts, int64_t bytes, uint64_t addr)
{
    o->allocated += bytes;
    if (o->allocated > o->reserved)
        o->reserved = (o->allocated + (2 << 20) - 1) / (2 << 20) * (2 << 20);
    sep(o);
    fprintf(o->f,
            "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", "
            "\"name\": \"[memory]\", \"pid\": %d, \"tid\": %d, "
            "\"ts\": %.3f, \"args\": {\"Device Type\": 1, \"Device Id\": 0, "
            "\"Addr\": %llu, \"Bytes\": %lld, \"Total Allocated\": %lld, "
            "\"Total Reserved\": %lld}}",
            PID, TID_MAIN, ts, (unsigned long long)addr, (long long)bytes,
            (long long)o->allocated, (long long)o->reserved);
}

typedef struct layer {
    const char *op, *fwd, *bwd;
    double fwd_us, bwd_us;
    int grid, block, regs;
    int64_t act_bytes;
} layer;

static const layer LAYERS[] = {
    {"aten::conv2d", "implicit_convolve_sgemm<float, 128, 6, 7>",
     "wgrad_alg0_engine<float, 128, 6, 7>", 310, 620, 1024, 256, 128,
     64 << 20},
    {"aten::batch_norm", "cudnn::bn_fw_tr_1C11_kernel_NCHW<float, 512>",
     "cudnn::bn_bw_1C11_kernel_new<float, 512>", 95, 150, 512, 512, 40,
     64 << 20},
    {"aten::relu", "at::native::vectorized_elementwise_kernel<4, relu>",
     "at::native::vectorized_elementwise_kernel<4, threshold_backward>", 40,
     55, 4096, 128, 24, 64 << 20},
    {"aten::conv2d", "sm80_xmma_fprop_implicit_gemm_tf32f32_128x128",
     "sm80_xmma_dgrad_implicit_gemm_tf32f32_128x128", 420, 810, 768, 256, 168,
     32 << 20},
    {"aten::max_pool2d", "at::native::max_pool_forward_nchw<float>",
     "at::native::max_pool_backward_nchw<float>", 60, 90, 2048, 256, 32,
     8 << 20},
    {"aten::linear", "ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_nt", 180,
     350, 256, 128, 122, 1 << 20},
};
enum { NLAYERS = sizeof LAYERS / sizeof LAYERS[0] };

static void step(out *o, int n, double *t)
{
    char name[64];
    double t0 = *t;
    /* The loader thread collates the next batch while this step runs. */
    cpu_event(o, "cpu_op", "DataLoader::collate", TID_LOADER, t0 + 200,
              2600 * jitter(0.2));

    double ts = t0 + 30;
    ts = copy(o, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, ts,
              180, 24L << 20);
    ts += 20;
    double fwd0 = ts;
    uint64_t addrs[NLAYERS];
    for (int i = 0; i < NLAYERS; i++) {
        const layer *L = &LAYERS[i];
        double op0 = ts;
        ts += 15 * jitter(0.3); /* dispatcher overhead before the launch */
        addrs[i] = o->addr;
        memory(o, ts, L->act_bytes, o->addr);
        o->addr += (uint64_t)L->act_bytes;
        ts = kernel(o, L->fwd, ts, L->fwd_us, L->grid, L->block, L->regs);
        ts += 10 * jitter(0.3);
        cpu_event(o, "cpu_op", L->op, TID_MAIN, op0, ts - op0);
    }
    ts = kernel(o, "cunn_SoftMaxForward<4, float>", ts + 8, 25, 64, 256, 32);
    cpu_event(o, "user_annotation", "forward", TID_MAIN, fwd0 - 2,
              ts - fwd0 + 4);

    double bwd0 = ts + 6;
    ts = bwd0;
    for (int i = NLAYERS - 1; i >= 0; i--) {
        const layer *L = &LAYERS[i];
        double op0 = ts;
        snprintf(name, sizeof name, "%sBackward0",
                 strstr(L->op, "conv") ? "Convolution"
                 : strstr(L->op, "batch") ? "CudnnBatchNorm"
                 : strstr(L->op, "relu") ? "Relu"
                 : strstr(L->op, "pool") ? "MaxPool2DWithIndices"
                                         : "Addmm");
        ts += 12 * jitter(0.3);
        ts = kernel(o, L->bwd, ts, L->bwd_us, L->grid, L->block, L->regs);
        if (strstr(L->op, "conv") || strstr(L->op, "linear"))
            ts = kernel(o, "cutlass::Kernel<cutlass_80_wgrad_128x64>", ts,
                        L->bwd_us * 0.6, L->grid / 2, 128, 96);
        /* The activation is freed once its gradient is computed. */
        memory(o, ts, -L->act_bytes, addrs[i]);
        cpu_event(o, "cpu_op", name, TID_MAIN, op0, ts - op0);
    }
    cpu_event(o, "user_annotation", "backward", TID_MAIN, bwd0 - 2,
              ts - bwd0 + 4);

    double opt0 = ts + 5;
    ts = copy(o, "gpu_memset", "Memset (Device)", 0, opt0, 6, 1L << 20);
    ts = kernel(o, "at::native::multi_tensor_apply_kernel<AdamFunctor>", ts,
                140, 320, 512, 64);
    cpu_event(o, "cpu_op", "Optimizer.step#Adam.step", TID_MAIN, opt0,
              ts - opt0);
    cpu_event(o, "user_annotation", "optimizer", TID_MAIN, opt0 - 1,
              ts - opt0 + 2);
    /* loss.item(): copies the loss back and waits for the GPU. */
    double item0 = ts + 4;
    ts = copy(o, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 1, item0,
              3, 4);
    double sync_end = o->copy_t + 5;
    if (sync_end < ts)
        sync_end = ts;
    cpu_event(o, "cuda_runtime", "cudaStreamSynchronize", TID_MAIN, ts,
              sync_end - ts);
    cpu_event(o, "cpu_op", "aten::item", TID_MAIN, item0, sync_end - item0);
    snprintf(name, sizeof name, "ProfilerStep#%d", n);
    cpu_event(o, "cpu_op", name, TID_MAIN, t0, sync_end + 20 - t0);
    *t = sync_end + 40;
}

/* The event file of the steps whose durations (µs) are step_us. */
static int write_events(const char *dir, const double *step_us, int steps)
{
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.dtype = "tf32";
    o.device = SAMPLE_DEVICE;
    o.flops_per_step = SAMPLE_FLOPS_PER_STEP;
    o.samples_per_step = SAMPLE_BATCH;
    tfb_writer *w;
    int rc = tfb_writer_open(&w, dir, &o);
    if (rc < 0) {
        fprintf(stderr, "gpu_sample_trace: %s: %s\n", dir, tfb_strerror(rc));
        return 1;
    }
    tfb_text(w, "gpu/0/name", "SAMPLE GPU (not measured)", 0);
    tfb_text(w, "gpu/0/" TFB_TAG_GPU_ENERGY_SOURCE, "power_x_time", 0);
    for (int n = 1; n <= steps; n++) {
        tfb_step_begin(w, n);
        struct timespec d = {0, (long)(step_us[n - 1] * 1000)};
        while (nanosleep(&d, &d) != 0) {
        }
        tfb_step_end(w);
        /* The sample power x the sample step time, as NVML's fallback
         * would log it (the pipeline logs the measured sleep). */
        double j = SAMPLE_POWER_W * step_us[n - 1] / 1e6;
        tfb_scalar(w, "gpu/0/" TFB_TAG_GPU_ENERGY, j, n);
        tfb_scalar(w, TFB_TAG_PERF_ENERGY_J, j, n);
        tfb_scalar(w, TFB_TAG_PERF_J_PER_SAMPLE, j / SAMPLE_BATCH, n);
    }
    rc = tfb_writer_close(w);
    if (rc < 0) {
        fprintf(stderr, "gpu_sample_trace: close: %s\n", tfb_strerror(rc));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    int steps = 6;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: gpu_sample_trace --out DIR [--steps N]\n");
            return 2;
        }
    }
    if (!dir || steps < 1 || steps > MAX_STEPS) {
        fprintf(stderr, "usage: gpu_sample_trace --out DIR [--steps N]\n");
        return 2;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gpu_sample_trace: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/SAMPLE_gpu.pt.trace.json", dir);
    out o = {.first = 1, .addr = 0x7f0000000000ull};
    o.f = fopen(path, "w");
    if (!o.f) {
        fprintf(stderr, "gpu_sample_trace: %s: %s\n", path, strerror(errno));
        return 1;
    }
    fputs("{\n\"schemaVersion\": 1,\n\"deviceProperties\": [{\"id\": 0, "
          "\"name\": \"SAMPLE GPU (not measured)\", \"totalGlobalMem\": "
          "85899345920, \"numSms\": 108}],\n"
          "\"distributedInfo\": null,\n\"traceEvents\": [", o.f);
    sep(&o);
    fprintf(o.f, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
                 "\"tid\": %d, \"args\": {\"name\": \"python (main)\"}}",
            PID, TID_MAIN);
    sep(&o);
    fprintf(o.f, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
                 "\"tid\": %d, \"args\": {\"name\": \"pt_data_worker\"}}",
            PID, TID_LOADER);
    double t = 1.7e12; /* µs since the epoch, as Kineto writes them */
    o.gpu_t = o.copy_t = t;
    static double step_us[MAX_STEPS];
    for (int n = 1; n <= steps; n++) {
        double t0 = t;
        step(&o, n, &t);
        step_us[n - 1] = t - t0;
    }
    fputs("\n],\n\"traceName\": \"SAMPLE (generated by "
          "examples/gpu_sample_trace.c, not measured)\"\n}\n", o.f);
    if (fclose(o.f) != 0) {
        fprintf(stderr, "gpu_sample_trace: %s: write failed\n", path);
        return 1;
    }
    printf("wrote %s (%d steps, %ld GPU events: a sample, not measured)\n",
           path, steps, o.corr);
    return write_events(dir, step_us, steps);
}
