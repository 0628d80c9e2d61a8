/*
 * bench_health.c - throughput of gradient norms and NaN/Inf counting on one
 * core, data in cache (256 KiB arrays) and out of cache (64 MiB), printed
 * as a table. Targets (DESIGN/issue 4): norms >= 1 GB/s, numerics >= 4 GB/s
 * in cache. Prints numbers; it asserts nothing about time.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfboard.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps results alive so the compiler cannot drop the work. */
static volatile double sink;

typedef enum { NORM_F32, NORM_F64, NUM_F32, NUM_F64, GRAD_NORMS } op_kind;

static void run_once(op_kind k, const void *buf, size_t bytes)
{
    tfb_nonfinite_counts c = {.size = sizeof c};
    switch (k) {
    case NORM_F32:
        sink = tfb_l2_norm(buf, bytes / 4);
        break;
    case NORM_F64:
        sink = tfb_l2_norm_f64(buf, bytes / 8);
        break;
    case NUM_F32:
        tfb_count_nonfinite(buf, bytes / 4, &c);
        sink = (double)(c.nan + c.pos_inf + c.neg_inf);
        break;
    case NUM_F64:
        tfb_count_nonfinite_f64(buf, bytes / 8, &c);
        sink = (double)(c.nan + c.pos_inf + c.neg_inf);
        break;
    case GRAD_NORMS: {
        /* 8 layers of equal size, no writer: the compute part of a step */
        const float *f = buf;
        size_t per = bytes / 4 / 8;
        tfb_tensor t[8];
        static const char *names[8] = {"l0", "l1", "l2", "l3",
                                       "l4", "l5", "l6", "l7"};
        for (int i = 0; i < 8; i++)
            t[i] = (tfb_tensor){sizeof t[i], names[i], f + (size_t)i * per,
                                per};
        double g = 0;
        (void)tfb_grad_norms(NULL, t, 8, 0, &g);
        sink = g;
        break;
    }
    }
}

/* Best of several timed rounds, each long enough (>= 50 ms) to time. */
static double gbps(op_kind k, const void *buf, size_t bytes)
{
    run_once(k, buf, bytes); /* warm caches and the cpuid probe */
    size_t reps = 1;
    for (;;) {
        double t0 = now_s();
        for (size_t r = 0; r < reps; r++)
            run_once(k, buf, bytes);
        if (now_s() - t0 > 0.05)
            break;
        reps *= 2;
    }
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now_s();
        for (size_t r = 0; r < reps; r++)
            run_once(k, buf, bytes);
        double dt = (now_s() - t0) / (double)reps;
        if (dt < best)
            best = dt;
    }
    return (double)bytes / best / 1e9;
}

int main(void)
{
    static const size_t sizes[] = {256u << 10, 64u << 20};
    static const char *const size_names[] = {"256 KiB (cache)", "64 MiB (RAM)"};
    static const struct {
        op_kind k;
        const char *name;
        double target;
    } ops[] = {
        {NORM_F32, "tfb_l2_norm (float)", 1.0},
        {NORM_F64, "tfb_l2_norm_f64", 1.0},
        {GRAD_NORMS, "tfb_grad_norms, 8 layers, no writer", 1.0},
        {NUM_F32, "tfb_count_nonfinite (float), healthy", 4.0},
        {NUM_F64, "tfb_count_nonfinite_f64, healthy", 4.0},
    };
    printf("%-40s %-16s %8s %8s\n", "operation", "data", "GB/s", "target");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t bytes = sizes[s];
        float *f = malloc(bytes);
        double *d = malloc(bytes);
        if (f == NULL || d == NULL) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        uint32_t x = 12345;
        for (size_t i = 0; i < bytes / 4; i++) {
            x = x * 1664525u + 1013904223u;
            f[i] = (float)(x >> 8) * 1e-7f - 0.8f;
        }
        for (size_t i = 0; i < bytes / 8; i++)
            d[i] = f[i] * 1e3;
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            const void *buf = (ops[o].k == NORM_F64 || ops[o].k == NUM_F64)
                                  ? (const void *)d : (const void *)f;
            printf("%-40s %-16s %8.2f %8.1f\n", ops[o].name, size_names[s],
                   gbps(ops[o].k, buf, bytes), ops[o].target);
        }
        /* The worst case for counting: every block holds a NaN, so the
         * exact per-kind count runs everywhere. */
        for (size_t i = 0; i < bytes / 4; i += 300)
            f[i] = NAN;
        for (size_t i = 0; i < bytes / 8; i += 300)
            d[i] = -INFINITY;
        printf("%-40s %-16s %8.2f %8s\n",
               "tfb_count_nonfinite (float), NaN/300", size_names[s],
               gbps(NUM_F32, f, bytes), "-");
        printf("%-40s %-16s %8.2f %8s\n",
               "tfb_count_nonfinite_f64, -Inf/300", size_names[s],
               gbps(NUM_F64, d, bytes), "-");
        free(f);
        free(d);
    }
    return 0;
}
