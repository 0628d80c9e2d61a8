/*
 * perf_work.h - what the pipeline's helper thread makes of each step's
 * work and of the comm spans that give a byte count (tfboard.h "Work per
 * step, throughput and MFU", tfb_comm_begin_bytes): the perf/... scalars,
 * energy per step (through the NVML sampler), the perf/work record and
 * the cumulative comm/collectives record (issue 29).
 *
 * Ownership: a tfb_perf belongs to one pipeline (collector/pipeline.c).
 * Thread-safety: none of its own; the pipeline calls it under its perf
 * lock, from the helper thread (or flush, close, and the rare synchronous
 * path). Internal to libtfboard.
 */
#ifndef TFB_COLLECTOR_PERF_WORK_H
#define TFB_COLLECTOR_PERF_WORK_H

#include <stdint.h>

#include "tfboard.h"

typedef struct tfb_perf tfb_perf;

/* NULL when memory runs out (the pipeline then logs no perf/...). */
tfb_perf *tfb_perf_create(tfb_writer *w);
void tfb_perf_free(tfb_perf *pf);

typedef struct tfb_perf_step {
    int64_t step;
    double wall;   /* seconds since the epoch, at the step's end */
    double step_s; /* tfb_step_begin .. tfb_step_end */
    double flops, samples, tokens; /* 0 = not counted */
    int energy;    /* 1: ask the NVML sampler for the step's energy */
} tfb_perf_step;

/* Logs the step's perf/... scalars (and energy), and notes its work for the
 * perf/work record (written when due: see tfb_perf_records). */
void tfb_perf_step_done(tfb_perf *pf, const tfb_perf_step *s);

/* Adds one comm span to the cumulative table: the name's id in the
 * pipeline's name table (0 .. TFB_COMM_NAMES_MAX - 1), its text (stable
 * while the pipeline lives), the bytes and the span in ns. */
void tfb_perf_comm(tfb_perf *pf, unsigned name_id, const char *name,
                   uint64_t bytes, int64_t ns);

/* Writes the records that changed and are due (their periods), or every
 * changed one when force (tfb_flush, close). */
void tfb_perf_records(tfb_perf *pf, int force);

/* The bucket of a message size: the largest power of two <= bytes, 0
 * for 0. */
uint64_t tfb_perf_bucket_lo(uint64_t bytes);

#endif
