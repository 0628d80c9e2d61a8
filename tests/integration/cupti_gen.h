/*
 * cupti_gen.h - hand-built CUPTI activity records in one buffer, for the
 * generators of the GPU integration tests (test_gpu_gen_trace.c,
 * test_timeline_gen_store.c), which walk it with the real libcupti into a
 * trace store. Times are ns after B. The buffer is static: include the
 * header in one file of a program.
 */
#ifndef TFB_TESTS_CUPTI_GEN_H
#define TFB_TESTS_CUPTI_GEN_H

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/cupti_internal.h"

#define B INT64_C(1700000000000000000)

static alignas(8) uint8_t g_buf[1 << 16];
static size_t g_len;

static inline void put(const void *rec, size_t n)
{
    if (g_len + n > sizeof g_buf) {
        fprintf(stderr, "buffer full\n");
        exit(1);
    }
    memcpy(g_buf + g_len, rec, n);
    g_len += n;
}

static inline void kernel(const char *name, uint32_t dev, uint32_t stream,
                   int64_t s, int64_t e, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.deviceId = dev;
    k.contextId = dev + 1;
    k.streamId = stream;
    k.start = (uint64_t)(B + s);
    k.end = (uint64_t)(B + e);
    k.correlationId = corr;
    k.gridX = 80;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 128;
    k.blockY = 2;
    k.blockZ = 1;
    k.registersPerThread = 64;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 2048;
    put(&k, sizeof k);
}

/* A cudaLaunchKernel call of thread tid of process 1234. */
static inline void launch_on(uint32_t tid, uint32_t corr, int64_t s,
                             int64_t e)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    a.start = (uint64_t)(B + s);
    a.end = (uint64_t)(B + e);
    a.processId = 1234;
    a.threadId = tid;
    a.correlationId = corr;
    put(&a, sizeof a);
}

static inline void launch(uint32_t corr, int64_t s, int64_t e)
{
    launch_on(1, corr, s, e);
}

#endif
