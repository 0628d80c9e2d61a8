/*
 * store.h - the in-memory store of everything read from a logdir.
 *
 * The loader (loader.c) is the only
 * writer; HTTP handlers and the analyses (gpu, health, gradients,
 * pipeline, report) use the read side below.
 *
 * Lifetime: runs and series are created as they are found and are never
 * freed before tfb_store_destroy(), so tfb_run / tfb_series pointers stay
 * valid for the life of the store. A run whose event file was replaced or
 * truncated is reset (its series emptied, then re-read); its pointers stay.
 * Deleted files and runs keep the data already loaded.
 *
 * Thread-safety: every function here may be called from any thread at any
 * time while loading goes on. Series data is append-only: a reader pins a
 * consistent snapshot with tfb_series_read_begin() and releases it with
 * tfb_series_read_end(); in between the loader may append (the reader does
 * not see the new points) but never moves or frees what the view points
 * to. Hold a pin briefly (for one query). Queries never wait on file I/O.
 * While pinned, any other read function may be called and other series
 * may be pinned too (and released in any order); only pinning the same
 * series twice on one thread is forbidden.
 *   Scalar series: the pin decodes the points into arrays of its own
 *   (freed by tfb_series_read_end) and holds no lock after
 *   tfb_series_read_begin returns, so the loader never waits for a scalar
 *   query; it waits only while a pin copies (a few microseconds a
 *   thousand points). Costs O(count) time and 20-28 bytes a point of
 *   transient memory per pin.
 *   Other kinds: the pin is a read lock of the series (it prefers the
 *   waiting loader, hence the rule above); the loader waits for pins only
 *   when it must grow an array.
 *
 * Lookup: runs and series of one kind are indexed by name in hash tables
 * (base/strtab.h), so tfb_run_find_series / tfb_run_get_series cost O(1)
 * expected whatever the number of tags, and loading a run with N tags is
 * O(N) (a million tags load in seconds; was quadratic).
 *
 * Memory (scalars): no bit the file had is lost, and a point costs 4-8
 * bytes. The loader's points wait raw in a tail of at most 256 points;
 * full tails (and every tail when a pass ends, tfb_series_trim) are
 * encoded into self-describing blocks of up to 256 points
 * (scalar_codec.h has the layout):
 *   - steps: first + constant stride when the block has one, else zigzag
 *     varint deltas (any int64, backwards and INT64 extremes included);
 *   - wall times: the block's first wall time and integer ticks of 2^e
 *     seconds from it (e chosen per block: a clock's walls near 1.7e9 s
 *     have e = -22, ~0.24 us, so a tick delta is a 2-4 byte varint; evenly
 *     spaced walls a stride; walls at a steady rate that is no whole
 *     number of ticks, as 0.01 s apart, the differences of the deltas,
 *     1 byte), used only when every wall decodes to the identical
 *     double, else the raw 8 bytes;
 *   - values: float32 when every value of the block is a float widened
 *     exactly (simple_value is float32 on disk), else the raw double (TF2
 *     float64 tensors keep every bit).
 * A block left short by a trim is encoded again with the next points, so
 * a live run still ends up in full blocks. The view's `value` is each
 * value rounded to float, as TensorBoard's scalar dashboard shows it
 * (and as before); `value64` has the exact doubles when any differs.
 * Every block but the last is full, and an index of their offsets (8
 * bytes a block, none for a series of one block) takes a read from point
 * i straight to block i / 256; a
 * series whose steps never went back is read by steps by bisecting the
 * blocks. A scalar series the scalar observer attached to (below; the
 * analysis layer's loss watch, about 1.7 KiB) keeps its state, fed each
 * block as it is sealed.
 * tfb_series_bytes() counts what a series holds; a sweep's series also
 * pays ~190 bytes of struct and names (kept small for 500,000 series: a
 * scalar series' lock is one of a shared set, store.c's lock_of, and a
 * run's few series of a kind are found without a hash table).
 */
#ifndef TFB_SERVER_STORE_H
#define TFB_SERVER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_store tfb_store;
typedef struct tfb_run tfb_run;
typedef struct tfb_series tfb_series;

typedef enum {
    TFB_SERIES_SCALAR = 0,  /* simple_value / rank-0 numeric tensors */
    TFB_SERIES_HISTOGRAM,   /* HistogramProto / [k,3] tensors */
    TFB_SERIES_TEXT,        /* text plugin strings */
    TFB_SERIES_NUMERICS,    /* plugin tfboard_numerics {nan,+inf,-inf} */
    TFB_SERIES_KIND_COUNT
} tfb_series_kind;

/* Non-finite statistics of a series, computed at ingestion.
 * SCALAR: points whose value is NaN / +Inf / -Inf.
 * HISTOGRAM: points whose min, max, sum or num is not finite (each point
 *   counted once: in nan if any field is NaN, else in pos_inf/neg_inf by
 *   the sign of the first infinite field).
 * NUMERICS: the sums of the recorded counts; points = records with any
 *   count > 0.
 * TEXT: always zero. */
typedef struct tfb_nonfinite_stats {
    uint64_t nan, pos_inf, neg_inf;
    uint64_t points;        /* points that held any non-finite value */
    int has_first;          /* 1 when first_step/first_wall are set */
    int64_t first_step;     /* step of the first such point (file order) */
    double first_wall;
} tfb_nonfinite_stats;

/* One histogram bucket as the store keeps it: tfboard.h's tfb_bucket
 * without its leading size (a store holds millions of them; the loader
 * converts). */
typedef struct tfb_hist_bucket {
    double left, right, count;
} tfb_hist_bucket;

/* One numerics point (NaN, +Inf, -Inf counts) as the store keeps it:
 * tfb_nonfinite_counts without its size (the loader converts). */
typedef struct tfb_numerics_point {
    uint64_t nan, pos_inf, neg_inf;
} tfb_numerics_point;

/* One histogram point; its buckets are buckets[bucket_off ..
 * bucket_off + n_buckets) of the view. */
typedef struct tfb_hist_point {
    double min, max, num, sum;
    uint64_t bucket_off;
    uint32_t n_buckets;
} tfb_hist_point;

/* A pinned snapshot of one series: count points, in file order (files of a
 * run in name order). Arrays not of the series' kind are NULL. */
typedef struct tfb_series_view {
    tfb_series_kind kind;
    size_t count;
    const int64_t *step;
    const double *wall;
    const float *value;                   /* SCALAR (rounded to float) */
    const double *value64;                /* SCALAR: the exact values,
                                           * when one is a double that is
                                           * no float; else NULL */
    const tfb_hist_point *hist;           /* HISTOGRAM */
    const tfb_hist_bucket *buckets;       /* HISTOGRAM */
    const uint64_t *text_off;             /* TEXT: text i is */
    const uint32_t *text_len;             /* text_data + text_off[i], */
    const char *text_data;                /* text_len[i] bytes, UTF-8 */
    const tfb_numerics_point *numerics;   /* NUMERICS */
    tfb_nonfinite_stats nonfinite;        /* copied at pin time */
} tfb_series_view;

/* Load progress of the whole logdir (also served at
 * /data/plugin/core/progress). */
/* Where the loader's time went (issue 28, "per-file cost"): thread time
 * (CLOCK_MONOTONIC on each worker) summed over the workers and every pass
 * since the start, so over `files` it is the time a file costs, and over
 * the wall time of a load the parallelism. Phases a file goes through:
 * stat, open, then the read loop (read: the storage's reads; index: the
 * values put into series, estimated from one value in
 * TFB_LOAD_PROFILE_SAMPLE (loader.c) so the clock costs nothing per point;
 * parse: the rest of the loop, record framing and protobuf); then per run
 * the finish (notes, file infos, trimming series). tags and series are the
 * time spent interning a run's new tags and creating series (counted
 * whole, not sampled; index leaves them out). scan is the listing of the
 * logdir with its grouping into runs, of which runs is the registering of
 * runs and their files; progress is publishing the progress. Updated at
 * the end of each pass. */
typedef struct tfb_load_profile {
    uint64_t files;  /* file reads (one per file and pass) */
    uint64_t runs;   /* run loads (one per run and pass) */
    uint64_t passes;
    uint64_t scan_ns, runs_ns;
    uint64_t stat_ns, open_ns, read_ns, parse_ns, index_ns;
    uint64_t tags_ns, series_ns;
    uint64_t finish_ns, progress_ns;
} tfb_load_profile;

typedef struct tfb_load_progress {
    uint64_t files_total, files_done;
    uint64_t bytes_total, bytes_done;
    uint64_t points;          /* points stored, all kinds */
    int done;                 /* 1 when the first full pass has finished */
    uint64_t reloads;         /* completed passes */
    tfb_load_profile profile; /* where the time went, passes finished */
} tfb_load_progress;

/* Per event file: where the reader stands and what it found. */
typedef struct tfb_file_info {
    char *path;               /* absolute or logdir-joined path */
    tfb_reader_stats stats;   /* last stats from the reader */
    int error;                /* 0 or the last TFB_E* error (unreadable) */
    /* What reading it cost at the last reload (object storage: GETs and
     * HEADs, and their bytes; 0 for local files). */
    uint64_t requests, request_bytes;
} tfb_file_info;

/* ---- store ---------------------------------------------------------- */

/* Creates an empty store for logdir (copied). */
int tfb_store_create(tfb_store **out, const char *logdir);
/* Frees everything. No thread may use the store any more. NULL-safe. */
void tfb_store_destroy(tfb_store *s);
const char *tfb_store_logdir(const tfb_store *s);

/* A counter that grows each time any data or run list changes; analyses
 * may cache results keyed by it. */
uint64_t tfb_store_generation(const tfb_store *s);

void tfb_store_progress(const tfb_store *s, tfb_load_progress *out);

/* The runs, ordered by first wall time (runs with no event yet last, then
 * by name). *out is a malloc'd array the caller frees with free(); the
 * pointers in it live as long as the store. */
int tfb_store_runs(tfb_store *s, tfb_run ***out, size_t *n);
/* NULL when there is no run of that name. */
tfb_run *tfb_store_find_run(tfb_store *s, const char *name);
/* How many runs there are. Runs are never removed and their names never
 * change, so the same count means the same runs (a cache of the run list
 * may be kept while it stays). */
size_t tfb_store_run_count(tfb_store *s);

/* ---- runs ----------------------------------------------------------- */

/* Name relative to the logdir ("." for the logdir itself); stable. */
const char *tfb_run_name(const tfb_run *r);
/* The run's directory path (logdir joined with the name); stable. */
const char *tfb_run_dir(const tfb_run *r);
/* The store that holds the run (for per-run caches keyed by store and
 * run, such as the trace layer's); stable. */
tfb_store *tfb_run_store(const tfb_run *r);
/* Wall time of the run's first event (file_version or other); NaN when
 * none was read yet. */
double tfb_run_first_wall(const tfb_run *r);
/* Largest wall time and step seen in any event of the run (NaN / INT64_MIN
 * when none). */
double tfb_run_last_wall(const tfb_run *r);
int64_t tfb_run_max_step(const tfb_run *r);
/* A counter that grows each time the run's own data changes: a batch of
 * points appended to its series (tfb_run_points_published), a series
 * added, a record put, a note set to another text, its times moved, its
 * event or trace file list changed (paths; not the files' read
 * counters), a reset. It grows after the change is visible (release;
 * read with acquire), so what a reader works out after reading a value
 * holds at least that value's data: a cache of one run's results may be
 * kept while it stays, and a live run moves only its own counter
 * (tfb_store_generation moves with every run's). Points count per batch,
 * not per point: between an append and the batch's end a reader may see
 * the new points under the old value (so a cache made then holds them,
 * or fewer, and is dropped at the batch's end). The media index
 * (tfb_run_media, its own lock) is not counted. */
uint64_t tfb_run_generation(const tfb_run *r);
/* Asks the CPU to fetch r's generation into the cache (no effect on
 * anything else): a scan over 10,000 runs' caches reads each run's
 * counter far apart in memory, and asks for the counter of a run a few
 * rows ahead while it works on this one. */
void tfb_run_generation_prefetch(const tfb_run *r);

/* The series of one kind, in first-seen order. *out is malloc'd (free()
 * it); the pointers live as long as the store. */
int tfb_run_series(tfb_run *r, tfb_series_kind kind, tfb_series ***out,
                   size_t *n);
/* NULL when the run has no series of that kind and tag. */
tfb_series *tfb_run_find_series(tfb_run *r, tfb_series_kind kind,
                                const char *tag);

/* Trace files found in the run directory (*.sqlite, *.pt.trace.json,
 * *.pt.trace.json.gz): malloc'd copies of their paths in name order; free
 * with tfb_strv_free(). A directory holding only trace files is a run. */
int tfb_run_trace_files(tfb_run *r, char ***out, size_t *n);
void tfb_strv_free(char **v, size_t n);

/* The run's event files in name order with their reader statistics;
 * malloc'd copies, free with tfb_file_infos_free(). */
int tfb_run_files(tfb_run *r, tfb_file_info **out, size_t *n);
void tfb_file_infos_free(tfb_file_info *v, size_t n);

/* Notes about how the run was read that a user should see (names that
 * were not UTF-8, values dropped): one text per key, listed by
 * /data/runs_info. *out is a malloc'd copy of the texts in key order of
 * first setting; free with tfb_strv_free. */
int tfb_run_notes(tfb_run *r, char ***out, size_t *n);

/* Values of the plugins the store keeps no series for (hparams,
 * tfboard_rank, ...): the latest value of each (plugin, tag) of a run, as
 * its plugin's metadata content and its tensor, both raw. A plugin decodes
 * its own. Values over TFB_RECORD_MAX_BYTES are not kept. */
#define TFB_RECORD_MAX_BYTES (1u << 20)
typedef struct tfb_plugin_record {
    char *plugin, *tag;
    int64_t step;
    double wall;
    uint8_t *content; /* SummaryMetadata.plugin_data.content */
    size_t content_len;
    uint8_t *tensor;  /* TensorProto */
    size_t tensor_len;
} tfb_plugin_record;

/* Copies of run r's records of `plugin` (every tag), in the order their
 * tags were first seen; free with tfb_plugin_records_free. */
int tfb_run_records(tfb_run *r, const char *plugin, tfb_plugin_record **out,
                    size_t *n);
void tfb_plugin_records_free(tfb_plugin_record *v, size_t n);

/* The run's image index (media_index.h): where each image lies in its
 * files. Lives as long as the run; has its own lock. A run without images
 * answers the one shared empty index (tfb_media_index_empty), never to
 * be added to: the loader adds through tfb_run_media_to_add, which makes
 * the run's own at its first image (NULL when memory runs out). */
struct tfb_media_index;
struct tfb_media_index *tfb_run_media(tfb_run *r);
struct tfb_media_index *tfb_run_media_to_add(tfb_run *r);

/* ---- series --------------------------------------------------------- */

const char *tfb_series_tag(const tfb_series *s);          /* stable */
/* Plugin name from the tag's first value ("" if none); stable after the
 * first point. */
const char *tfb_series_plugin(const tfb_series *s);
const char *tfb_series_display_name(const tfb_series *s); /* "" if none */
const char *tfb_series_description(const tfb_series *s);  /* "" if none */
tfb_run *tfb_series_run(const tfb_series *s);

/* Pins a snapshot (see the top of this file). Always succeeds for a
 * valid series; returns 0 (a scalar pin that cannot get memory for its
 * copy shows count 0). Every begin needs exactly one end, on the same
 * thread. */
int tfb_series_read_begin(tfb_series *s, tfb_series_view *v);
void tfb_series_read_end(tfb_series *s);

/* Decodes points [from, from + n) of a scalar series (fewer at its end;
 * 0 past it or for another kind) into the caller's arrays, any of which
 * may be NULL; value gets each value rounded to float, value64 the exact
 * double. No pin: for a reader that walks a long series in pieces (a
 * streamed download) and must hold neither a lock nor a copy between
 * them. Costs O(n) plus a skip over the blocks before `from`. */
size_t tfb_series_scalar_range(tfb_series *s, size_t from, size_t n,
                               int64_t *step, double *wall, float *value,
                               double *value64);

/* The points of a scalar series whose step is in [lo, hi], in file order:
 * at most cap of them (the first ones) into step/value (value rounded to
 * float, as the view's) and, when index is not NULL, each one's position
 * in the series. Returns how many were written; *more (may be NULL) is
 * set to 1 when more points matched than cap. No pin: a block whose steps
 * all fall outside the range has only its steps decoded, so looking at
 * the steps around one event costs a fraction of a pin of a long series
 * (the precursors of a spike). Steps may be in any order. */
size_t tfb_series_scalar_in_steps(tfb_series *s, int64_t lo, int64_t hi,
                                  int64_t *step, float *value, size_t *index,
                                  size_t cap, int *more);

/* A scalar series as one value a step: its points sorted by step, the
 * last one logged of each step kept (order: its place in the series), in
 * a malloc'd array the caller frees; none (NULL, 0) for a NULL series.
 * 0 or TFB_ENOMEM. For joins of per-step scalars (the pipeline and Ranks
 * analyses). Any thread: it pins the series for the copy only. */
typedef struct tfb_step_value {
    int64_t step;
    size_t order;
    double v;
} tfb_step_value;
int tfb_series_by_step(tfb_series *s, tfb_step_value **out, size_t *n);

/* Points now stored (without pinning). */
size_t tfb_series_count(const tfb_series *s);

/* The series' non-finite statistics now (what a pin's view carries),
 * without pinning: no copy of the points, for checks that run over every
 * series of every run on each evaluation (the run status, the
 * precursors). */
void tfb_series_nonfinite(tfb_series *s, tfb_nonfinite_stats *out);

/* "run\x1ftag" into buf (len bytes): the key of a series by its names,
 * for state kept between requests (a store destroyed and another created
 * at the same address must not inherit it by pointer). Its length, or 0
 * when it does not fit. */
size_t tfb_series_key(const tfb_series *s, char *buf, size_t len);

/* Bytes the series holds for its points: the capacity of its arrays
 * (for scalars the encoded blocks and the raw tail), not its struct and
 * names. Memory tests and benchmarks count this, never time. */
size_t tfb_series_bytes(const tfb_series *s);

/* ---- observer hooks ------------------------------------------------- */

/* What a layer above keeps on scalar series as they load, worked out from
 * the raw points the loader holds (no decode, no second pass, spread over
 * the loader's threads): the analysis layer's loss watch
 * (analysis/loss_watch.h) is one. The store calls these hooks and names
 * no observer, as the writer does with its modules' hooks
 * (collector/writer_internal.h).
 *  - attach: a scalar series called tag was created (loader thread):
 *    its state, or NULL when it is not observed (or no memory: the series
 *    loads unobserved);
 *  - feed: the n points of a block as it is sealed, in series order,
 *    under the series' write lock (keep it to microseconds);
 *  - reset: the run is read again from its start (file replaced);
 *  - detach: the series is freed (store destroyed).
 * None may call back into the store. */
typedef struct tfb_scalar_observer {
    void *(*attach)(const char *tag, size_t tag_len);
    void (*feed)(void *state, const int64_t *step, const double *value,
                 size_t n);
    void (*reset)(void *state);
    void (*detach)(void *state);
} tfb_scalar_observer;

/* The most points a series holds that were not fed yet (its tail). */
#define TFB_SERIES_TAIL_MAX 256

/* Sets the one scalar observer (NULL: none; o must outlive every store).
 * Call it before any store is created: a series decides when it is
 * created whether it is observed. */
void tfb_store_set_scalar_observer(const tfb_scalar_observer *o);

/* A reader's view of an observed series: calls copy(user, state) under
 * the series' read lock (copy what is needed, nothing more) and copies
 * the points not fed yet, at most TFB_SERIES_TAIL_MAX, into tail_step /
 * tail_value (*tail_n of them), so that the copy plus the tail reflects
 * every point. Returns copy's result, or TFB_ENOENT when s is not an
 * observed scalar series (copy is not called). */
int tfb_series_observed(tfb_series *s,
                        int (*copy)(void *user, const void *state),
                        void *user, int64_t *tail_step,
                        double *tail_value, size_t *tail_n);

/* ---- writer side (loader.c only) ------------------------------------ */

/* Finds or creates the run called name (relative to the logdir). */
int tfb_store_get_run(tfb_store *s, const char *name, tfb_run **out);
/* Replaces the run's list of trace files (the strings are copied). */
int tfb_run_set_trace_files(tfb_run *r, char *const *paths, size_t n);
/* Replaces the run's list of event file infos (copied). */
int tfb_run_set_files(tfb_run *r, const tfb_file_info *files, size_t n);
/* Records an event's wall time and step for the run's first/last. */
void tfb_run_note_event(tfb_run *r, double wall, int64_t step);
/* Empties every series of the run (file replaced): counts go to 0,
 * arrays are kept; tags stay listed. */
void tfb_run_reset(tfb_run *r);

/* Finds or creates a series; plugin/display/description are taken from
 * the first call that creates it. */
int tfb_run_get_series(tfb_run *r, tfb_series_kind kind, const char *tag,
                       size_t tag_len, const char *plugin, size_t plugin_len,
                       const char *display, size_t display_len,
                       const char *desc, size_t desc_len, tfb_series **out);

/* Appends one point (the single loader thread of the run only). The point
 * becomes visible to readers at once; the run's generation moves only
 * when the writer ends the batch with tfb_run_points_published (one
 * atomic a batch instead of one a point on the loader's hot path). */
int tfb_series_append_scalar(tfb_series *s, int64_t step, double wall,
                             double value);
int tfb_series_append_histogram(tfb_series *s, int64_t step, double wall,
                                double min, double max, double num,
                                double sum, const tfb_hist_bucket *b,
                                size_t nb);
int tfb_series_append_text(tfb_series *s, int64_t step, double wall,
                           const char *text, size_t len);
int tfb_series_append_numerics(tfb_series *s, int64_t step, double wall,
                               const tfb_numerics_point *c);
/* Ends a batch of appends to r's series (the run's loader thread, or its
 * helper, after the batch's points are appended; loader_split.h): moves
 * tfb_run_generation once. The
 * loader calls it every 65,536 events of a file (loader.c's CHUNK_EVENTS)
 * and when a file's read stops, so a cache keyed by the generation is
 * stale for at most one batch, and never once the read stopped. */
void tfb_run_points_published(tfb_run *r);
/* Sets (or, with text NULL, removes) the run's note under key. */
int tfb_run_set_note(tfb_run *r, const char *key, const char *text);

/* Keeps the value as the latest of (plugin, tag) of the run (see
 * tfb_run_records). Returns 0, TFB_ETOOBIG or TFB_ENOMEM. */
int tfb_run_put_record(tfb_run *r, const char *plugin, size_t plugin_len,
                       const char *tag, size_t tag_len, int64_t step,
                       double wall, const void *content, size_t content_len,
                       const void *tensor, size_t tensor_len);

/* Releases spare capacity (after a pass reached the end of the files). */
void tfb_series_trim(tfb_series *s);

/* Load progress, set by the loader. */
void tfb_store_set_progress(tfb_store *s, const tfb_load_progress *p);
void tfb_store_bump_generation(tfb_store *s);
/* What the storage backend says of itself (store/storage.h; copied; NULL
 * clears), set by the loader after each reload, for /data/environment. */
struct tfb_storage_status;
void tfb_store_set_storage_info(tfb_store *s,
                                const struct tfb_storage_status *st);
/* obj is freed with free_fn when the store is destroyed (one object; a
 * second replaces and frees the first): what the loaded data still needs,
 * such as the storage whose local copies of trace stores the GPU pages
 * read. Not thread-safe: call before sharing the store. */
void tfb_store_own(tfb_store *s, void *obj, void (*free_fn)(void *));
/* The last tfb_store_set_storage_info into *out: 0, or TFB_ENOENT when
 * none (a local logdir). */
int tfb_store_storage_info(tfb_store *s, struct tfb_storage_status *out);
/* A reload asked for from the page (POST /data/reload): the loader
 * registers fn (called under the store's lock: it must only signal);
 * TFB_ESTATE when no loader listens (one-shot loads). NULL fn clears. */
void tfb_store_set_reload_hook(tfb_store *s, void (*fn)(void *), void *ctx);
int tfb_store_request_reload(tfb_store *s);

#endif
