/*
 * writer_internal.h - what the feature modules of libtfboard (health,
 * pipeline, GPU tracing) may use of the writer. Not installed.
 */
#ifndef TFB_WRITER_INTERNAL_H
#define TFB_WRITER_INTERNAL_H

#include "base/deadline.h" /* tfb_now_ns, tfb_now_wall */
#include "tfboard.h"

struct tfb_gpu_tracer;   /* collector/cupti_*.c (or the no-CUPTI stub) */
struct tfb_pipeline;     /* collector/pipeline.c */
struct tfb_media;        /* collector/media.c (image encoding) */

/* Extension slots owned by the feature modules. The writer only frees them
 * through the module's own hook at close (see below). Access them from the
 * thread(s) the module documents. */
struct tfb_gpu_tracer **tfb_writer_gpu_slot(tfb_writer *w);
struct tfb_pipeline **tfb_writer_pipeline_slot(tfb_writer *w);
/* Read and set with __atomic builtins: images come from any thread. */
struct tfb_media **tfb_writer_media_slot(tfb_writer *w);

/* A module that keeps state on a writer gives the writer its hooks when
 * it first fills its slot; the writer calls them, never the module's
 * functions by name, so the dependency runs one way (module -> writer).
 *  - on_flush runs first in tfb_flush(), so that what a module buffers of
 *    its own (the pipeline's step scalars) is in the writer's queue before
 *    the flush point is taken;
 *  - on_close runs in tfb_writer_close(), before the writer drains its
 *    queue, in module order: the NVML sampler stops first and the GPU
 *    tracer next (the last samples and utilization scalars still reach the
 *    file), then the pipeline state is freed.
 * Either hook may be NULL. Setting them again replaces them. Thread-safe
 * on one writer. */
typedef void (*tfb_writer_hook)(tfb_writer *w);
typedef enum {
    TFB_WRITER_MOD_METRICS = 0,
    TFB_WRITER_MOD_GPU,
    TFB_WRITER_MOD_PIPELINE,
    TFB_WRITER_MOD_MEDIA, /* drains the images not yet encoded */
    TFB_WRITER_MOD_COUNT
} tfb_writer_module;
void tfb_writer_set_hooks(tfb_writer *w, tfb_writer_module m,
                          tfb_writer_hook on_flush, tfb_writer_hook on_close);

/* Writes a numerics record (plugin TFB_NUMERICS_PLUGIN, int64 tensor [3]
 * {nan, +inf, -inf}) under tag at step. Thread-safe on one writer. */
int tfb_writer_numerics_record(tfb_writer *w, const char *tag, int64_t step,
                               const tfb_nonfinite_counts *c);

/* Calls the writer's on_nonfinite callback if this is the first time `tag`
 * goes non-finite (each tag reports once). Thread-safe; the callback runs
 * on the calling thread, outside the writer's locks. */
void tfb_writer_report_nonfinite(tfb_writer *w, const char *tag, int64_t step,
                                 const tfb_nonfinite_counts *c);

/* 1 when w was opened in a parent process and inherited across fork()
 * (see fork_guard.h): the modules then return TFB_EFORKED and never lock
 * or join anything of w's. 0 for NULL. Thread-safe, lock-free. */
int tfb_writer_forked(const tfb_writer *w);

/* 1 when w's run_dir is in a bucket (its run_dir is then the local
 * spool, whose files are uploaded and removed): modules that write files
 * of their own beside the events (embedding.c) refuse it. 0 for NULL.
 * Thread-safe (set at open only). */
int tfb_writer_in_bucket(const tfb_writer *w);

/* Enqueues one already serialized Event message (len bytes, the TFRecord
 * framing is added here) as one record. For the rare records whose shape
 * the generic encoder does not cover (hparams). Thread-safe on one writer;
 * event is read during the call only. */
int tfb_writer_log_event(tfb_writer *w, const uint8_t *event, size_t len);

/* The highest step of any value logged through w so far into *step: 1,
 * or 0 (and *step 0) when nothing was logged yet. Thread-safe on one
 * writer. */
int tfb_writer_max_step(tfb_writer *w, int64_t *step);

/* The step of the pipeline step open on w (after tfb_step_begin, before
 * tfb_step_end; collector/pipeline.c) into *step: 1, or 0 when none is
 * open. From the training thread, as the pipeline calls are. */
int tfb_pipeline_open_step(tfb_writer *w, int64_t *step);

/* The work opts of w (tfboard.h "Work per step"), as open read them:
 * constant work per step (0 = none), peak (0 = from the table) and dtype
 * (a tfb_peak_dtype, -1 = unknown). Thread-safe (set at open only). */
typedef struct tfb_work_opts {
    double flops, samples, tokens, peak_tflops;
    int dtype;
    const char *device; /* opts.device ("" = none), owned by w */
} tfb_work_opts;
void tfb_writer_work_opts(const tfb_writer *w, tfb_work_opts *out);

/* Logs a plugin record: step 0, a rank-0 DT_STRING tensor holding the len
 * bytes of text, plugin name `plugin` on every record (readers that keep
 * the latest per tag find it in each). Thread-safe on one writer; text is
 * read during the call only. */
int tfb_writer_plugin_text(tfb_writer *w, const char *plugin, const char *tag,
                           const char *text, size_t len, double wall);

/* Counts one record lost after its call returned (an image whose
 * encoding failed) in records_dropped. Thread-safe on one writer. */
void tfb_writer_count_dropped(tfb_writer *w);

/* ------------------------------------------------------------------------
 * Distributed jobs (collector/ranks.c)
 * ---------------------------------------------------------------------- */

/* A writer's resolved rank. rank < 0: not part of a known job (no rank
 * record is written). job and host are malloc'd, already cleaned to
 * [A-Za-z0-9._-]. */
typedef struct tfb_rank_owned {
    int rank, world_size, local_rank;
    char *job, *host;
} tfb_rank_owned;

/* Resolves opts against the environment as the public header documents.
 * opts is a whole tfb_writer_opts of this library's size (the caller has
 * read the user's struct through its size with tfb_abi_read). Returns 0, TFB_EINVAL (inconsistent opts) or
 * TFB_ENOMEM; *out owns its strings (tfb_rank_owned_free). */
int tfb_rank_resolve(const tfb_writer_opts *opts, tfb_rank_owned *out);
void tfb_rank_owned_free(tfb_rank_owned *r);

/* A whole sealed TFRecord holding the rank record (malloc'd). */
int tfb_rank_record(const tfb_rank_owned *r, double wall, uint8_t **rec,
                    size_t *len);

/* Reads the caller's opts (NULL: the defaults) through its size and
 * resolves their rank (tfb_rank_resolve). Thread-safe. */
int tfb_writer_resolve_rank(const tfb_writer_opts *opts, tfb_rank_owned *r);

/* tfb_writer_open with the rank already resolved: the writer takes r's
 * strings (on failure too). */
int tfb_writer_open_resolved(tfb_writer **out, const char *run_dir,
                             const tfb_writer_opts *opts, tfb_rank_owned *r);

/* The writer's resolved rank; owned by w. */
const tfb_rank_owned *tfb_writer_rank(const tfb_writer *w);

#endif
