#!/usr/bin/env python3
"""Integration test of HTA's counters on the GPU dashboard (issue 34, item
4): /data/plugin/gpu/launches (launch statistics over the whole trace) and
/data/plugin/gpu/queue (queue length per stream), on small Kineto traces
written here, with every answer worked out by hand below.

Runs:
  launch/  five kernels on one stream, launched by cudaLaunchKernel calls;
           one call takes 60 µs (a runtime outlier, > 50 µs), one kernel
           starts 150 µs after its call ended (a launch delay outlier,
           > 100 µs), one kernel runs 3 µs after a 10 µs call (a short
           kernel), one memcpy without a call (unmatched);
  queue/   stream 7: four launches, then the four kernels: the queue fills
           to 4 and drains; stream 9: 1025 launches before the first kernel
           starts, so the queue passes HTA's limit of 1024;
  big/     120,000 launches (more than /gpu/host's 100,000 spans): every
           delay is 3 µs but the last kernel's, 200 µs.

Arguments: the tfboard binary, the logdir generator (unused); or
`--write DIR`: only write the runs into DIR (the GPU page's browser test,
test_hta_page.js, serves them).
"""

import gzip
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_gpu_hta_")
BASE = 1700000000000000  # µs
US = 1000                # ns in a µs
BIG = 120000


def call(ts, dur, corr, name="cudaLaunchKernel"):
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1,
            "tid": 1, "ts": BASE + ts, "dur": dur,
            "args": {"correlation": corr}}


def kernel(ts, dur, corr, stream=7, name="k"):
    args = {"device": 0, "stream": stream}
    if corr is not None:
        args["correlation"] = corr
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0,
            "tid": stream, "ts": BASE + ts, "dur": dur, "args": args}


def write(d, events, gz=False):
    os.makedirs(d)
    text = json.dumps({"schemaVersion": 1, "traceEvents": events})
    name = "host_1.1700000000000.pt.trace.json"
    if gz:
        with gzip.open(os.path.join(d, name + ".gz"), "wt",
                       compresslevel=1) as f:
            f.write(text)
    else:
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def setup():
    # launch/: (call start, call dur, kernel start, kernel dur) in µs.
    #   1: 0   +10 -> ends 10,  kernel 15  (delay 5),   dur 20
    #   2: 100 +10 -> ends 110, kernel 115 (delay 5),   dur 20
    #   3: 200 +60 -> ends 260, kernel 265 (delay 5),   dur 20  runtime>50
    #   4: 300 +10 -> ends 310, kernel 315 (delay 5),   dur 3   short
    #   5: 400 +10 -> ends 410, kernel 560 (delay 150), dur 20  delay>100
    rows = [(0, 10, 15, 20), (100, 10, 115, 20), (200, 60, 265, 20),
            (300, 10, 315, 3), (400, 10, 560, 20)]
    ev = []
    for i, (cs, cd, ks, kd) in enumerate(rows):
        ev.append(call(cs, cd, 100 + i))
        ev.append(kernel(ks, kd, 100 + i, name="k%d" % (i + 1)))
    ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD",
               "pid": 0, "tid": 7, "ts": BASE + 700, "dur": 1,
               "args": {"device": 0, "stream": 7, "bytes": 64}})
    write(os.path.join(TMP, "launch"), ev)

    # queue/ stream 7: calls start at 0, 10, 20, 30 (dur 5); kernels
    # start at 100, 200, 300, 400 (dur 50).
    ev = []
    for i in range(4):
        ev.append(call(10 * i, 5, 1 + i))
        ev.append(kernel(100 * (i + 1), 50, 1 + i, stream=7))
    # stream 9: 1025 calls at 0, 1, ..., 1024 µs (dur 0.5), kernels at
    # 2000 + 10 i (dur 5).
    for i in range(1025):
        ev.append(call(i, 0.5, 10000 + i))
        ev.append(kernel(2000 + 10 * i, 5, 10000 + i, stream=9))
    write(os.path.join(TMP, "queue"), ev)

    # big/: call i at 10 i µs (dur 2, ends 10 i + 2), kernel at 10 i + 5
    # (dur 1): delay 3 µs; the last kernel starts at 10 i + 202.
    ev = []
    for i in range(BIG):
        ev.append(call(10 * i, 2, i + 1))
        ks = 10 * i + (202 if i == BIG - 1 else 5)
        ev.append(kernel(ks, 1, i + 1))
    write(os.path.join(TMP, "big"), ev, gz=True)


def test_launch_stats():
    a = SRV.json("/data/plugin/gpu/launches", run="launch")
    assert a["launches"] == 5, a
    assert a["unmatched"] == 1, a  # the memcpy without a call
    assert a["runtime_cutoff_ns"] == 50 * US, a
    assert a["delay_cutoff_ns"] == 100 * US, a
    # CPU durations 10, 10, 60, 10, 10 µs: sorted 10 10 10 10 60.
    assert a["cpu"]["min_ns"] == 10 * US and a["cpu"]["max_ns"] == 60 * US
    assert a["cpu"]["p50_ns"] == 10 * US, a["cpu"]
    assert a["cpu"]["mean_ns"] == 20 * US, a["cpu"]
    # p90: h = 0.9 * 4 = 3.6 -> 10 + 0.6 * 50 = 40 µs.
    assert abs(a["cpu"]["p90_ns"] - 40 * US) < 1e-6, a["cpu"]
    # GPU durations 20 20 20 3 20: sorted 3 20 20 20 20.
    assert a["gpu"]["min_ns"] == 3 * US and a["gpu"]["p50_ns"] == 20 * US
    # delays 5 5 5 5 150: mean 34, p50 5, p99: h = 3.96 -> 5 + .96 * 145.
    d = a["delay"]
    assert d["mean_ns"] == 34 * US and d["p50_ns"] == 5 * US, d
    assert abs(d["p99_ns"] - (5 + 0.96 * 145) * US) < 1e-6, d
    assert d["max_ns"] == 150 * US, d
    assert a["runtime_outliers"] == 1 and a["delay_outliers"] == 1, a
    assert a["short_kernels"] == 1, a  # k4: 3 µs under a 10 µs call
    o = a["outliers"]
    assert [x["name"] for x in o] == ["k5", "k3"], o  # largest delay first
    assert o[0]["delay_ns"] == 150 * US and o[0]["delay_outlier"], o
    assert o[1]["cpu_ns"] == 60 * US and o[1]["runtime_outlier"], o
    assert o[0]["call"] == "cudaLaunchKernel" and o[0]["kind"] == "kernel"


def test_queue_length():
    q = SRV.json("/data/plugin/gpu/queue", run="queue")
    assert q["limit"] == 1024, q
    s = {x["stream"]: x for x in q["streams"]}
    assert sorted(s) == [7, 9], q
    # Stream 7: +1 at 0, 10, 20, 30, -1 at 100, 200, 300, 400: samples
    # 1 2 3 4 3 2 1 0, sorted 0 1 1 2 2 3 3 4.
    a = s[7]
    assert a["ops"] == 4 and a["samples"] == 8, a
    assert a["max"] == 4 and a["mean"] == 2, a
    assert a["p50"] == 2, a                         # h = 3.5: 2 and 2
    assert abs(a["p90"] - 3.3) < 1e-9, a            # h = 6.3: 3 + .3
    assert abs(a["p99"] - 3.93) < 1e-9, a           # h = 6.93
    assert a["at_limit_ns"] == 0, a
    # Stream 9: length 1024 after the call at 1023 µs, 1025 at 1024 µs,
    # 1024 again when the first kernel starts (2000 µs), 1023 at 2010:
    # 2010 - 1023 = 987 µs at or above the limit.
    b = s[9]
    assert b["ops"] == 1025 and b["max"] == 1025, b
    assert b["at_limit_ns"] == 987 * US, b
    # The trace lasts from the first call (0) to the last kernel's end
    # (2000 + 10240 + 5 µs).
    assert q["duration_ns"] == 12245 * US, q
    assert abs(b["at_limit_fraction"] - 987 / 12245) < 1e-12, b


def test_launch_stats_past_host_limit():
    a = SRV.json("/data/plugin/gpu/launches", run="big")
    assert a["launches"] == BIG and a["unmatched"] == 0, a
    assert a["delay"]["p99_ns"] == 3 * US, a["delay"]
    assert a["delay"]["max_ns"] == 200 * US, a["delay"]
    assert a["cpu"]["max_ns"] == 2 * US and a["gpu"]["max_ns"] == US, a
    assert a["delay_outliers"] == 1 and a["runtime_outliers"] == 0, a
    assert len(a["outliers"]) == 1 and a["outliers"][0]["correlation"] > 0
    # A short kernel each: 1 µs of GPU under a 2 µs call.
    assert a["short_kernels"] == BIG, a


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
            run_tests([test_launch_stats, test_queue_length,
                       test_launch_stats_past_host_limit])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
