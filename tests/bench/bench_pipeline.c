/*
 * bench_pipeline.c - cost of the step-timing calls on the calling thread.
 *
 * Prints the median and p99 ns per call of tfb_step_begin, tfb_input_begin,
 * tfb_input_end, tfb_step_work and tfb_step_end (its scalars are logged by
 * a helper thread), averaged over batches of 64 steps, and the whole
 * five-call step.
 * Each step also spins 2 us, a very fast training step. Target: each call
 * <= 100 ns. A benchmark prints numbers; it asserts nothing about time.
 *
 * usage: bench_pipeline [steps]   (default 100000)
 */
#include "tfboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define SPIN_NS 2000 /* simulated work per step */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    printf("%-16s median %7.1f ns  p99 %7.1f ns\n", name, v[n / 2],
           v[(size_t)((double)n * 0.99)]);
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 100000;
    if (steps < BATCH * 10) {
        fprintf(stderr, "bench_pipeline: steps must be >= %d\n", BATCH * 10);
        return 2;
    }
    char dir[] = "/tmp/tfb_bench_pipeline.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    tfb_writer *w;
    tfb_writer_opts o;
    tfb_writer_opts_init(&o);
    o.queue_bytes = 64u << 20; /* measure the calls, not a full queue */
    int rc = tfb_writer_open(&w, dir, &o);
    if (rc < 0) {
        fprintf(stderr, "bench_pipeline: open: %s\n", tfb_strerror(rc));
        return 1;
    }
    size_t nb = (size_t)steps / BATCH;
    double *t[6];
    for (int k = 0; k < 6; k++)
        if (!(t[k] = calloc(nb, sizeof(double))))
            return 1;

    /* Warm-up: the first step_begin allocates the state. */
    tfb_step_begin(w, -1);
    tfb_step_end(w);

    int64_t step = 0;
    for (size_t b = 0; b < nb; b++) {
        int64_t a0, a1, a2, a3, a3w, a4, sum[5] = {0};
        for (int i = 0; i < BATCH; i++, step++) {
            /* The step's own work: even a very fast training step takes
             * microseconds; without it the loop would only measure how
             * fast the scalars can be written. */
            int64_t spin_until = now_ns() + SPIN_NS;
            while (now_ns() < spin_until) {
            }
            a0 = now_ns();
            tfb_step_begin(w, step);
            a1 = now_ns();
            tfb_input_begin(w);
            a2 = now_ns();
            tfb_input_end(w);
            a3 = now_ns();
            tfb_step_work(w, 1e12, 32, 4096);
            a3w = now_ns();
            tfb_step_end(w);
            a4 = now_ns();
            sum[0] += a1 - a0;
            sum[1] += a2 - a1;
            sum[2] += a3 - a2;
            sum[3] += a4 - a3w;
            sum[4] += a3w - a3;
        }
        /* Take the clock's own cost out with a back-to-back pair. */
        int64_t c0 = now_ns(), c1 = now_ns();
        double clk = (double)(c1 - c0);
        double total = 0;
        for (int k = 0; k < 5; k++) {
            t[k][b] = (double)sum[k] / BATCH - clk;
            total += t[k][b];
        }
        t[5][b] = total;
    }
    printf("bench_pipeline: %ld steps (clock overhead subtracted)\n", steps);
    report("step_begin", t[0], nb);
    report("input_begin", t[1], nb);
    report("input_end", t[2], nb);
    report("step_end", t[3], nb);
    report("step_work", t[4], nb);
    report("all five", t[5], nb);

    char path[4096];
    snprintf(path, sizeof path, "%s", tfb_writer_path(w));
    rc = tfb_writer_close(w);
    unlink(path);
    rmdir(dir);
    for (int k = 0; k < 6; k++)
        free(t[k]);
    return rc < 0 ? 1 : 0;
}
