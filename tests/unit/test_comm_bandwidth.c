/*
 * test_comm_bandwidth.c - the NCCL bandwidth formulas
 * (server/analysis/comm_bandwidth.h) on hand-computed cases: nccl-tests'
 * bus factor of every collective for several group sizes, the size
 * buckets, the names PyTorch, NCCL and users give collectives, the
 * collector's comm/collectives record (a bad line skipped, another
 * version not read), and a trace's collectives through the real Kineto
 * loader and the columnar cache (the join of an op to its kernel by
 * External id, and the rows' figures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/comm_bandwidth.h"
#include "test_util.h"
#include "tfboard.h"
#include "trace/trace.h"
#include "trace/trace_cachedir.h"
#include "trace/trace_internal.h"

static void close_to(double got, double want)
{
    if (!(fabs(got - want) <= 1e-12 * fabs(want) + 1e-15)) {
        print_error("got %.17g, want %.17g\n", got, want);
        fail();
    }
}

static void test_factors(void **state)
{
    (void)state;
    /* nccl-tests PERFORMANCE.md, worked by hand for n = 1, 2, 4, 8 */
    static const struct {
        tfb_coll_kind k;
        double f1, f2, f4, f8;
    } C[] = {
        {TFB_COLL_ALL_REDUCE, 0.0, 1.0, 1.5, 1.75},
        {TFB_COLL_ALL_GATHER, 0.0, 0.5, 0.75, 0.875},
        {TFB_COLL_REDUCE_SCATTER, 0.0, 0.5, 0.75, 0.875},
        {TFB_COLL_ALL_TO_ALL, 0.0, 0.5, 0.75, 0.875},
        {TFB_COLL_BROADCAST, 1.0, 1.0, 1.0, 1.0},
        {TFB_COLL_REDUCE, 1.0, 1.0, 1.0, 1.0},
        {TFB_COLL_SEND_RECV, 1.0, 1.0, 1.0, 1.0},
    };
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        close_to(tfb_coll_busbw_factor(C[i].k, 1), C[i].f1);
        close_to(tfb_coll_busbw_factor(C[i].k, 2), C[i].f2);
        close_to(tfb_coll_busbw_factor(C[i].k, 4), C[i].f4);
        close_to(tfb_coll_busbw_factor(C[i].k, 8), C[i].f8);
        assert_true(isnan(tfb_coll_busbw_factor(C[i].k, 0)));
        assert_true(isnan(tfb_coll_busbw_factor(C[i].k, -3)));
    }
    close_to(tfb_coll_busbw_factor(TFB_COLL_ALL_REDUCE, 3), 4.0 / 3.0);
    assert_true(isnan(tfb_coll_busbw_factor(TFB_COLL_OTHER, 4)));
}

static void test_buckets(void **state)
{
    (void)state;
    assert_int_equal(tfb_coll_bucket(0), 0);
    assert_int_equal(tfb_coll_bucket(1), 1);
    assert_int_equal(tfb_coll_bucket(3), 2);
    assert_int_equal(tfb_coll_bucket(4096), 4096);
    assert_int_equal(tfb_coll_bucket(4097), 4096);
    assert_int_equal(tfb_coll_bucket(8191), 4096);
    assert_int_equal(tfb_coll_bucket(67108864), 67108864);
    assert_int_equal(tfb_coll_bucket(100000000), 67108864);
    assert_true(tfb_coll_bucket(UINT64_MAX) == (uint64_t)1 << 63);
}

static void test_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        tfb_coll_kind k;
    } C[] = {
        {"allreduce", TFB_COLL_ALL_REDUCE},
        {"all_reduce", TFB_COLL_ALL_REDUCE},
        {"AllReduce", TFB_COLL_ALL_REDUCE},
        {"nccl:all_reduce", TFB_COLL_ALL_REDUCE},
        {"c10d::allreduce_", TFB_COLL_ALL_REDUCE},
        {"allreduce_coalesced", TFB_COLL_ALL_REDUCE},
        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", TFB_COLL_ALL_REDUCE},
        {"ncclKernel_AllReduce_RING_LL_Sum_float", TFB_COLL_ALL_REDUCE},
        {"_allgather_base", TFB_COLL_ALL_GATHER},
        {"all_gather_into_tensor", TFB_COLL_ALL_GATHER},
        {"allgather", TFB_COLL_ALL_GATHER},
        {"reduce_scatter_tensor", TFB_COLL_REDUCE_SCATTER},
        {"_reduce_scatter_base", TFB_COLL_REDUCE_SCATTER},
        {"ReduceScatter", TFB_COLL_REDUCE_SCATTER},
        {"broadcast", TFB_COLL_BROADCAST},
        {"reduce", TFB_COLL_REDUCE},
        {"nccl:reduce", TFB_COLL_REDUCE},
        {"all_to_all", TFB_COLL_ALL_TO_ALL},
        {"alltoall_base", TFB_COLL_ALL_TO_ALL},
        {"all_to_all_single", TFB_COLL_ALL_TO_ALL},
        {"send", TFB_COLL_SEND_RECV},
        {"recv", TFB_COLL_SEND_RECV},
        {"ncclDevKernel_SendRecv", TFB_COLL_SEND_RECV},
        {"barrier", TFB_COLL_OTHER},
        {"gather", TFB_COLL_OTHER},
        {"scatter", TFB_COLL_OTHER},
        {"", TFB_COLL_OTHER},
    };
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        tfb_coll_kind k = tfb_coll_kind_parse(C[i].name, strlen(C[i].name));
        if (k != C[i].k) {
            print_error("%s: %s\n", C[i].name, tfb_coll_kind_name(k));
            fail();
        }
    }
    /* the length counts, not a NUL */
    assert_int_equal(tfb_coll_kind_parse("allreduce", 3), TFB_COLL_OTHER);
    assert_int_equal(tfb_coll_kind_parse(NULL, 0), TFB_COLL_OTHER);
    assert_string_equal(tfb_coll_kind_name(TFB_COLL_REDUCE_SCATTER),
                        "reduce_scatter");
    assert_string_equal(tfb_coll_kind_name(TFB_COLL_KIND_COUNT), "other");
}

static const tfb_coll_row *find(const tfb_coll_row *v, size_t n,
                                tfb_coll_kind k, uint64_t lo)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == k && v[i].bucket_lo == lo)
            return &v[i];
    return NULL;
}

static void test_record(void **state)
{
    (void)state;
    /* 8 all-reduces of 64 MiB over 4 ranks in 8 ms: algbw 8 x 2^26 B /
     * 0.008 s = 67.108864 GB/s, busbw x 1.5 = 100.663296 GB/s, 22.37 % of
     * a 450 GB/s link: below. 2 all-gathers of 1 MiB in 20 us: 104.8576
     * GB/s algbw, 78.6432 busbw, 17.5 %: judged (1 MiB). */
    const char *text = "version=1\n"
                       "allreduce\t67108864\t8\t536870912\t8000000\n"
                       "_allgather_base\t1048576\t2\t2097152\t20000\n"
                       "allreduce\t12\t1\t12\t1\n"  /* not a bucket */
                       "allreduce\t\t1\t12\t1\n"    /* empty field */
                       "broadcast\t4096\t1\t4096\n" /* short line */
                       "junk\n";
    tfb_coll_row *rows;
    size_t n;
    assert_int_equal(tfb_coll_record_rows(text, strlen(text), 3, 4, 450.0,
                                          &rows, &n),
                     0);
    assert_int_equal(n, 2);
    const tfb_coll_row *ar = find(rows, n, TFB_COLL_ALL_REDUCE, 67108864);
    assert_non_null(ar);
    assert_int_equal(ar->rank, 3);
    assert_int_equal(ar->count, 8);
    close_to(ar->seconds, 0.008);
    close_to(ar->algbw_gbps, 67.108864);
    close_to(ar->busbw_gbps, 100.663296);
    close_to(ar->link_pct, 100.663296 / 450.0 * 100.0);
    assert_int_equal(ar->below, 1);
    assert_string_equal(ar->source, "host");
    const tfb_coll_row *ag = find(rows, n, TFB_COLL_ALL_GATHER, 1048576);
    assert_non_null(ag);
    close_to(ag->algbw_gbps, 104.8576);
    close_to(ag->busbw_gbps, 78.6432);
    assert_int_equal(ag->below, 1);
    free(rows);

    /* no world size: algbw, no busbw; no link: no percentage, no flag */
    assert_int_equal(tfb_coll_record_rows(text, strlen(text), -1, 0, 0,
                                          &rows, &n),
                     0);
    assert_int_equal(n, 2);
    assert_true(isnan(rows[0].busbw_gbps));
    close_to(find(rows, n, TFB_COLL_ALL_REDUCE, 67108864)->algbw_gbps,
             67.108864);
    assert_true(isnan(rows[0].link_gbps) && isnan(rows[0].link_pct));
    assert_int_equal(rows[0].below, 0);
    free(rows);

    /* another version's lines are not read as version 1's */
    const char *v2 = "version=2\nallreduce\t4096\t1\t4096\t1000\n";
    assert_int_equal(tfb_coll_record_rows(v2, strlen(v2), 0, 4, 0, &rows,
                                          &n),
                     0);
    assert_int_equal(n, 0);
    assert_null(rows);
}

/* A Kineto trace: one PyTorch 2.x NCCL kernel with its args (all-reduce
 * of 2^20 floats over 8 ranks, 100 us), one older kernel joined to its
 * record_param_comms op by External id (all-gather, out 2^21 bf16 = 4
 * MiB, 50 us), one NCCL kernel without an op, and one whose External id
 * is the enclosing nccl:reduce_scatter op's, joined through its launch
 * (correlation 5) inside the record_param_comms op (reduce-scatter, in
 * 2^21 bf16 = 4 MiB, 50 us). */
static const char TRACE[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": "
    "\"NVIDIA H100 80GB HBM3\"}], \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
    "\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 1000, \"dur\": 100, \"args\": {\"device\": 0, \"stream\": 7, "
    "\"correlation\": 1, \"External id\": 3, \"Collective name\": "
    "\"allreduce\", \"In msg nelems\": 1048576, \"Out msg nelems\": "
    "1048576, \"Group size\": 8, \"dtype\": \"Float\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
    "\"ncclDevKernel_AllGather_RING_LL\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 2000, \"dur\": 50, \"args\": {\"device\": 0, \"stream\": 7, "
    "\"correlation\": 2, \"External id\": 9}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", "
    "\"pid\": 1, \"tid\": 1, \"ts\": 1990, \"dur\": 5, \"args\": "
    "{\"External id\": 9, \"Collective name\": \"_allgather_base\", "
    "\"In msg nelems\": 524288, \"Out msg nelems\": 2097152, "
    "\"Group size\": 4, \"dtype\": \"BFloat16\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
    "\"ncclDevKernel_Broadcast_RING_LL\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 3000, \"dur\": 50, \"args\": {\"device\": 0, \"stream\": 7, "
    "\"External id\": 77}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nccl:reduce_scatter\", "
    "\"pid\": 1, \"tid\": 1, \"ts\": 3990, \"dur\": 30, \"args\": "
    "{\"External id\": 20}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", "
    "\"pid\": 1, \"tid\": 1, \"ts\": 3992, \"dur\": 20, \"args\": "
    "{\"External id\": 21, \"Collective name\": \"_reduce_scatter_base\", "
    "\"In msg nelems\": 2097152, \"Out msg nelems\": 524288, "
    "\"Group size\": 4, \"dtype\": \"BFloat16\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
    "\"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 4000, \"dur\": 5, "
    "\"args\": {\"correlation\": 5, \"External id\": 20}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
    "\"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL\", \"pid\": 0, "
    "\"tid\": 7, \"ts\": 4100, \"dur\": 50, \"args\": {\"device\": 0, "
    "\"stream\": 7, \"correlation\": 5, \"External id\": 20}}\n"
    "]}\n";

static void check_trace(const tfb_trace *t)
{
    size_t n;
    const tfb_trace_collective *c = tfb_trace_collectives(t, &n);
    assert_int_equal(n, 3);
    assert_int_equal(t->colls_unmatched, 1);
    assert_string_equal(tfb_trace_str(t, c[0].name, ""), "allreduce");
    assert_int_equal(c[0].bytes, 4194304);
    assert_int_equal(c[0].group_size, 8);
    assert_int_equal(c[0].end - c[0].start, 100000);
    assert_string_equal(tfb_trace_str(t, c[1].name, ""), "_allgather_base");
    assert_int_equal(c[1].bytes, 4194304);
    assert_int_equal(c[1].group_size, 4);
    assert_string_equal(tfb_trace_str(t, c[2].name, ""),
                        "_reduce_scatter_base");
    assert_int_equal(c[2].bytes, 4194304);

    tfb_coll_row *rows;
    size_t nr;
    assert_int_equal(tfb_coll_trace_rows(t, 0, 0, 400.0, &rows, &nr), 0);
    assert_int_equal(nr, 3);
    /* 4 MiB in 100 us: 41.94304 GB/s; x 2 x 7 / 8 = 73.40032 */
    const tfb_coll_row *ar = find(rows, nr, TFB_COLL_ALL_REDUCE, 4194304);
    assert_non_null(ar);
    close_to(ar->algbw_gbps, 41.94304);
    close_to(ar->busbw_gbps, 73.40032);
    assert_string_equal(ar->source, "trace");
    /* 4 MiB in 50 us: 83.88608 GB/s; x 3 / 4 = 62.91456 */
    const tfb_coll_row *ag = find(rows, nr, TFB_COLL_ALL_GATHER, 4194304);
    assert_non_null(ag);
    close_to(ag->algbw_gbps, 83.88608);
    close_to(ag->busbw_gbps, 62.91456);
    assert_int_equal(ag->below, 1); /* 15.7 % of 400 */
    const tfb_coll_row *rs = find(rows, nr, TFB_COLL_REDUCE_SCATTER,
                                  4194304);
    assert_non_null(rs);
    close_to(rs->busbw_gbps, 62.91456);
    free(rows);
}

static void test_trace(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[4096], cache[4096];
    snprintf(path, sizeof path, "%s/r.pt.trace.json", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    assert_int_equal(tu_write_file(path, TRACE, sizeof TRACE - 1), 0);
    char *paths[] = {path};
    tfb_trace *t = NULL;
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    check_trace(t);
    tfb_trace_free(t);
    /* the same collectives from the columnar cache: saved, then mapped */
    assert_int_equal(tfb_trace_colcache_configure(cache, NULL, NULL), 0);
    tfb_trace_colcache_key *k = NULL;
    assert_true(tfb_trace_colcache_load(paths, 1, 0, &t, &k) < 0);
    assert_non_null(k);
    assert_int_equal(tfb_trace_load_files(paths, 1, &t), 0);
    assert_int_equal(tfb_trace_colcache_save(k, t, 1), 0);
    tfb_trace_colcache_key_free(k);
    tfb_trace_free(t);
    t = NULL;
    assert_int_equal(tfb_trace_colcache_load(paths, 1, 0, &t, &k), 0);
    assert_null(k);
    assert_non_null(t->release); /* mapped, not built */
    check_trace(t);
    tfb_trace_free(t);
    tfb_trace_colcache_configure("", NULL, NULL);
    tu_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factors), cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_kinds),   cmocka_unit_test(test_record),
        cmocka_unit_test(test_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
