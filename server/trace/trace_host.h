/*
 * trace_host.h - the host side of a run's traces, for the timeline's CPU
 * and NVTX lanes: per CPU thread its ops and CUDA runtime/driver calls,
 * and its NVTX ranges and marks, nested into rows, with self times and
 * the top ops; read from every trace file of the run alike:
 *   - our trace store (*.trace.sqlite) and `nsys export --type sqlite`
 *     files: NVTX_EVENTS (push/pop and start/end ranges, marks; text from
 *     the text column or StringIds by textId) and
 *     CUPTI_ACTIVITY_KIND_RUNTIME (with correlationId), each on the thread
 *     of its globalTid ((pid << 24) | tid), named by nsys's ThreadNames
 *     when the file has it (trace_load_host_sqlite.c);
 *   - Kineto JSON: cpu_op / python_function ops, cuda_runtime /
 *     cuda_driver calls, user_annotation ranges, thread_name metadata
 *     (trace_host_kineto.c, on the Kineto scanner the device side uses).
 * Tables or events a file lacks give no lanes, never an error.
 *
 * Times are integer ns on the GPU trace's clock (trace.h), so host lanes
 * line up with the GPU streams. Launch -> kernel flows: each runtime call
 * keeps the correlation id of its file; tfb_host_link maps it into the
 * GPU trace's id space (where a kernel's correlation and its call's are
 * the same number), so a call and its kernels pair by correlation.
 *
 * The host side is read from the sources on first use (the timeline and
 * CPU-only traces ask for it; most requests never do), not kept in the
 * columnar cache: it answers the same whether the GPU trace was built or
 * mapped from the cache. It is the host part of the run's entry in the
 * per-run cache (trace_cache.c), kept by the files' signature.
 *
 * Thread-safety: all functions are thread-safe; a host trace is immutable
 * and shared (reference counted).
 */
#ifndef TFB_SERVER_TRACE_HOST_H
#define TFB_SERVER_TRACE_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "trace/trace.h"

typedef enum tfb_host_kind {
    TFB_HOST_OP = 0,      /* Kineto cpu_op, python_function */
    TFB_HOST_RUNTIME = 1, /* CUDA runtime/driver call */
    TFB_HOST_RANGE = 2,   /* NVTX range (Kineto user_annotation) */
    TFB_HOST_MARK = 3,    /* NVTX mark: an instant (end == start) */
} tfb_host_kind;

/* One span (48 bytes). correlation: runtime calls, the id in its file
 * (-1 none); file: which of the run's files it came from. */
typedef struct tfb_host_span {
    int64_t start, end;
    int64_t self_ns;     /* end - start less its direct children's time */
    int64_t correlation;
    uint32_t name;       /* index into the strings */
    uint16_t lane;
    uint16_t file;
    uint8_t kind;        /* tfb_host_kind */
    uint8_t depth;       /* nesting level within its lane (capped at 255) */
} tfb_host_span;

typedef struct tfb_host_lane {
    char label[96];   /* "CPU <thread>" or "NVTX <thread>" */
    int is_range;     /* the NVTX lane of a thread */
    int depth;        /* rows: deepest nesting + 1 */
} tfb_host_lane;

/* An op name's totals over the whole trace. */
typedef struct tfb_host_op_stat {
    uint32_t name;
    size_t count;
    int64_t total_ns, self_ns;
} tfb_host_op_stat;

/* A runtime call of one file kept to find the file's correlation offset
 * in the GPU trace (tfb_host_link). */
typedef struct tfb_host_probe {
    int64_t start, end, correlation;
} tfb_host_probe;

#define TFB_HOST_PROBES 32
typedef struct tfb_host_probes {
    tfb_host_probe v[TFB_HOST_PROBES];
    size_t n;
} tfb_host_probes;

typedef struct tfb_host_trace {
    tfb_host_span *spans; /* sorted by lane, start, then longest first */
    size_t n;
    tfb_host_lane *lanes; /* each thread's NVTX lane before its CPU lane */
    size_t nlanes;
    char **strings;
    size_t nstrings;
    /* ops and runtime calls by self time, most first (ranges and marks are
     * not ops) */
    tfb_host_op_stat *ops;
    size_t nops;
    int64_t busy_ns;      /* time under top-level ops and calls, summed */
    int64_t start_ns, end_ns;
    /* per file of the load: up to TFB_HOST_PROBES of its runtime calls */
    tfb_host_probes *probes;
    size_t nfiles;
    int refs; /* internal */
} tfb_host_trace;

/* The host side of run r's trace files (the host part of the run's entry
 * in the per-run cache: read on first use, then kept until a file
 * changes), waiting for its load; requests for the same files meanwhile
 * wait for the same load. *out holds one reference: release it with
 * tfb_host_release; it stays valid after the files change or the cache
 * drops it. *out is NULL (and 0 returned) when the run has no host
 * events. A load that failed (a file past the load budgets or the size
 * caps, a view or virtual table where a host table should be) answers
 * TFB_ECORRUPT, and err (when not NULL) says which file and why, until a
 * file changes; TFB_ENOMEM, TFB_EINVAL. */
int tfb_host_get(tfb_store *store, tfb_run *r, tfb_host_trace **out,
                 char *err, size_t errcap);
void tfb_host_release(tfb_host_trace *h);

/* Reads the host side of explicit files (tests, tools; the cache calls
 * it), with the current load budgets. *out (one reference) is NULL when
 * no file had host events. A file past the budgets or the size caps:
 * TFB_ETOOBIG, and err (when not NULL) says which file and why; a view or
 * virtual table where a host table should be: TFB_ECORRUPT; TFB_ENOMEM. */
int tfb_host_load_files(char *const *paths, size_t n, tfb_host_trace **out,
                        char *err, size_t errcap);

/* The correlation of each file's runtime calls in the GPU trace t built
 * from the same files: bases[f] (h->nfiles entries) is added to file f's
 * ids, or -1 when the file's calls are not in t (no GPU trace, a file
 * without kernels). Found by matching the file's probe calls with t's
 * calls (same start and end): the offset most of them agree on. t may be
 * NULL (all -1). */
void tfb_host_link(const tfb_host_trace *h, const tfb_gpu_trace *t,
                   int64_t *bases);
/* A span's correlation in t's id space (after tfb_host_link), -1 when
 * none. */
int64_t tfb_host_span_correlation(const tfb_host_span *s,
                                  const int64_t *bases);

/* ---- building (trace_host.c; the host loaders fill a builder) ---------- */

typedef struct tfb_host_builder tfb_host_builder;

/* ctl holds the budgets (rows, deadline) and receives the error message;
 * may be NULL. */
int tfb_host_builder_new(tfb_host_builder **out, tfb_gpu_load_ctl *ctl);
void tfb_host_builder_free(tfb_host_builder *b);
/* Around each file (its index in the load). */
void tfb_host_builder_begin_file(tfb_host_builder *b, size_t file);
/* Fails the load with a message (printf-style); returns code. */
int tfb_host_builder_fail(tfb_host_builder *b, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Interns s (len bytes): its index, or -1 on ENOMEM. */
int32_t tfb_host_builder_str(tfb_host_builder *b, const char *s, size_t len);
/* Names thread (pid, tid) of the current file (name: a string index). */
int tfb_host_builder_thread_name(tfb_host_builder *b, int64_t pid,
                                 int64_t tid, int32_t name);
/* Adds a span on thread (pid, tid) of the current file: 0, TFB_ENOMEM,
 * or TFB_ETOOBIG past the budgets (message set). Spans with end < start
 * are skipped. */
int tfb_host_builder_span(tfb_host_builder *b, int64_t pid, int64_t tid,
                          int kind, int32_t name, int64_t start, int64_t end,
                          int64_t correlation);
/* 1 when the load's time is up (loaders poll it). */
int tfb_host_builder_late(const tfb_host_builder *b);
/* Nests, orders and totals what was added: *out NULL when nothing was.
 * Frees the builder in all cases. */
int tfb_host_builder_finish(tfb_host_builder *b, tfb_host_trace **out);

/* Frees a host trace nobody references (the cache uses it). */
void tfb_host_trace_free(tfb_host_trace *h);

/* Loaders: 1 when path was read (even without host events), 0 when it is
 * not a trace of theirs, negative on ENOMEM or a refused file (the
 * builder's ctl says why). */
int tfb_host_load_sqlite(tfb_host_builder *b, const char *path);
int tfb_host_load_kineto(tfb_host_builder *b, const char *path);

#endif
