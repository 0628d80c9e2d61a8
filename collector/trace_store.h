/*
 * trace_store.h - the per-process SQLite trace store (internal API, not
 * installed). Schema: docs/trace-store.md.
 *
 * One file per writing process, <run_dir>/<host>.<pid>.trace.sqlite, in WAL
 * mode. Tables and columns follow the Nsight Systems SQLite export
 * (StringIds, CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, TARGET_INFO_GPU) so SQL
 * written for nsys works on our traces; META and TFB_HOST_SPANS are ours.
 * Times are integer ns since the Unix epoch.
 *
 * Producers (the CUPTI thread, the training thread's step timer) only append
 * rows to an in-memory queue under a mutex; one background thread owned by
 * the store writes them in batched transactions with prepared statements.
 */
#ifndef TFB_TRACE_STORE_H
#define TFB_TRACE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_trace_store tfb_trace_store;

/* The tables a row can go to. The column order of each is fixed in
 * trace_store.c and documented in docs/trace-store.md. */
typedef enum {
    TFB_TT_STRINGIDS = 0, /* id, value(text) */
    TFB_TT_KERNEL,        /* CUPTI_ACTIVITY_KIND_KERNEL */
    TFB_TT_MEMCPY,        /* CUPTI_ACTIVITY_KIND_MEMCPY */
    TFB_TT_MEMSET,        /* CUPTI_ACTIVITY_KIND_MEMSET */
    TFB_TT_SYNC,          /* CUPTI_ACTIVITY_KIND_SYNCHRONIZATION */
    TFB_TT_RUNTIME,       /* CUPTI_ACTIVITY_KIND_RUNTIME */
    TFB_TT_NVTX,          /* NVTX_EVENTS (text column = row text) */
    TFB_TT_OVERHEAD,      /* PROFILER_OVERHEAD */
    TFB_TT_GPU_INFO,      /* TARGET_INFO_GPU (name column = row text) */
    TFB_TT_HOST_SPAN,     /* TFB_HOST_SPANS (kind column = row text) */
    TFB_TT_META,          /* META(key = text, value = text2) */
    /* GPU memory (issue 13) */
    TFB_TT_MEM_USAGE,     /* CUDA_GPU_MEMORY_USAGE_EVENTS */
    TFB_TT_MEM_POOL,      /* CUDA_GPU_MEMORY_POOL_EVENTS */
    TFB_TT_COUNT_
} tfb_trace_table;

#define TFB_TRACE_MAX_COLS 24

/* An integer column holding this value is written as SQL NULL. */
#define TFB_TRACE_NULL INT64_MIN

/* One row, as the producer fills it: c[] holds the table's integer columns
 * in the documented order (trace_store.c's column table); text/text2 are
 * the table's text columns (NULL = SQL NULL). With tfb_trace_store_push the
 * store copies the strings; the caller keeps ownership of its own. */
typedef struct tfb_trace_row {
    tfb_trace_table table;
    int64_t c[TFB_TRACE_MAX_COLS];
    const char *text;
    const char *text2;
} tfb_trace_row;

/* Column indexes in tfb_trace_row.c for the tables producers fill. */
enum { /* CUPTI_ACTIVITY_KIND_KERNEL */
    TFB_K_START, TFB_K_END, TFB_K_DEVICE, TFB_K_CONTEXT, TFB_K_STREAM,
    TFB_K_CORRELATION, TFB_K_GLOBALPID, TFB_K_DEMANGLED, TFB_K_SHORTNAME,
    TFB_K_GRIDX, TFB_K_GRIDY, TFB_K_GRIDZ, TFB_K_BLOCKX, TFB_K_BLOCKY,
    TFB_K_BLOCKZ, TFB_K_REGISTERS, TFB_K_STATIC_SMEM, TFB_K_DYNAMIC_SMEM,
    TFB_K_LOCAL_MEM_PER_THREAD, TFB_K_GRID_ID, TFB_K_LAUNCH_TYPE,
    TFB_K_GRAPH_NODE, TFB_K_MANGLED, TFB_K_NCOLS_
};
enum { /* CUPTI_ACTIVITY_KIND_MEMCPY */
    TFB_MC_START, TFB_MC_END, TFB_MC_DEVICE, TFB_MC_CONTEXT, TFB_MC_STREAM,
    TFB_MC_CORRELATION, TFB_MC_GLOBALPID, TFB_MC_BYTES, TFB_MC_COPYKIND,
    TFB_MC_SRCKIND, TFB_MC_DSTKIND, TFB_MC_SRCDEVICE, TFB_MC_DSTDEVICE,
    TFB_MC_GRAPH_NODE, TFB_MC_NCOLS_
};
enum { /* CUPTI_ACTIVITY_KIND_MEMSET */
    TFB_MS_START, TFB_MS_END, TFB_MS_DEVICE, TFB_MS_CONTEXT, TFB_MS_STREAM,
    TFB_MS_CORRELATION, TFB_MS_GLOBALPID, TFB_MS_VALUE, TFB_MS_BYTES,
    TFB_MS_MEMKIND, TFB_MS_GRAPH_NODE, TFB_MS_NCOLS_
};
enum { /* CUPTI_ACTIVITY_KIND_SYNCHRONIZATION */
    TFB_SY_START, TFB_SY_END, TFB_SY_DEVICE, TFB_SY_CONTEXT, TFB_SY_STREAM,
    TFB_SY_CORRELATION, TFB_SY_GLOBALPID, TFB_SY_TYPE, TFB_SY_EVENT,
    TFB_SY_NCOLS_
};
enum { /* CUPTI_ACTIVITY_KIND_RUNTIME */
    TFB_RT_START, TFB_RT_END, TFB_RT_EVENTCLASS, TFB_RT_GLOBALTID,
    TFB_RT_CORRELATION, TFB_RT_NAMEID, TFB_RT_RETURN, TFB_RT_CBID,
    TFB_RT_NCOLS_
};
enum { /* NVTX_EVENTS; text = the range's text */
    TFB_NV_START, TFB_NV_END, TFB_NV_EVENTTYPE, TFB_NV_RANGEID,
    TFB_NV_GLOBALTID, TFB_NV_TEXTID, TFB_NV_DOMAINID, TFB_NV_NCOLS_
};
enum { /* PROFILER_OVERHEAD */
    TFB_OV_START, TFB_OV_END, TFB_OV_GLOBALTID, TFB_OV_KIND,
    TFB_OV_OBJECTKIND, TFB_OV_OBJECTID, TFB_OV_NCOLS_
};
enum { /* TARGET_INFO_GPU; text = name */
    TFB_GI_ID, TFB_GI_SMCOUNT, TFB_GI_TOTALMEMORY, TFB_GI_CLOCKRATE,
    TFB_GI_COMPUTEMAJOR, TFB_GI_COMPUTEMINOR, TFB_GI_L2, TFB_GI_MEMBW,
    TFB_GI_NCOLS_
};
enum { /* TFB_HOST_SPANS; text = kind ("step" | "input" | "comm") */
    TFB_HS_START, TFB_HS_END, TFB_HS_STEP, TFB_HS_GLOBALTID, TFB_HS_NCOLS_
};

/* ---- GPU memory (issue 13) ---- */
enum { /* CUDA_GPU_MEMORY_USAGE_EVENTS (CUpti_ActivityMemory4) */
    TFB_MU_START, TFB_MU_GLOBALPID, TFB_MU_DEVICE, TFB_MU_CONTEXT,
    TFB_MU_STREAM, TFB_MU_CORRELATION, TFB_MU_ADDRESS, TFB_MU_PC,
    TFB_MU_BYTES, TFB_MU_MEMKIND, TFB_MU_OPERATION, TFB_MU_NAME,
    TFB_MU_ISASYNC, TFB_MU_POOL_TYPE, TFB_MU_POOL_ADDRESS,
    TFB_MU_POOL_RELEASE_THRESHOLD, TFB_MU_POOL_SIZE,
    TFB_MU_POOL_UTILIZED, TFB_MU_IMPORTED_POOL_ADDRESS,
    TFB_MU_IMPORTED_POOL_PID, TFB_MU_NCOLS_
};
enum { /* CUDA_GPU_MEMORY_POOL_EVENTS (CUpti_ActivityMemoryPool3) */
    TFB_MP_START, TFB_MP_GLOBALPID, TFB_MP_DEVICE, TFB_MP_CORRELATION,
    TFB_MP_OPERATION, TFB_MP_POOL_TYPE, TFB_MP_ADDRESS, TFB_MP_SIZE,
    TFB_MP_RELEASE_THRESHOLD, TFB_MP_UTILIZED, TFB_MP_MIN_BYTES_TO_KEEP,
    TFB_MP_IS_MANAGED, TFB_MP_NCOLS_
};
/* CUDA_GPU_MEMORY_USAGE_EVENTS.memoryOperationType, as nsys's
 * ENUM_CUDA_DEV_MEM_EVENT_OPER (CUPTI's own enum is 1 / 2). */
#define TFB_MEM_OP_ALLOCATION 0
#define TFB_MEM_OP_DEALLOCATION 1

/* Values of NVTX_EVENTS.eventType, as in the nsys export. */
#define TFB_NVTX_MARK 34
#define TFB_NVTX_PUSHPOP_RANGE 59
#define TFB_NVTX_STARTEND_RANGE 60

typedef struct tfb_trace_store_opts {
    /* Commit period of the background thread in ms; 0 = default 1000. A
     * commit also happens whenever batch_rows rows are waiting. */
    unsigned commit_interval_ms;
    /* Rows waiting that trigger an early commit; 0 = 65536. */
    size_t batch_rows;
    /* Most rows in one transaction: a larger backlog is written as several
     * transactions, so a reader sees progress and the WAL stays near the
     * autocheckpoint size; 0 = batch_rows. */
    size_t txn_rows;
    /* Most rows queued; past it pushes that may not block are dropped and
     * counted, pushes that may block wait. 0 = 1 << 18 (about 60 MB). */
    size_t max_queued_rows;
    /* File name instead of <host>.<pid>.trace.sqlite (tests); NULL = the
     * default. */
    const char *file_name;
} tfb_trace_store_opts;

typedef struct tfb_trace_store_stats {
    uint64_t rows_queued;    /* accepted by push */
    uint64_t rows_written;   /* committed to the file */
    uint64_t rows_dropped;   /* refused by a non-blocking push: queue full */
    uint64_t transactions;   /* commits */
    uint64_t strings;        /* distinct interned strings */
    uint64_t write_ns;       /* wall time the writer spent writing batches */
    uint64_t write_cpu_ns;   /* CPU time of the writer thread in them */
    int sticky_error;        /* first SQLite failure (TFB_ETRACE / EIO...) */
} tfb_trace_store_stats;

/* Creates <run_dir>/<host>.<pid>.trace.sqlite (run_dir must exist), sets
 * WAL, creates the tables, writes META(host, pid, tfboard_version,
 * clock="CLOCK_REALTIME", time_unit="ns") and starts the writer thread.
 * opts may be NULL. On success *out owns the store. Returns TFB_ETRACE when
 * SQLite fails (the file cannot be created, a table cannot be made),
 * TFB_ENOMEM, or TFB_EINVAL. Thread-safe. */
int tfb_trace_store_open(tfb_trace_store **out, const char *run_dir,
                         const tfb_trace_store_opts *opts);

/* Writes every queued row, joins the thread, closes the file, frees s.
 * Returns the sticky error or 0. NULL-safe. No push may run concurrently. */
int tfb_trace_store_close(tfb_trace_store *s);

/* Appends n rows to the queue (strings copied). block = 1: waits while the
 * queue is full (background threads); block = 0: drops all n rows and
 * returns TFB_EDROPPED (training threads never wait). Thread-safe. */
int tfb_trace_store_push(tfb_trace_store *s, const tfb_trace_row *rows,
                         size_t n, int block);

/* The StringIds id of str, adding a StringIds row the first time (it is
 * queued ahead of any row pushed after this call returns). Returns id >= 0
 * or TFB_ENOMEM. Thread-safe. */
int64_t tfb_trace_store_intern(tfb_trace_store *s, const char *str);

/* Sets META(key) = value (replacing). Thread-safe. */
int tfb_trace_store_meta(tfb_trace_store *s, const char *key,
                         const char *value);

/* Returns when every row pushed before the call is committed (or a sticky
 * error is set, which it returns). Thread-safe. */
int tfb_trace_store_flush(tfb_trace_store *s);

/* Path of the file; owned by s. Thread-safe. */
const char *tfb_trace_store_path(const tfb_trace_store *s);

/* Copies the counters. Thread-safe. */
void tfb_trace_store_get_stats(tfb_trace_store *s, tfb_trace_store_stats *out);

/* ------------------------------------------------------------------------
 * Host spans, for the step timer (collector/pipeline.c).
 *
 * While GPU tracing runs on writer w, its store is attached to w; spans then
 * go to TFB_HOST_SPANS(start, end, kind, step, globalTid). When no store is
 * attached to w this returns TFB_ESTATE at once (one mutex, no I/O). Never
 * blocks on a full queue: the span is dropped and TFB_EDROPPED returned.
 * kind: a tfb_host_span_kind. Thread-safe.
 * ---------------------------------------------------------------------- */
typedef enum {
    TFB_HOST_SPAN_STEP = 0,  /* stored as kind "step" */
    TFB_HOST_SPAN_INPUT = 1, /* stored as kind "input" */
    TFB_HOST_SPAN_COMM = 2   /* stored as kind "comm" (tfb_comm_begin/end) */
} tfb_host_span_kind;

int tfb_trace_host_span(tfb_writer *w, tfb_host_span_kind kind, int64_t step,
                        int64_t start_ns, int64_t end_ns);

/* Attaches s to w for tfb_trace_host_span (the GPU tracer does this at
 * start, and detaches with s = NULL before it closes the store; detach
 * waits for spans being added). One attachment per process: attaching a
 * second writer returns TFB_EBUSY. Thread-safe. */
int tfb_trace_store_attach(tfb_writer *w, tfb_trace_store *s);

/* Distributed jobs: writes w's rank to META (keys "rank", "world_size",
 * "local_rank", "job"; nothing when w is not a known rank). The GPU tracer
 * calls it at start. Thread-safe. */
int tfb_trace_store_rank_meta(tfb_trace_store *s, const tfb_writer *w);

#endif
