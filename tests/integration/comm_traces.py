#!/usr/bin/env python3
"""comm_traces.py - Kineto traces in PyTorch's shape for a 4-rank job whose
collectives have known sizes and durations (issue 29), for
test_comm_bandwidth.py: <logdir>/job/rank-0000N/<host>_<pid>.pt.trace.json.

Each collective is what torch.distributed with the NCCL backend leaves in a
profiler trace: the `nccl:<name>` cpu_op around the `record_param_comms`
op (its args: "Collective name", "In msg nelems", "Out msg nelems",
"dtype", "Group size", "Process Group Name"/"Description"/"Ranks",
"Sequence number"), inside it the `cudaLaunchKernel` runtime event, the
ac2g flow from the launch to the kernel (same id as the correlation), and
the `ncclDevKernel_*` kernel on the NCCL stream. Ranks 0 and 1 are
PyTorch 2.x traces (the kernel carries the collective's args too);
ranks 2 and 3 older ones (only the op does): rank 2's kernels carry the
record_param_comms op's "External id", rank 3's the enclosing nccl: op's,
so they are joined through their launch call (same correlation id, the
ac2g flow's) inside the record_param_comms op.

expected(): the hand figures, per (rank, kind, bucket): count, bytes,
seconds, algbw and busbw in GB/s with nccl-tests' factors, computed here
from the same table the traces are written from.

usage: comm_traces.py LOGDIR   (writes the job, prints the expected rows)
"""
import json
import os
import sys

RANKS = 4
BASE_US = 1_700_000_000_000_000  # µs since the epoch, Kineto's ts
STEPS = 3
DTYPE_SIZE = {"Float": 4, "BFloat16": 2, "Half": 2}

# collective name (as PyTorch records it), kind, kernel name, dtype,
# in nelems, out nelems, kernel µs at step 0 (step k: x (1 + k/10),
# rank r: + r µs)
COLLECTIVES = [
    ("allreduce", "all_reduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
     "Float", 16 * 1024 * 1024, 16 * 1024 * 1024, 1000.0),
    ("allreduce", "all_reduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
     "Float", 256 * 1024, 256 * 1024, 40.0),
    ("_allgather_base", "all_gather", "ncclDevKernel_AllGather_RING_LL",
     "BFloat16", 4 * 1024 * 1024, 16 * 1024 * 1024, 500.0),
    ("_reduce_scatter_base", "reduce_scatter",
     "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL",
     "BFloat16", 16 * 1024 * 1024, 4 * 1024 * 1024, 120.0),
    ("broadcast", "broadcast", "ncclDevKernel_Broadcast_RING_LL",
     "Float", 1024 * 1024, 1024 * 1024, 15.0),
    ("reduce", "reduce", "ncclDevKernel_Reduce_Sum_f16_RING_LL",
     "Half", 2 * 1024 * 1024, 2 * 1024 * 1024, 120.0),
    ("all_to_all", "all_to_all", "ncclDevKernel_SendRecv",
     "Float", 4 * 1024 * 1024, 4 * 1024 * 1024, 400.0),
    ("send", "send_recv", "ncclDevKernel_SendRecv",
     "Float", 1024 * 1024, 1024 * 1024, 80.0),
]

FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "send_recv": lambda n: 1.0,
}


def dur_us(base, step, rank):
    return base * (1 + step / 10) + rank


def nbytes(c):
    return max(c[4], c[5]) * DTYPE_SIZE[c[3]]


def bucket(b):
    return 1 << (b.bit_length() - 1) if b else 0


def expected():
    """{(rank, kind, bucket_lo): {count, bytes, seconds, algbw, busbw}}."""
    out = {}
    for r in range(RANKS):
        for c in COLLECTIVES:
            key = (r, c[1], bucket(nbytes(c)))
            e = out.setdefault(key, {"count": 0, "bytes": 0, "seconds": 0.0,
                                     "bus": 0.0})
            for s in range(STEPS):
                e["count"] += 1
                e["bytes"] += nbytes(c)
                e["seconds"] += dur_us(c[6], s, r) * 1e-6
                e["bus"] += nbytes(c) * FACTORS[c[1]](RANKS)
    for e in out.values():
        e["algbw"] = e["bytes"] / e["seconds"] / 1e9
        e["busbw"] = e.pop("bus") / e["seconds"] / 1e9
    return out


def comm_args(c):
    return {
        "Collective name": c[0], "In msg nelems": c[4],
        "Out msg nelems": c[5], "Group size": RANKS, "dtype": c[3],
        "In split size": "[]", "Out split size": "[]",
        "Process Group Name": "0", "Process Group Description": "default_pg",
        "Process Group Ranks": "[0, 1, 2, 3]",
    }


def rank_trace(rank, new_shape, outer_ext=False):
    """The events of one rank's trace."""
    pid, tid, dev, stream = 1000 + rank, 1000 + rank, rank, 24
    ev = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
         "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
         "args": {"name": "thread %d (python)" % tid}},
    ]
    t = 100.0  # µs from BASE_US
    ext = 10
    corr = 500
    for s in range(STEPS):
        step_start = t
        ev.append({"ph": "X", "cat": "user_annotation",
                   "name": "ProfilerStep#%d" % s, "pid": pid, "tid": tid,
                   "ts": BASE_US + t, "dur": 0, "args": {"External id": ext}})
        ext += 1
        step_ev = len(ev) - 1
        for c in COLLECTIVES:
            outer, op = ext, ext + 1
            ext += 2
            corr += 1
            host0 = t
            # nccl:<name> around record_param_comms around the launch
            ev.append({"ph": "X", "cat": "cpu_op", "name": "nccl:" + c[0],
                       "pid": pid, "tid": tid, "ts": BASE_US + host0,
                       "dur": 30, "args": {"External id": outer,
                                           "Sequence number": s}})
            a = comm_args(c)
            a.update({"External id": op, "Rank": rank,
                      "Sequence number": s})
            ev.append({"ph": "X", "cat": "cpu_op",
                       "name": "record_param_comms", "pid": pid, "tid": tid,
                       "ts": BASE_US + host0 + 2, "dur": 26, "args": a})
            kext = outer if outer_ext else op
            ev.append({"ph": "X", "cat": "cuda_runtime",
                       "name": "cudaLaunchKernel", "pid": pid, "tid": tid,
                       "ts": BASE_US + host0 + 10, "dur": 8,
                       "args": {"External id": kext, "cbid": 211,
                                "correlation": corr}})
            k0 = host0 + 20
            kargs = {"External id": kext, "queued": 0, "device": dev,
                     "context": 1, "stream": stream, "correlation": corr,
                     "registers per thread": 96, "shared memory": 8224,
                     "blocks per SM": 0.25, "warps per SM": 4.0,
                     "grid": [32, 1, 1], "block": [640, 1, 1],
                     "est. achieved occupancy %": 0}
            if new_shape:
                kargs.update(comm_args(c))
            d = dur_us(c[6], s, rank)
            ev.append({"ph": "X", "cat": "kernel", "name": c[2],
                       "pid": dev, "tid": stream, "ts": BASE_US + k0,
                       "dur": d, "args": kargs})
            ev.append({"ph": "s", "id": corr, "pid": pid, "tid": tid,
                       "ts": BASE_US + host0 + 10, "cat": "ac2g",
                       "name": "ac2g"})
            ev.append({"ph": "f", "id": corr, "pid": dev, "tid": stream,
                       "ts": BASE_US + k0, "cat": "ac2g", "name": "ac2g",
                       "bp": "e"})
            t = k0 + d + 5
        ev[step_ev]["dur"] = t - step_start
    return ev


def trace_doc(rank, events):
    return {
        "schemaVersion": 1,
        "deviceProperties": [{
            "id": rank, "name": "NVIDIA H100 80GB HBM3",
            "totalGlobalMem": 85045477376, "computeMajor": 9,
            "computeMinor": 0, "maxThreadsPerBlock": 1024,
            "numSms": 132}],
        "distributedInfo": {
            "backend": "nccl", "rank": rank, "world_size": RANKS,
            "pg_count": 1, "pg_config": [{
                "pg_name": "0", "pg_desc": "default_pg",
                "backend_config": "cuda:nccl", "pg_size": RANKS,
                "ranks": list(range(RANKS))}]},
        "traceEvents": events,
        "traceName": "rank%d.pt.trace.json" % rank,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 0,
    }


def write_job(logdir):
    """Writes the 4 ranks' traces; returns their run names."""
    runs = []
    for r in range(RANKS):
        run = "job/rank-%05d" % r
        d = os.path.join(logdir, run)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "host_%d.pt.trace.json" % (4000 + r)),
                  "w") as f:
            json.dump(trace_doc(r, rank_trace(r, r < 2, r == 3)), f)
        runs.append(run)
    return runs


if __name__ == "__main__":
    write_job(sys.argv[1])
    for k, v in sorted(expected().items()):
        print(json.dumps({"rank": k[0], "kind": k[1], "bucket_lo": k[2],
                          **v}))
