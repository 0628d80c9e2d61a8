/*
 * cupti_internal.h - the pieces of GPU tracing, internal to libtfboard and
 * its tests: the dlopen'ed CUPTI function table (cupti_loader.c), the
 * record walker that turns activity buffers into trace-store rows
 * (cupti_records.c), and the per-device utilization tracker
 * (cupti_utilization.c). cupti_tracer.c ties them to the public API.
 *
 * Built only when the CUDA headers are found (TFB_HAVE_CUPTI).
 */
#ifndef TFB_CUPTI_INTERNAL_H
#define TFB_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"
#include "collector/trace_store.h"

/* ------------------------------------------------------------------------
 * Loader
 * ---------------------------------------------------------------------- */
typedef struct tfb_cupti_api {
    void *handle; /* dlopen handle; never dlclosed (CUPTI keeps threads) */
    uint32_t version; /* cuptiGetVersion of the loaded library */
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*Finalize)(void);
    CUptiResult (*GetTimestamp)(uint64_t *);
    /* Optional (NULL when the library lacks them). */
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t,
                                   const char **);
    /* __cxa_demangle from the process or libstdc++.so.6; NULL = names stay
     * mangled. */
    char *(*demangle)(const char *, char *, size_t *, int *);
} tfb_cupti_api;

/* Loads CUPTI: path (if not NULL), else $TFB_CUPTI_PATH, else
 * libcupti.so.13, else libcupti.so. Resolves the functions and checks the
 * library's cuptiGetVersion against the CUPTI_API_VERSION of our headers
 * (same major, not older). Returns 0, TFB_ENOCUPTI (not found, symbol
 * missing) or TFB_ECUPTIVERSION, with a message in msg. Thread-safe (no shared
 * state); each call dlopens again (refcounted by the loader). */
int tfb_cupti_load(tfb_cupti_api *api, const char *path, char *msg,
                   size_t msg_len);

/* The name of a CUPTI result, from the loaded library when it knows it. */
const char *tfb_cupti_result_name(const tfb_cupti_api *api, CUptiResult r);

/* The TFB_E* code for a failed cuptiActivityEnable/RegisterCallbacks:
 * TFB_EBUSY when another subscriber holds CUPTI, TFB_ENOGPU when there is
 * no usable device or driver, TFB_EACCES for missing privileges. */
int tfb_cupti_map_error(CUptiResult r);

/* ------------------------------------------------------------------------
 * Utilization tracker: fraction of each fixed interval during which at
 * least one kernel ran on a device (NVML's definition), from kernel
 * intervals that may arrive late and out of order.
 * ---------------------------------------------------------------------- */
typedef struct tfb_gpu_util tfb_gpu_util;

/* One finished bucket: [bucket_start, bucket_start + interval). */
typedef void (*tfb_gpu_util_emit_fn)(void *user, uint32_t device,
                                     int64_t bucket_index,
                                     int64_t bucket_end_ns, double busy);

/* Buckets start at origin_ns. Returns NULL on ENOMEM or interval <= 0. */
tfb_gpu_util *tfb_gpu_util_new(int64_t origin_ns, int64_t interval_ns);
void tfb_gpu_util_free(tfb_gpu_util *u);
/* Records that device exists (it then reports buckets even when idle). */
int tfb_gpu_util_add_device(tfb_gpu_util *u, uint32_t device);
/* Adds a kernel interval. Parts that fall in already emitted buckets are
 * counted as late and ignored. Returns 0 or TFB_ENOMEM. */
int tfb_gpu_util_add(tfb_gpu_util *u, uint32_t device, int64_t start_ns,
                     int64_t end_ns);
/* Emits every bucket that ends at or before t_ns, per device, in order. */
void tfb_gpu_util_emit_until(tfb_gpu_util *u, int64_t t_ns,
                             tfb_gpu_util_emit_fn fn, void *user);
/* Emits the remaining buckets up to t_ns; the last one may be partial and
 * its fraction is taken over its partial length. */
void tfb_gpu_util_finish(tfb_gpu_util *u, int64_t t_ns,
                         tfb_gpu_util_emit_fn fn, void *user);
/* Kernel ns that arrived after their bucket was emitted. */
uint64_t tfb_gpu_util_late_ns(const tfb_gpu_util *u);

/* ------------------------------------------------------------------------
 * Record processing
 * ---------------------------------------------------------------------- */
typedef struct tfb_cupti_proc tfb_cupti_proc;

/* store receives the rows (required); util (may be NULL) receives kernel
 * intervals. Both stay owned by the caller and must outlive p. */
int tfb_cupti_proc_new(tfb_cupti_proc **out, const tfb_cupti_api *api,
                       tfb_trace_store *store, tfb_gpu_util *util);
void tfb_cupti_proc_free(tfb_cupti_proc *p);

/* Walks buf[0, valid) with the loaded library's cuptiActivityGetNextRecord
 * and queues one row per record (kernels, copies, memsets, syncs, runtime
 * calls, NVTX ranges as they close, overhead, devices). Records of other
 * kinds are counted in `other` and skipped. Runs on one thread at a time.
 * Returns the number of records walked, or a negative code when the store
 * refuses rows. */
int64_t tfb_cupti_process_buffer(tfb_cupti_proc *p, uint8_t *buf,
                                 size_t valid);

typedef struct tfb_cupti_counts {
    uint64_t kernels, memcpys, memsets, syncs, api_calls, markers, overheads,
        devices, other;
    uint64_t memory, memory_pools; /* MEMORY2 / MEMORY_POOL records */
} tfb_cupti_counts;
void tfb_cupti_proc_counts(const tfb_cupti_proc *p, tfb_cupti_counts *out);

/* The short name nsys shows for a demangled name ("ns::f<int>(float*)" ->
 * "f"), written to out (NUL-terminated, truncated to cap). */
void tfb_cupti_short_name(const char *demangled, char *out, size_t cap);

#endif
