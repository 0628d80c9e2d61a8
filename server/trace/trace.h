/*
 * trace.h - the trace layer's model (server/trace/, below the plugins): a
 * run's GPU trace in memory: kernels, copies, memsets, runtime launch
 * calls and host step/input spans, read from every trace file of the run
 * (our *.trace.sqlite, `nsys export --type sqlite` files, Kineto
 * *.pt.trace.json[.gz]). Times are ns since the Unix epoch (Kineto's
 * µs are converted exactly, digit by digit).
 *
 * A tfb_gpu_trace is immutable once built and reference counted. It is
 * built once, in the background (one loader thread per run), and holds,
 * besides the rows, what every request needs: the per-device summary, the
 * per-name kernel statistics, each device's busy intervals, and a per-lane
 * index (spans sorted by lane then start, with a tree of maximum ends) that
 * finds the spans of a time window in O(log n + spans found). Requests
 * read those; no request walks every row.
 *
 * Memory: 32 bytes a span (kernel launch geometry and names are stored
 * once per distinct kernel, bytes/steps of the few non-kernel spans in a
 * side table), 32 bytes a runtime call + 4 of index, 16 bytes a busy
 * interval.
 *
 * Thread-safety: all functions are thread-safe; a trace may be read by any
 * number of threads.
 */
#ifndef TFB_SERVER_TRACE_H
#define TFB_SERVER_TRACE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef enum {
    TFB_GPU_KERNEL = 0,
    TFB_GPU_MEMCPY,
    TFB_GPU_MEMSET,
    TFB_GPU_HOST_STEP,  /* TFB_HOST_SPANS kind "step" */
    TFB_GPU_HOST_INPUT, /* TFB_HOST_SPANS kind "input" */
    TFB_GPU_KIND_COUNT
} tfb_gpu_kind;

/* What a loader hands the builder for one interval on the device
 * (kernels, memcpy, memset) or the host (step, input). name indexes the
 * trace's strings (kernels; -1 for others); copy_kind is CUPTI's
 * CUpti_ActivityMemcpyKind number (memcpy only). */
typedef struct tfb_gpu_span_in {
    int64_t start, end;
    int64_t correlation; /* -1 when unknown */
    int64_t bytes;       /* memcpy / memset */
    int64_t step;        /* host spans */
    int32_t device;      /* -1 for host spans */
    int32_t stream;
    int32_t name;
    uint8_t kind;        /* tfb_gpu_kind */
    uint8_t copy_kind;
    /* kernels */
    int32_t grid[3], block[3];
    int32_t registers;
    int32_t shared_mem; /* static + dynamic bytes */
} tfb_gpu_span_in;

/* One stored span (32 bytes). info: kernels index t->kinfo (name and
 * launch geometry); memcpy/memset index t->values (bytes), host spans too
 * (step number); -1 when there is none. lane indexes t->lanes (device and
 * stream, or the host kind). */
typedef struct tfb_gpu_span {
    int64_t start, end;
    int64_t correlation; /* -1 when unknown */
    int32_t info;
    uint16_t lane;
    uint8_t kind;        /* tfb_gpu_kind */
    uint8_t copy_kind;
} tfb_gpu_span;

/* A distinct kernel: name (string index, -1 unknown) and launch geometry. */
typedef struct tfb_gpu_kinfo {
    int32_t name;
    int32_t grid[3], block[3];
    int32_t registers;
    int32_t shared_mem;
} tfb_gpu_kinfo;

/* A lane: one GPU stream (host 0) or one host span kind (host = its
 * tfb_gpu_kind; device and stream -1). Its spans are
 * t->spans[off, off + n), sorted by start then end; tree holds the maximum
 * end of each 16 spans, then of each 16 of those, ... (levels of
 * tree_n[k] entries at tree + tree_off[k]). */
#define TFB_GPU_TREE_FANOUT 16
#define TFB_GPU_TREE_LEVELS 8
typedef struct tfb_gpu_lane {
    int32_t device, stream;
    uint8_t host;
    size_t off, n;
    int64_t *tree;
    size_t tree_off[TFB_GPU_TREE_LEVELS], tree_n[TFB_GPU_TREE_LEVELS];
    size_t levels;
} tfb_gpu_lane;

/* A runtime/driver API call (launch, copy...): when it started on the host,
 * for HTA's "host wait". */
typedef struct tfb_gpu_call {
    int64_t start, end;
    int64_t correlation;
    int32_t name;
} tfb_gpu_call;

typedef struct tfb_gpu_device {
    int32_t id;
    int32_t name; /* string index, -1 when unknown */
    int32_t sm_count;
} tfb_gpu_device;

struct tfb_gpu_aggregates; /* trace_aggregate.h */

typedef struct tfb_gpu_trace {
    /* All device and host spans, sorted by lane, then start, then end. */
    tfb_gpu_span *spans;
    size_t nspans;
    tfb_gpu_lane *lanes; /* sorted: GPU lanes by (device, stream), then
                            the host lanes */
    size_t nlanes;
    tfb_gpu_kinfo *kinfo;
    size_t nkinfo;
    int64_t *values;     /* bytes / step numbers, see tfb_gpu_span.info */
    size_t nvalues;
    /* Runtime calls sorted by start; calls_by_corr: their indexes sorted by
     * correlation id (file-local ids are made unique across files: see
     * tfb_gpu_builder_corr_base). */
    tfb_gpu_call *calls;
    size_t ncalls;
    uint32_t *calls_by_corr;
    /* Devices seen (sorted by id). */
    tfb_gpu_device *devices;
    size_t ndevices;
    char **strings;
    size_t nstrings;
    /* Extent: first start and last end of the spans (0, 0 when none);
     * first_ns also covers the runtime calls. */
    int64_t start_ns, end_ns, first_ns;
    /* Files read and files skipped (no kernel table, unreadable). */
    size_t files_read, files_skipped;
    /* Spans left out: more than 65535 lanes. */
    size_t spans_dropped;
    /* Computed once when the trace is built (trace_aggregate.c). */
    struct tfb_gpu_aggregates *agg;
    int refs; /* internal */
    /* internal: frees a trace whose arrays are not malloc'd (the mapped
     * cache file of trace_colcache.c); NULL for a built trace. */
    void (*release)(struct tfb_gpu_trace *t);
} tfb_gpu_trace;

/* ---- reading a trace (trace.c) ----------------------------------------- */

/* The string at index i, or fallback when i < 0 / out of range. */
const char *tfb_gpu_str(const tfb_gpu_trace *t, int32_t i,
                        const char *fallback);
/* A span's device and stream (-1 for host spans), bytes (memcpy/memset,
 * else 0), step (host spans, else -1), kernel info (NULL unless a kernel
 * with one). */
int32_t tfb_gpu_span_device(const tfb_gpu_trace *t, const tfb_gpu_span *s);
int32_t tfb_gpu_span_stream(const tfb_gpu_trace *t, const tfb_gpu_span *s);
int64_t tfb_gpu_span_bytes(const tfb_gpu_trace *t, const tfb_gpu_span *s);
int64_t tfb_gpu_span_step(const tfb_gpu_trace *t, const tfb_gpu_span *s);
const tfb_gpu_kinfo *tfb_gpu_span_kinfo(const tfb_gpu_trace *t,
                                        const tfb_gpu_span *s);
/* The runtime call with that correlation id, or NULL. */
const tfb_gpu_call *tfb_gpu_call_of(const tfb_gpu_trace *t, int64_t corr);
/* Index of the first runtime call that starts at or after x (t->ncalls
 * when none): calls are sorted by start. */
size_t tfb_gpu_calls_from(const tfb_gpu_trace *t, int64_t x);

/* ---- the per-run cache (trace_cache.c) and loading (trace_load.c) ------ */

/* Budgets of one load (a trace file cannot make the server read forever):
 * max_rows rows read from all files of a run (spans, calls, strings,
 * devices), max_seconds of wall time. Defaults: 100 M rows, 300 s. */
typedef struct tfb_gpu_load_limits {
    uint64_t max_rows;
    double max_seconds;
} tfb_gpu_load_limits;

/* Sets the budgets of the loads that start after the call (tests, tools);
 * zero fields keep the default. Thread-safe. */
void tfb_gpu_set_load_limits(const tfb_gpu_load_limits *l);

typedef enum {
    TFB_GPU_NONE = 0, /* the run holds no usable trace file */
    TFB_GPU_LOADING,  /* being read in the background */
    TFB_GPU_READY,    /* *out is the trace */
    TFB_GPU_FAILED    /* the load failed: see error */
} tfb_gpu_state;

typedef struct tfb_gpu_status {
    tfb_gpu_state state;
    double progress;  /* 0..1 while loading */
    char error[512];  /* TFB_GPU_FAILED: what went wrong, naming the file */
} tfb_gpu_status;

/* The GPU trace of run r (the trace part of the run's entry in the one
 * per-run cache; the memory part is tfb_gmem_run_get, trace_memory.h),
 * without blocking on a load: starts the run's load in the background
 * when needed (first request, or a trace file changed size or mtime),
 * waits at most wait_ms for it (0: not at all; < 0: until the load of the
 * current files ended), and answers:
 * READY with *out set (one reference: release it) - while a changed file
 * is reloaded, the previous trace is answered -, LOADING with progress,
 * FAILED with the message, or NONE. No lock is held while a file is read.
 * Returns 0, or TFB_ENOMEM / TFB_EINVAL. */
int tfb_gpu_trace_get(tfb_store *store, tfb_run *r, int wait_ms,
                      tfb_gpu_trace **out, tfb_gpu_status *st);

/* As tfb_gpu_trace_get, waiting for the load to end (bounded by the load
 * budgets). *out is NULL when the run has no usable trace (return 0) or
 * when the load failed (return TFB_ECORRUPT; err, when not NULL, gets the
 * message). Release with tfb_gpu_trace_release. */
int tfb_gpu_trace_of_run(tfb_store *store, tfb_run *r, tfb_gpu_trace **out);
int tfb_gpu_trace_of_run_err(tfb_store *store, tfb_run *r,
                             tfb_gpu_trace **out, char *err, size_t errcap);
void tfb_gpu_trace_release(tfb_gpu_trace *t);

/* One load's budgets, progress and error message. Filled by
 * tfb_gpu_load_ctl_init from the current limits; the loader thread writes
 * progress (atomic: requests read it) and error. */
typedef struct tfb_gpu_load_ctl {
    uint64_t max_rows, rows;
    double deadline;          /* CLOCK_MONOTONIC seconds */
    size_t nfiles, file;      /* files of the load, the one being read */
    _Atomic uint32_t progress_ppm;
    char error[512];
} tfb_gpu_load_ctl;

void tfb_gpu_load_ctl_init(tfb_gpu_load_ctl *c, size_t nfiles);
/* 1 when the load's time is up (the loaders poll it). */
int tfb_gpu_load_ctl_late(const tfb_gpu_load_ctl *c);

/* Builds a trace from explicit files (tests, tools), on the calling
 * thread, with the current budgets. Files that are not traces are counted
 * in files_skipped. *out is never NULL on success. A file that cannot be
 * read within the budgets, or whose tables are views (they could compute
 * rows without end), fails the load: TFB_ECORRUPT or TFB_ETOOBIG, and
 * ctl->error says why (ctl may be NULL). */
int tfb_gpu_trace_load_files(char *const *paths, size_t n,
                             tfb_gpu_trace **out);
int tfb_gpu_trace_load_files_ctl(char *const *paths, size_t n,
                                 tfb_gpu_load_ctl *ctl, tfb_gpu_trace **out);
/* As tfb_gpu_trace_load_files_ctl, for the per-run cache, which answers a
 * built trace before it writes its cache file: a trace mapped from the
 * columnar cache (trace_cachedir.h) comes back with *ck NULL, a trace
 * built from the sources with *ck (NULL when there is no cache) for the
 * caller to tfb_colcache_save and tfb_colcache_key_free; on an error *ck
 * is to be freed too. */
struct tfb_colcache_key;
int tfb_gpu_trace_load_files_keyed(char *const *paths, size_t n,
                                   tfb_gpu_load_ctl *ctl, tfb_gpu_trace **out,
                                   struct tfb_colcache_key **ck);

/* Frees a trace nobody references (trace_build.c; the cache and builder
 * use it). */
void tfb_gpu_trace_free(tfb_gpu_trace *t);

/* ---- building (trace_build.c; the loaders below fill a builder) ------- */

typedef struct tfb_gpu_builder tfb_gpu_builder;

/* ctl may be NULL (no budgets). */
int tfb_gpu_builder_new(tfb_gpu_builder **out, tfb_gpu_load_ctl *ctl);
tfb_gpu_load_ctl *tfb_gpu_builder_ctl(tfb_gpu_builder *b);
/* Fails the load: sets the message (printf-style) and returns code. */
int tfb_gpu_builder_fail(tfb_gpu_builder *b, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Counts rows read outside spans and calls (strings, devices) against
 * the budget; TFB_ETOOBIG (message set) past it or past the time. */
int tfb_gpu_builder_rows(tfb_gpu_builder *b, uint64_t n);
/* The current file is `frac` (0..1) read. */
void tfb_gpu_builder_progress(tfb_gpu_builder *b, double frac);
/* Around each file: ids of a file live in their own correlation space;
 * read says whether the file was a trace (counted in files_read) or not
 * (files_skipped). */
void tfb_gpu_builder_begin_file(tfb_gpu_builder *b);
void tfb_gpu_builder_end_file(tfb_gpu_builder *b, int read);
/* Sorts, indexes and aggregates the trace and returns it in *out (one
 * reference); frees the builder in all cases. TFB_ENOMEM. */
int tfb_gpu_builder_finish(tfb_gpu_builder *b, tfb_gpu_trace **out);
/* Frees the builder and what it built. NULL-safe. */
void tfb_gpu_builder_free(tfb_gpu_builder *b);

/* Interns s (len bytes) and returns its index, or -1 on ENOMEM. */
int32_t tfb_gpu_builder_str(tfb_gpu_builder *b, const char *s, size_t len);
/* Adds a span / call: 0, TFB_ENOMEM, or TFB_ETOOBIG past the budgets. */
int tfb_gpu_builder_span(tfb_gpu_builder *b, const tfb_gpu_span_in *s);
int tfb_gpu_builder_call(tfb_gpu_builder *b, const tfb_gpu_call *c);
/* Adds n calls read elsewhere (a reader thread; names already interned
 * in this builder, correlation ids raw), taking the malloc'd array v of
 * capacity cap (adopted when the builder has no call yet, else copied
 * and freed). Counts them against the row budget. 0, TFB_ENOMEM or
 * TFB_ETOOBIG; v is consumed in all cases. */
int tfb_gpu_builder_calls_take(tfb_gpu_builder *b, tfb_gpu_call *v, size_t n,
                               size_t cap);
/* Adds or updates a device (name/sm_count < 0 keep the old values). */
int tfb_gpu_builder_device(tfb_gpu_builder *b, int32_t id, int32_t name,
                           int32_t sm_count);
/* Correlation ids are per process: each file gets its own id space. The
 * loaders add this to every id they store. */
int64_t tfb_gpu_builder_corr_base(const tfb_gpu_builder *b);

/* Loaders (trace_load_sqlite.c, trace_load_kineto.c): return 1 when path
 * was read as a trace, 0 when it is not one
 * (e.g. a .sqlite without CUPTI_ACTIVITY_KIND_KERNEL), negative on
 * ENOMEM or a refused file (the builder's ctl says why). Malformed content
 * is skipped, never fatal. */
int tfb_gpu_load_sqlite(tfb_gpu_builder *b, const char *path);
int tfb_gpu_load_kineto(tfb_gpu_builder *b, const char *path);

/* Label of a CUPTI memcpy kind: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP",
 * "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "Unknown". */
const char *tfb_gpu_copy_kind_label(int copy_kind);
/* The reverse, for names such as "Memcpy HtoD (Pageable -> Device)";
 * 0 (unknown) when no label is found. */
int tfb_gpu_copy_kind_from_text(const char *s, size_t len);

#endif
