/*
 * test_gpu_memory.c - the GPU memory analysis (server/plugins/gpu/
 * gpu_memory.c, compiled in directly) and its loaders: alloc/free pairs
 * with their kernel and NVTX context, frees without allocations at the
 * start, windows, pools, two devices, peak ties, downsampling that keeps
 * the peak, churn per step; nsys-schema SQLite files (hand-written and
 * written by our own trace store) and Kineto `[memory]` events (.json and
 * .json.gz).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "plugins/gpu/gpu_memory.h"
#include "tfboard.h"
#include "test_util.h"
#include "collector/trace_store.h"
#include "trace/trace_internal.h"

static tfb_trace_memory_event ev(int64_t t, int32_t dev, int op, uint64_t addr,
                                 int64_t bytes)
{
    tfb_trace_memory_event e;
    memset(&e, 0, sizeof e);
    e.t_ns = t;
    e.device = dev;
    e.op = op;
    e.address = addr;
    e.bytes = bytes;
    e.stream = -1;
    e.pool = 0;
    e.pool_reserved = -1;
    return e;
}

enum { A = TFB_TRACE_MEMORY_ALLOC, F = TFB_TRACE_MEMORY_FREE };

static tfb_gpu_memory_result *run(const tfb_gpu_memory_input *in,
                                  const tfb_gpu_memory_opts *o)
{
    tfb_gpu_memory_result *r = NULL;
    assert_int_equal(tfb_gpu_memory_analyze(in, o, &r), 0);
    assert_non_null(r);
    return r;
}

static void check_point(const tfb_gpu_memory_point *p, int64_t t, int64_t bytes)
{
    assert_int_equal(p->t_ns, t);
    assert_int_equal(p->bytes, bytes);
}

/* ------------------------------------------------------------------------
 * Analysis
 * ---------------------------------------------------------------------- */
static void test_alloc_free_pairs(void **state)
{
    (void)state;
    tfb_trace_memory_event e[6] = {
        ev(100, 0, A, 0x1000, 100), ev(200, 0, A, 0x2000, 300),
        ev(300, 0, F, 0x1000, 100), ev(400, 0, A, 0x3000, 50),
        ev(500, 0, F, 0x2000, 300), ev(600, 0, F, 0x3000, 50),
    };
    e[1].stream = 7;
    e[0].stream = 7;
    tfb_trace_memory_interval k[3] = {
        {150, 250, 0, 7, "gemm"},
        {180, 260, 0, 9, "relu"},
        {90, 120, 1, 7, "other_device"},
    };
    tfb_trace_memory_interval nv[2] = {
        {190, 210, -1, -1, "layer1"},
        {50, 450, -1, -1, "forward"},
    };
    tfb_trace_memory_step st[2] = {{2, 250, 700}, {1, 0, 250}};
    tfb_gpu_memory_input in = {e, 6, k, 3, nv, 2, st, 2};
    tfb_gpu_memory_result *r = run(&in, NULL);
    assert_int_equal(r->n_devices, 1);
    const tfb_gpu_memory_device *d = &r->devices[0];
    assert_int_equal(d->device, 0);
    assert_int_equal(d->n_changes, 6);
    assert_int_equal(d->n_points, 8);
    static const int64_t want_t[8] = {100, 100, 200, 300, 400, 500, 600, 600};
    static const int64_t want_b[8] = {0, 100, 400, 300, 350, 50, 0, 0};
    for (int i = 0; i < 8; i++) {
        check_point(&d->points[i], want_t[i], want_b[i]);
        /* No pools: reserved = bytes. */
        assert_int_equal(d->points[i].reserved, want_b[i]);
    }
    assert_int_equal(d->peak_bytes, 400);
    assert_int_equal(d->peak_t_ns, 200);
    assert_int_equal(d->live_at_peak_total, 2);
    assert_int_equal(d->n_live_at_peak, 2);
    const tfb_gpu_memory_alloc *b = &d->live_at_peak[0];
    assert_int_equal(b->bytes, 300);
    assert_int_equal(b->address, 0x2000);
    assert_int_equal(b->t_ns, 200);
    assert_int_equal(b->stream, 7);
    /* Two kernels run at 200 on device 0: the one on the same stream. */
    assert_string_equal(b->kernel, "gemm");
    assert_string_equal(b->range, "layer1"); /* the innermost */
    const tfb_gpu_memory_alloc *a = &d->live_at_peak[1];
    assert_int_equal(a->bytes, 100);
    assert_null(a->kernel); /* other_device's kernel does not count */
    assert_string_equal(a->range, "forward");
    assert_int_equal(d->end_bytes, 0);
    assert_int_equal(d->live_at_end, 0);
    assert_int_equal(d->allocs, 3);
    assert_int_equal(d->frees, 3);
    assert_int_equal(d->alloc_bytes, 450);
    assert_int_equal(d->free_bytes, 450);
    assert_int_equal(d->unmatched_frees, 0);
    /* Post-mortem: most recent first, none live at the end. */
    assert_int_equal(d->n_last_allocs, 3);
    assert_int_equal(d->last_allocs[0].address, 0x3000);
    assert_string_equal(d->last_allocs[0].range, "forward");
    assert_int_equal(d->last_allocs[1].address, 0x2000);
    assert_int_equal(d->last_allocs[2].address, 0x1000);
    for (int i = 0; i < 3; i++)
        assert_int_equal(d->last_allocs[i].live_at_end, 0);
    /* Churn, by step: step 1 = [0, 250), step 2 = [250, 700). */
    assert_int_equal(r->n_churn, 2);
    assert_int_equal(r->churn[0].step, 1);
    assert_int_equal(r->churn[0].allocs, 2);
    assert_int_equal(r->churn[0].alloc_bytes, 400);
    assert_int_equal(r->churn[0].frees, 0);
    assert_int_equal(r->churn[1].step, 2);
    assert_int_equal(r->churn[1].allocs, 1);
    assert_int_equal(r->churn[1].alloc_bytes, 50);
    assert_int_equal(r->churn[1].frees, 3);
    assert_int_equal(r->churn[1].free_bytes, 450);
    assert_int_equal(r->events_outside_steps, 0);
    tfb_gpu_memory_result_free(r);

    /* A smaller post-mortem and live list. */
    tfb_gpu_memory_opts o;
    tfb_gpu_memory_opts_init(&o);
    o.top_live = 1;
    o.last_allocs = 2;
    r = run(&in, &o);
    d = &r->devices[0];
    assert_int_equal(d->n_live_at_peak, 1);
    assert_int_equal(d->live_at_peak_total, 2);
    assert_int_equal(d->live_at_peak[0].bytes, 300);
    assert_int_equal(d->n_last_allocs, 2);
    assert_int_equal(d->last_allocs[0].address, 0x3000);
    assert_int_equal(d->last_allocs[1].address, 0x2000);
    tfb_gpu_memory_result_free(r);
}

static void test_frees_without_allocs(void **state)
{
    (void)state;
    /* Freed blocks allocated before the trace began: counted, ignored. A
     * matched free's own byte count (negative, as Kineto writes it) is not
     * used. */
    tfb_trace_memory_event e[5] = {
        ev(10, 0, F, 0xdead, 1000), ev(20, 0, A, 0x1000, 200),
        ev(30, 0, F, 0xbeef, -500), ev(40, 0, F, 0x1000, -7),
        ev(50, 0, F, 0x1000, 200), /* twice: the second is unmatched */
    };
    tfb_trace_memory_step st[1] = {{0, 0, 45}};
    tfb_gpu_memory_input in = {e, 5, NULL, 0, NULL, 0, st, 1};
    tfb_gpu_memory_result *r = run(&in, NULL);
    const tfb_gpu_memory_device *d = &r->devices[0];
    assert_int_equal(d->unmatched_frees, 3);
    assert_int_equal(d->unmatched_free_bytes, 1700);
    assert_int_equal(d->frees, 1);
    assert_int_equal(d->free_bytes, 200);
    for (size_t i = 0; i < d->n_points; i++)
        assert_true(d->points[i].bytes >= 0);
    assert_int_equal(d->n_points, 7);
    check_point(&d->points[0], 10, 0);
    check_point(&d->points[1], 10, 0);
    check_point(&d->points[2], 20, 200);
    check_point(&d->points[3], 30, 200);
    check_point(&d->points[4], 40, 0);
    check_point(&d->points[6], 50, 0);
    assert_int_equal(d->peak_bytes, 200);
    assert_int_equal(d->peak_t_ns, 20);
    assert_int_equal(d->end_bytes, 0);
    /* Churn counts unmatched frees with their own bytes; t=50 is in no
     * step. */
    assert_int_equal(r->n_churn, 1);
    assert_int_equal(r->churn[0].frees, 3);
    assert_int_equal(r->churn[0].free_bytes, 1000 + 500 + 200);
    assert_int_equal(r->events_outside_steps, 1);
    tfb_gpu_memory_result_free(r);
}

static void test_window(void **state)
{
    (void)state;
    /* A is made before the window: the state on entry holds it, and its
     * free in the window is matched. C comes after the window. */
    tfb_trace_memory_event e[4] = {
        ev(5, 0, A, 0xa, 1000), ev(20, 0, A, 0xb, 10), ev(30, 0, F, 0xa, 1000),
        ev(50, 0, A, 0xc, 5),
    };
    tfb_gpu_memory_input in = {e, 4, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_opts o;
    tfb_gpu_memory_opts_init(&o);
    o.start_ns = 15;
    o.end_ns = 40;
    tfb_gpu_memory_result *r = run(&in, &o);
    const tfb_gpu_memory_device *d = &r->devices[0];
    assert_int_equal(d->n_points, 4);
    check_point(&d->points[0], 15, 1000);
    check_point(&d->points[1], 20, 1010);
    check_point(&d->points[2], 30, 10);
    check_point(&d->points[3], 40, 10);
    assert_int_equal(d->peak_bytes, 1010);
    assert_int_equal(d->peak_t_ns, 20);
    assert_int_equal(d->live_at_peak_total, 2);
    assert_int_equal(d->live_at_peak[0].address, 0xa);
    assert_int_equal(d->live_at_peak[0].t_ns, 5);
    assert_int_equal(d->allocs, 1);
    assert_int_equal(d->frees, 1);
    assert_int_equal(d->unmatched_frees, 0);
    assert_int_equal(d->end_bytes, 10);
    assert_int_equal(d->live_at_end, 1);
    assert_int_equal(d->n_last_allocs, 2);
    assert_int_equal(d->last_allocs[0].address, 0xb);
    assert_int_equal(d->last_allocs[0].live_at_end, 1);
    assert_int_equal(d->last_allocs[1].address, 0xa);
    assert_int_equal(d->last_allocs[1].live_at_end, 0);
    tfb_gpu_memory_result_free(r);

    /* Nothing happens in [31, 40]: the peak is the state on entry. */
    o.start_ns = 31;
    r = run(&in, &o);
    d = &r->devices[0];
    assert_int_equal(d->n_changes, 0);
    assert_int_equal(d->n_points, 2);
    check_point(&d->points[0], 31, 10);
    check_point(&d->points[1], 40, 10);
    assert_int_equal(d->peak_bytes, 10);
    assert_int_equal(d->peak_t_ns, 31);
    assert_int_equal(d->live_at_peak_total, 1);
    assert_int_equal(d->live_at_peak[0].address, 0xb);
    assert_int_equal(d->allocs, 0);
    tfb_gpu_memory_result_free(r);
}

static void test_pools(void **state)
{
    (void)state;
    const uint64_t P = 0xa000, Q = 0xb000, R = 0xc000;
    tfb_trace_memory_event e[8];
    e[0] = ev(1, 0, A, 0x1, 100);
    e[0].pool = P;
    e[0].pool_reserved = 1000;
    e[1] = ev(2, 0, A, 0x2, 50); /* plain cudaMalloc */
    e[2] = ev(3, 0, A, 0x3, 2000);
    e[2].pool = P;
    e[2].pool_reserved = 4096; /* the pool grew */
    e[3] = ev(4, 0, F, 0x1, 100);
    e[3].pool = P;
    e[3].pool_reserved = 4096;
    e[4] = ev(5, 0, F, 0x3, 2000);
    e[4].pool = P;
    e[4].pool_reserved = 4096; /* kept until trimmed */
    e[5] = ev(6, 0, A, 0x4, 30);
    e[5].pool = Q; /* reserved size never reported: its live bytes */
    e[6] = ev(7, 0, A, 0x5, 100);
    e[6].pool = R;
    e[6].pool_reserved = 10; /* less than it holds: its live bytes */
    e[7] = ev(8, 0, F, 0x5, 100);
    e[7].pool = R;
    tfb_gpu_memory_input in = {e, 8, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_result *r = run(&in, NULL);
    const tfb_gpu_memory_device *d = &r->devices[0];
    static const int64_t want_b[8] = {100, 150, 2150, 2050, 50, 80, 180, 80};
    static const int64_t want_r[8] = {1000, 1050, 4146, 4146,
                                      4146, 4176, 4276, 4186};
    assert_int_equal(d->n_points, 10);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(d->points[i + 1].bytes, want_b[i]);
        assert_int_equal(d->points[i + 1].reserved, want_r[i]);
    }
    assert_int_equal(d->peak_bytes, 2150);
    assert_int_equal(d->peak_t_ns, 3);
    assert_int_equal(d->peak_reserved, 4276);
    assert_int_equal(d->end_bytes, 80);
    assert_int_equal(d->end_reserved, 4186);
    assert_int_equal(d->pool_allocs, 4);
    assert_int_equal(d->live_at_peak_total, 3);
    assert_int_equal(d->live_at_peak[0].pool, P);
    assert_int_equal(d->live_at_peak[0].bytes, 2000);
    tfb_gpu_memory_result_free(r);
}

static void test_two_devices(void **state)
{
    (void)state;
    /* The same address on two devices is two allocations. */
    tfb_trace_memory_event e[5] = {
        ev(1, 1, A, 0x1000, 500), ev(2, 0, A, 0x1000, 70),
        ev(3, 1, F, 0x1000, 500), ev(4, 1, A, 0x2000, 20),
        ev(5, 0, A, 0x2000, 1),
    };
    tfb_trace_memory_step st[1] = {{9, 0, 100}};
    tfb_gpu_memory_input in = {e, 5, NULL, 0, NULL, 0, st, 1};
    tfb_gpu_memory_result *r = run(&in, NULL);
    assert_int_equal(r->n_devices, 2);
    const tfb_gpu_memory_device *d0 = &r->devices[0], *d1 = &r->devices[1];
    assert_int_equal(d0->device, 0);
    assert_int_equal(d1->device, 1);
    assert_int_equal(d0->peak_bytes, 71);
    assert_int_equal(d0->peak_t_ns, 5);
    assert_int_equal(d0->end_bytes, 71);
    assert_int_equal(d0->live_at_end, 2);
    assert_int_equal(d0->frees, 0);
    assert_int_equal(d1->peak_bytes, 500);
    assert_int_equal(d1->peak_t_ns, 1);
    assert_int_equal(d1->end_bytes, 20);
    assert_int_equal(d1->frees, 1);
    assert_int_equal(d1->unmatched_frees, 0);
    /* Both devices' lines span the same window. */
    check_point(&d0->points[0], 1, 0);
    check_point(&d0->points[d0->n_points - 1], 5, 71);
    check_point(&d1->points[0], 1, 0);
    check_point(&d1->points[d1->n_points - 1], 5, 20);
    assert_int_equal(r->n_churn, 2);
    assert_int_equal(r->churn[0].device, 0);
    assert_int_equal(r->churn[0].allocs, 2);
    assert_int_equal(r->churn[1].device, 1);
    assert_int_equal(r->churn[1].allocs, 2);
    assert_int_equal(r->churn[1].frees, 1);
    assert_int_equal(r->churn[1].step, 9);
    tfb_gpu_memory_result_free(r);
}

static void test_peak_ties(void **state)
{
    (void)state;
    /* 100 is reached at 10 and again at 30: the earliest counts. */
    tfb_trace_memory_event e[6] = {
        ev(10, 0, A, 0x9, 60), ev(10, 0, A, 0x8, 40), ev(20, 0, F, 0x9, 60),
        ev(20, 0, F, 0x8, 40), ev(30, 0, A, 0x7, 100),
        ev(40, 0, A, 0x9, 0), /* a zero-byte allocation changes nothing */
    };
    tfb_gpu_memory_input in = {e, 6, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_result *r = run(&in, NULL);
    const tfb_gpu_memory_device *d = &r->devices[0];
    assert_int_equal(d->peak_bytes, 100);
    assert_int_equal(d->peak_t_ns, 10);
    assert_int_equal(d->live_at_peak_total, 2);
    assert_int_equal(d->live_at_peak[0].address, 0x9); /* 60 */
    assert_int_equal(d->live_at_peak[1].address, 0x8); /* 40 */
    tfb_gpu_memory_result_free(r);

    /* Equal sizes live at the peak: earlier first, then lower address. */
    tfb_trace_memory_event e2[3] = {
        ev(1, 0, A, 0x30, 8), ev(2, 0, A, 0x20, 8), ev(2, 0, A, 0x10, 8),
    };
    tfb_gpu_memory_input in2 = {e2, 3, NULL, 0, NULL, 0, NULL, 0};
    r = run(&in2, NULL);
    d = &r->devices[0];
    assert_int_equal(d->n_live_at_peak, 3);
    assert_int_equal(d->live_at_peak[0].address, 0x30);
    assert_int_equal(d->live_at_peak[1].address, 0x10);
    assert_int_equal(d->live_at_peak[2].address, 0x20);
    tfb_gpu_memory_result_free(r);

    /* An address allocated again without a free: the old one is replaced. */
    tfb_trace_memory_event e3[2] = {ev(1, 0, A, 0x30, 8), ev(2, 0, A, 0x30, 5)};
    tfb_gpu_memory_input in3 = {e3, 2, NULL, 0, NULL, 0, NULL, 0};
    r = run(&in3, NULL);
    d = &r->devices[0];
    assert_int_equal(d->replaced, 1);
    assert_int_equal(d->end_bytes, 5);
    assert_int_equal(d->live_at_end, 1);
    tfb_gpu_memory_result_free(r);
}

static void test_downsample_keeps_peak(void **state)
{
    (void)state;
    enum { N = 10000 };
    tfb_trace_memory_event *e = malloc(N * sizeof *e);
    assert_non_null(e);
    /* Sawtooth of 1..20 blocks of 1 KiB, with one 1 GiB spike at 7001. */
    int live = 0;
    for (int i = 0; i < N; i++) {
        if (i == 7001) {
            e[i] = ev(i * 10, 0, A, 0xf00000, INT64_C(1) << 30);
        } else if (i == 7002) {
            e[i] = ev(i * 10, 0, F, 0xf00000, 0);
        } else if (live < 20 && (i / 20) % 2 == 0) {
            e[i] = ev(i * 10, 0, A, (uint64_t)(live + 1) * 4096, 1024);
            live++;
        } else if (live > 0) {
            e[i] = ev(i * 10, 0, F, (uint64_t)live * 4096, 1024);
            live--;
        } else {
            e[i] = ev(i * 10, 0, A, (uint64_t)(live + 1) * 4096, 1024);
            live++;
        }
    }
    tfb_gpu_memory_input in = {e, N, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_opts o;
    tfb_gpu_memory_opts_init(&o);
    o.max_points = 50;
    tfb_gpu_memory_result *r = run(&in, &o);
    const tfb_gpu_memory_device *d = &r->devices[0];
    assert_int_equal(d->n_changes, N);
    assert_true(d->n_points <= 50);
    assert_true(d->n_points >= 10);
    assert_int_equal(d->peak_t_ns, 70010);
    int found = 0;
    for (size_t i = 0; i < d->n_points; i++) {
        if (i)
            assert_true(d->points[i].t_ns >= d->points[i - 1].t_ns);
        assert_true(d->points[i].bytes <= d->peak_bytes);
        if (d->points[i].t_ns == d->peak_t_ns &&
            d->points[i].bytes == d->peak_bytes)
            found = 1;
    }
    assert_true(found);
    check_point(&d->points[0], 0, 0);
    assert_int_equal(d->points[d->n_points - 1].t_ns, (N - 1) * 10);
    assert_int_equal(d->points[d->n_points - 1].bytes, d->end_bytes);
    tfb_gpu_memory_result_free(r);
    free(e);
}

/* Hostile sizes (issue 21 item 5): byte counts and pool sizes at the
 * int64 extremes, and sizes whose sum passes int64, are skipped and
 * counted; nothing wraps (UBSan: no signed overflow) or goes negative. */
static void test_hostile_sizes(void **state)
{
    (void)state;
    enum { NBIG = 9000 };
    tfb_trace_memory_event *e = calloc(8 + NBIG, sizeof *e);
    assert_non_null(e);
    size_t n = 0;
    e[n++] = ev(1, 0, A, 0x1, 100);
    e[n++] = ev(2, 0, A, 0x2, INT64_MAX);
    e[n++] = ev(3, 0, A, 0x3, INT64_MIN);
    e[n++] = ev(4, 0, F, 0x4, INT64_MIN); /* unmatched free */
    e[n++] = ev(5, 0, F, 0x5, INT64_MAX); /* unmatched free */
    e[n] = ev(6, 0, A, 0x6, 64);
    e[n].pool = 0x77;
    e[n++].pool_reserved = INT64_MAX;
    e[n] = ev(7, 0, A, 0x7, 64);
    e[n].pool = 0x78;
    e[n++].pool_reserved = (int64_t)1 << 40;
    for (int i = 0; i < NBIG; i++) /* 2^50 each: 8192 pass int64 */
        e[n++] = ev(10 + i, 1, A, 0x100000 + (uint64_t)i, (int64_t)1 << 50);
    e[n++] = ev(20000, 0, F, 0x1, 0);
    tfb_gpu_memory_input in = {e, n, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_result *r = run(&in, NULL);
    assert_int_equal(r->n_devices, 2);
    const tfb_gpu_memory_device *d0 = &r->devices[0], *d1 = &r->devices[1];
    assert_int_equal(d0->allocs, 2); /* 100 B, and 64 B in pool 0x78 */
    assert_int_equal(d0->peak_bytes, 164);
    assert_int_equal(d0->end_bytes, 64);
    assert_int_equal(d0->peak_reserved, ((int64_t)1 << 40) + 100);
    assert_int_equal(d0->unmatched_frees, 0);
    assert_int_equal(d0->unmatched_free_bytes, 0);
    /* device 1 takes 2^50-byte blocks until the sizes would pass int64:
     * 164 + 2^40 are taken in before them */
    int64_t room = INT64_MAX - 164 - ((int64_t)1 << 40);
    uint64_t fit = (uint64_t)(room / ((int64_t)1 << 50));
    assert_int_equal(d1->allocs, fit);
    assert_int_equal(d1->end_bytes, (int64_t)fit << 50);
    assert_true(d1->peak_bytes > 0 && d1->peak_reserved > 0);
    assert_int_equal(r->events_skipped, 5 + (NBIG - fit));
    for (size_t k = 0; k < r->n_devices; k++)
        for (size_t i = 0; i < r->devices[k].n_points; i++) {
            assert_true(r->devices[k].points[i].bytes >= 0);
            assert_true(r->devices[k].points[i].reserved >= 0);
        }
    tfb_gpu_memory_result_free(r);
    free(e);
}

static void test_bad_input(void **state)
{
    (void)state;
    tfb_trace_memory_event e[2] = {ev(10, 0, A, 1, 1), ev(5, 0, F, 1, 1)};
    tfb_gpu_memory_input in = {e, 2, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_result *r = NULL;
    assert_int_equal(tfb_gpu_memory_analyze(&in, NULL, &r), TFB_EINVAL);
    assert_null(r);
    in.n_events = 1;
    tfb_gpu_memory_opts o;
    tfb_gpu_memory_opts_init(&o);
    o.max_points = 3;
    assert_int_equal(tfb_gpu_memory_analyze(&in, &o, &r), TFB_EINVAL);
    tfb_gpu_memory_opts_init(&o);
    o.start_ns = 10;
    o.end_ns = 9;
    assert_int_equal(tfb_gpu_memory_analyze(&in, &o, &r), TFB_EINVAL);
    assert_int_equal(tfb_gpu_memory_analyze(NULL, NULL, &r), TFB_EINVAL);
    assert_int_equal(tfb_gpu_memory_analyze(&in, NULL, NULL), TFB_EINVAL);
    /* No events: no devices, not an error. */
    tfb_gpu_memory_input empty = {NULL, 0, NULL, 0, NULL, 0, NULL, 0};
    r = run(&empty, NULL);
    assert_int_equal(r->n_devices, 0);
    assert_int_equal(r->n_churn, 0);
    tfb_gpu_memory_result_free(r);
    tfb_gpu_memory_result_free(NULL);
}

/* ------------------------------------------------------------------------
 * Loaders
 * ---------------------------------------------------------------------- */
static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
}

static void test_load_nsys_sqlite(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/report #1.sqlite", dir); /* URI chars */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    /* The nsys export's table, as nsys declares it (all NOT NULL, 0 for
     * missing values). */
    exec(db, "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INT NOT NULL,"
             " globalPid INT NOT NULL, deviceId INT NOT NULL, contextId INT"
             " NOT NULL, address INT NOT NULL, pc INT NOT NULL, bytes INT NOT"
             " NULL, memKind INT NOT NULL, memoryOperationType INT NOT NULL,"
             " name TEXT, correlationId INT, streamId INT,"
             " localMemoryPoolAddress INT, localMemoryPoolReleaseThreshold"
             " INT, localMemoryPoolSize INT, localMemoryPoolUtilizedSize INT,"
             " importedMemoryPoolAddress INT, importedMemoryPoolProcessId"
             " INT)");
    exec(db, "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES"
             "(3000, 1, 0, 1, 4096, 0, 256, 3, 1, NULL, 3, 7, 0, 0, 0, 0, 0,"
             " 0),"
             "(1000, 1, 0, 1, 4096, 0, 256, 3, 0, NULL, 1, 7, 0, 0, 0, 0, 0,"
             " 0),"
             "(2000, 1, 1, 1, 8192, 0, 1048576, 3, 0, NULL, 2, 13, 65536, 0,"
             " 2097152, 1048576, 0, 0),"
             "(2500, 1, 0, 1, 9999, 0, 5, 3, 7, NULL, 4, 7, 0, 0, 0, 0, 0,"
             " 0)");
    sqlite3_close(db);

    tfb_trace_memory_events evs = {0};
    assert_int_equal(tfb_trace_memory_load_sqlite(&evs, path), 3);
    assert_int_equal(evs.n, 3);
    assert_int_equal(evs.v[0].t_ns, 1000);
    assert_int_equal(evs.v[0].op, TFB_TRACE_MEMORY_ALLOC);
    assert_int_equal(evs.v[0].address, 4096);
    assert_int_equal(evs.v[0].bytes, 256);
    assert_int_equal(evs.v[0].stream, 7);
    assert_int_equal(evs.v[0].pool, 0);
    assert_int_equal(evs.v[1].device, 1);
    assert_int_equal(evs.v[1].pool, 65536);
    assert_int_equal(evs.v[1].pool_reserved, 2097152);
    assert_int_equal(evs.v[2].op, TFB_TRACE_MEMORY_FREE);
    tfb_gpu_memory_input in = {evs.v, evs.n, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_result *r = run(&in, NULL);
    assert_int_equal(r->n_devices, 2);
    assert_int_equal(r->devices[0].peak_bytes, 256);
    assert_int_equal(r->devices[0].end_bytes, 0);
    assert_int_equal(r->devices[1].peak_reserved, 2097152);
    tfb_gpu_memory_result_free(r);

    /* An older export without the pool columns; a file without the table;
     * not a database; no file. */
    char p2[1024];
    snprintf(p2, sizeof p2, "%s/old.sqlite", dir);
    assert_int_equal(sqlite3_open(p2, &db), SQLITE_OK);
    exec(db, "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INT, deviceId"
             " INT, address INT, bytes INT, memoryOperationType INT);"
             "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES(5, 2, 1, 10, 0)");
    sqlite3_close(db);
    assert_int_equal(tfb_trace_memory_load_sqlite(&evs, p2), 1);
    assert_int_equal(evs.n, 4);
    assert_int_equal(evs.v[3].device, 2);
    assert_int_equal(evs.v[3].stream, -1);
    assert_int_equal(evs.v[3].pool_reserved, -1);
    snprintf(p2, sizeof p2, "%s/none.sqlite", dir);
    assert_int_equal(sqlite3_open(p2, &db), SQLITE_OK);
    exec(db, "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)");
    sqlite3_close(db);
    assert_int_equal(tfb_trace_memory_load_sqlite(&evs, p2), TFB_ENOENT);
    snprintf(p2, sizeof p2, "%s/junk.sqlite", dir);
    assert_int_equal(tu_write_file(p2, "not a database at all, not at all",
                                   33),
                     0);
    assert_int_equal(tfb_trace_memory_load_sqlite(&evs, p2), TFB_ECORRUPT);
    snprintf(p2, sizeof p2, "%s/missing.sqlite", dir);
    assert_int_equal(tfb_trace_memory_load_sqlite(&evs, p2), TFB_ENOENT);
    assert_int_equal(evs.n, 4);
    tfb_trace_memory_events_free(&evs);
    tu_rmtree(dir);
    free(dir);
}

static void test_load_our_trace_store(void **state)
{
    (void)state;
    /* Rows written by libtfboard's own trace store read back the same. */
    char *dir = tu_mkdtemp();
    tfb_trace_store_opts so = {0};
    so.file_name = "mem.trace.sqlite";
    tfb_trace_store *s = NULL;
    assert_int_equal(tfb_trace_store_open(&s, dir, &so), 0);
    tfb_trace_row rows[3];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 3; i++) {
        rows[i].table = TFB_TT_MEM_USAGE;
        for (int c = 0; c < TFB_MU_NCOLS_; c++)
            rows[i].c[c] = TFB_TRACE_NULL;
        rows[i].c[TFB_MU_START] = 100 + i;
        rows[i].c[TFB_MU_DEVICE] = 0;
        rows[i].c[TFB_MU_STREAM] = 3;
        rows[i].c[TFB_MU_BYTES] = 1 << 20;
        rows[i].c[TFB_MU_MEMKIND] = 3;
    }
    rows[0].c[TFB_MU_ADDRESS] = 0x10000;
    rows[0].c[TFB_MU_OPERATION] = TFB_MEM_OP_ALLOCATION;
    rows[1].c[TFB_MU_ADDRESS] = 0x20000;
    rows[1].c[TFB_MU_OPERATION] = TFB_MEM_OP_ALLOCATION;
    rows[1].c[TFB_MU_POOL_TYPE] = 1;
    rows[1].c[TFB_MU_POOL_ADDRESS] = 0x7000000;
    rows[1].c[TFB_MU_POOL_SIZE] = 1 << 24;
    rows[2].c[TFB_MU_ADDRESS] = 0x10000;
    rows[2].c[TFB_MU_OPERATION] = TFB_MEM_OP_DEALLOCATION;
    assert_int_equal(tfb_trace_store_push(s, rows, 3, 1), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    assert_int_equal(tfb_trace_store_close(s), 0);

    tfb_trace_memory_events evs = {0};
    assert_int_equal(tfb_trace_memory_load_sqlite(&evs, path), 3);
    assert_int_equal(evs.v[1].pool, 0x7000000);
    assert_int_equal(evs.v[1].pool_reserved, 1 << 24);
    assert_int_equal(evs.v[2].op, TFB_TRACE_MEMORY_FREE);
    tfb_gpu_memory_input in = {evs.v, evs.n, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_result *r = run(&in, NULL);
    assert_int_equal(r->devices[0].peak_bytes, 2 << 20);
    assert_int_equal(r->devices[0].end_bytes, 1 << 20);
    assert_int_equal(r->devices[0].end_reserved, 1 << 24);
    tfb_gpu_memory_result_free(r);
    tfb_trace_memory_events_free(&evs);
    tu_rmtree(dir);
    free(dir);
}

static const char k_kineto[] =
    "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, "
    "\"name\": \"H100\"}],\n  \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, "
    "\"tid\": 7, \"ts\": 5.5, \"dur\": 2, \"args\": {\"device\": 0}},\n"
    "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", "
    "\"name\": \"[memory]\",\n    \"pid\": 100, \"tid\": 100,\n    \"ts\": "
    "12.3456,\n    \"args\": {\n      \"Total Reserved\": 2097152, \"Total "
    "Allocated\": 1024, \"Bytes\": 1024, \"Addr\": 139872256, \"Device "
    "Id\": 0, \"Device Type\": 1\n    }\n  },\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 100, "
    "\"tid\": 100, \"ts\": 11, \"args\": {\"Total Reserved\": 0, \"Total "
    "Allocated\": 0, \"Bytes\": 64, \"Addr\": 5, \"Device Id\": -1, "
    "\"Device Type\": 0}},\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 100, "
    "\"tid\": 100, \"ts\": 14, \"args\": {\"Total Reserved\": 2097152, "
    "\"Total Allocated\": 0, \"Bytes\": -1024, \"Addr\": 139872256, "
    "\"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": 3}},\n"
    "  {\"ph\": \"X\", \"name\": \"[memory]\", \"ts\": 15, \"dur\": 1, "
    "\"args\": {\"Bytes\": 9, \"Device Id\": 0, \"Device Type\": 1}},\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 100, "
    "\"tid\": 100, \"ts\": 13, \"args\": {\"Total Reserved\": 4194304, "
    "\"Bytes\": 4096, \"Addr\": 139876352, \"Device Id\": 1, \"Device "
    "Type\": 1, \"note\": \"a \\\"quoted\\\" {text}\"}}\n"
    "  ],\n  \"traceName\": \"x.pt.trace.json\",\n"
    "  \"baseTimeNanoseconds\": 1700000000000000000\n}\n";

static void check_kineto(const tfb_trace_memory_events *evs)
{
    const int64_t B = INT64_C(1700000000000000000);
    assert_int_equal(evs->n, 3);
    /* Sorted by time: 12.3456 us, 13, 14. */
    assert_int_equal(evs->v[0].t_ns, B + 12346);
    assert_int_equal(evs->v[0].op, TFB_TRACE_MEMORY_ALLOC);
    assert_int_equal(evs->v[0].bytes, 1024);
    assert_int_equal(evs->v[0].address, 139872256);
    assert_int_equal(evs->v[0].device, 0);
    assert_int_equal(evs->v[0].pool, 1);
    assert_int_equal(evs->v[0].pool_reserved, 2097152);
    assert_int_equal(evs->v[1].t_ns, B + 13000);
    assert_int_equal(evs->v[1].device, 1);
    assert_int_equal(evs->v[2].t_ns, B + 14000);
    assert_int_equal(evs->v[2].op, TFB_TRACE_MEMORY_FREE);
    assert_int_equal(evs->v[2].bytes, 1024);
}

static void test_load_kineto(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[1024];
    snprintf(path, sizeof path, "%s/w.1.pt.trace.json", dir);
    assert_int_equal(tu_write_file(path, k_kineto, strlen(k_kineto)), 0);
    tfb_trace_memory_events evs = {0};
    assert_int_equal(tfb_trace_memory_load_kineto(&evs, path), 3);
    check_kineto(&evs);
    tfb_gpu_memory_input in = {evs.v, evs.n, NULL, 0, NULL, 0, NULL, 0};
    tfb_gpu_memory_result *r = run(&in, NULL);
    assert_int_equal(r->n_devices, 2);
    assert_int_equal(r->devices[0].peak_bytes, 1024);
    assert_int_equal(r->devices[0].end_bytes, 0);
    /* The caching allocator keeps its reserve after the free. */
    assert_int_equal(r->devices[0].end_reserved, 2097152);
    assert_int_equal(r->devices[1].end_reserved, 4194304);
    tfb_gpu_memory_result_free(r);
    tfb_trace_memory_events_free(&evs);

    /* The same, gzip'ed. */
    snprintf(path, sizeof path, "%s/w.2.pt.trace.json.gz", dir);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, k_kineto, (unsigned)strlen(k_kineto)),
                     (int)strlen(k_kineto));
    gzclose(gz);
    assert_int_equal(tfb_trace_memory_load_kineto(&evs, path), 3);
    check_kineto(&evs);
    tfb_trace_memory_events_free(&evs);

    /* Cut short: corrupt, nothing kept. Missing file: ENOENT. */
    snprintf(path, sizeof path, "%s/cut.pt.trace.json", dir);
    assert_int_equal(tu_write_file(path, k_kineto, strlen(k_kineto) / 2), 0);
    assert_int_equal(tfb_trace_memory_load_kineto(&evs, path), TFB_ECORRUPT);
    assert_int_equal(evs.n, 0);
    snprintf(path, sizeof path, "%s/nothing.json", dir);
    assert_int_equal(tfb_trace_memory_load_kineto(&evs, path), TFB_ENOENT);
    tfb_trace_memory_events_free(&evs);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_free_pairs),
        cmocka_unit_test(test_frees_without_allocs),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_two_devices),
        cmocka_unit_test(test_peak_ties),
        cmocka_unit_test(test_downsample_keeps_peak),
        cmocka_unit_test(test_hostile_sizes),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_load_nsys_sqlite),
        cmocka_unit_test(test_load_our_trace_store),
        cmocka_unit_test(test_load_kineto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
