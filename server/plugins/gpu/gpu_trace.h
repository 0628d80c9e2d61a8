/*
 * gpu_trace.h - a run's GPU trace in memory: kernels, copies, memsets,
 * runtime launch calls and host step/input spans, read from every trace
 * file of the run (our *.trace.sqlite, `nsys export --type sqlite` files,
 * Kineto *.pt.trace.json[.gz]). Times are ns since the Unix epoch (Kineto's
 * µs are converted exactly, digit by digit).
 *
 * A tfb_gpu_trace is immutable once built and
 * reference counted: tfb_gpu_trace_of_run() returns a cached trace (rebuilt
 * when a trace file's size or mtime changes) with one reference the caller
 * releases. Thread-safety: all functions are thread-safe; a trace may be
 * read by any number of threads.
 */
#ifndef TFB_SERVER_GPU_TRACE_H
#define TFB_SERVER_GPU_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

typedef enum {
    TFB_GPU_KERNEL = 0,
    TFB_GPU_MEMCPY,
    TFB_GPU_MEMSET,
    TFB_GPU_HOST_STEP,  /* TFB_HOST_SPANS kind "step" */
    TFB_GPU_HOST_INPUT, /* TFB_HOST_SPANS kind "input" */
    TFB_GPU_KIND_COUNT
} tfb_gpu_kind;

/* One interval on the device (kernels, memcpy, memset) or the host (step,
 * input). name indexes the trace's strings (kernels; -1 for others);
 * copy_kind is CUPTI's CUpti_ActivityMemcpyKind number (memcpy only). */
typedef struct tfb_gpu_span {
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
} tfb_gpu_span;

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

typedef struct tfb_gpu_trace {
    /* All device and host spans, sorted by start. */
    tfb_gpu_span *spans;
    size_t nspans;
    /* Runtime calls sorted by correlation id (file-local ids are made
     * unique across files: see tfb_gpu_trace_build). */
    tfb_gpu_call *calls;
    size_t ncalls;
    /* Devices seen (sorted by id). */
    tfb_gpu_device *devices;
    size_t ndevices;
    char **strings;
    size_t nstrings;
    /* Files read and files skipped (no kernel table, unreadable). */
    size_t files_read, files_skipped;
    int refs; /* internal */
} tfb_gpu_trace;

/* The string at index i, or fallback when i < 0 / out of range. */
const char *tfb_gpu_str(const tfb_gpu_trace *t, int32_t i,
                        const char *fallback);

/* The GPU trace of run r (cached). *out is NULL when the run holds no
 * usable trace file (return value 0). Release with tfb_gpu_trace_release.
 * Returns TFB_ENOMEM on allocation failure. */
int tfb_gpu_trace_of_run(tfb_store *store, tfb_run *r, tfb_gpu_trace **out);
void tfb_gpu_trace_release(tfb_gpu_trace *t);

/* Builds a trace from explicit files (tests, tools). Files that are not
 * traces are counted in files_skipped. *out is never NULL on success. */
int tfb_gpu_trace_load_files(char *const *paths, size_t n,
                             tfb_gpu_trace **out);

/* Frees a trace nobody references (the cache and builder use it). */
void tfb_gpu_trace_free(tfb_gpu_trace *t);

/* ---- building (gpu_builder.c; the loaders below fill a builder) -------- */

typedef struct tfb_gpu_builder tfb_gpu_builder;

int tfb_gpu_builder_new(tfb_gpu_builder **out);
/* Around each file: ids of a file live in their own correlation space;
 * read says whether the file was a trace (counted in files_read) or not
 * (files_skipped). */
void tfb_gpu_builder_begin_file(tfb_gpu_builder *b);
void tfb_gpu_builder_end_file(tfb_gpu_builder *b, int read);
/* Sorts and returns the trace (one reference); frees the builder. */
tfb_gpu_trace *tfb_gpu_builder_finish(tfb_gpu_builder *b);
/* Frees the builder and what it built. NULL-safe. */
void tfb_gpu_builder_free(tfb_gpu_builder *b);

/* Interns s (len bytes) and returns its index, or -1 on ENOMEM. */
int32_t tfb_gpu_builder_str(tfb_gpu_builder *b, const char *s, size_t len);
int tfb_gpu_builder_span(tfb_gpu_builder *b, const tfb_gpu_span *s);
int tfb_gpu_builder_call(tfb_gpu_builder *b, const tfb_gpu_call *c);
/* Adds or updates a device (name/sm_count < 0 keep the old values). */
int tfb_gpu_builder_device(tfb_gpu_builder *b, int32_t id, int32_t name,
                           int32_t sm_count);
/* Correlation ids are per process: each file gets its own id space. The
 * loaders add this to every id they store. */
int64_t tfb_gpu_builder_corr_base(const tfb_gpu_builder *b);

/* Loaders: return 1 when path was read as a trace, 0 when it is not one
 * (e.g. a .sqlite without CUPTI_ACTIVITY_KIND_KERNEL), negative on
 * ENOMEM. Malformed content is skipped, never fatal. */
int tfb_gpu_load_sqlite(tfb_gpu_builder *b, const char *path);
int tfb_gpu_load_kineto(tfb_gpu_builder *b, const char *path);

/* Label of a CUPTI memcpy kind: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP",
 * "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "Unknown". */
const char *tfb_gpu_copy_kind_label(int copy_kind);
/* The reverse, for names such as "Memcpy HtoD (Pageable -> Device)";
 * 0 (unknown) when no label is found. */
int tfb_gpu_copy_kind_from_text(const char *s, size_t len);

#endif
