/*
 * test_ranks_analysis.c - the ranks analysis core on hand-made inputs: the
 * NCCL classifier (both naming schemes), temporal breakdown and overlap
 * with overlapping streams, several devices and kernels that cross step
 * boundaries, stragglers (persistent, transient, none), the waiting share,
 * per-step skew, the downsampled matrix, notes on bad input, and the
 * radix sort and quantiles underneath.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../server/analysis/ranks_analysis.h"
#include "../../server/analysis/ranks_internal.h"
#include "tfboard.h"

#define NEAR(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static void test_classifier(void **state)
{
    (void)state;
    const char *comm[] = {
        "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
        "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "void NCCLfoo", "x_nCcL_y", "nccl"};
    const char *compute[] = {
        "void at::native::vectorized_elementwise_kernel<4>", "ncc", "",
        "nccxl", "cutlass_80_tensorop_gemm"};
    for (size_t i = 0; i < sizeof comm / sizeof *comm; i++)
        assert_int_equal(tfb_ranks_classify_kernel(comm[i]), TFB_RANKS_COMM);
    for (size_t i = 0; i < sizeof compute / sizeof *compute; i++)
        assert_int_equal(tfb_ranks_classify_kernel(compute[i]),
                         TFB_RANKS_COMPUTE);
    assert_int_equal(tfb_ranks_classify_kernel(NULL), TFB_RANKS_COMPUTE);
}

static tfb_ranks_interval iv(int64_t s, int64_t e, int dev, int stream,
                             int cls)
{
    tfb_ranks_interval x = {s, e, dev, stream, cls};
    return x;
}

static void test_breakdown_simple(void **state)
{
    (void)state;
    tfb_ranks_interval v[] = {
        iv(0, 100, 0, 1, TFB_RANKS_COMPUTE),
        iv(50, 150, 0, 2, TFB_RANKS_COMM),
        iv(200, 260, 0, 3, TFB_RANKS_MEMORY),
    };
    tfb_ranks_gpu g;
    size_t bad = 99;
    assert_int_equal(tfb_ranks_gpu_breakdown(v, 3, &g, &bad), 0);
    assert_int_equal(bad, 0);
    assert_int_equal(g.n_devices, 1);
    assert_int_equal(g.span_ns, 260);
    assert_int_equal(g.compute_ns, 100);
    assert_int_equal(g.comm_ns, 50);
    assert_int_equal(g.memory_ns, 60);
    assert_int_equal(g.idle_ns, 50);
    assert_int_equal(g.comm_union_ns, 100);
    assert_int_equal(g.overlap_ns, 50);
    NEAR(g.overlap, 0.5, 1e-12);
    NEAR(g.busy_pct, 100.0 * 210.0 / 260.0, 1e-9);
    /* Order of the input does not matter. */
    tfb_ranks_interval r[] = {v[2], v[0], v[1]};
    tfb_ranks_gpu g2;
    assert_int_equal(tfb_ranks_gpu_breakdown(r, 3, &g2, NULL), 0);
    assert_memory_equal(&g, &g2, sizeof g);
}

static void test_overlapping_streams(void **state)
{
    (void)state;
    /* Two compute streams overlap each other; two comm streams overlap
     * each other and the compute. Each instant counts once. */
    tfb_ranks_interval v[] = {
        iv(0, 100, 0, 1, TFB_RANKS_COMPUTE),
        iv(50, 150, 0, 2, TFB_RANKS_COMPUTE),
        iv(80, 200, 0, 3, TFB_RANKS_COMM),
        iv(90, 120, 0, 4, TFB_RANKS_COMM),
        iv(100, 100, 0, 5, TFB_RANKS_COMPUTE), /* zero length */
        iv(300, 250, 0, 5, TFB_RANKS_COMPUTE), /* bad: left out */
    };
    tfb_ranks_gpu g;
    size_t bad;
    assert_int_equal(tfb_ranks_gpu_breakdown(v, 6, &g, &bad), 0);
    assert_int_equal(bad, 1);
    assert_int_equal(g.n_intervals, 5);
    assert_int_equal(g.span_ns, 200);
    assert_int_equal(g.compute_ns, 150);
    assert_int_equal(g.comm_ns, 50);
    assert_int_equal(g.idle_ns, 0);
    assert_int_equal(g.comm_union_ns, 120);
    assert_int_equal(g.overlap_ns, 70);
    NEAR(g.overlap, 70.0 / 120.0, 1e-12);
    NEAR(g.busy_pct, 100.0, 1e-12);
}

static void test_devices_apart(void **state)
{
    (void)state;
    /* Compute on device 0 and comm on device 1 do not overlap. */
    tfb_ranks_interval v[] = {
        iv(0, 100, 0, 1, TFB_RANKS_COMPUTE),
        iv(0, 100, 1, 1, TFB_RANKS_COMM),
        iv(100, 200, 1, 2, TFB_RANKS_COMPUTE),
    };
    tfb_ranks_gpu g;
    assert_int_equal(tfb_ranks_gpu_breakdown(v, 3, &g, NULL), 0);
    assert_int_equal(g.n_devices, 2);
    assert_int_equal(g.span_ns, 200);
    assert_int_equal(g.compute_ns, 200);
    assert_int_equal(g.comm_ns, 100);
    assert_int_equal(g.idle_ns, 100); /* device 0 after 100 */
    assert_int_equal(g.overlap_ns, 0);
    NEAR(g.overlap, 0.0, 0);
    NEAR(g.busy_pct, 75.0, 1e-12);
    /* No comm at all: overlap unknown; no intervals: busy unknown. */
    assert_int_equal(tfb_ranks_gpu_breakdown(v, 1, &g, NULL), 0);
    assert_true(isnan(g.overlap));
    assert_int_equal(tfb_ranks_gpu_breakdown(NULL, 0, &g, NULL), 0);
    assert_true(g.has_trace);
    assert_true(isnan(g.busy_pct));
    assert_int_equal(tfb_ranks_gpu_breakdown(NULL, 3, &g, NULL), TFB_EINVAL);
}

/* One step of a rank's trace: a compute kernel, an all-reduce that starts
 * under the compute's tail, and a long kernel crossing into the next step
 * (steps are host spans; the GPU figures are over the trace span, so a
 * kernel crossing a boundary counts once, wholly). */
static size_t make_trace(tfb_ranks_interval *v, const char *const *names,
                         size_t n_steps)
{
    size_t k = 0;
    for (size_t s = 0; s < n_steps; s++) {
        int64_t t0 = (int64_t)s * 1000;
        v[k++] = iv(t0, t0 + 600, 0, 7,
                    tfb_ranks_classify_kernel("sgemm_128x64_nn"));
        v[k++] = iv(t0 + 500, t0 + 800, 0, 13,
                    tfb_ranks_classify_kernel(names[s % 2]));
        v[k++] = iv(t0 + 900, t0 + 1100, 0, 7,
                    tfb_ranks_classify_kernel("elementwise_kernel"));
    }
    return k;
}

static void test_nccl_naming_same_figures(void **state)
{
    (void)state;
    const char *old_names[] = {"ncclKernel_AllReduce_RING_LL_Sum_float",
                               "ncclKernel_Broadcast_RING_LL_Sum_int8_t"};
    const char *new_names[] = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                               "ncclDevKernel_Broadcast_RING_LL"};
    tfb_ranks_interval a[30], b[30];
    size_t na = make_trace(a, old_names, 10);
    size_t nb = make_trace(b, new_names, 10);
    tfb_ranks_gpu ga, gb;
    assert_int_equal(tfb_ranks_gpu_breakdown(a, na, &ga, NULL), 0);
    assert_int_equal(tfb_ranks_gpu_breakdown(b, nb, &gb, NULL), 0);
    assert_memory_equal(&ga, &gb, sizeof ga);
    /* Per step: compute [0,600) + [900,1100), comm [500,800): overlap 100
     * of 300; the crossing kernel's tail [1000,1100) overlaps the next
     * step's first kernel and is counted once. */
    assert_int_equal(ga.comm_union_ns, 3000);
    assert_int_equal(ga.overlap_ns, 1000);
    NEAR(ga.overlap, 1.0 / 3.0, 1e-12);
    assert_int_equal(ga.span_ns, 10100);
    /* compute union: [0,600), then [900,1100) U [1000,1600) = [900,1600)
     * for the 9 boundaries, then the last step's [9900,10100). */
    int64_t compute = 600 + 9 * 700 + 200;
    assert_int_equal(ga.compute_ns, compute);
    assert_int_equal(ga.comm_ns, 10 * 200);
    assert_int_equal(ga.idle_ns, 10100 - compute - 2000);
}

/* A synthetic job: world ranks, steps each; the slow rank's own time is
 * factor x the others'; everyone ends each step together (the barrier),
 * so the others wait the difference in comm. */
typedef struct job {
    tfb_ranks_input in[16];
    tfb_ranks_step *steps[16];
    char labels[16][32];
} job;

static double jitter(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((double)((*seed >> 8) & 0xffff) / 65535.0 - 0.5) * 0.04; /* ±2% */
}

static void make_job(job *j, int world, size_t n_steps, int slow,
                     double factor, double transient_share)
{
    memset(j, 0, sizeof *j);
    unsigned seed = 7;
    for (int r = 0; r < world; r++) {
        j->steps[r] = calloc(n_steps, sizeof **j->steps);
        assert_non_null(j->steps[r]);
    }
    for (size_t s = 0; s < n_steps; s++) {
        double own[16], mx = 0;
        for (int r = 0; r < world; r++) {
            double base = 10.0 * (1 + jitter(&seed));
            if (r == slow)
                base *= factor;
            if (transient_share > 0 && r == 1 &&
                (double)(s % 100) < transient_share * 100)
                base *= 1.5;
            own[r] = base;
            mx = own[r] > mx ? own[r] : mx;
        }
        for (int r = 0; r < world; r++) {
            double comm = mx - own[r] + 1.0; /* wait + the all-reduce */
            tfb_ranks_step *x = &j->steps[r][s];
            x->step = (int64_t)s;
            x->input_ms = 1.0;
            x->comm_ms = comm;
            x->step_ms = own[r] + comm;
            x->wall_end = 1000.0 + (double)s + 0.001 * r;
        }
    }
    for (int r = 0; r < world; r++) {
        snprintf(j->labels[r], sizeof j->labels[r], "job/rank-%05d", r);
        j->in[r] = (tfb_ranks_input){.rank = r, .world_size = world,
                                     .label = j->labels[r],
                                     .steps = j->steps[r],
                                     .n_steps = n_steps};
    }
}

static void free_job(job *j)
{
    for (int r = 0; r < 16; r++)
        free(j->steps[r]);
}

static void test_straggler_found(void **state)
{
    (void)state;
    job j;
    make_job(&j, 8, 400, 3, 1.23, 0);
    tfb_ranks_result *res;
    assert_int_equal(tfb_ranks_analyze(j.in, 8, NULL, &res), 0);
    assert_int_equal(res->n_ranks, 8);
    assert_int_equal(res->world_size, 8);
    assert_int_equal(res->n_notes, 0);
    assert_int_equal(res->n_stragglers, 1);
    const tfb_ranks_rank *k = &res->ranks[res->stragglers[0]];
    assert_int_equal(k->rank, 3);
    assert_true(k->straggler);
    NEAR(k->slowdown, 0.23, 0.02);
    assert_true(k->slower_share > 0.99);
    /* Step time is the same everywhere: the others wait. */
    NEAR(k->step_ms.p50, res->ranks[0].step_ms.p50, 0.5);
    /* The others wait about (12.3 - 10) + 1 ms of ~13.3 ms. */
    assert_true(res->others_comm_share > 0.2 &&
                res->others_comm_share < 0.3);
    for (size_t r = 0; r < res->n_ranks; r++)
        if (r != 3)
            assert_false(res->ranks[r].straggler);
    /* Skew: 7 ms between rank 0 and rank 7 on each step. */
    assert_int_equal(res->n_steps, 400);
    NEAR(res->skew.p50, 7.0, 1e-3);
    NEAR(res->skew_max_ms, 7.0, 1e-3);
    assert_int_equal(res->skew.n, 400);
    /* Stats of one rank: input 1 ms everywhere. */
    NEAR(res->ranks[0].input_ms.mean, 1.0, 1e-12);
    NEAR(res->ranks[0].input_ms.p90, 1.0, 1e-12);
    assert_int_equal(res->ranks[0].step_ms.n, 400);
    /* The matrix holds every step (400 <= 500 columns). */
    assert_int_equal(res->matrix.n_rows, 8);
    assert_int_equal(res->matrix.n_cols, 400);
    NEAR(res->matrix.step_ms[3 * 400 + 17], j.steps[3][17].step_ms, 1e-12);
    NEAR(res->matrix.comm_ms[5 * 400 + 17], j.steps[5][17].comm_ms, 1e-12);
    tfb_ranks_result_free(res);
    free_job(&j);
}

static void test_no_straggler(void **state)
{
    (void)state;
    job j;
    make_job(&j, 4, 300, -1, 1.0, 0);
    tfb_ranks_result *res;
    assert_int_equal(tfb_ranks_analyze(j.in, 4, NULL, &res), 0);
    assert_int_equal(res->n_stragglers, 0);
    for (size_t r = 0; r < 4; r++)
        assert_true(fabs(res->ranks[r].slowdown) < 0.05);
    tfb_ranks_result_free(res);
    free_job(&j);
    /* Slow in 30 % of the steps only: not persistent, not a straggler. */
    make_job(&j, 4, 300, -1, 1.0, 0.30);
    assert_int_equal(tfb_ranks_analyze(j.in, 4, NULL, &res), 0);
    assert_int_equal(res->n_stragglers, 0);
    NEAR(res->ranks[1].slower_share, 0.3 + 0.7 * 0.5, 0.15);
    tfb_ranks_result_free(res);
    free_job(&j);
    /* Two ranks: the slow one against the other. */
    make_job(&j, 2, 100, 0, 1.3, 0);
    assert_int_equal(tfb_ranks_analyze(j.in, 2, NULL, &res), 0);
    assert_int_equal(res->n_stragglers, 1);
    assert_int_equal(res->ranks[res->stragglers[0]].rank, 0);
    NEAR(res->ranks[0].slowdown, 0.3, 0.03);
    tfb_ranks_result_free(res);
    free_job(&j);
}

static void test_matrix_downsampled(void **state)
{
    (void)state;
    tfb_ranks_step s0[10], s1[5];
    for (int i = 0; i < 10; i++)
        s0[i] = (tfb_ranks_step){i, (double)i, NAN, NAN, NAN};
    for (int i = 0; i < 5; i++) /* only the even steps, given backwards */
        s1[i] = (tfb_ranks_step){8 - 2 * i, 100.0, 1.0, 2.0, NAN};
    tfb_ranks_input in[2] = {
        {.rank = 1, .steps = s1, .n_steps = 5},
        {.rank = 0, .steps = s0, .n_steps = 10},
    };
    tfb_ranks_opts o;
    tfb_ranks_opts_init(&o);
    o.max_columns = 3;
    tfb_ranks_result *res;
    assert_int_equal(tfb_ranks_analyze(in, 2, &o, &res), 0);
    const tfb_ranks_matrix *m = &res->matrix;
    assert_int_equal(m->n_cols, 3);
    assert_int_equal(res->ranks[0].rank, 0);
    assert_int_equal(res->ranks[0].input_index, 1);
    /* Columns: union indexes [0,3) [3,6) [6,10). */
    assert_int_equal(m->col_first[0], 0);
    assert_int_equal(m->col_last[0], 2);
    assert_int_equal(m->col_first[1], 3);
    assert_int_equal(m->col_last[1], 5);
    assert_int_equal(m->col_first[2], 6);
    assert_int_equal(m->col_last[2], 9);
    NEAR(m->step_ms[0], 1.0, 1e-12);  /* (0+1+2)/3 */
    NEAR(m->step_ms[1], 4.0, 1e-12);
    NEAR(m->step_ms[2], 7.5, 1e-12);
    assert_true(isnan(m->input_ms[0]));
    NEAR(m->compute_ms[2], 7.5, 1e-12); /* input/comm unknown: 0 */
    NEAR(m->step_ms[3], 100.0, 1e-12);
    NEAR(m->compute_ms[3], 97.0, 1e-12);
    assert_true(isnan(res->skew_max_ms)); /* no wall times */
    assert_int_equal(res->skew_max_step, -1);
    assert_true(isnan(res->ranks[0].comm_share));
    NEAR(res->ranks[1].comm_share, 0.02, 1e-12);
    /* Only the even steps are shared: rank 1 is slower in all of them. */
    NEAR(res->ranks[1].slower_share, 1.0, 0);
    tfb_ranks_result_free(res);
}

static int has_note(const tfb_ranks_result *r, tfb_ranks_note_kind k,
                    int32_t rank)
{
    for (size_t i = 0; i < r->n_notes; i++)
        if (r->notes[i].kind == k && r->notes[i].rank == rank &&
            r->notes[i].text[0])
            return 1;
    return 0;
}

static void test_bad_input_notes(void **state)
{
    (void)state;
    tfb_ranks_step good[3] = {{0, 10, 1, 1, 5.0}, {1, 10, 1, 1, 6.0},
                              {1, 12, 1, 1, 6.1}}; /* step 1 twice */
    tfb_ranks_step bad[3] = {{0, NAN, 0, 0, 5.0}, {1, -1, 0, 0, 6.0},
                             {2, 10, -3, 0, 7.0}};
    tfb_ranks_interval ivs[1] = {iv(0, 10, 0, 0, TFB_RANKS_COMPUTE)};
    tfb_ranks_input in[] = {
        {.rank = 0, .world_size = 8, .label = "a", .steps = good,
         .n_steps = 3, .has_trace = 1, .intervals = ivs, .n_intervals = 1},
        {.rank = 1, .world_size = 8, .label = "b", .steps = bad,
         .n_steps = 3},
        {.rank = 0, .world_size = 8, .label = "c", .steps = good,
         .n_steps = 2},
        {.rank = -1, .label = "d", .steps = good, .n_steps = 2},
        {.rank = 2, .world_size = 4, .label = "e"},
        {.rank = 9, .world_size = 8, .label = "f", .steps = good,
         .n_steps = 1},
    };
    tfb_ranks_result *res;
    assert_int_equal(tfb_ranks_analyze(in, 6, NULL, &res), 0);
    assert_int_equal(res->n_ranks, 4); /* 0, 1, 2, 9 */
    assert_int_equal(res->world_size, 8);
    assert_true(has_note(res, TFB_RANKS_NOTE_DUP_RANK, 0));
    assert_true(has_note(res, TFB_RANKS_NOTE_NO_RANK, -1));
    assert_true(has_note(res, TFB_RANKS_NOTE_WORLD_SIZE, -1));
    assert_true(has_note(res, TFB_RANKS_NOTE_MISSING_RANKS, -1));
    assert_true(has_note(res, TFB_RANKS_NOTE_RANK_OUT_OF_WORLD, 9));
    assert_true(has_note(res, TFB_RANKS_NOTE_NO_STEPS, 1));
    assert_true(has_note(res, TFB_RANKS_NOTE_NO_STEPS, 2));
    assert_true(has_note(res, TFB_RANKS_NOTE_BAD_VALUES, 1));
    assert_true(has_note(res, TFB_RANKS_NOTE_DUP_STEP, 0));
    assert_true(has_note(res, TFB_RANKS_NOTE_NO_TRACE, 1));
    assert_true(has_note(res, TFB_RANKS_NOTE_NO_TRACE, 2));
    assert_false(has_note(res, TFB_RANKS_NOTE_NO_TRACE, 0));
    /* Rank 0: the later value of step 1 is kept. */
    assert_int_equal(res->ranks[0].n_steps, 2);
    NEAR(res->ranks[0].step_ms.mean, 11.0, 1e-12);
    assert_true(res->ranks[0].gpu.has_trace);
    assert_false(res->ranks[1].gpu.has_trace);
    assert_int_equal(res->ranks[1].n_steps, 0);
    assert_true(isnan(res->ranks[1].step_ms.p50));
    tfb_ranks_result_free(res);
    /* Nothing, and bad arguments. */
    assert_int_equal(tfb_ranks_analyze(NULL, 0, NULL, &res), 0);
    assert_int_equal(res->n_ranks, 0);
    assert_int_equal(res->matrix.n_cols, 0);
    tfb_ranks_result_free(res);
    assert_int_equal(tfb_ranks_analyze(NULL, 1, NULL, &res), TFB_EINVAL);
    assert_int_equal(tfb_ranks_analyze(in, 1, NULL, NULL), TFB_EINVAL);
    tfb_ranks_input broken = {.rank = 0, .n_steps = 4};
    assert_int_equal(tfb_ranks_analyze(&broken, 1, NULL, &res), TFB_EINVAL);
    tfb_ranks_result_free(NULL);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

static void test_sort_and_quantiles(void **state)
{
    (void)state;
    enum { N = 5000 };
    int64_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b),
            *t = malloc(N * sizeof *t);
    double *d = malloc(N * sizeof *d), *e = malloc(N * sizeof *e);
    assert_true(a && b && t && d && e);
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            /* full range, then negatives near zero, then ns timestamps */
            a[i] = round == 0 || round == 3 ? (int64_t)x
                   : round == 1 ? (int64_t)(x % 2001) - 1000
                                : INT64_C(1764590000000000000) +
                                      (int64_t)(x % 10000000000ull);
            b[i] = a[i];
            /* round 3: one far outlier puts nearly every value in the
             * first bucket of the bucket selection */
            d[i] = round == 3 && i == 7 ? 1e12 : (double)(x % 1000) / 7.0;
            e[i] = d[i];
        }
        tfb_ranks_sort_i64(a, t, N);
        qsort(b, N, sizeof *b, cmp_i64);
        assert_memory_equal(a, b, N * sizeof *a);
        qsort(e, N, sizeof *e, cmp_dbl);
        for (int q = 0; q <= 20; q++) {
            double h = q / 20.0 * (N - 1);
            size_t k = (size_t)h;
            double want = k + 1 < N ? e[k] + (h - k) * (e[k + 1] - e[k])
                                    : e[k];
            memcpy(d, e, N * sizeof *d);
            /* shuffle so the selection has work to do */
            for (int i = N - 1; i > 0; i--) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                size_t jx = x % (uint64_t)(i + 1);
                double tmp = d[i];
                d[i] = d[jx];
                d[jx] = tmp;
            }
            NEAR(tfb_ranks_quantile(d, N, q / 20.0), want, 1e-9);
        }
    }
    double two[2] = {3, 1};
    NEAR(tfb_ranks_quantile(two, 2, 0.5), 2.0, 0);
    assert_true(isnan(tfb_ranks_quantile(NULL, 0, 0.5)));
    free(a);
    free(b);
    free(t);
    free(d);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classifier),
        cmocka_unit_test(test_breakdown_simple),
        cmocka_unit_test(test_overlapping_streams),
        cmocka_unit_test(test_devices_apart),
        cmocka_unit_test(test_nccl_naming_same_figures),
        cmocka_unit_test(test_straggler_found),
        cmocka_unit_test(test_no_straggler),
        cmocka_unit_test(test_matrix_downsampled),
        cmocka_unit_test(test_bad_input_notes),
        cmocka_unit_test(test_sort_and_quantiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
