/*
 * trace_internal.h - the trace layer's insides, shared by its files and
 * its tests, never by its clients (they include trace/trace.h): the load
 * budgets and one load's control, loading explicit files, the builders
 * the loaders fill (GPU trace, host side) and the loaders themselves, the
 * memory events' loaders, and computing the aggregates.
 *
 * Calls inside the layer go one way: cache -> load -> loaders -> build ->
 * aggregate -> trace.c (and cache -> memory -> load_memory; cache -> host
 * -> host loaders -> host_build; cache, load and the SQLite loader ->
 * cachedir/walcopy -> colcache -> filecopy (walcopy -> filecopy too: the
 * bounded copies); both Kineto loaders and load_memory ->
 * kineto_scan; host_build, kineto_scan and memory -> build, for the
 * interned strings and a load's message).
 * The other internal headers of the folder: trace_file.h (whole files,
 * signatures), trace_sqlite_open.h, trace_kineto_scan.h, and the columnar
 * cache's trace_colcache.h, trace_cachedir.h, trace_walcopy.h,
 * trace_filecopy.h.
 *
 * Thread-safety: as trace.h; a builder is used by one thread.
 */
#ifndef TFB_SERVER_TRACE_INTERNAL_H
#define TFB_SERVER_TRACE_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strtab.h"
#include "trace/trace.h"

/* ---- budgets and loading files (trace_load.c) ------------------------ */

/* Budgets of one load (a trace file cannot make the server read forever):
 * max_rows rows read from all files of a run (spans, calls, strings,
 * devices), max_seconds of wall time. Defaults: 100 M rows, 300 s. */
typedef struct tfb_trace_load_limits {
    uint64_t max_rows;
    double max_seconds;
} tfb_trace_load_limits;

/* Sets the budgets of the loads that start after the call (tests, tools);
 * zero fields keep the default; NULL: the defaults. */
void tfb_trace_set_load_limits(const tfb_trace_load_limits *l);
/* ... and their disk budget (nor fill the server's disk): the bytes of
 * data copied for one trace store with data in its WAL (trace_walcopy.h);
 * 0: the default, TFB_TRACE_WAL_COPY_MAX_BYTES. */
void tfb_trace_set_copy_budget(uint64_t max_copy_bytes);

/* A load's timeline, phase by phase (where a first load's time goes,
 * and what waits: tests/bench/bench_gpu_trace.py prints it idle and with
 * a second CPU-bound job running): each phase's wall seconds, the
 * process's CPU seconds (all threads: a phase that overlaps a reader
 * thread counts its CPU too) and the load thread's own. A phase run on
 * another thread meanwhile (the runtime reader) is told with its own wall
 * and thread CPU and parallel set. At most TFB_TRACE_LOAD_MAX_PHASES
 * (room for every phase of a load of one file and a few more files'
 * rows; later phases of a longer load are summed into the last). */
#define TFB_TRACE_LOAD_MAX_PHASES 16
typedef struct tfb_trace_load_phase {
    const char *name; /* a string literal */
    double wall_s, cpu_s, thread_cpu_s;
    int parallel;
} tfb_trace_load_phase;

/* How a load reads: 0 (the default) with its reader threads (a store's
 * runtime calls on a second thread and connection while the kernels are
 * read), 1 all on the load's thread, one table after the other (the
 * serial path: tests compare the two, tools may want one thread). For
 * the loads that start after the call. */
void tfb_trace_set_load_serial(int serial);

/* One load's budgets, progress and error message. Filled by
 * tfb_trace_load_ctl_init from the current limits; the loader thread
 * writes progress (atomic: requests read it) and error. */
typedef struct tfb_trace_load_ctl {
    uint64_t max_rows, rows;
    uint64_t max_copy_bytes;  /* a WAL copy's budget (trace_walcopy.h) */
    /* A store's WAL data was left out (its copy was refused or failed):
     * the trace built is not written to the columnar cache. */
    int wal_unread;
    int serial;               /* tfb_trace_set_load_serial */
    double deadline;          /* CLOCK_MONOTONIC seconds */
    size_t nfiles, file;      /* files of the load, the one being read */
    _Atomic uint32_t progress_ppm;
    char error[512];
    /* the timeline (the load thread's only): phases so far, and the
     * clocks when the current one began */
    tfb_trace_load_phase phases[TFB_TRACE_LOAD_MAX_PHASES];
    size_t nphases;
    double phase_wall0, phase_cpu0, phase_thread0;
} tfb_trace_load_ctl;

void tfb_trace_load_ctl_init(tfb_trace_load_ctl *c, size_t nfiles);
/* 1 when the load's time is up (the loaders poll it, the runtime reader
 * from its own thread: the deadline is never written after init); c may
 * be NULL. This and the next are trace_build.c's. */
int tfb_trace_load_ctl_late(const tfb_trace_load_ctl *c);
/* From now on every load is late (tfb_trace_loads_stop: the server
 * stops), and the next says so. */
void tfb_trace_load_stop_all(void);
int tfb_trace_load_stopping(void);
/* Fails the load: sets c's message (printf-style) unless one is set
 * already, so the first cause is the one told; returns code. c may be
 * NULL (no message). The load's thread only (the message is its). */
int tfb_trace_load_ctl_fail(tfb_trace_load_ctl *c, int code, const char *fmt,
                            ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Ends the current phase of c's timeline as `name` (a string literal)
 * and begins the next; c may be NULL. The load thread's only. This and
 * the next are trace_build.c's too. */
void tfb_trace_load_ctl_phase(tfb_trace_load_ctl *c, const char *name);
/* Adds a phase that ran on another thread meanwhile (its wall and that
 * thread's CPU seconds); c may be NULL. */
void tfb_trace_load_ctl_phase_add(tfb_trace_load_ctl *c, const char *name,
                                  double wall_s, double thread_cpu_s);
/* The CLOCK_MONOTONIC, process CPU and calling thread CPU clocks in
 * seconds (the timeline's, and a reader thread's own). */
double tfb_trace_clock_wall(void);
double tfb_trace_clock_cpu(void);
double tfb_trace_clock_thread(void);

/* Appends a printf-style line to the loads' timeline file (the
 * environment's TFB_TRACE_LOAD_TIMELINE; nothing when unset): trace_load.c
 * writes each load's phases there, the per-run cache its cache file's
 * write. Any thread. */
void tfb_trace_load_report_line(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Builds a trace from explicit files (tests, tools), on the calling
 * thread, with the current budgets. Files that are not traces are counted
 * in files_skipped. *out is never NULL on success. A file that cannot be
 * read within the budgets, or whose tables are views (they could compute
 * rows without end), fails the load: TFB_ECORRUPT or TFB_ETOOBIG, and
 * ctl->error says why (ctl may be NULL). */
int tfb_trace_load_files(char *const *paths, size_t n, tfb_trace **out);
int tfb_trace_load_files_ctl(char *const *paths, size_t n,
                             tfb_trace_load_ctl *ctl, tfb_trace **out);
/* As tfb_trace_load_files_ctl, for the per-run cache, which answers a
 * built trace before it writes its cache file: a trace mapped from the
 * columnar cache (trace_cachedir.h) comes back with *ck NULL, a trace
 * built from the sources with *ck (NULL when there is no cache) for the
 * caller to tfb_trace_colcache_save and tfb_trace_colcache_key_free; on an
 * error *ck is to be freed too. */
struct tfb_trace_colcache_key;
int tfb_trace_load_files_keyed(char *const *paths, size_t n,
                               tfb_trace_load_ctl *ctl, tfb_trace **out,
                               struct tfb_trace_colcache_key **ck);

/* Frees a trace nobody references (trace_build.c; the cache and builder
 * use it). */
void tfb_trace_free(tfb_trace *t);

/* ---- pages faulted in ahead (trace_prefault.c) ------------------------ */

/* A load's big arrays (spans, calls, busy intervals: 10 M kernels make
 * about 1.2 GB) have their pages faulted in TFB_TRACE_PREFAULT_CHUNK bytes
 * a system call ahead of the writes (8 MiB: 2,048 pages a call, few calls
 * for 1 GB, and at most that much touched past what a trimmed array
 * keeps); arrays under TFB_TRACE_PREFAULT_MIN (1 MiB, the size below
 * which malloc serves from its heap, whose pages are mostly there
 * already) are left alone. Why: trace_prefault.c. */
#define TFB_TRACE_PREFAULT_CHUNK ((size_t)8 << 20)
#define TFB_TRACE_PREFAULT_MIN ((size_t)1 << 20)

/* For an array that grows (base: its memory, cap bytes of it allocated,
 * used bytes written): when fewer than half a chunk of prefaulted bytes
 * are left ahead of used, faults in the next chunk. *done (0 at first;
 * kept by the caller with the array, valid across a realloc, which moves
 * the pages) holds how far it went. Callers that add a row at a time
 * call it only when used + TFB_TRACE_PREFAULT_CHUNK / 2 passes *done. */
void tfb_trace_prefault_ahead(void *base, size_t used, size_t cap,
                              size_t *done);
/* Faults in all pages of a new array of `bytes` about to be written. */
void tfb_trace_prefault_all(void *base, size_t bytes);

/* ---- building (trace_build.c; the loaders below fill a builder) ------- */

/* Interned strings, both builders' (GPU trace and host side): each
 * distinct string copied once and named by its index. v, n and cap are a
 * TFB_VEC's (the copies, owned here until they move into what is built);
 * the table maps a copy's bytes to its index + 1. Zero-initialise for
 * none. Used by its builder's thread only. */
typedef struct tfb_trace_strings {
    char **v;
    size_t n, cap;
    tfb_strtab tab;
} tfb_trace_strings;

/* Interns s (len bytes): its index, or -1 on ENOMEM (or s NULL). */
int32_t tfb_trace_strings_put(tfb_trace_strings *st, const char *s,
                              size_t len);
/* Frees the copies still held and the table; st is empty after. */
void tfb_trace_strings_free(tfb_trace_strings *st);

/* What a loader hands the builder for one interval on the device
 * (kernels, memcpy, memset) or the host (step, input). name indexes the
 * trace's strings (kernels; -1 for others); copy_kind is CUPTI's
 * CUpti_ActivityMemcpyKind number (memcpy only). */
typedef struct tfb_trace_span_in {
    int64_t start, end;
    int64_t correlation; /* -1 when unknown */
    int64_t bytes;       /* memcpy / memset */
    int64_t step;        /* host spans */
    int32_t device;      /* -1 for host spans */
    int32_t stream;
    int32_t name;
    uint8_t kind;        /* tfb_trace_kind */
    uint8_t copy_kind;
    /* kernels */
    int32_t grid[3], block[3];
    int32_t registers;
    int32_t shared_mem; /* static + dynamic bytes */
} tfb_trace_span_in;

typedef struct tfb_trace_builder tfb_trace_builder;

/* ctl may be NULL (no budgets). */
int tfb_trace_builder_new(tfb_trace_builder **out, tfb_trace_load_ctl *ctl);
tfb_trace_load_ctl *tfb_trace_builder_ctl(tfb_trace_builder *b);
/* Counts rows read outside spans and calls (strings, devices) against
 * the budget; TFB_ETOOBIG (message set) past it or past the time. */
int tfb_trace_builder_rows(tfb_trace_builder *b, uint64_t n);
/* The current file is `frac` (0..1) read. */
void tfb_trace_builder_progress(tfb_trace_builder *b, double frac);
/* Around each file: ids of a file live in their own correlation space;
 * read says whether the file was a trace (counted in files_read) or not
 * (files_skipped). */
void tfb_trace_builder_begin_file(tfb_trace_builder *b);
void tfb_trace_builder_end_file(tfb_trace_builder *b, int read);
/* Sorts, indexes and aggregates the trace and returns it in *out (one
 * reference); frees the builder in all cases. TFB_ENOMEM. */
int tfb_trace_builder_finish(tfb_trace_builder *b, tfb_trace **out);
/* Frees the builder and what it built. NULL-safe. */
void tfb_trace_builder_free(tfb_trace_builder *b);

/* Interns s (len bytes) and returns its index, or -1 on ENOMEM. */
int32_t tfb_trace_builder_str(tfb_trace_builder *b, const char *s,
                              size_t len);
/* Adds a span / call: 0, TFB_ENOMEM, or TFB_ETOOBIG past the budgets. */
int tfb_trace_builder_span(tfb_trace_builder *b, const tfb_trace_span_in *s);
int tfb_trace_builder_call(tfb_trace_builder *b, const tfb_trace_call *c);
/* Adds n calls read elsewhere (a reader thread), kept as
 * tfb_trace_builder_call keeps them: rows with no correlation id or
 * nonsense times left out, the current file's correlation base
 * (tfb_trace_builder_corr_base) added to the ids; rows: the rows read
 * (counted against the row budget), corr_max the largest raw id among
 * them (-1: none). Names are the reader's own indexes, map (malloc'd,
 * nmap entries, taken; NULL when the names are this builder's already)
 * says which string of this builder each is: the renaming is done in the
 * finish's pass over the calls, not a pass of its own (a name past the
 * map: -1). Takes the malloc'd array v of capacity cap (adopted when the
 * builder has no call yet, else copied and freed). 0, TFB_ENOMEM or
 * TFB_ETOOBIG; v and map are consumed in all cases. */
int tfb_trace_builder_calls_take(tfb_trace_builder *b, tfb_trace_call *v,
                                 size_t n, size_t cap, uint64_t rows,
                                 int64_t corr_max, int32_t *map, size_t nmap);
/* What the current file's correlation ids are offset by (ids of a file
 * live in their own space: begin_file). */
int64_t tfb_trace_builder_corr_base(const tfb_trace_builder *b);
/* Adds or updates a device (name/sm_count < 0 keep the old values). */
int tfb_trace_builder_device(tfb_trace_builder *b, int32_t id, int32_t name,
                             int32_t sm_count);

/* Sets the properties of device p->id (name, SM count, compute
 * capability, memory; negative fields keep the old values) when the
 * trace has that device: 1, else 0 (a device the trace lists but never
 * used is not one of its devices). */
int tfb_trace_builder_device_props(tfb_trace_builder *b,
                                   const tfb_trace_device *p);
/* Counts one event of a category the loader did not understand (cat:
 * len bytes): TFB_TRACE_MAX_NOTES categories, then
 * t->notes_more_events. 0 or TFB_ENOMEM. */
int tfb_trace_builder_note(tfb_trace_builder *b, const char *cat,
                           size_t len);
/* The trace's distributedInfo and its first TFB_TRACE_MAX_PROCESS_GROUPS
 * process groups (strings interned in this builder); the first file's
 * wins. 0 or TFB_ENOMEM. */
int tfb_trace_builder_dist(tfb_trace_builder *b, const tfb_trace_dist *d,
                           const tfb_trace_pg *pgs, size_t n);

/* Adds a collective (strings interned in this builder): 0, TFB_ENOMEM or
 * TFB_ETOOBIG past the row budget; past TFB_TRACE_MAX_COLLECTIVES it is
 * counted in colls_dropped, not kept. unmatched: NCCL kernels the loader
 * could not join to their call's args (counted only). */
int tfb_trace_builder_collective(tfb_trace_builder *b,
                                 const tfb_trace_collective *c);
void tfb_trace_builder_colls_unmatched(tfb_trace_builder *b, size_t n);
/* The runtime calls added since the current file began (its launches,
 * for the Kineto loader's join of a collective's op to its kernel), and
 * the base added to their correlation ids (the file's own id is
 * correlation - *base). Valid until the builder's next call. */
const tfb_trace_call *tfb_trace_builder_file_calls(tfb_trace_builder *b,
                                                   size_t *n, int64_t *base);

/* Loaders (trace_load_sqlite.c, trace_load_kineto.c): return 1 when path
 * was read as a trace, 0 when it is not one
 * (e.g. a .sqlite without CUPTI_ACTIVITY_KIND_KERNEL), negative on
 * ENOMEM or a refused file (the builder's ctl says why). Malformed content
 * is skipped, never fatal. */
int tfb_trace_load_sqlite(tfb_trace_builder *b, const char *path);
int tfb_trace_load_kineto(tfb_trace_builder *b, const char *path);

/* The CUPTI memcpy kind of names such as "Memcpy HtoD (Pageable ->
 * Device)" (trace.c); 0 (unknown) when no label is found. */
int tfb_trace_copy_kind_from_text(const char *s, size_t len);

/* Where corr's call stands in t->calls_by_corr, t->ncalls when none
 * (trace.c; tfb_trace_call_of and the aggregates' hinted look-up). */
size_t tfb_trace_call_rank(const tfb_trace *t, int64_t corr);

/* Computes t->agg (trace_aggregate.c; the builder calls it when it
 * finishes a trace): 0 or TFB_ENOMEM. */
int tfb_trace_aggregate(tfb_trace *t);
/* Points each device summary at its streams in a->streams (sorted by
 * device, then stream, as the lanes): after computing the aggregates or
 * mapping them from the columnar cache. */
void tfb_trace_aggregate_link_streams(tfb_trace_aggregates *a);
void tfb_trace_aggregates_free(tfb_trace_aggregates *a);

/* ---- the host side (trace_host.c, trace_host_build.c, loaders) -------- */

/* Reads the host side of explicit files (tests, tools; the cache calls
 * it), with the current load budgets. *out (one reference) is NULL when
 * no file had host events. A file past the budgets or the size caps:
 * TFB_ETOOBIG, and err (when not NULL) says which file and why; a view or
 * virtual table where a host table should be: TFB_ECORRUPT; TFB_ENOMEM. */
int tfb_trace_host_load_files(char *const *paths, size_t n,
                              tfb_trace_host **out, char *err, size_t errcap);

typedef struct tfb_trace_host_builder tfb_trace_host_builder;

/* ctl holds the budgets (rows, deadline) and receives the error message;
 * may be NULL. */
int tfb_trace_host_builder_new(tfb_trace_host_builder **out,
                               tfb_trace_load_ctl *ctl);
tfb_trace_load_ctl *tfb_trace_host_builder_ctl(tfb_trace_host_builder *b);
void tfb_trace_host_builder_free(tfb_trace_host_builder *b);
/* Around each file (its index in the load). */
void tfb_trace_host_builder_begin_file(tfb_trace_host_builder *b,
                                       size_t file);
/* Interns s (len bytes): its index, or -1 on ENOMEM. */
int32_t tfb_trace_host_builder_str(tfb_trace_host_builder *b, const char *s,
                                   size_t len);
/* Names thread (pid, tid) of the current file (name: a string index). */
int tfb_trace_host_builder_thread_name(tfb_trace_host_builder *b,
                                       int64_t pid, int64_t tid,
                                       int32_t name);
/* Adds a span on thread (pid, tid) of the current file: 0, TFB_ENOMEM,
 * or TFB_ETOOBIG past the budgets (message set). Spans with end < start
 * are skipped. */
int tfb_trace_host_builder_span(tfb_trace_host_builder *b, int64_t pid,
                                int64_t tid, int kind, int32_t name,
                                int64_t start, int64_t end,
                                int64_t correlation);
/* Nests, orders and totals what was added: *out NULL when nothing was.
 * Frees the builder in all cases. */
int tfb_trace_host_builder_finish(tfb_trace_host_builder *b,
                                  tfb_trace_host **out);

/* Frees a host side nobody references (the cache uses it). */
void tfb_trace_host_free(tfb_trace_host *h);

/* Loaders: 1 when path was read (even without host events), 0 when it is
 * not a trace of theirs, negative on ENOMEM or a refused file (the
 * builder's ctl says why). */
int tfb_trace_host_load_sqlite(tfb_trace_host_builder *b, const char *path);
int tfb_trace_host_load_kineto(tfb_trace_host_builder *b, const char *path);

/* ---- the memory data (trace_memory.c, trace_load_memory.c) ------------ */

/* Builds the data from explicit files and a trace (may be NULL) on the
 * calling thread (tests, tools; the background load calls it). ctl may be
 * NULL; its budgets bound the rows read (a file whose memory table is
 * larger than what is left of max_rows is refused before it is read) and
 * the NVTX reading time. Files that cannot be read (not SQLite, damaged
 * JSON) are skipped and counted. *out is never NULL on success (files ==
 * 0 when none held memory events). TFB_ETOOBIG (ctl's error names the
 * file), TFB_ENOMEM. */
int tfb_trace_memory_load_files(char *const *paths, size_t n,
                                const tfb_trace *trace,
                                tfb_trace_load_ctl *ctl,
                                tfb_trace_memory **out);
/* Frees data nobody references. NULL-safe. */
void tfb_trace_memory_free(tfb_trace_memory *m);

void tfb_trace_memory_events_free(tfb_trace_memory_events *e);

/* The events of one file, appended to a list (trace_load_memory.c).
 *
 * CUDA_GPU_MEMORY_USAGE_EVENTS of an nsys-schema SQLite file (ours or an
 * nsys export; opened read-only, immutable). Rows with memoryOperationType
 * other than 0/1 are skipped; the pool is localMemoryPoolAddress (else
 * importedMemoryPoolAddress), its reserved size localMemoryPoolSize.
 * Returns the number of events appended (sorted by time, ties by rowid),
 * TFB_ENOENT when the file has no such table, TFB_ECORRUPT when it is not
 * a readable SQLite file, TFB_ENOMEM. */
int64_t tfb_trace_memory_load_sqlite(tfb_trace_memory_events *out,
                                     const char *path);

/* Kineto `[memory]` instant events (ph "i", args Addr, Bytes, Total
 * Allocated, Total Reserved, Device Id, Device Type) of a Chrome trace
 * JSON file (.json or .json.gz). Only CUDA events (Device Type 1) are
 * kept. Bytes > 0 is an allocation, < 0 a free; every block belongs to
 * the caching allocator, one pool per device (pool id 1) whose reserved
 * size is Total Reserved. ts is in µs (fractional): t_ns = round(ts *
 * 1000) + the trace's baseTimeNanoseconds when present. Returns the
 * number of events appended (sorted by time), TFB_ECORRUPT for JSON it
 * cannot parse, TFB_ENOENT / TFB_EIO, TFB_ENOMEM. */
int64_t tfb_trace_memory_load_kineto(tfb_trace_memory_events *out,
                                     const char *path);

#endif
