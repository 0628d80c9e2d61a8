/*
 * bench_ranks.c - the distributed-jobs figures:
 *  1. tfb_ranks_analyze on 256 ranks x 20,000 steps (target: well under
 *     1 s), with one straggler;
 *  2. tfb_ranks_gpu_breakdown on 8 ranks x 1 M kernels on 4 overlapping
 *     streams, 10 % of them NCCL (target: well under 5 s for the 8);
 *  3. ns per tfb_comm_begin / tfb_comm_end call on the training thread
 *     (target <= 100 ns each).
 * A benchmark prints numbers; it asserts nothing about time.
 *
 * usage: bench_ranks [ranks steps kernels]
 */
#include "tfboard.h"
#include "../../server/analysis/ranks_analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: on a shared machine the wall time also counts
 * other programs' turns. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t g_x = 88172645463325252ull;
static double rnd(void)
{
    g_x ^= g_x << 13;
    g_x ^= g_x >> 7;
    g_x ^= g_x << 17;
    return (double)(g_x >> 11) / 9007199254740992.0;
}

static int bench_analysis(int ranks, int steps)
{
    tfb_ranks_input *in = calloc((size_t)ranks, sizeof *in);
    tfb_ranks_step **st = calloc((size_t)ranks, sizeof *st);
    if (!in || !st)
        return 1;
    for (int r = 0; r < ranks; r++) {
        st[r] = malloc((size_t)steps * sizeof **st);
        if (!st[r])
            return 1;
        for (int s = 0; s < steps; s++) {
            double own = 10.0 * (1 + 0.05 * rnd()) * (r == 17 ? 1.2 : 1.0);
            double comm = 12.5 - own + 1.0;
            st[r][s] = (tfb_ranks_step){s, own + comm, 0.5, comm,
                                        1.7e9 + s * 0.0135 + rnd() * 1e-3};
        }
        in[r] = (tfb_ranks_input){.rank = r, .world_size = ranks,
                                  .steps = st[r], .n_steps = (size_t)steps};
    }
    double t0 = now_s(), c0 = cpu_s();
    tfb_ranks_result *res;
    int rc = tfb_ranks_analyze(in, (size_t)ranks, NULL, &res);
    double t1 = now_s(), c1 = cpu_s();
    if (rc) {
        fprintf(stderr, "analyze: %s\n", tfb_strerror(rc));
        return 1;
    }
    printf("analyze %d ranks x %d steps: %.3f s wall, %.3f s CPU\n"
           "  (stragglers %zu, "
           "rank %d %.1f %% slower; others wait %.1f %%; %zu x %zu matrix)\n",
           ranks, steps, t1 - t0, c1 - c0, res->n_stragglers,
           res->n_stragglers ? res->ranks[res->stragglers[0]].rank : -1,
           res->n_stragglers
               ? 100 * res->ranks[res->stragglers[0]].slowdown : 0.0,
           100 * res->others_comm_share, res->matrix.n_rows,
           res->matrix.n_cols);
    tfb_ranks_result_free(res);
    for (int r = 0; r < ranks; r++)
        free(st[r]);
    free(st);
    free(in);
    return 0;
}

static int bench_overlap(int ranks, int kernels)
{
    tfb_ranks_interval *v = malloc((size_t)kernels * sizeof *v);
    if (!v)
        return 1;
    double total = 0, cpu = 0;
    double overlap_sum = 0;
    for (int r = 0; r < ranks; r++) {
        int64_t t[4] = {0, 0, 0, 0};
        for (int k = 0; k < kernels; k++) {
            int stream = (int)(rnd() * 4);
            int comm = rnd() < 0.1;
            int64_t gap = (int64_t)(rnd() * 3000);
            int64_t dur = 2000 + (int64_t)(rnd() * 20000);
            /* Kernels come out of CUPTI in completion order, roughly. */
            int64_t s = INT64_C(1764590000000000000) + t[stream] + gap;
            t[stream] += gap + dur;
            v[k] = (tfb_ranks_interval){s, s + dur, 0, stream,
                                        comm ? TFB_RANKS_COMM
                                             : TFB_RANKS_COMPUTE};
        }
        double t0 = now_s(), c0 = cpu_s();
        tfb_ranks_gpu g;
        int rc = tfb_ranks_gpu_breakdown(v, (size_t)kernels, &g, NULL);
        total += now_s() - t0;
        cpu += cpu_s() - c0;
        if (rc)
            return 1;
        overlap_sum += g.overlap;
    }
    printf("overlap %d ranks x %d kernels: %.3f s wall, %.3f s CPU  "
           "(mean overlap %.2f)\n",
           ranks, kernels, total, cpu, overlap_sum / ranks);
    free(v);
    return 0;
}

static int64_t mono_ns(void)
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

static int bench_comm_calls(void)
{
    char dir[] = "/tmp/bench_ranks_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    tfb_writer *w;
    if (tfb_writer_open(&w, dir, NULL))
        return 1;
    enum { N = 20000, B = 64 };
    double *cb = malloc(N / B * sizeof *cb), *ce = malloc(N / B * sizeof *ce);
    if (!cb || !ce)
        return 1;
    for (int i = 0; i < N / B; i++) {
        int64_t sb = 0, se = 0;
        for (int k = 0; k < B; k++) {
            tfb_step_begin(w, i * B + k);
            int64_t a = mono_ns();
            tfb_comm_begin(w, "allreduce");
            int64_t b = mono_ns();
            tfb_comm_end(w);
            int64_t c = mono_ns();
            tfb_step_end(w);
            sb += b - a;
            se += c - b;
        }
        cb[i] = (double)sb / B;
        ce[i] = (double)se / B;
    }
    qsort(cb, N / B, sizeof *cb, cmp_double);
    qsort(ce, N / B, sizeof *ce, cmp_double);
    printf("tfb_comm_begin   median %7.1f ns (incl. one clock read)\n",
           cb[N / B / 2]);
    printf("tfb_comm_end     median %7.1f ns (incl. one clock read)\n",
           ce[N / B / 2]);
    free(cb);
    free(ce);
    tfb_writer_close(w);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) != 0;
}

int main(int argc, char **argv)
{
    int ranks = argc > 1 ? atoi(argv[1]) : 256;
    int steps = argc > 2 ? atoi(argv[2]) : 20000;
    int kernels = argc > 3 ? atoi(argv[3]) : 1000000;
    if (ranks < 2 || steps < 1 || kernels < 1) {
        fprintf(stderr, "usage: bench_ranks [ranks>=2 steps kernels]\n");
        return 2;
    }
    if (bench_analysis(ranks, steps) || bench_overlap(8, kernels) ||
        bench_comm_calls())
        return 1;
    return 0;
}
