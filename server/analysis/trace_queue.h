/*
 * trace_queue.h - HTA's queue length per GPU stream over a whole trace
 * (hta/analyzers/trace_counters.py, get_queue_length_time_series /
 * get_queue_length_summary / get_time_spent_blocked_on_full_queue; we
 * follow its code): the number of ops a stream holds launched but not yet
 * started, a step function that
 *   - goes up by 1 at the start of each runtime call that launched a GPU
 *     op (kernel, memcpy, memset) on the stream (same correlation id), and
 *   - goes down by 1 at the start of that GPU op (HTA decrements when the
 *     op starts executing, not when it ends);
 * ops whose call is not in the trace are left out on both sides. At the
 * same instant the rises count first (a launch is never seen to start
 * before its call). Statistics per stream over the series' change points
 * (one sample after each change, as HTA's describe() of the series):
 * percentiles by linear interpolation, max, mean; and the time spent at
 * or above the launch queue's limit, TFB_QUEUE_LIMIT: the sum of the
 * intervals from a change that reaches the limit to the next change
 * (HTA's duration_at_max_queue_length), and its share of the trace's
 * duration (first event to last end).
 *
 * Ownership: the result owns its array. Thread-safety: any thread.
 */
#ifndef TFB_SERVER_TRACE_QUEUE_H
#define TFB_SERVER_TRACE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/trace_launch.h"
#include "trace/trace.h"

/* CUDA's launch queue holds 1024 pending ops per stream (HTA's
 * documentation; the max_queue_length callers pass): at that length a
 * further launch blocks the CPU until the stream drains. The same limit
 * applies to ROCm traces read here: HTA has no other value. */
#define TFB_QUEUE_LIMIT 1024

typedef struct tfb_queue_stream {
    int32_t device, stream;
    int64_t ops;                /* GPU ops counted (paired with a call) */
    int64_t samples;            /* change points of the series */
    double p50, p90, p99, max, mean;
    int64_t at_limit_ns;        /* time with length >= TFB_QUEUE_LIMIT */
    double at_limit_fraction;   /* of the trace's duration */
} tfb_queue_stream;

typedef struct tfb_queue_summary {
    tfb_queue_stream *streams;  /* by device then stream; streams without
                                   paired ops are left out */
    size_t n;
    int64_t duration_ns;        /* the trace's: first event to last end */
} tfb_queue_summary;

/* Fills *out (zeroed first). 0, TFB_ENOMEM. */
int tfb_queue_summarize(const tfb_trace *t, tfb_queue_summary *out);
void tfb_queue_summary_free(tfb_queue_summary *q);

#endif
