#!/usr/bin/env python3
"""The straggler of a job from its traces alone (issue 34, item 4): four
ranks with Kineto traces and no event files (so no step times), four
all-reduce collectives each. Rank 2 starts its collectives late; in the
last one rank 1 is later still. Answers by hand (µs after each
collective's base, 1000 k):

            k=0  k=1  k=2  k=3
  rank 0      0    0    0    0
  rank 1     10   10   10  400
  rank 2    200  200  200  200
  rank 3      5    5    5    5

Last: rank 2 in k = 0, 1, 2 (3 of 4, 0.75 >= 0.5: the straggler), rank 1
in k = 3. Wait rank 2 causes: 3 x (200 + 190 + 195) = 1755 µs; rank 1:
400 + 200 + 395 = 995 µs. Mean lateness (start - earliest): rank 2 200,
rank 1 107.5, rank 3 5, rank 0 0 µs. A second job whose ranks all start
together has no straggler; a job with two collectives is too short to
tell (TFB_RANKS_TRACE_MIN_COLLECTIVES = 3).

Arguments: the tfboard binary, the logdir generator (unused); or
`--write DIR`: only write the jobs into DIR (the Ranks page's browser test,
test_trace_straggler_page.js, serves them).
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
TMP = tempfile.mkdtemp(prefix="tfb_ranks_strag_")
BASE = 1700000000000000  # µs
US = 1000
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
LATE = {0: [0, 0, 0, 0], 1: [10, 10, 10, 400], 2: [200, 200, 200, 200],
        3: [5, 5, 5, 5]}


def write_job(job, offsets):
    for r, offs in offsets.items():
        d = os.path.join(TMP, job, "rank-%05d" % r)
        os.makedirs(d)
        ev = [{"ph": "X", "cat": "kernel", "name": "volta_sgemm", "pid": 0,
               "tid": 7, "ts": BASE - 500, "dur": 100,
               "args": {"device": 0, "stream": 7}}]
        for k, off in enumerate(offs):
            ev.append({"ph": "X", "cat": "kernel", "name": NCCL, "pid": 0,
                       "tid": 13, "ts": BASE + 1000 * k + off, "dur": 50,
                       "args": {"device": 0, "stream": 13}})
        with open(os.path.join(d, "host_%d.1700000000000.pt.trace.json" % r),
                  "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": ev}, f)


def setup():
    write_job("late", LATE)
    write_job("even", {r: [0, 0, 0] for r in range(3)})
    write_job("short", {0: [0, 0], 1: [0, 300]})


def gpu(job):
    for _ in range(600):
        g = SRV.json("/data/plugin/ranks/gpu", job=job)
        if not g.get("loading") and g["n_loading"] == 0:
            return g
    raise AssertionError("job %s still loading" % job)


def test_late_rank():
    s = gpu("late")["trace_straggler"]
    assert s["compared"] == 4 and s["ranks"] == 4, s
    assert s["straggler"] == 2, s
    assert s["share_min"] == 0.5 and s["collectives_min"] == 3, s
    p = {x["rank"]: x for x in s["per_rank"]}
    assert [p[r]["last"] for r in range(4)] == [0, 1, 3, 0], p
    assert p[2]["last_share"] == 0.75, p
    assert p[2]["wait_caused_ns"] == 1755 * US, p
    assert p[1]["wait_caused_ns"] == 995 * US, p
    assert p[2]["mean_late_ns"] == 200 * US, p
    assert p[1]["mean_late_ns"] == 107.5 * US, p
    assert p[3]["mean_late_ns"] == 5 * US and p[0]["mean_late_ns"] == 0, p


def test_no_straggler():
    s = gpu("even")["trace_straggler"]
    # Every collective starts at once on every rank: nobody is last.
    assert s["compared"] == 3 and s["straggler"] is None, s
    assert all(x["last"] == 0 for x in s["per_rank"]), s
    s = gpu("short")["trace_straggler"]
    # Rank 1 is last in one of two: too few collectives to call it.
    assert s["compared"] == 2 and s["straggler"] is None, s


def main():
    global SRV, TMP
    if TFBOARD == "--write":
        shutil.rmtree(TMP, ignore_errors=True)
        TMP = sys.argv[2]
        setup()
        return
    try:
        setup()
        with Server(TFBOARD, TMP) as srv:
            SRV = srv
            srv.wait_loaded()
            run_tests([test_late_rank, test_no_straggler])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
