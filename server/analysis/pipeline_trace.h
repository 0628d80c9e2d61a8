/*
 * pipeline_trace.h - interval arithmetic behind the trace-derived pipeline
 * figures (other host time, GPU idle time inside input waits). Exposed for
 * tests; the analysis reaches it through tfb_pipeline_trace_of_run().
 *
 * Thread-safety: pure functions.
 */
#ifndef TFB_SERVER_PIPELINE_TRACE_H
#define TFB_SERVER_PIPELINE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/pipeline_analysis.h"
#include "trace/trace.h"

/* A half-open time interval [start, end) in ns. */
typedef tfb_trace_interval tfb_interval;

/* Sorts v and merges overlapping or touching intervals in place (empty
 * and reversed ones are dropped): the trace layer's, whose busy intervals
 * are such unions too. Returns the new count. */
static inline size_t tfb_intervals_normalize(tfb_interval *v, size_t n)
{
    return tfb_trace_intervals_normalize(v, n);
}

/* Total length of normalized intervals. */
int64_t tfb_intervals_length(const tfb_interval *v, size_t n);

/* Length of the intersection of two normalized lists. */
int64_t tfb_intervals_overlap(const tfb_interval *a, size_t na,
                              const tfb_interval *b, size_t nb);

/* Fills out from step spans, input spans and GPU busy intervals (kernels,
 * any device). The three arrays are normalized in place. Inside the steps'
 * union W, with inputs I and busy B:
 *   gpu_idle = |W \ B|, idle_in_input = |(W ∩ I) \ B|,
 *   gpu_idle_in_input_fraction = idle_in_input / gpu_idle (0 if no idle),
 *   other_host_fraction = |W \ (I ∪ B)| / |W|.
 * has_trace = 1 when W is not empty. Returns 0 or TFB_ENOMEM. */
int tfb_pipeline_trace_compute(tfb_interval *steps, size_t ns,
                               tfb_interval *inputs, size_t ni,
                               tfb_interval *busy, size_t nb,
                               tfb_pipeline_trace *out);

#endif
