/*
 * comm_bandwidth.h - achieved NCCL bandwidth of a run (issue 29): each
 * collective's algorithm and bus bandwidth, grouped per rank x collective x
 * message-size bucket, against the link's peak. The Efficiency dashboard,
 * the Ranks view and `report` read it (server/API.md "Collectives").
 *
 * Formulas (nccl-tests' doc/PERFORMANCE.md):
 *   algbw = bytes / time (GB/s = 1e9 B/s);
 *   busbw = algbw x factor, factor by collective over a group of n ranks:
 *     all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n;
 *     broadcast, reduce, send/recv 1.
 * bytes is nccl-tests' "size": max(in, out) of one rank's buffers (the
 * whole gathered buffer for all-gather, the whole input for
 * reduce-scatter). A row's busbw is sum(bytes_i x factor(n_i)) / sum(t_i)
 * over its collectives, so a row mixing group sizes stays exact.
 *
 * Sources, one per run (one rank):
 *   - "trace": the run's traces' collectives (trace.h,
 *     tfb_trace_collectives): the NCCL kernel's GPU time, n the group size
 *     the trace gives (else its distributedInfo world size, else the rank
 *     record's);
 *   - "host", when the trace has none: the collector's comm/collectives
 *     record (plugin tfboard_comm: tfb_comm_begin_bytes spans, host time),
 *     n the rank record's world size.
 *
 * Thread-safety: all functions are thread-safe.
 */
#ifndef TFB_SERVER_COMM_BANDWIDTH_H
#define TFB_SERVER_COMM_BANDWIDTH_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* The collector's record of tfb_comm_begin_bytes spans (the data contract
 * of issue 29; include/tfboard.h names them TFB_COMM_PLUGIN and
 * TFB_COMM_COLLECTIVES_TAG once the collector's side is in). */
#define TFB_COLL_RECORD_PLUGIN "tfboard_comm"
#define TFB_COLL_RECORD_TAG "comm/collectives"

/* A row is "far below the link" when its bus bandwidth is under
 * TFB_COLL_BELOW_PCT percent of the link's peak: nccl-tests reach 70-85 %
 * of NVLink with large messages, so a quarter is not tuning noise but a
 * wrong path (PCIe or the network instead of NVLink, a bad ring, a
 * straggler). Only messages of at least TFB_COLL_BELOW_MIN_BYTES (1 MiB)
 * are judged: below that NCCL is latency-bound on any link and every row
 * would be "below". */
#define TFB_COLL_BELOW_PCT 25.0
#define TFB_COLL_BELOW_MIN_BYTES ((uint64_t)1 << 20)

typedef enum {
    TFB_COLL_ALL_REDUCE,
    TFB_COLL_ALL_GATHER,
    TFB_COLL_REDUCE_SCATTER,
    TFB_COLL_BROADCAST,
    TFB_COLL_REDUCE,
    TFB_COLL_ALL_TO_ALL,
    TFB_COLL_SEND_RECV,
    TFB_COLL_OTHER,
    TFB_COLL_KIND_COUNT
} tfb_coll_kind;

/* The kind of a collective named as PyTorch, NCCL or the user write it
 * (case, '_', ':' and other punctuation ignored; a leading "nccl",
 * "nccl:", "ncclKernel", "ncclDevKernel" or "c10d::" skipped): allreduce,
 * all_reduce, AllReduce, nccl:all_reduce, allreduce_coalesced,
 * _allgather_base, all_gather_into_tensor, reduce_scatter_tensor,
 * _reduce_scatter_base, all_to_all_single, alltoall_base, broadcast,
 * reduce, send, recv, SendRecv, ncclDevKernel_AllReduce_Sum_f32_RING_LL...
 * Anything else (barrier, gather, scatter, NULL) is TFB_COLL_OTHER. */
tfb_coll_kind tfb_coll_kind_parse(const char *name, size_t len);
/* "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
 * "all_to_all", "send_recv", "other". */
const char *tfb_coll_kind_name(tfb_coll_kind k);
/* nccl-tests' bus bandwidth factor for a group of n ranks (above); NaN
 * for TFB_COLL_OTHER or n < 1. */
double tfb_coll_busbw_factor(tfb_coll_kind k, int n);
/* The size bucket of a message: the largest power of two <= bytes (0 for
 * 0). Buckets are one octave wide, [2^k, 2^(k+1)), as nccl-tests step
 * their sizes (-f 2): bandwidth changes with size mostly across octaves
 * (latency-bound below ~1 MiB, link-bound above), and 65 buckets cover
 * every size. The collector's comm/collectives record uses the same. */
uint64_t tfb_coll_bucket(uint64_t bytes);

typedef struct tfb_coll_row {
    int32_t rank;        /* -1 unknown */
    tfb_coll_kind kind;
    uint64_t bucket_lo;  /* tfb_coll_bucket; 0 also holds sizes unknown */
    uint64_t count, bytes;
    double seconds;      /* summed time of the collectives */
    double algbw_gbps, busbw_gbps; /* GB/s = 1e9 B/s, as nccl-tests; NaN
                                      when unknown (no bytes, no time, n
                                      unknown, kind other) */
    double link_gbps, link_pct;    /* NaN unknown */
    int below;           /* busbw < TFB_COLL_BELOW_PCT % of the link, for
                            buckets >= TFB_COLL_BELOW_MIN_BYTES */
    char source[8];      /* "trace" (GPU kernel time) or "host"
                            (tfb_comm_begin_bytes spans) */
} tfb_coll_row;

/* The rows of one run (one rank), by kind then bucket: from its traces'
 * collectives when it has any, else from its comm/collectives record.
 * link_gbps: the --link_gbps flag, or 0 = from the device's entry in the
 * peak table (base/gpu_peaks.h; the trace's device name, else the
 * perf/work record's device=). Waits for the run's trace load (bounded by
 * the trace layer's budgets): a route that must not wait asks
 * tfb_trace_get first. *rows malloc'd (NULL with n 0: no collective);
 * 0, TFB_EINVAL, TFB_ENOMEM. */
int tfb_coll_run_rows(tfb_run *r, double link_gbps, tfb_coll_row **rows,
                      size_t *n);

/* The building blocks of tfb_coll_run_rows, for tests and for callers
 * that hold the data already. */
struct tfb_trace;
/* Rows of a trace's collectives; world_size: n where a collective gives
 * no group size (0 unknown); rank, link as the row's. */
int tfb_coll_trace_rows(const struct tfb_trace *t, int32_t rank,
                        int32_t world_size, double link_gbps,
                        tfb_coll_row **rows, size_t *n);
/* Rows of a comm/collectives record's text (the contract's lines; lines
 * that do not parse are skipped, as are unknown versions' extra fields);
 * n_ranks: the world size (0 unknown). */
int tfb_coll_record_rows(const char *text, size_t len, int32_t rank,
                         int32_t n_ranks, double link_gbps,
                         tfb_coll_row **rows, size_t *n);

#endif
