#!/usr/bin/env python3
"""ranks_traces.py - GPU traces of the ranks of a job, in the
`nsys export --type sqlite` layout (names as StringIds ids), for the ranks
plugin's tests. NCCL kernels are named in one of two schemes: NCCL's older
ncclKernel_* names or the ncclDevKernel_* names of NCCL >= 2.19; the
timings are the same in both, so the figures must be too.

As a program: ranks_traces.py JOB_DIR N [SCHEME] writes
JOB_DIR/rank-0000r/report1.sqlite for r < N (creating the directories).

expected(rank) gives the figures the ranks plugin must compute, by brute
force over every nanosecond of the trace span (independent of the
server's interval arithmetic)."""

import os
import sqlite3
import sys

BASE = 1_700_000_000_000_000_000

COMPUTE_NAMES = ["volta_sgemm_128x64_nn", "void elementwise_kernel<128, 4>(int, float*)"]
COMM_NAMES = {
    "a": ["ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, ncclChannel*, ncclWork*)",
          "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, ncclChannel*, ncclWork*)"],
    "b": ["ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
          "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"],
}


def layout(rank):
    """(start, end, stream, cls, name index) relative to the rank's base;
    cls 'compute' | 'comm' | 'memory'. Two compute streams overlap each
    other; the comm kernels overlap compute partly; rank r's all-reduce is
    100 r ns longer, so the ranks' overlap figures differ."""
    return [
        (0, 1000, 7, "compute", 0),
        (1500, 2500, 7, "compute", 1),
        (3000, 3400, 7, "compute", 0),
        (3200, 3600, 9, "compute", 1),
        (800, 1800 + 100 * rank, 13, "comm", 0),
        (3300, 3500, 13, "comm", 1),
        (2600, 2800, 7, "memory", -1),
    ]


def expected(rank):
    lay = layout(rank)
    lo = min(s for s, *_ in lay)
    hi = max(e for _, e, *_ in lay)
    n = hi - lo
    comp, comm, mem = bytearray(n), bytearray(n), bytearray(n)
    for s, e, _, cls, _ in lay:
        arr = {"compute": comp, "comm": comm, "memory": mem}[cls]
        arr[s - lo:e - lo] = b"\x01" * (e - s)
    out = {"compute_ns": 0, "comm_ns": 0, "memory_ns": 0, "idle_ns": 0,
           "comm_union_ns": 0, "overlap_ns": 0, "span_ns": n}
    for i in range(n):
        if comp[i]:
            out["compute_ns"] += 1
        elif comm[i]:
            out["comm_ns"] += 1
        elif mem[i]:
            out["memory_ns"] += 1
        else:
            out["idle_ns"] += 1
        if comm[i]:
            out["comm_union_ns"] += 1
            out["overlap_ns"] += comp[i]
    out["overlap"] = out["overlap_ns"] / out["comm_union_ns"]
    out["busy_pct"] = 100.0 * (1 - out["idle_ns"] / n)
    return out


SCHEMA = """
CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, id INTEGER NOT NULL, name TEXT,
    busLocation TEXT, smCount INTEGER, totalMemory INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL,
    end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER,
    demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
    mangledName INTEGER, registersPerThread INTEGER NOT NULL,
    gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
    staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL,
    end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
    copyKind INTEGER NOT NULL);
"""


def make_trace(path, rank, scheme):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    names = COMPUTE_NAMES + COMM_NAMES[scheme]
    db.executemany("INSERT INTO StringIds VALUES(?,?)", list(enumerate(names)))
    db.execute("INSERT INTO TARGET_INFO_GPU(vmId, id, name, smCount) "
               "VALUES(0, 0, 'NVIDIA H100 80GB HBM3', 132)")
    base = BASE + rank * 1_000_000
    corr = 1
    for s, e, stream, cls, ni in layout(rank):
        corr += 1
        if cls == "memory":
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES"
                       "(?,?,0,1,?,?,1,4096,1)", (base + s, base + e, stream, corr))
            continue
        sid = ni if cls == "compute" else len(COMPUTE_NAMES) + ni
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
                   "(?,?,0,1,?,?,1,?,?,NULL,32,8,1,1,256,1,1,0,0)",
                   (base + s, base + e, stream, corr, sid, sid))
    db.commit()
    db.close()


def write_job(job_dir, n, scheme):
    for r in range(n):
        d = os.path.join(job_dir, "rank-%05d" % r)
        os.makedirs(d, exist_ok=True)
        make_trace(os.path.join(d, "report1.sqlite"), r, scheme)


if __name__ == "__main__":
    write_job(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "a")
