/*
 * trace_memory_events.h - a run's GPU memory events as the trace layer
 * reads them (allocations and frees per device, from CUDA_GPU_MEMORY_USAGE_
 * EVENTS of our trace stores and nsys exports, and Kineto's `[memory]`
 * events), with the kernel/NVTX intervals and host steps kept around them.
 * The memory analysis (plugins/gpu/gpu_memory.h) reads these types; the
 * per-run data that holds them is trace_memory.h.
 *
 * Thread-safety: the loaders may run on any thread, each on its own list.
 */
#ifndef TFB_SERVER_TRACE_MEMORY_EVENTS_H
#define TFB_SERVER_TRACE_MEMORY_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

typedef enum {
    TFB_GMEM_ALLOC = 0, /* as nsys's memoryOperationType */
    TFB_GMEM_FREE = 1
} tfb_gmem_op;

typedef struct tfb_gmem_event {
    int64_t t_ns;
    int32_t device;
    int32_t op;            /* tfb_gmem_op */
    uint64_t address;
    int64_t bytes;         /* as recorded (a free's value is not used) */
    int64_t stream;        /* -1 = unknown */
    uint64_t pool;         /* pool id/address; 0 = not pool-backed */
    int64_t pool_reserved; /* the pool's reserved bytes after the event,
                              -1 = not reported */
} tfb_gmem_event;

typedef struct tfb_gmem_interval {
    int64_t start_ns, end_ns;
    int32_t device;   /* -1 = any device (NVTX ranges) */
    int64_t stream;   /* kernels; -1 = unknown */
    const char *name; /* borrowed */
} tfb_gmem_interval;

typedef struct tfb_gmem_step {
    int64_t step, start_ns, end_ns;
} tfb_gmem_step;

/* ------------------------------------------------------------------------
 * Loaders (trace_load_memory.c): the events of a file, appended to a growing
 * list. The list owns nothing but its array.
 * ---------------------------------------------------------------------- */
/* Grown with base/vec.h's macros (the first three fields are a TFB_VEC's);
 * a named struct so that it can carry more than the array. */
typedef struct tfb_gmem_events {
    tfb_gmem_event *v;
    size_t n, cap;
    /* Rows the loaders refused: a device id outside int32 (which would
     * otherwise be cut into another device's id). */
    uint64_t refused;
} tfb_gmem_events;

void tfb_gmem_events_free(tfb_gmem_events *e);

/* CUDA_GPU_MEMORY_USAGE_EVENTS of an nsys-schema SQLite file (ours or an
 * nsys export; opened read-only, immutable). Rows with memoryOperationType
 * other than 0/1 are skipped; the pool is localMemoryPoolAddress (else
 * importedMemoryPoolAddress), its reserved size localMemoryPoolSize.
 * Returns the number of events appended (sorted by time, ties by rowid),
 * TFB_ENOENT when the file has no such table, TFB_ECORRUPT when it is not
 * a readable SQLite file, TFB_ENOMEM. */
int64_t tfb_gmem_load_sqlite(tfb_gmem_events *out, const char *path);

/* Kineto `[memory]` instant events (ph "i", args Addr, Bytes, Total
 * Allocated, Total Reserved, Device Id, Device Type) of a Chrome trace
 * JSON file (.json or .json.gz). Only CUDA events (Device Type 1) are
 * kept. Bytes > 0 is an allocation, < 0 a free; every block belongs to
 * the caching allocator, one pool per device (pool id 1) whose reserved
 * size is Total Reserved. ts is in µs (fractional): t_ns = round(ts *
 * 1000) + the trace's baseTimeNanoseconds when present. Returns the
 * number of events appended (sorted by time), TFB_ECORRUPT for JSON it
 * cannot parse, TFB_ENOENT / TFB_EIO, TFB_ENOMEM. */
int64_t tfb_gmem_load_kineto(tfb_gmem_events *out, const char *path);

#endif
