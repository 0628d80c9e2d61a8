/*
 * ranks_trace_straggler.h - the straggler of a job from its traces alone
 * (the step-time rule of ranks_analysis.h needs step times from event
 * files): the rank whose collectives the others wait on, from the start
 * times of the NCCL kernels (tfb_ranks_classify_kernel) across ranks.
 *
 * Rule: each rank's NCCL kernels in start order are its collectives; the
 * k-th of every rank is the same collective (NCCL runs collectives of a
 * process group in the same order on every rank), compared over the first
 * min(count) of the ranks that have any. In collective k, a rank's
 * lateness is its start - the earliest start among the ranks; the rank
 * that starts last is the one the others wait on, and the wait it causes
 * is Σ over the other ranks of (its start - theirs). The straggler is the
 * rank that starts last in at least TFB_RANKS_TRACE_STRAGGLER_SHARE of the
 * compared collectives, when at least TFB_RANKS_TRACE_MIN_COLLECTIVES are
 * compared and at least two ranks are traced; none otherwise. A
 * collective whose latest start is shared by several ranks counts as
 * nobody's (no rank is "last" by its order in the job).
 * Times are each trace's own clock: ranks on hosts whose clocks differ
 * shift by the offset (HTA assumes synchronised clocks, as here).
 *
 * Ownership: the result owns its array. Thread-safety: any thread.
 */
#ifndef TFB_SERVER_RANKS_TRACE_STRAGGLER_H
#define TFB_SERVER_RANKS_TRACE_STRAGGLER_H

#include <stddef.h>
#include <stdint.h>

/* Last in at least half of the collectives: a rank late by chance now and
 * then is not a straggler; one that holds the job back is late in most. */
#define TFB_RANKS_TRACE_STRAGGLER_SHARE 0.5
/* Fewer collectives than this say nothing about a pattern. */
#define TFB_RANKS_TRACE_MIN_COLLECTIVES 3

/* One rank's input: its NCCL kernel start times, ascending. */
typedef struct tfb_ranks_trace_starts {
    const int64_t *starts;
    size_t n;
} tfb_ranks_trace_starts;

typedef struct tfb_ranks_trace_lateness {
    size_t last;            /* collectives it started last */
    double last_share;      /* last / compared */
    double mean_late_ns;    /* mean of its lateness */
    int64_t wait_caused_ns; /* Σ of the wait it caused when last */
} tfb_ranks_trace_lateness;

typedef struct tfb_ranks_trace_straggler {
    size_t compared;        /* collectives compared */
    size_t ranks;           /* ranks compared (with NCCL kernels) */
    long straggler;         /* index into the input, -1: none */
    tfb_ranks_trace_lateness *per_rank; /* aligned with the input; a rank
                                           without NCCL kernels: zeros */
    size_t n;
} tfb_ranks_trace_straggler;

/* in[0..n): one entry per rank. 0, TFB_ENOMEM. */
int tfb_ranks_trace_straggler_find(const tfb_ranks_trace_starts *in,
                                   size_t n,
                                   tfb_ranks_trace_straggler *out);
void tfb_ranks_trace_straggler_free(tfb_ranks_trace_straggler *s);

#endif
