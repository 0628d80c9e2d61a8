/*
 * test_timeline_gen_store.c - writes a trace store for the timeline test
 * (test_timeline_sources.py) through the collector's own path: hand-built
 * CUPTI records (kernels, runtime launches on two threads, NVTX push/pop
 * ranges and a mark) walked by the real libcupti into the store, which
 * pairs each range's start and end records into one NVTX_EVENTS row.
 * The numbers are fixed; the test checks the server's answers exactly.
 *
 * usage: test_timeline_gen_store <run_dir>   exit 77 when libcupti cannot
 * load.
 */
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/cupti_internal.h"
#include "collector/trace_store.h"

#include "cupti_gen.h"

#define PID 1234 /* cupti_gen.h's launches */

static void marker(uint32_t tid, CUpti_ActivityFlag flag, uint32_t id,
                   int64_t t, const char *name)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = flag;
    m.timestamp = (uint64_t)(B + t);
    m.id = id;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = PID;
    m.objectId.pt.threadId = tid;
    m.name = name;
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
    /* Thread 1: range "forward" [100, 2200) holding "attn" [300, 900),
     * which holds the launch of gemm (corr 1) at [500, 600); a mark
     * "ckpt" at 2100. Thread 2 launches relu (corr 2) at [700, 800). */
    marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "forward");
    marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 300, "attn");
    launch_on(1, 1, 500, 600);
    launch_on(2, 2, 700, 800);
    marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 900, NULL);
    kernel("_Z4gemmv", 0, 7, 1000, 2000, 1);
    marker(1, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 2100, "ckpt");
    marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 2200, NULL);
    kernel("_Z4reluv", 0, 8, 2500, 3000, 2);

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
    if (n != 9) {
        fprintf(stderr, "walked %lld records, expected 9\n", (long long)n);
        return 1;
    }
    tfb_cupti_proc_free(p);
    err = tfb_trace_store_close(s);
    if (err) {
        fprintf(stderr, "close: %s\n", tfb_strerror(err));
        return 1;
    }
    printf("%s\n", argv[1]);
    return 0;
}
