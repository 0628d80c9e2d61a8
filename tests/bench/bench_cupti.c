/*
 * bench_cupti.c - CUPTI records processed per second into the trace store,
 * without a GPU: 8 MiB activity buffers of hand-built CUpti_ActivityKernel10
 * records (eight kernels, each with its own name and launch configuration,
 * as a training loop repeats a few kernels),
 * walked by the real libcupti's cuptiActivityGetNextRecord and turned into
 * rows by our record path, then committed by the store's writer thread.
 *
 * Prints two rates, each against the target of >= 1 M kernel records/s:
 *   record path: the walk + rows queued (what the tracer thread spends);
 *   sustained into the file: rows committed to SQLite per second by the
 *     store's writer thread, in transactions of the store's default size
 *     (65536 rows), by wall clock and per CPU-second of that thread (the
 *     second is steadier on a shared machine).
 * and both one after the other. It asserts nothing about time. Exits 77
 * when libcupti cannot be loaded. $TFB_BENCH_DIR picks the directory
 * (default /tmp; /dev/shm takes the disk out).
 *
 * usage: bench_cupti [records]   (default 2000000)
 */
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/cupti_internal.h"
#include "collector/trace_store.h"

#define BUF_BYTES ((size_t)8 << 20)

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long long total = argc > 1 ? atoll(argv[1]) : 2000000;
    if (total <= 0)
        total = 2000000;
    tfb_cupti_api api;
    char msg[512];
    if (tfb_cupti_load(&api, NULL, msg, sizeof msg) != 0) {
        fprintf(stderr, "skip: %s\n", msg);
        return 77;
    }
    static const char *names[8] = {
        "_Z4gemmPKfS0_Pfiii", "_Z4reluPfi", "_Z7softmaxPfi", "_Z6layernormPfS_i",
        "_Z7dropoutPfPKfi", "_Z3addPfPKfi", "_Z9transposePfPKfii", "_Z6reducePfi"};
    uint8_t *buf = aligned_alloc(4096, BUF_BYTES);
    if (!buf)
        return 1;
    size_t per_buf = BUF_BYTES / sizeof(CUpti_ActivityKernel10);
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.gridX = 128;
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 32;
    uint64_t t0 = UINT64_C(1700000000000000000);
    for (size_t i = 0; i < per_buf; i++) {
        /* Each kernel has its own launch configuration, as in a real
         * loop; the grid id grows per launch. What stays the same on every
         * row is what stays the same in one process: device, context,
         * pid, and the dimensions of 1. */
        unsigned v = (unsigned)(i % 8);
        k.name = names[v];
        k.gridX = 64u << v;
        k.blockX = v % 2 ? 128 : 256;
        k.registersPerThread = 24 + 8 * (v % 4);
        k.staticSharedMemory = v % 3 ? 0 : 4096u * v;
        k.dynamicSharedMemory = v % 4 ? 0 : 1024u * v;
        k.localMemoryPerThread = v == 5 ? 16 : 0;
        k.gridId = (int64_t)i;
        k.start = t0 + i * 2000;
        k.end = k.start + 1500;
        k.streamId = 7 + (uint32_t)(i % 2);
        k.correlationId = (uint32_t)i;
        memcpy(buf + i * sizeof k, &k, sizeof k);
    }

    /* $TFB_BENCH_DIR (e.g. /dev/shm) separates CPU cost from the disk. */
    const char *root = getenv("TFB_BENCH_DIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tfb_bench_cupti.XXXXXX",
             root && *root ? root : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    /* Phase 1 measures the tracer thread alone: the queue takes every row
     * and the writer does not commit until asked (no backpressure, no
     * contention for the two cores). Phase 2 measures the commit. */
    tfb_trace_store *s = NULL;
    tfb_trace_store_opts so = {0};
    so.commit_interval_ms = 3600 * 1000;
    so.batch_rows = (size_t)total + 1024;
    so.txn_rows = 65536; /* what a default store commits at once */
    so.max_queued_rows = (size_t)total + 1024;
    if (tfb_trace_store_open(&s, dir, &so) != 0)
        return 1;
    tfb_gpu_util *u = tfb_gpu_util_new((int64_t)t0, 1000000000);
    tfb_cupti_proc *p = NULL;
    if (!u || tfb_cupti_proc_new(&p, &api, s, u) != 0)
        return 1;

    long long done = 0;
    int64_t walk_ns = 0, start = now_ns();
    (void)start;
    while (done < total) {
        size_t n = per_buf;
        if ((long long)n > total - done)
            n = (size_t)(total - done);
        int64_t a = now_ns();
        int64_t r = tfb_cupti_process_buffer(p, buf, n * sizeof k);
        walk_ns += now_ns() - a;
        if (r != (int64_t)n) {
            fprintf(stderr, "walk returned %lld\n", (long long)r);
            return 1;
        }
        done += r;
    }
    int64_t c0 = now_ns();
    int err = tfb_trace_store_flush(s);
    int64_t commit_ns = now_ns() - c0;
    int64_t end_ns = now_ns() - start;
    tfb_trace_store_stats st;
    tfb_trace_store_get_stats(s, &st);
    tfb_cupti_proc_free(p);
    tfb_gpu_util_free(u);
    free(buf);
    char path[1200];
    snprintf(path, sizeof path, "%s", tfb_trace_store_path(s));
    tfb_trace_store_close(s);
    unlink(path);
    char side[1300];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    rmdir(dir);
    if (err) {
        fprintf(stderr, "store error %s\n", tfb_strerror(err));
        return 1;
    }
    size_t kernel_rows = (size_t)done;
    printf("kernel records: %lld in %zu-record buffers, file in %s\n", done,
           per_buf, root && *root ? root : "/tmp");
    printf("1. record path (walk + rows queued, tracer thread): "
           "%.2f M records/s\n",
           (double)done / ((double)walk_ns / 1e9) / 1e6);
    printf("2. sustained into the file (writer thread):         "
           "%.2f M rows/s wall, %.2f M rows/s per CPU-second\n",
           (double)st.rows_written / ((double)st.write_ns / 1e9) / 1e6,
           (double)st.rows_written / ((double)st.write_cpu_ns / 1e9) / 1e6);
    printf("   (%llu rows: %zu kernel rows + %llu others (strings, META), "
           "%llu transactions; flush wall %.2f s)\n",
           (unsigned long long)st.rows_written, kernel_rows,
           (unsigned long long)(st.rows_written - kernel_rows),
           (unsigned long long)st.transactions, (double)commit_ns / 1e9);
    printf("3. both, one after the other:                       "
           "%.2f M records/s\n",
           (double)done / ((double)end_ns / 1e9) / 1e6);
    printf("target: >= 1 M kernel records/s for 1. and 2.\n");
    return 0;
}
