/*
 * trace.h - the front door of the trace layer (server/trace/, below the
 * analyses and plugins): what the GPU, Ranks, Pipeline and Compare
 * dashboards, the analyses, the report and the command line may use of a
 * run's traces. Outside server/trace/, product code includes this header
 * only; the builder, the loaders, the caches' insides and the columnar
 * cache file are behind trace_internal.h. Every name the layer defines
 * starts with tfb_trace_ (the collector's tfb_trace_store_* and
 * tfb_trace_host_span are the writing side, collector/trace_store.h).
 *
 * A run's traces are read from every trace file of the run (our
 * *.trace.sqlite, `nsys export --type sqlite` files, Kineto
 * *.pt.trace.json[.gz]) into three kinds of data, each one part of the
 * run's entry in the layer's one per-run cache (trace_cache.c):
 *   - the GPU trace (tfb_trace): kernels, copies, memsets, runtime launch
 *     calls and host step/input spans, with what every request needs
 *     computed once (per-device summary, per-name kernel statistics, busy
 *     intervals, a per-lane index that finds the spans of a time window in
 *     O(log n + spans found)); no request walks every row;
 *   - the memory data (tfb_trace_memory): allocations and frees, with the
 *     kernels, NVTX ranges and steps around them;
 *   - the host side (tfb_trace_host): CPU threads' ops and CUDA API calls,
 *     NVTX ranges and marks, for the timeline.
 * Each is immutable once loaded and reference counted: get it, read it,
 * release it. Times are ns since the Unix epoch (Kineto's µs are
 * converted exactly, digit by digit).
 *
 * Memory: 32 bytes a span (kernel launch geometry and names are stored
 * once per distinct kernel, bytes/steps of the few non-kernel spans in a
 * side table), 32 bytes a runtime call + 4 of index, 16 bytes a busy
 * interval, 40 bytes a collective (one per NCCL kernel).
 *
 * Thread-safety: all functions are thread-safe; loaded data may be read by
 * any number of threads.
 */
#ifndef TFB_SERVER_TRACE_H
#define TFB_SERVER_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

/* ---- the GPU trace --------------------------------------------------- */

typedef enum {
    TFB_TRACE_KERNEL = 0,
    TFB_TRACE_MEMCPY,
    TFB_TRACE_MEMSET,
    TFB_TRACE_HOST_STEP,  /* TFB_HOST_SPANS kind "step" */
    TFB_TRACE_HOST_INPUT, /* TFB_HOST_SPANS kind "input" */
    TFB_TRACE_KIND_COUNT
} tfb_trace_kind;

/* One stored span (32 bytes). info: kernels index t->kinfo (name and
 * launch geometry); memcpy/memset index t->values (bytes), host spans too
 * (step number); -1 when there is none. lane indexes t->lanes (device and
 * stream, or the host kind). copy_kind is CUPTI's CUpti_ActivityMemcpyKind
 * number (memcpy only). */
typedef struct tfb_trace_span {
    int64_t start, end;
    int64_t correlation; /* -1 when unknown */
    int32_t info;
    uint16_t lane;
    uint8_t kind;        /* tfb_trace_kind */
    uint8_t copy_kind;
} tfb_trace_span;

/* A distinct kernel: name (string index, -1 unknown) and launch geometry. */
typedef struct tfb_trace_kinfo {
    int32_t name;
    int32_t grid[3], block[3];
    int32_t registers;
    int32_t shared_mem; /* static + dynamic bytes */
} tfb_trace_kinfo;

/* A lane: one GPU stream (host 0) or one host span kind (host = its
 * tfb_trace_kind; device and stream -1). Its spans are
 * t->spans[off, off + n), sorted by start then end; tree holds the maximum
 * end of each 16 spans, then of each 16 of those, ... (levels of
 * tree_n[k] entries at tree + tree_off[k]). */
#define TFB_TRACE_TREE_FANOUT 16
#define TFB_TRACE_TREE_LEVELS 8
typedef struct tfb_trace_lane {
    int32_t device, stream;
    uint8_t host;
    size_t off, n;
    int64_t *tree;
    size_t tree_off[TFB_TRACE_TREE_LEVELS], tree_n[TFB_TRACE_TREE_LEVELS];
    size_t levels;
} tfb_trace_lane;

/* A runtime/driver API call (launch, copy...): when it started on the host,
 * for HTA's "host wait". */
typedef struct tfb_trace_call {
    int64_t start, end;
    int64_t correlation;
    int32_t name;
} tfb_trace_call;

/* A device; name, SM count, memory and compute capability from the
 * trace where it says them (CUPTI's device table, nsys's TARGET_INFO_GPU,
 * Kineto's top-level deviceProperties). */
typedef struct tfb_trace_device {
    int32_t id;
    int32_t name; /* string index, -1 when unknown */
    int32_t sm_count;
    int32_t cc_major, cc_minor; /* compute capability, -1 when unknown */
    int32_t reserved;           /* 0: no padding (written raw to the
                                   columnar cache, whose CRC reads every
                                   byte) */
    int64_t total_mem;          /* bytes, -1 when unknown */
} tfb_trace_device;

/* Events of one category a Kineto trace holds that the loader did not
 * understand (neither device work, nor a launch call, nor a host category
 * it knows): told on the run, never dropped silently (issue 34). At most
 * TFB_TRACE_MAX_NOTES categories per trace (a hostile file could name
 * millions); events of further categories are counted in
 * tfb_trace.notes_more_events. */
#define TFB_TRACE_MAX_NOTES 16
/* A category's name is kept to its first 128 bytes (Kineto's are short
 * words; a hostile file's could be megabytes, kept 16 times). */
#define TFB_TRACE_NOTE_CATEGORY_MAX 128
typedef struct tfb_trace_note {
    int32_t category; /* string index */
    int32_t reserved;
    int64_t events;
} tfb_trace_note;

/* A process group of Kineto's distributedInfo.pg_config. ranks: the
 * group's ranks as text ("0-127", "0,2,4"), at most
 * TFB_TRACE_PG_RANKS_TEXT bytes (then cut after a rank, with "..."); the
 * strings are string indexes, -1 when absent. At most
 * TFB_TRACE_MAX_PROCESS_GROUPS per trace (pg_count says how many there
 * were). */
#define TFB_TRACE_MAX_PROCESS_GROUPS 64
#define TFB_TRACE_PG_RANKS_TEXT 200
typedef struct tfb_trace_pg {
    int32_t name, desc, backend, ranks;
    int64_t size; /* pg_size, -1 when absent */
} tfb_trace_pg;

/* Kineto's top-level distributedInfo: rank and world_size (-1 when
 * absent), backend (string index, -1), pg_count (-1). */
typedef struct tfb_trace_dist {
    int64_t rank, world_size, pg_count;
    int32_t backend;
    int32_t present; /* the trace had a distributedInfo */
} tfb_trace_dist;

/* One NCCL collective as a Kineto trace gives it (trace_load_kineto.c):
 * the NCCL kernel's GPU span, joined to what PyTorch recorded of the call
 * (server/API.md "Collectives"). PyTorch 2.x puts the call's args on the
 * kernel event itself ("Collective name", "In msg nelems", "Out msg
 * nelems", "dtype", "Group size"); an older trace has them only on the
 * `record_param_comms` cpu_op, joined to the kernel by the op's
 * "External id" (which the kernel and its cudaLaunchKernel carry), else
 * by the kernel's launch call (same correlation id) inside the op.
 * bytes: max(in, out nelems) x the dtype's size, 0 when unknown (an
 * unknown dtype, negative nelems, or more than TFB_TRACE_COLL_MAX_BYTES):
 * such a row has no bandwidth. 40 bytes. */
typedef struct tfb_trace_collective {
    int64_t start, end;  /* the NCCL kernel's GPU span, ns */
    uint64_t bytes;      /* max(in, out msg nelems) x dtype size; 0 unknown */
    int32_t name;        /* string index: the collective name as the trace
                            gives it ("allreduce", "_allgather_base"...) */
    int32_t group_size;  /* 0 unknown */
    int32_t device;
    int32_t reserved;    /* 0: no padding (the columnar cache's CRC reads
                            every byte) */
} tfb_trace_collective;

/* Bounds of the collectives: at most TFB_TRACE_MAX_COLLECTIVES rows per
 * trace (one per NCCL kernel: 1 Mi rows are 40 MiB, a day of a training
 * loop's collectives at a profiler's usual few steps; more are counted in
 * tfb_trace.colls_dropped), and a message of more than
 * TFB_TRACE_COLL_MAX_BYTES (256 TiB, past any GPU's memory by 1000x: a
 * hostile or broken count) is a row of unknown size. */
#define TFB_TRACE_MAX_COLLECTIVES ((size_t)1 << 20)
#define TFB_TRACE_COLL_MAX_BYTES ((uint64_t)1 << 48)

struct tfb_trace_aggregates; /* below */

typedef struct tfb_trace {
    /* All device and host spans, sorted by lane, then start, then end. */
    tfb_trace_span *spans;
    size_t nspans;
    tfb_trace_lane *lanes; /* sorted: GPU lanes by (device, stream), then
                              the host lanes */
    size_t nlanes;
    tfb_trace_kinfo *kinfo;
    size_t nkinfo;
    int64_t *values;     /* bytes / step numbers, see tfb_trace_span.info */
    size_t nvalues;
    /* Runtime calls sorted by start; calls_by_corr: their indexes sorted by
     * correlation id (file-local ids are made unique across files: each
     * file gets its own id space). */
    tfb_trace_call *calls;
    size_t ncalls;
    uint32_t *calls_by_corr;
    /* Devices seen (sorted by id). */
    tfb_trace_device *devices;
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
    /* Categories not understood (Kineto), by first appearance, and the
     * events of categories past TFB_TRACE_MAX_NOTES. */
    tfb_trace_note *notes;
    size_t nnotes;
    int64_t notes_more_events;
    /* distributedInfo of the (first) file that had one, its process
     * groups. */
    tfb_trace_dist dist;
    tfb_trace_pg *pgs;
    size_t npgs;
    /* NCCL collectives (tfb_trace_collective), sorted by start; those past
     * TFB_TRACE_MAX_COLLECTIVES, and NCCL kernels without the call's args
     * nor an op to join them to (no row: their size is unknown). */
    tfb_trace_collective *colls;
    size_t ncolls;
    size_t colls_dropped, colls_unmatched;
    /* Computed once when the trace is built (trace_aggregate.c). */
    struct tfb_trace_aggregates *agg;
    int refs; /* internal */
    /* internal: frees a trace whose arrays are not malloc'd (the mapped
     * cache file of trace_colcache.c); NULL for a built trace. */
    void (*release)(struct tfb_trace *t);
} tfb_trace;

/* t's collectives in start order (then end); valid while t is held. A
 * trace cut to a step window (tfb_trace_window_apply) has none. */
const tfb_trace_collective *tfb_trace_collectives(const tfb_trace *t,
                                                  size_t *n);

/* The string at index i, or fallback when i < 0 / out of range. */
const char *tfb_trace_str(const tfb_trace *t, int32_t i,
                          const char *fallback);
/* A span's device and stream (-1 for host spans), bytes (memcpy/memset,
 * else 0), step (host spans, else -1), kernel info (NULL unless a kernel
 * with one). */
int32_t tfb_trace_span_device(const tfb_trace *t, const tfb_trace_span *s);
int32_t tfb_trace_span_stream(const tfb_trace *t, const tfb_trace_span *s);
int64_t tfb_trace_span_bytes(const tfb_trace *t, const tfb_trace_span *s);
int64_t tfb_trace_span_step(const tfb_trace *t, const tfb_trace_span *s);
const tfb_trace_kinfo *tfb_trace_span_kinfo(const tfb_trace *t,
                                            const tfb_trace_span *s);
/* The runtime call with that correlation id, or NULL. */
const tfb_trace_call *tfb_trace_call_of(const tfb_trace *t, int64_t corr);
/* Index of the first runtime call that starts at or after x (t->ncalls
 * when none): calls are sorted by start. */
size_t tfb_trace_calls_from(const tfb_trace *t, int64_t x);
/* Label of a CUPTI memcpy kind: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP",
 * "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "Unknown". */
const char *tfb_trace_copy_kind_label(int copy_kind);

/* ---- queries: the aggregates (trace_aggregate.c) ---------------------
 * Behind the GPU, Ranks, Pipeline and Compare dashboards and `tfboard
 * report`; they return structs, the dashboards write or render them.
 *
 * Definitions (times in ns), one for every route and the report (issue
 * 34):
 *  - device events: kernels, memcpy and memset (as HTA, which counts every
 *    GPU event on a stream); busy_ns: length of the union of the device's
 *    event intervals on all its streams; span_ns: last event end - first
 *    event start; idle_ns = span_ns - busy_ns; busy_fraction = busy_ns /
 *    span_ns (0 when span_ns is 0). kernels/kernel_ns count kernels only.
 *  - idle breakdown, HTA's (hta/analyzers/breakdown_analysis.py,
 *    _analyze_idle_time_for_stream), per stream: the stream's events in
 *    start order; the gap before an event is its start minus the
 *    previous event's end; a gap g > 0 is "host_wait" when the event's
 *    launch call (runtime record with the same correlation id) started
 *    after that end (the GPU waited on the CPU), else "kernel_wait" when
 *    g < TFB_TRACE_KERNEL_WAIT_NS, else "other". HTA's docstring says
 *    the threshold is 30 ns, but its code compares µs values: 30 µs is
 *    what it applies, and what we apply. Per device: the sum over its
 *    streams (as HTA's per-stream rows add up), which exceeds idle_ns
 *    when streams overlap; on a one-stream device it equals idle_ns.
 *  - kernel stats group by name: count, total/mean/min/max, population
 *    std, share = total / Σ total over all kernels; grid/block/registers/
 *    shared_mem from the name's first launch.
 * The summary, kernel statistics and busy intervals are computed once,
 * when the trace is built (one merged pass over the spans in start
 * order, and one pass per stream); the functions below copy or scan
 * those. */

#define TFB_TRACE_KERNEL_WAIT_NS 30000

/* HTA's idle breakdown of one stream (definitions above). */
typedef struct tfb_trace_stream_idle {
    int32_t device, stream;
    int64_t events;  /* kernels, memcpy and memset on the stream */
    int64_t host_wait_ns, kernel_wait_ns, other_ns;
} tfb_trace_stream_idle;

/* Bytes, count and time of one kind of copy (or of memsets). */
typedef struct tfb_trace_copy_stat {
    int64_t count, bytes, ns;
} tfb_trace_copy_stat;

/* One device's figures over the whole trace (definitions above). name is
 * the trace's string (NULL when unknown): valid while the trace is held. */
typedef struct tfb_trace_device_summary {
    int32_t id;
    const char *name;
    int32_t sm_count;          /* <= 0 when unknown */
    int32_t cc_major, cc_minor; /* compute capability, -1 when unknown */
    int64_t total_mem;          /* bytes, -1 when unknown */
    int64_t kernels, kernel_ns, busy_ns, span_ns, idle_ns;
    int has_events;            /* start_ns/end_ns are set */
    int64_t start_ns, end_ns;
    double busy_fraction;
    tfb_trace_copy_stat memcpy[256]; /* by CUPTI copy kind */
    tfb_trace_copy_stat memset;
    /* HTA's breakdown summed over the device's streams */
    int64_t idle_host_wait_ns, idle_kernel_wait_ns, idle_other_ns;
    /* The device's streams, in the aggregates (valid while the trace is
     * held). */
    const tfb_trace_stream_idle *streams;
    size_t nstreams;
} tfb_trace_device_summary;

typedef struct tfb_trace_summary {
    tfb_trace_device_summary *devices; /* by device id */
    size_t n_devices;
    size_t files;                      /* trace files read */
} tfb_trace_summary;

int tfb_trace_summarize(const tfb_trace *t, tfb_trace_summary *out);
void tfb_trace_summary_free(tfb_trace_summary *s);

/* Statistics of one kernel name; launch geometry from its first launch.
 * name is the trace's string (valid while the trace is held). */
typedef struct tfb_trace_kernel_stat {
    const char *name;
    int64_t count, total_ns, min_ns, max_ns;
    double mean_ns, std_ns, share;
    int32_t grid[3], block[3];
    int32_t registers, shared_mem;
} tfb_trace_kernel_stat;

/* What a trace carries, computed once (t->agg). */
typedef struct tfb_trace_aggregates {
    tfb_trace_device_summary *dev; /* aligned with t->devices */
    size_t ndev;
    int64_t **busy;  /* per device: merged event intervals, (start, end) */
    size_t *nbusy;   /* pairs per device */
    tfb_trace_kernel_stat *kstats; /* every name, by total desc then name */
    size_t nkstats;
    int64_t ktotal;  /* Σ kernel time */
    /* Every GPU lane's idle breakdown, in lane order (by device, then
     * stream): each device's streams are consecutive. */
    tfb_trace_stream_idle *streams;
    size_t nstreams;
} tfb_trace_aggregates;

typedef struct tfb_trace_kernels {
    tfb_trace_kernel_stat *v; /* by total_ns descending, then name */
    size_t n;                 /* shown: at most the limit */
    size_t distinct;          /* kernel names in the trace */
    int64_t total_ns;         /* Σ total over all names */
} tfb_trace_kernels;

/* At most limit names (0 = all). */
int tfb_trace_kernel_stats(const tfb_trace *t, size_t limit,
                           tfb_trace_kernels *out);
void tfb_trace_kernels_free(tfb_trace_kernels *k);

/* Busy share per bucket over the device's busy span cut into n equal
 * buckets (the last may reach past the span end; it is measured over its
 * full width). TFB_ENOENT when the device has no event. (Not
 * tfb_gpu_util: that is the collector's utilization sampler, and one
 * program links both.) */
typedef struct tfb_trace_utilization_buckets {
    int32_t device;
    int64_t start_ns, bucket_ns;
    double *busy;
    size_t n;
} tfb_trace_utilization_buckets;

int tfb_trace_utilization(const tfb_trace *t, int32_t device,
                          size_t buckets, tfb_trace_utilization_buckets *out);
void tfb_trace_utilization_free(tfb_trace_utilization_buckets *u);

/* A half-open time interval [start, end) in ns. */
typedef struct tfb_trace_interval {
    int64_t start, end;
} tfb_trace_interval;

/* Sorts v and merges overlapping or touching intervals in place (empty
 * and reversed ones are dropped): their union, disjoint and sorted.
 * Returns the new count. v is the caller's; any thread. */
size_t tfb_trace_intervals_normalize(tfb_trace_interval *v, size_t n);

/* GPU busy intervals: the union of the device events (kernels, memcpy,
 * memset) of `device` (-1 = all devices), sorted and disjoint, as (start,
 * end) pairs in *out (malloc'd, caller frees; NULL when n is 0). */
int tfb_trace_busy_intervals(const tfb_trace *t, int32_t device,
                             int64_t **out, size_t *n);

/* Of the GPU idle time inside the window [w0, w1) (device -1 = idle when
 * no device is busy), the ns that fall inside the given intervals (pairs,
 * any order, may overlap) and the total idle ns. */
int tfb_trace_idle_within(const tfb_trace *t, int32_t device, int64_t w0,
                          int64_t w1, const int64_t *pairs, size_t npairs,
                          int64_t *idle_inside, int64_t *idle_total);

/* ---- what a trace says of itself (trace_meta_json.c) -----------------
 * The same JSON for every route that shows a run's trace. */
struct tfb_json;
/* Notes: one per category not understood, plus one for the events of
 * categories past TFB_TRACE_MAX_NOTES; the text of note i into buf
 * ("N events of category "X" not understood: not read as device work"),
 * its length as snprintf's. t may be NULL (none). */
size_t tfb_trace_note_count(const tfb_trace *t);
int tfb_trace_note_text(const tfb_trace *t, size_t i, char *buf, size_t cap);
/* [{"category" (null for the rest), "events", "text"}] */
void tfb_trace_notes_json(struct tfb_json *j, const tfb_trace *t);
/* {"rank", "world_size", "pg_count" (null when absent), "backend",
 * "process_groups": [{"name", "desc", "backend", "size", "ranks"}]}, or
 * null when the trace has no distributedInfo. */
void tfb_trace_dist_json(struct tfb_json *j, const tfb_trace *t);
/* "compute_capability": "7.0" | null, "total_mem": bytes | null, into the
 * device's object. */
void tfb_trace_device_props_json(struct tfb_json *j,
                                 const tfb_trace_device_summary *d);

/* ---- the memory data ---------------------------------------------------
 * A run's GPU memory events (allocations and frees per device, from
 * CUDA_GPU_MEMORY_USAGE_EVENTS of our trace stores and nsys exports, and
 * Kineto's `[memory]` events), with what the memory analysis
 * (plugins/gpu/gpu_memory.h) needs around them: the kernels and NVTX
 * ranges running at allocation times, and the host steps. Only the kernels
 * and NVTX ranges that hold some allocation's time are kept, with their
 * names copied, so the data holds no reference to the trace. */

typedef enum {
    TFB_TRACE_MEMORY_ALLOC = 0, /* as nsys's memoryOperationType */
    TFB_TRACE_MEMORY_FREE = 1
} tfb_trace_memory_op;

typedef struct tfb_trace_memory_event {
    int64_t t_ns;
    int32_t device;
    int32_t op;            /* tfb_trace_memory_op */
    uint64_t address;
    int64_t bytes;         /* as recorded (a free's value is not used) */
    int64_t stream;        /* -1 = unknown */
    uint64_t pool;         /* pool id/address; 0 = not pool-backed */
    int64_t pool_reserved; /* the pool's reserved bytes after the event,
                              -1 = not reported */
} tfb_trace_memory_event;

typedef struct tfb_trace_memory_interval {
    int64_t start_ns, end_ns;
    int32_t device;   /* -1 = any device (NVTX ranges) */
    int64_t stream;   /* kernels; -1 = unknown */
    const char *name; /* borrowed */
} tfb_trace_memory_interval;

typedef struct tfb_trace_memory_step {
    int64_t step, start_ns, end_ns;
} tfb_trace_memory_step;

/* A list of events, grown with base/vec.h's macros (the first three
 * fields are a TFB_VEC's); a named struct so that it can carry more than
 * the array. It owns nothing but its array. */
typedef struct tfb_trace_memory_events {
    tfb_trace_memory_event *v;
    size_t n, cap;
    /* Rows the loaders refused: a device id outside int32 (which would
     * otherwise be cut into another device's id). */
    uint64_t refused;
} tfb_trace_memory_events;

typedef struct tfb_trace_memory {
    tfb_trace_memory_events events; /* sorted by time (ties: file order) */
    tfb_trace_memory_interval *kernels; /* names owned (in names) */
    size_t n_kernels;
    tfb_trace_memory_interval *ranges;  /* NVTX ranges; names owned */
    size_t n_ranges;
    tfb_trace_memory_step *steps;
    size_t n_steps;
    char **names;
    size_t n_names;
    size_t files;             /* trace files that held memory events */
    size_t files_skipped;     /* unreadable (not SQLite, damaged JSON) */
    int64_t first_ns, last_ns; /* of the events (0, 0 when none) */
    int has_trace;            /* kernels/steps came from a trace */
    int refs;                 /* internal */
} tfb_trace_memory;

/* ---- the host side -----------------------------------------------------
 * For the timeline's CPU and NVTX lanes: per CPU thread its ops and CUDA
 * runtime/driver calls, and its NVTX ranges and marks, nested into rows,
 * with self times and the top ops; read from every trace file of the run
 * alike:
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
 * Times are integer ns on the GPU trace's clock, so host lanes line up
 * with the GPU streams. Launch -> kernel flows: each runtime call keeps
 * the correlation id of its file; tfb_trace_host_link maps it into the GPU
 * trace's id space (where a kernel's correlation and its call's are the
 * same number), so a call and its kernels pair by correlation.
 *
 * The host side is read from the sources on first use (the timeline and
 * CPU-only traces ask for it; most requests never do), not kept in the
 * columnar cache: it answers the same whether the GPU trace was built or
 * mapped from the cache. */

typedef enum tfb_trace_host_kind {
    TFB_TRACE_HOST_OP = 0,      /* Kineto cpu_op, python_function */
    TFB_TRACE_HOST_RUNTIME = 1, /* CUDA runtime/driver call */
    TFB_TRACE_HOST_RANGE = 2,   /* NVTX range (Kineto user_annotation) */
    TFB_TRACE_HOST_MARK = 3,    /* NVTX mark: an instant (end == start) */
} tfb_trace_host_kind;

/* One host span (48 bytes; not tfb_trace_host_span: that is the
 * collector's writer of host spans). correlation: runtime calls, the id
 * in its file (-1 none); file: which of the run's files it came from. */
typedef struct tfb_trace_host_event {
    int64_t start, end;
    int64_t self_ns;     /* end - start less its direct children's time */
    int64_t correlation;
    uint32_t name;       /* index into the strings */
    uint16_t lane;
    uint16_t file;
    uint8_t kind;        /* tfb_trace_host_kind */
    uint8_t depth;       /* nesting level within its lane (capped at 255) */
} tfb_trace_host_event;

typedef struct tfb_trace_host_lane {
    char label[96];   /* "CPU <thread>" or "NVTX <thread>" */
    int is_range;     /* the NVTX lane of a thread */
    int depth;        /* rows: deepest nesting + 1 */
} tfb_trace_host_lane;

/* An op name's totals over the whole trace. */
typedef struct tfb_trace_host_op_stat {
    uint32_t name;
    size_t count;
    int64_t total_ns, self_ns;
} tfb_trace_host_op_stat;

/* A runtime call of one file kept to find the file's correlation offset
 * in the GPU trace (tfb_trace_host_link). */
typedef struct tfb_trace_host_probe {
    int64_t start, end, correlation;
} tfb_trace_host_probe;

#define TFB_TRACE_HOST_PROBES 32
typedef struct tfb_trace_host_probes {
    tfb_trace_host_probe v[TFB_TRACE_HOST_PROBES];
    size_t n;
} tfb_trace_host_probes;

typedef struct tfb_trace_host {
    tfb_trace_host_event *spans; /* sorted by lane, start, then longest
                                    first */
    size_t n;
    tfb_trace_host_lane *lanes; /* each thread's NVTX lane before its CPU
                                   lane */
    size_t nlanes;
    char **strings;
    size_t nstrings;
    /* ops and runtime calls by self time, most first (ranges and marks are
     * not ops) */
    tfb_trace_host_op_stat *ops;
    size_t nops;
    int64_t busy_ns;      /* time under top-level ops and calls, summed */
    int64_t start_ns, end_ns;
    /* per file of the load: up to TFB_TRACE_HOST_PROBES of its runtime
     * calls */
    tfb_trace_host_probes *probes;
    size_t nfiles;
    int refs; /* internal */
} tfb_trace_host;

/* The correlation of each file's runtime calls in the GPU trace t built
 * from the same files: bases[f] (h->nfiles entries) is added to file f's
 * ids, or -1 when the file's calls are not in t (no GPU trace, a file
 * without kernels). Found by matching the file's probe calls with t's
 * calls (same start and end): the offset most of them agree on. t may be
 * NULL (all -1). */
void tfb_trace_host_link(const tfb_trace_host *h, const tfb_trace *t,
                         int64_t *bases);
/* An event's correlation in t's id space (after tfb_trace_host_link), -1
 * when none. */
int64_t tfb_trace_host_correlation(const tfb_trace_host_event *s,
                                   const int64_t *bases);

/* ---- the step window (trace_window.c) ---------------------------------
 * HTA analyses the work inside the trace's ProfilerStep#N annotations
 * without the last step (often cut short by the profiler's stop). Modes:
 * "all" (the whole trace, the default), "steps" (from the first step's
 * start to the last step's end), "steps_but_last" (from the first step's
 * start to the last step's start). Steps are the host side's
 * user_annotation / cpu_op spans named "ProfilerStep#..." (every thread
 * and file of the run). A device event (kernel, memcpy, memset) is in the
 * window when the runtime call that launched it (same correlation id)
 * starts in [start_ns, end_ns), so work launched in a step and run after
 * it belongs to it (HTA's rule: GPU events follow their launching CPU
 * op); an event without its call, a host step/input span and a runtime
 * call are in it when they start in it. HTA has no lower bound (it keeps
 * what was launched before the first step too); we start at the first
 * step, as the mode names say. */
typedef enum {
    TFB_TRACE_WINDOW_ALL = 0,
    TFB_TRACE_WINDOW_STEPS,
    TFB_TRACE_WINDOW_STEPS_BUT_LAST
} tfb_trace_window_mode;

/* A window in use. mode/requested/note are static strings. A trace
 * without ProfilerStep annotations answers mode "all" (the whole trace)
 * with a note; applies is 0 then (nothing is cut). steps: the steps
 * inside (-1 for "all": not looked up). */
typedef struct tfb_trace_window {
    const char *mode, *requested;
    int64_t start_ns, end_ns;
    int64_t duration_ns; /* end - start (ns since the epoch do not fit a
                            JavaScript number: the page reads this) */
    int64_t steps;
    const char *note; /* NULL when none */
    int applies;
} tfb_trace_window;

/* "all" | "steps" | "steps_but_last" -> *out: 0, else TFB_EINVAL. */
int tfb_trace_window_parse(const char *s, tfb_trace_window_mode *out);
const char *tfb_trace_window_name(tfb_trace_window_mode m);
/* {"mode", "requested", "start_ns", "end_ns", "duration_ns", "steps",
 * "note"}: the window as every route that takes `window=` answers it (the
 * gpu and ranks plugins; trace_meta_json.c). */
void tfb_trace_window_json(struct tfb_json *j, const tfb_trace_window *w);
/* The window of mode over the run's host side h (may be NULL: no steps)
 * and GPU trace t (may be NULL; its extent is the "all" window). */
void tfb_trace_window_find(const tfb_trace_host *h, const tfb_trace *t,
                           tfb_trace_window_mode mode, tfb_trace_window *w);
/* 1 when span s of t is in the window (rules above). */
int tfb_trace_window_keeps(const tfb_trace *t, const tfb_trace_window *w,
                           const tfb_trace_span *s);
/* A new trace (one reference: tfb_trace_release) holding t's devices and
 * what of t is in the window, with its aggregates: every query above
 * answers for the window. Built per call (O(n log n) of t's spans), never
 * cached, so t and the columnar cache stay whole. 0 or TFB_ENOMEM. */
int tfb_trace_window_apply(const tfb_trace *t, const tfb_trace_window *w,
                           tfb_trace **out);

/* ---- a run's data: the per-run cache (trace_cache.c) ----------------- */

typedef enum {
    TFB_TRACE_NONE = 0, /* the run holds no usable trace file */
    TFB_TRACE_LOADING,  /* being read in the background */
    TFB_TRACE_READY,    /* *out is the data */
    TFB_TRACE_FAILED    /* the load failed: see error */
} tfb_trace_state;

typedef struct tfb_trace_status {
    tfb_trace_state state;
    double progress;  /* 0..1 while loading */
    char error[512];  /* TFB_TRACE_FAILED: what went wrong, naming the file */
} tfb_trace_status;

/* The GPU trace of run r (the trace part of the run's entry in the one
 * per-run cache), without blocking on a load: starts the run's load in the
 * background when needed (first request, or a trace file changed size or
 * mtime), waits at most wait_ms for it (0: not at all; < 0: until the load
 * of the current files ended), and answers:
 * READY with *out set (one reference: release it) - while a changed file
 * is reloaded, the previous trace is answered -, LOADING with progress,
 * FAILED with the message, or NONE. No lock is held while a file is read.
 * A load ends within its budgets (100 M rows, 300 s). Returns 0, or
 * TFB_ENOMEM / TFB_EINVAL. */
int tfb_trace_get(tfb_store *store, tfb_run *r, int wait_ms, tfb_trace **out,
                  tfb_trace_status *st);

/* As tfb_trace_get, waiting for the load to end (bounded by the load
 * budgets). *out is NULL when the run has no usable trace (return 0) or
 * when the load failed (return TFB_ECORRUPT; err, when not NULL, gets the
 * message). Release with tfb_trace_release. */
int tfb_trace_of_run_err(tfb_store *store, tfb_run *r, tfb_trace **out,
                         char *err, size_t errcap);
void tfb_trace_release(tfb_trace *t);

/* The run's memory data (the memory part of its entry), without blocking
 * on a load: as tfb_trace_get (READY with *out, one reference: release
 * it; while changed files are read again, the data read before; LOADING
 * with progress; FAILED with the message; NONE: no trace file).
 *
 * *trace is the run's GPU trace as the caller got it from tfb_trace_get
 * (READY) or NULL (the run has none): its kernels and steps go into a load
 * that this call starts. The call takes the caller's reference either way
 * (*trace is set to NULL). Call it only once the trace is READY or known
 * to be absent, so the context is complete.
 * Returns 0, TFB_EINVAL or TFB_ENOMEM. */
int tfb_trace_memory_get(tfb_store *store, tfb_run *r, tfb_trace **trace,
                         int wait_ms, tfb_trace_memory **out,
                         tfb_trace_status *st);
void tfb_trace_memory_release(tfb_trace_memory *m);

/* The run's host side (the host part of its entry: read on first use,
 * then kept until a file changes), waiting for its load; requests for the
 * same files meanwhile wait for the same load. *out holds one reference:
 * release it; it stays valid after the files change or the cache drops
 * it. *out is NULL (and 0 returned) when the run has no host events. A
 * load that failed (a file past the load budgets or the size caps, a view
 * or virtual table where a host table should be) answers TFB_ECORRUPT,
 * and err (when not NULL) says which file and why, until a file changes;
 * TFB_ENOMEM, TFB_EINVAL. */
int tfb_trace_host_get(tfb_store *store, tfb_run *r, tfb_trace_host **out,
                       char *err, size_t errcap);
void tfb_trace_host_release(tfb_trace_host *h);

/* At the server's stop, once no request runs: every load in flight gives
 * up at its next check (within 65,536 rows), none starts after (the gets
 * answer TFB_ESTATE), no built trace is written to the cache, and the
 * call waits at most wait_ms for the load threads to end. Returns how
 * many still run. Why wait: a thread still working while exit() runs the
 * libraries' exit handlers (OpenSSL frees its per-thread state, that the
 * bucket cache's request signing made) races with them. */
int tfb_trace_loads_stop(int wait_ms);

/* ---- configuration ----------------------------------------------------- */

/* The directory of the columnar trace cache (docs/trace-cache.md): built
 * traces are written there once and mapped back by later loads of the
 * same sources. dir NULL: the default ($XDG_CACHE_HOME/tfboard or
 * $HOME/.cache/tfboard); dir "": no cache. The directory is made (0700)
 * when missing. A directory inside logdir (logdir may be NULL) is refused:
 * explicit, TFB_EINVAL with a message on err; the default, caching off
 * with a message. A directory that cannot be made: caching off, message,
 * 0 (the server serves from the sources). err (may be NULL) is also where
 * the cache says later what it would not do (a WAL copy past its budget).
 * Call before loads start. */
int tfb_trace_colcache_configure(const char *dir, const char *logdir,
                                 FILE *err);

#endif
