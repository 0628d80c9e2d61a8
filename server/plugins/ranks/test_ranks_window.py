#!/usr/bin/env python3
"""The step window on /data/plugin/ranks/gpu (issue 34, item 4): two ranks
whose Kineto traces carry ProfilerStep#1 [100, 200) µs, #2 [200, 300),
#3 [300, 350) and, in each step S, a GEMM (launched at S+5, runs
[S+10, S+20)) and an all-reduce (launched at S+6, runs [S+30, S+50) on
rank 0 and [S+40, S+60) on rank 1: rank 1 is 10 µs late in every
collective); plus a GEMM before the steps ([20, 30), launched at 10) and
one after ([410, 420), launched at 400). Answers by hand, per rank:

  window          intervals  comm kernels  compute µs  comm µs  straggler
  all                 8           3            50         60        1
  steps               6           3            30         60        1
  steps_but_last      4           2            20         40      none

(steps_but_last leaves 2 collectives: too few to tell,
TFB_RANKS_TRACE_MIN_COLLECTIVES = 3.) The all-reduce of step 3 on rank 1
ends at 360, past the last step's end: it was launched in the step, so it
is the step's (the window's rule, trace.h).

Arguments: the tfboard binary, the logdir generator (unused); or
`--write DIR`: only write the job into DIR (the Ranks page's browser test,
test_window_page.js, serves it).
"""

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_ranks_window_")
BASE = 1700000000000000  # µs
US = 1000
NCCL = ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned "
        "long, ncclWork*)")
GEMM = "volta_sgemm_128x64_nn"
STEPS = [(1, 100, 100), (2, 200, 100), (3, 300, 50)]  # (n, ts, dur)


def rank_events(late):
    ev = []
    launches = [(GEMM, 10, 20, 10, 7), (GEMM, 400, 410, 10, 7)]
    for n, s, dur in STEPS:
        ev.append({"ph": "X", "cat": "user_annotation",
                   "name": "ProfilerStep#%d" % n, "pid": 1, "tid": 1,
                   "ts": BASE + s, "dur": dur})
        launches.append((GEMM, s + 5, s + 10, 10, 7))
        launches.append((NCCL, s + 6, s + 30 + late, 20, 13))
    for i, (name, call, start, dur, stream) in enumerate(launches):
        ev.append({"ph": "X", "cat": "cuda_runtime",
                   "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": BASE + call, "dur": 1,
                   "args": {"correlation": 100 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0,
                   "tid": stream, "ts": BASE + start, "dur": dur,
                   "args": {"device": 0, "stream": stream,
                            "correlation": 100 + i}})
    return ev


def setup(root):
    for r, late in ((0, 0), (1, 10)):
        d = os.path.join(root, "job", "rank-%05d" % r)
        os.makedirs(d)
        with open(os.path.join(d, "host_%d.1700000000000.pt.trace.json" % r),
                  "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": rank_events(late)},
                      f)


def gpu(window=None):
    p = {"job": "job"}
    if window:
        p["window"] = window
    for _ in range(600):
        g = SRV.json("/data/plugin/ranks/gpu", **p)
        if not g.get("loading") and g["n_loading"] == 0:
            return g
    raise AssertionError("job still loading")


def test_counts_per_window():
    want = {None: (8, 3, 50, 60, 1, "all", None),
            "all": (8, 3, 50, 60, 1, "all", None),
            "steps": (6, 3, 30, 60, 1, "steps", 3),
            "steps_but_last": (4, 2, 20, 40, None, "steps_but_last", 2)}
    for mode, (iv, comm, comp_us, comm_us, strag, wmode, steps) in \
            want.items():
        g = gpu(mode)
        assert g["n_traced"] == 2, g
        for r in g["ranks"]:
            assert r["intervals"] == iv and r["comm_kernels"] == comm, \
                (mode, r)
            assert r["compute_ns"] == comp_us * US, (mode, r)
            assert r["comm_ns"] == comm_us * US, (mode, r)
            assert r["window"]["mode"] == wmode, (mode, r["window"])
            assert r["window"]["steps"] == steps, (mode, r["window"])
        assert g["compute_ns"] == 2 * comp_us * US, (mode, g)
        assert g["trace_straggler"]["straggler"] == strag, \
            (mode, g["trace_straggler"])
        w = g["window"]
        assert w["mode"] == wmode and w["requested"] == (mode or "all"), w
    w = gpu("steps_but_last")["window"]
    assert (w["start_ns"], w["end_ns"]) == ((BASE + 100) * US,
                                           (BASE + 300) * US), w
    # The devices and what the trace says of itself stay whole.
    assert gpu("steps_but_last")["ranks"][0]["devices"] == 1


def test_bad_window():
    code, _, body = SRV.get("/data/plugin/ranks/gpu", job="job",
                            window="last")
    assert code == 400 and b"steps_but_last" in body, (code, body)


def main():
    global SRV
    if TFBOARD == "--write":
        shutil.rmtree(TMP, ignore_errors=True)
        setup(sys.argv[2])
        return
    try:
        setup(TMP)
        with Server(TFBOARD, TMP) as srv:
            SRV = srv
            srv.wait_loaded()
            run_tests([test_counts_per_window, test_bad_window])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
