#!/usr/bin/env python3
"""hta_traces.py - small Kineto traces, each built to show one definition of
issue 34 (HTA's idle breakdown, every accelerator category, the trace's
own metadata), for test_gpu_hta.py, test_ranks_trace_meta.py, the browser test
webui_trace_meta and screenshots.

As a program: hta_traces.py LOGDIR writes every case under LOGDIR.

Times below are µs as Kineto writes them ("ts"/"dur" in µs, with up to
three decimals when the trace has ns resolution); each event is
(category, name, device, stream, start, duration, launch call start or
None). Every device event gets a correlation id; its launch call (category
cuda_runtime, or the case's runtime category) gets the same id.
"""

import json
import os
import sys

BASE_NS = 1_700_000_000_000_000_000  # baseTimeNanoseconds of every case

V100 = {"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34089730048,
        "computeMajor": 7, "computeMinor": 0, "maxThreadsPerBlock": 1024,
        "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
        "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 80,
        "sharedMemPerBlockOptin": 98304}


def _num(v):
    """A µs value as Kineto writes it: an integer, or a decimal with at
    most three digits (exact ns)."""
    if isinstance(v, int):
        return str(v)
    return "%.3f" % v


def write_trace(path, events, runtime_cat="cuda_runtime", extra=None,
                display_unit=None):
    """events: (cat, name, device, stream, ts, dur, call_ts) tuples."""
    parts = []
    corr = 0
    for cat, name, dev, stream, ts, dur, call in events:
        corr += 1
        args = {"device": dev, "stream": stream, "correlation": corr}
        if cat == "gpu_memcpy":
            args["bytes"] = 4096
        parts.append('{"ph": "X", "cat": %s, "name": %s, "pid": %d, '
                     '"tid": %d, "ts": %s, "dur": %s, "args": %s}'
                     % (json.dumps(cat), json.dumps(name), dev, stream,
                        _num(ts), _num(dur), json.dumps(args)))
        if call is not None:
            parts.append('{"ph": "X", "cat": %s, "name": "launch", '
                         '"pid": 4242, "tid": 4242, "ts": %s, "dur": 1, '
                         '"args": {"correlation": %d}}'
                         % (json.dumps(runtime_cat), _num(call), corr))
    head = {"schemaVersion": 1}
    if display_unit:
        head["displayTimeUnit"] = display_unit
    head.update(extra or {})
    head["baseTimeNanoseconds"] = BASE_NS
    text = json.dumps(head)[:-1] + ', "traceEvents": [\n' + \
        ",\n".join(parts) + "\n]}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


# --- 1. HTA's idle breakdown ----------------------------------------------
#
# gaps_us: one stream, whole µs. Worked out by hand (HTA: per stream, in
# start order; the gap before an event is its start minus the previous
# event's end; "host wait" when its launch call began after that end,
# else "kernel wait" when the gap is under 30 µs, else "other"):
#   K1 [1000, 1010)
#   K2 [1030, 1040) call 1005 < 1010, gap 20 < 30    -> kernel wait 20
#   K3 [1080, 1090) call 1060 > 1040                 -> host wait 40
#   K4 [1130, 1140) call 1085 < 1090, gap 40 >= 30   -> other 40
#   M1 [1150, 1160) memcpy, call 1100, gap 10        -> kernel wait 10
#   K5 [1170, 1180) call 1110, gap 10 (after M1)     -> kernel wait 10
# host 40 µs, kernel wait 40 µs, other 40 µs; busy (kernels + memcpy) 60 µs
# of a 180 µs span: idle 120 = 40 + 40 + 40.
GAPS_US = [
    ("kernel", "k1", 0, 7, 1000, 10, 990),
    ("kernel", "k2", 0, 7, 1030, 10, 1005),
    ("kernel", "k3", 0, 7, 1080, 10, 1060),
    ("kernel", "k4", 0, 7, 1130, 10, 1085),
    ("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, 1150, 10, 1100),
    ("kernel", "k5", 0, 7, 1170, 10, 1110),
]
GAPS_US_WANT = {"host_wait_ns": 40_000, "kernel_wait_ns": 40_000,
                "other_ns": 40_000}

# gaps_ns: ns resolution (µs with three decimals, "displayTimeUnit": "ns"
# as Kineto writes it; ts stays µs: the unit is a display hint):
#   K1 [1000.100, 1010.300)
#   K2 [1030.550, 1040.550) call 1005: gap 20.250       -> kernel 20250 ns
#   K3 [1080.800, 1090.799) call 1060 > 1040.550: 40.250 -> host 40250 ns
#   K4 [1131.000, 1132.000) call 1085 < 1090.799: 40.201 -> other 40201 ns
GAPS_NS = [
    ("kernel", "k1", 0, 7, 1000.100, 10.200, 990.0),
    ("kernel", "k2", 0, 7, 1030.550, 10.000, 1005.0),
    ("kernel", "k3", 0, 7, 1080.800, 9.999, 1060.0),
    ("kernel", "k4", 0, 7, 1131.000, 1.000, 1085.0),
]
GAPS_NS_WANT = {"host_wait_ns": 40250, "kernel_wait_ns": 20250,
                "other_ns": 40201}

# two_streams: device 0, streams 7 and 8 (µs):
#   s7: K1 [2000, 2010) ; K2 [2050, 2060) call 2005 < 2010, gap 40 -> other 40
#   s8: K3 [2020, 2030) ; K4 [2045, 2055) call 2040 > 2030       -> host 15
# Per device = the sum over its streams (as HTA adds its per-stream rows):
# host 15, other 40. The device's own idle time (no event on any stream)
# is 60 - busy 35 ([2000,2010) + [2020,2030) + [2045,2060)) = 25.
TWO_STREAMS = [
    ("kernel", "k1", 0, 7, 2000, 10, 1995),
    ("kernel", "k3", 0, 8, 2020, 10, 2015),
    ("kernel", "k4", 0, 8, 2045, 10, 2040),
    ("kernel", "k2", 0, 7, 2050, 10, 2005),
]

# --- 2. every accelerator ----------------------------------------------------
# mtia: device work under mtia_ccp_events, launched by mtia_runtime calls;
# and 3 events of a category nobody reads (npu_kernel): a note names it.
#   C1 [100, 110) ; C2 [120, 130) call 105 < 110, gap 10 -> kernel wait 10
MTIA = [
    ("mtia_ccp_events", "ccp_gemm", 0, 1, 100, 10, 95),
    ("mtia_ccp_events", "ccp_add", 0, 1, 120, 10, 105),
    ("npu_kernel", "n1", 0, 3, 200, 5, None),
    ("npu_kernel", "n2", 0, 3, 210, 5, None),
    ("npu_kernel", "n3", 0, 3, 220, 5, None),
]
# unknown_only: device work only in a category not understood: 0 devices,
# and the note says why.
UNKNOWN_ONLY = [
    ("xla_op", "fusion.1", 0, 1, 100, 10, None),
    ("xla_op", "fusion.2", 0, 1, 120, 10, None),
]

# --- 3. the trace's own metadata ---------------------------------------------
PG_CONFIG = [
    {"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
     "pg_size": 128, "ranks": list(range(128))},
    {"pg_name": "1", "pg_desc": "tp_group", "backend_config": "cuda:nccl",
     "pg_size": 8, "ranks": list(range(8))},
]


def dist_info(rank):
    return {"backend": "nccl", "rank": rank, "world_size": 128,
            "pg_count": 2, "pg_config": PG_CONFIG, "nccl_version": "2.18.1"}


def props_events(rank):
    return [
        ("kernel", "volta_sgemm_128x64_nn", 0, 7, 3000, 20 + rank, 2990),
        ("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 0, 20, 3025,
         30, 3000),
    ]


def write_hostile(path):
    """What a hostile file may hold in the parts read here: 40 categories
    not understood (one named by 100 KB), deviceProperties of the wrong
    types and 100 entries, a distributedInfo with 100 process groups, one
    of 100000 ranks and one whose ranks are strings. One kernel of 10 µs
    is the trace's device work."""
    ev = [("kernel", "k", 0, 7, 100, 10, 95)]
    for i in range(40):
        cat = ("x" * 100_000) if i == 0 else "cat%02d" % i
        ev.append((cat, "e", 0, 9, 200 + i, 1, None))
    props = [{"id": 0, "name": 5, "numSms": "many", "computeMajor": "x",
              "totalGlobalMem": -5}]
    props += [{"id": i, "name": "g%d" % i} for i in range(1, 100)]
    pgs = [{"pg_name": str(i), "pg_size": 2, "ranks": [0, 1]}
           for i in range(100)]
    pgs[0] = {"pg_name": "big", "pg_size": 100000,
              "ranks": list(range(100000))}
    pgs[1] = {"pg_name": "odd", "ranks": ["a", {"b": 1}, [2], 3, 4, 6]}
    write_trace(path, ev, extra={
        "deviceProperties": props,
        "distributedInfo": {"rank": "three", "world_size": 1e30,
                            "backend": ["nccl"], "pg_count": 100,
                            "pg_config": pgs}})


def write_all(root):
    write_trace(os.path.join(root, "gaps_us", "h_1.1.pt.trace.json"),
                GAPS_US)
    write_trace(os.path.join(root, "gaps_ns", "h_1.1.pt.trace.json"),
                GAPS_NS, display_unit="ns")
    write_trace(os.path.join(root, "two_streams", "h_1.1.pt.trace.json"),
                TWO_STREAMS)
    write_trace(os.path.join(root, "mtia", "h_1.1.pt.trace.json"), MTIA,
                runtime_cat="mtia_runtime")
    write_trace(os.path.join(root, "unknown_only", "h_1.1.pt.trace.json"),
                UNKNOWN_ONLY)
    # A job of two ranks whose directories say nothing of the world size:
    # only the traces' distributedInfo does. deviceProperties lists a
    # second GPU the rank never used: not a device of the trace.
    for r in range(2):
        other = dict(V100, id=1)
        write_trace(os.path.join(root, "job", "rank-%05d" % r,
                                 "h_%d.1.pt.trace.json" % r),
                    props_events(r),
                    extra={"distributedInfo": dist_info(r),
                           "deviceProperties": [V100, other]})
    write_hostile(os.path.join(root, "hostile", "h_1.1.pt.trace.json"))
    # jobm: rank 0 an MTIA trace with a category not understood, rank 1
    # device work only in such a category (0 devices: said in a note).
    write_trace(os.path.join(root, "jobm", "rank-00000", "m.pt.trace.json"),
                MTIA, runtime_cat="mtia_runtime")
    write_trace(os.path.join(root, "jobm", "rank-00001", "u.pt.trace.json"),
                UNKNOWN_ONLY)
    # jobg: one rank, the gaps_us trace: its idle time in the Ranks view
    # is the GPU summary's (one definition of busy: kernels + memcpy).
    write_trace(os.path.join(root, "jobg", "rank-00000", "g.pt.trace.json"),
                GAPS_US)


if __name__ == "__main__":
    write_all(sys.argv[1])
