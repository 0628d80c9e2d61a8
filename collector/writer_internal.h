/*
 * writer_internal.h - what the feature modules of libtfboard (health,
 * pipeline, GPU tracing) may use of the writer. Not installed.
 */
#ifndef TFB_WRITER_INTERNAL_H
#define TFB_WRITER_INTERNAL_H

#include "tfboard.h"

struct tfb_gpu_tracer;   /* collector/cupti_*.c (or the no-CUPTI stub) */
struct tfb_pipeline;     /* collector/pipeline.c */

/* Extension slots owned by the feature modules. The writer only frees them
 * through the module's own hook at close (see below). Access them from the
 * thread(s) the module documents. */
struct tfb_gpu_tracer **tfb_writer_gpu_slot(tfb_writer *w);
struct tfb_pipeline **tfb_writer_pipeline_slot(tfb_writer *w);

/* Hooks the writer calls in tfb_writer_close(), before it drains its queue:
 * the GPU tracer is stopped (its last utilization scalars still reach the
 * file), then the pipeline state is freed. Each module defines its hook. */
void tfb_gpu_trace_on_close(tfb_writer *w);
void tfb_pipeline_on_close(tfb_writer *w);

/* Called by tfb_flush() first, so that what a module buffers of its own
 * (the pipeline's step scalars) is in the writer's queue before the flush
 * point is taken. */
void tfb_pipeline_on_flush(tfb_writer *w);

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

/* Current time, ns since the Unix epoch (CLOCK_REALTIME: the clock CUPTI
 * timestamps use on Linux). */
int64_t tfb_now_ns(void);

#endif
