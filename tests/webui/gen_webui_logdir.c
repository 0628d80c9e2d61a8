/*
 * gen_webui_logdir.c - writes the logdir the browser tests open, with
 * libtfboard's own writer, so the values the tests expect are known exactly.
 *
 * Usage: gen_webui_logdir OUTDIR
 *   alpha/     train/loss (500 points), train/accuracy (500), train/big
 *              (20000 points, one spike of 1000 at step 12345), lr, a tag
 *              that looks like HTML, histogram weights/dense1 (20 steps),
 *              text notes (markup that must stay text), gradient norms for
 *              3 layers over 100 steps (layer "out" vanishing)
 *   beta/      train/loss (300), train/accuracy (300), weights/dense1
 *   diverge/   train/loss with NaN at 300, +Inf at 305, -Inf at 310 (400)
 *   pipeline/  pipeline/step_ms and pipeline/input_ms, 200 steps, input
 *              40 % of the step (the "highly" verdict)
 *   gpu/       a PyTorch-profiler (Kineto) trace, trace.pt.trace.json: 200
 *              iterations of 1 ms on device 0: an HtoD copy (1 MiB) and
 *              kernels gemm (440 µs) and relu (90 µs) on stream 7, reduce
 *              (100 µs) on stream 13
 * Wall times are fixed: 1.7e9 + step / 2 seconds.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "tfboard.h"

#define WALL0 1700000000.0
#define XSS_TAG "<img src=x onerror=\"window.__xss=1\">"

static int failed;

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "gen_webui_logdir: %s: %s\n", what, tfb_strerror(rc));
        failed = 1;
    }
}

/* Deterministic noise in [-1, 1): no rand(), same file on every machine. */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

static tfb_writer *open_run(const char *dir, const char *run)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, run);
    tfb_writer *w = NULL;
    check(tfb_writer_open(&w, path, NULL), path);
    return w;
}

static void scalar(tfb_writer *w, const char *tag, double v, int64_t step)
{
    check(tfb_scalar_at(w, tag, v, step, WALL0 + (double)step / 2.0), tag);
}

static void write_alpha(const char *dir)
{
    tfb_writer *w = open_run(dir, "alpha");
    if (!w)
        return;
    uint64_t s = 1;
    for (int64_t i = 0; i < 500; i++) {
        scalar(w, "train/loss", 2.0 * exp(-(double)i / 120.0) + 0.1 + 0.05 * noise(&s), i);
        scalar(w, "train/accuracy", 1.0 - 0.9 * exp(-(double)i / 100.0), i);
        if (i % 10 == 0) {
            scalar(w, "lr", 0.1 * pow(0.99, (double)i / 10.0), i);
            scalar(w, XSS_TAG, (double)i, i);
        }
    }
    for (int64_t i = 0; i < 20000; i++)
        scalar(w, "train/big", i == 12345 ? 1000.0 : sin((double)i / 500.0), i);

    float vals[2000];
    for (int64_t step = 0; step < 20; step++) {
        for (size_t k = 0; k < 2000; k++)
            vals[k] = (float)(0.1 * (double)step + noise(&s) + noise(&s));
        check(tfb_histogram(w, "weights/dense1", vals, 2000, step * 25), "histogram");
    }
    check(tfb_text(w, "notes", "<b>not bold</b> & <script>window.__xss=2</script>", 0), "text");
    check(tfb_text(w, "notes", "second note\nwith two lines", 100), "text");

    float g1[64], g2[64], g3[16];
    for (int64_t step = 0; step < 100; step++) {
        for (size_t k = 0; k < 64; k++) {
            g1[k] = (float)(0.5 * noise(&s));
            g2[k] = (float)(0.05 * noise(&s) * (step == 70 ? 1e5 : 1.0));
        }
        for (size_t k = 0; k < 16; k++)
            g3[k] = (float)(1e-9 * noise(&s));
        const size_t ts = sizeof(tfb_tensor);
        tfb_tensor t[3] = {{ts, "dense1", g1, 64}, {ts, "dense2", g2, 64},
                           {ts, "out", g3, 16}};
        check(tfb_grad_norms(w, t, 3, step, NULL), "grad_norms");
    }
    check(tfb_writer_close(w), "close alpha");
}

static void write_beta(const char *dir)
{
    tfb_writer *w = open_run(dir, "beta");
    if (!w)
        return;
    uint64_t s = 2;
    for (int64_t i = 0; i < 300; i++) {
        scalar(w, "train/loss", 1.5 * exp(-(double)i / 80.0) + 0.2 + 0.05 * noise(&s), i);
        scalar(w, "train/accuracy", 1.0 - 0.8 * exp(-(double)i / 60.0), i);
    }
    float vals[1000];
    for (int64_t step = 0; step < 10; step++) {
        for (size_t k = 0; k < 1000; k++)
            vals[k] = (float)(-0.2 * (double)step + 0.5 * noise(&s));
        check(tfb_histogram(w, "weights/dense1", vals, 1000, step * 30), "histogram");
    }
    check(tfb_writer_close(w), "close beta");
}

static void write_diverge(const char *dir)
{
    tfb_writer *w = open_run(dir, "diverge");
    if (!w)
        return;
    for (int64_t i = 0; i < 400; i++) {
        double v = 1.0 / (1.0 + (double)i / 50.0);
        if (i == 300)
            v = NAN;
        else if (i == 305)
            v = INFINITY;
        else if (i == 310)
            v = -INFINITY;
        scalar(w, "train/loss", v, i);
    }
    check(tfb_writer_close(w), "close diverge");
}

static void write_pipeline(const char *dir)
{
    tfb_writer *w = open_run(dir, "pipeline");
    if (!w)
        return;
    uint64_t s = 3;
    for (int64_t i = 0; i < 200; i++) {
        double step_ms = 100.0 + 5.0 * noise(&s);
        scalar(w, "pipeline/step_ms", step_ms, i);
        scalar(w, "pipeline/input_ms", 0.4 * step_ms, i);
    }
    check(tfb_writer_close(w), "close pipeline");
}

/* Kineto JSON: ts and dur in µs, relative to baseTimeNanoseconds. The
 * gemm name holds '<' and '>' as real C++ kernel names do. */
static void write_gpu(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/gpu", dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        failed = 1;
        return;
    }
    snprintf(path, sizeof path, "%s/gpu/trace.pt.trace.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        failed = 1;
        return;
    }
    fprintf(f, "{\"schemaVersion\": 1, \"baseTimeNanoseconds\": 1700000000000000000,\n"
               "\"traceEvents\": [\n");
    for (int i = 0; i < 200; i++) {
        long t = i * 1000L;
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", "
                   "\"pid\": 0, \"tid\": 7, \"ts\": %ld, \"dur\": 50, "
                   "\"args\": {\"device\": 0, \"stream\": 7, \"bytes\": 1048576, \"correlation\": %d}},\n",
                t, 3 * i);
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm<float, 128>(float const*, float*)\", "
                   "\"pid\": 0, \"tid\": 7, \"ts\": %ld, \"dur\": 440, "
                   "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": %d, \"grid\": [128, 1, 1], "
                   "\"block\": [256, 1, 1], \"registers per thread\": 64, \"shared memory\": 16384}},\n",
                t + 60, 3 * i + 1);
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"relu\", "
                   "\"pid\": 0, \"tid\": 7, \"ts\": %ld, \"dur\": 90, "
                   "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": %d, \"grid\": [64, 1, 1], "
                   "\"block\": [128, 1, 1], \"registers per thread\": 16, \"shared memory\": 0}},\n",
                t + 510, 3 * i + 2);
        fprintf(f, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"reduce\", "
                   "\"pid\": 0, \"tid\": 13, \"ts\": %ld, \"dur\": 100, "
                   "\"args\": {\"device\": 0, \"stream\": 13, \"grid\": [32, 1, 1], "
                   "\"block\": [64, 1, 1], \"registers per thread\": 32, \"shared memory\": 0}}%s\n",
                t + 200, i == 199 ? "" : ",");
    }
    fprintf(f, "]}\n");
    if (fclose(f) != 0) {
        perror(path);
        failed = 1;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_webui_logdir OUTDIR\n");
        return 2;
    }
    write_alpha(argv[1]);
    write_beta(argv[1]);
    write_diverge(argv[1]);
    write_pipeline(argv[1]);
    write_gpu(argv[1]);
    return failed ? 1 : 0;
}
