/*
 * test_gpu_gen_trace.c - writes a synthetic trace store for the GPU
 * integration test through the collector's own path: hand-built CUPTI
 * records in an activity buffer, walked by the real libcupti
 * (cuptiActivityGetNextRecord) into the trace store, plus host step/input
 * spans through tfb_trace_host_span. The numbers are fixed so the test can
 * check the server's answers exactly (see test_gpu.py).
 *
 * usage: test_gpu_gen_trace <run_dir>   exit 77 when libcupti cannot load.
 */
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/cupti_internal.h"
#include "collector/trace_store.h"

#include "cupti_gen.h"

static void copy(int kind, uint64_t bytes, int64_t s, int64_t e)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)kind;
    m.bytes = bytes;
    m.start = (uint64_t)(B + s);
    m.end = (uint64_t)(B + e);
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = 7;
    put(&m, sizeof m);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s RUN_DIR\n", argv[0]);
        return 2;
    }
    tfb_cupti_api api;
    char msg[512];
    if (tfb_cupti_load(&api, NULL, msg, sizeof msg) != 0) {
        fprintf(stderr, "skip: %s\n", msg);
        return 77;
    }
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = 0;
    d.name = "Synthetic GPU";
    d.numMultiprocessors = 132;
    put(&d, sizeof d);

    /* Device 0, stream 7: gap 10 ns before K2 (launched early: kernel
     * wait), gap 1990 before K3 (launched after K2 ended: host wait). */
    kernel("_Z4gemmv", 0, 7, 1000, 2000, 1);
    kernel("_Z4gemmv", 0, 7, 2010, 3010, 2);
    kernel("_Z4reluv", 0, 7, 5000, 5500, 3);
    /* Stream 8: gap 1500 before K5, launched early: other. */
    kernel("_Z4reluv", 0, 8, 2500, 4500, 4);
    kernel("_Z4gemmv", 0, 8, 6000, 7000, 5);
    /* Device 1: one kernel, no launch record. */
    kernel("_Z4gemmv", 1, 9, 1000, 1500, 6);
    launch(1, 500, 600);
    launch(2, 700, 800);
    launch(3, 4000, 4100);
    launch(4, 900, 950);
    launch(5, 1000, 1100);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20, 100, 400);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20, 8000, 8200);
    copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 4096, 7100, 7150);
    CUpti_ActivityMemset4 ms;
    memset(&ms, 0, sizeof ms);
    ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms.bytes = 256;
    ms.start = (uint64_t)(B + 50);
    ms.end = (uint64_t)(B + 80);
    ms.deviceId = 0;
    ms.contextId = 1;
    ms.streamId = 7;
    put(&ms, sizeof ms);

    tfb_trace_store *s = NULL;
    tfb_trace_store_opts o = {0};
    o.file_name = "worker0.trace.sqlite";
    int err = tfb_trace_store_open(&s, argv[1], &o);
    if (err) {
        fprintf(stderr, "store: %s\n", tfb_strerror(err));
        return 1;
    }
    tfb_cupti_proc *p = NULL;
    err = tfb_cupti_proc_new(&p, &api, s, NULL);
    int64_t n = err ? err : tfb_cupti_process_buffer(p, g_buf, g_len);
    if (n != 16) {
        fprintf(stderr, "walked %lld records, expected 16\n", (long long)n);
        return 1;
    }
    /* Host spans, as the step timer writes them while tracing. */
    static int key;
    tfb_writer *w = (tfb_writer *)(void *)&key;
    if (tfb_trace_store_attach(w, s) != 0 ||
        tfb_trace_host_span(w, TFB_HOST_SPAN_STEP, 1, B, B + 7500) != 0 ||
        tfb_trace_host_span(w, TFB_HOST_SPAN_INPUT, 1, B + 3010, B + 5000) != 0) {
        fprintf(stderr, "host spans failed\n");
        return 1;
    }
    tfb_trace_store_attach(w, NULL);
    tfb_cupti_proc_free(p);
    err = tfb_trace_store_close(s);
    if (err) {
        fprintf(stderr, "close: %s\n", tfb_strerror(err));
        return 1;
    }
    printf("%s\n", argv[1]);
    return 0;
}
