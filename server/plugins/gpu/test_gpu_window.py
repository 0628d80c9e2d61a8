#!/usr/bin/env python3
"""Integration test of the step window (issue 34, item 4): the GPU routes'
`window=all|steps|steps_but_last` and `tfboard report --window`, on small
Kineto traces written here, with every answer worked out by hand below.

Runs:
  steps/    ProfilerStep#1 [100, 200) µs, #2 [200, 300), #3 [300, 350)
            (user_annotation spans on the main thread), and seven kernels,
            each launched by a cudaLaunchKernel call (call -> kernel, µs):
              pre   10 -> [20, 30)    before step 1
              a    110 -> [120, 130)  step 1
              b    190 -> [205, 215)  launched in step 1, runs in step 2
              c    210 -> [220, 240)  step 2
              e    290 -> [305, 315)  launched in step 2, runs in step 3
              d    310 -> [320, 330)  step 3 (the last)
              post 400 -> [410, 420)  after the steps
            all: 7 kernels, 80 µs busy; steps (launched in [100, 350)):
            a b c e d, 60 µs; steps_but_last (launched in [100, 300)):
            a b c e, 50 µs (e ran after the last step began: it belongs
            to the step that launched it, as in HTA).
  nosteps/  two kernels, no ProfilerStep: every mode answers the whole
            trace, mode "all", with a note.
  mem/      the steps/ run plus caching-allocator [memory] events on
            device 0 (µs, bytes; level after the event):
              X alloc  1000 at  50 -> 1000   before the steps, never freed
              Y alloc   500 at 150 -> 1500   step 1
              Y free        at 250 -> 1000   step 2
              Z alloc  4000 at 320 -> 5000   step 3 (the last)
              Z free        at 340 -> 1000   step 3
              W alloc  8000 at 380 -> 9000   after the steps
            all: peak 9000 at 380; steps [100, 350): level 1000 at the
            start (X, allocated before the window, is live), peak 5000 at
            320, 1000 at the end; steps_but_last [100, 300): peak 1500 at
            150, 1000 at the end, X and nothing else live at its end.
  /host top_ops and busy_ns (steps/; ProfilerSteps are ranges, not
            ops): all: 7 launches x 4 µs = 28 µs busy; steps_but_last:
            the launches that start in [100, 300) (110, 190, 210, 290):
            4, 16 µs.

Arguments: the tfboard binary, the logdir generator (unused); or
`--write DIR`: only write the runs into DIR (the browser test,
test_window_page.js, serves them).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_gpu_window_")
BASE = 1700000000000000  # µs
US = 1000                # ns in a µs

# (name, call start, kernel start, kernel duration), µs from BASE
KERNELS = [("pre", 10, 20, 10), ("a", 110, 120, 10), ("b", 190, 205, 10),
           ("c", 210, 220, 20), ("e", 290, 305, 10), ("d", 310, 320, 10),
           ("post", 400, 410, 10)]
STEPS = [(1, 100, 100), (2, 200, 100), (3, 300, 50)]  # (n, ts, dur)


def ns(us):
    return (BASE + us) * US


def events(kernels, steps):
    ev = []
    for n, ts, dur in steps:
        ev.append({"ph": "X", "cat": "user_annotation",
                   "name": "ProfilerStep#%d" % n, "pid": 1, "tid": 1,
                   "ts": BASE + ts, "dur": dur})
    for i, (name, cs, ks, kd) in enumerate(kernels):
        ev.append({"ph": "X", "cat": "cuda_runtime",
                   "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": BASE + cs, "dur": 4,
                   "args": {"correlation": 100 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0,
                   "tid": 7, "ts": BASE + ks, "dur": kd,
                   "args": {"device": 0, "stream": 7,
                            "correlation": 100 + i}})
    return ev


def write(d, ev):
    os.makedirs(d)
    with open(os.path.join(d, "host_1.1700000000000.pt.trace.json"),
              "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)


# (µs, address, bytes (negative: a free), allocated after it)
MEM = [(50, 1, 1000, 1000), (150, 2, 500, 1500), (250, 2, -500, 1000),
       (320, 3, 4000, 5000), (340, 3, -4000, 1000), (380, 4, 8000, 9000)]


def memory_events():
    return [{"ph": "i", "cat": "cpu_instant_event", "s": "t",
             "name": "[memory]", "pid": 1, "tid": 1, "ts": BASE + ts,
             "args": {"Total Reserved": 16000, "Total Allocated": alloc,
                      "Bytes": nb, "Addr": addr, "Device Id": 0,
                      "Device Type": 1}} for ts, addr, nb, alloc in MEM]


def setup():
    write(os.path.join(TMP, "steps"), events(KERNELS, STEPS))
    write(os.path.join(TMP, "mem"), events(KERNELS, STEPS) + memory_events())
    write(os.path.join(TMP, "nosteps"), events(KERNELS[1:3], []))


def summary(run, window=None):
    p = {"run": run}
    if window:
        p["window"] = window
    return SRV.json("/data/plugin/gpu/summary", **p)


def test_summary_per_mode():
    # mode -> (kernels, busy µs, first start, last end, window, steps)
    want = {
        None: (7, 80, 20, 420, "all", None),
        "all": (7, 80, 20, 420, "all", None),
        "steps": (5, 60, 120, 330, "steps", 3),
        "steps_but_last": (4, 50, 120, 315, "steps_but_last", 2),
    }
    for mode, (n, busy, s0, s1, wmode, steps) in want.items():
        r = summary("steps", mode)
        d = r["devices"][0]
        assert d["kernels"] == n, (mode, d)
        assert d["busy_ns"] == busy * US, (mode, d)
        assert d["span_ns"] == (s1 - s0) * US, (mode, d)
        w = r["window"]
        assert w["mode"] == wmode and w["steps"] == steps, (mode, w)
        assert w["requested"] == (mode or "all"), w
        assert w["note"] is None, w
    # The bounds: the first step's start to the last step's end / start.
    w = summary("steps", "steps")["window"]
    assert (w["start_ns"], w["end_ns"]) == (ns(100), ns(350)), w
    w = summary("steps", "steps_but_last")["window"]
    assert (w["start_ns"], w["end_ns"]) == (ns(100), ns(300)), w
    assert w["duration_ns"] == 200 * US, w
    # all: the trace's extent (first kernel or call to the last end).
    w = summary("steps")["window"]
    assert w["end_ns"] == ns(420), w


def test_other_routes():
    k = SRV.json("/data/plugin/gpu/kernels", run="steps",
                 window="steps_but_last")
    assert sorted(x["name"] for x in k["kernels"]) == ["a", "b", "c", "e"], k
    assert k["total_ns"] == 50 * US and k["window"]["mode"] == \
        "steps_but_last", k
    k = SRV.json("/data/plugin/gpu/kernels", run="steps", window="steps")
    assert sorted(x["name"] for x in k["kernels"]) == \
        ["a", "b", "c", "d", "e"], k
    t = SRV.json("/data/plugin/gpu/timeline", run="steps",
                 window="steps_but_last")
    names = sorted(s["name"] for s in t["spans"] if s["kind"] == "kernel")
    assert names == ["a", "b", "c", "e"], t
    assert t["window"]["steps"] == 2, t["window"]
    la = SRV.json("/data/plugin/gpu/launches", run="steps", window="steps")
    assert la["launches"] == 5 and la["window"]["mode"] == "steps", la
    la = SRV.json("/data/plugin/gpu/launches", run="steps")
    assert la["launches"] == 7 and la["window"]["mode"] == "all", la
    q = SRV.json("/data/plugin/gpu/queue", run="steps",
                 window="steps_but_last")
    assert q["streams"][0]["ops"] == 4, q
    h = SRV.json("/data/plugin/gpu/host", run="steps",
                 window="steps_but_last")
    assert (h["start_ns"], h["end_ns"]) == (ns(100), ns(300)), h
    assert h["window"]["mode"] == "steps_but_last", h
    u = SRV.json("/data/plugin/gpu/utilization", run="steps",
                 window="steps", buckets=1)
    assert u["start_ns"] == ns(120) and u["window"]["mode"] == "steps", u


def memory(window=None):
    p = {"run": "mem"}
    if window:
        p["window"] = window
    for _ in range(600):
        r = SRV.json("/data/plugin/gpu/memory", **p)
        if not r.get("loading"):
            return r
    raise AssertionError("memory still loading")


def test_memory_window():
    # mode -> (peak bytes, peak µs, end bytes, live at end, window)
    want = {None: (9000, 380, 9000, 2, "all"),
            "steps": (5000, 320, 1000, 1, "steps"),
            "steps_but_last": (1500, 150, 1000, 1, "steps_but_last")}
    for mode, (peak, at, end, live, wmode) in want.items():
        r = memory(mode)
        (d,) = r["devices"]
        assert d["peak_bytes"] == peak and d["peak_t_ns"] == ns(at), \
            (mode, d)
        assert d["end_bytes"] == end and d["live_at_end"] == live, (mode, d)
        assert r["window"]["mode"] == wmode, r["window"]
    # The level at the window's start counts X, allocated before it.
    (d,) = memory("steps")["devices"]
    assert d["points"][0][0] == ns(100) and d["points"][0][1] == 1000, d
    # ... then each change, and the level at its last instant (the end is
    # exclusive: 350 µs - 1 ns).
    assert [(p[0], p[1]) for p in d["points"]] == \
        [(ns(100), 1000), (ns(150), 1500), (ns(250), 1000),
         (ns(320), 5000), (ns(340), 1000), (ns(350) - 1, 1000)], d
    # A zoom range inside the window stays; one past it is cut to it.
    r = SRV.json("/data/plugin/gpu/memory", run="mem", window="steps",
                 start_ns=ns(200), end_ns=ns(500))
    (d,) = r["devices"]
    assert d["peak_bytes"] == 5000 and d["end_bytes"] == 1000, d
    code, _, body = SRV.get("/data/plugin/gpu/memory", run="mem",
                            window="last")
    assert code == 400 and b"steps_but_last" in body, (code, body)


def test_host_ops_window():
    def ops(h):
        return {o["name"]: o["count"] for o in h["top_ops"]}
    h = SRV.json("/data/plugin/gpu/host", run="steps")
    assert h["busy_ns"] == 28 * US, h["busy_ns"]
    assert ops(h)["cudaLaunchKernel"] == 7, ops(h)
    h = SRV.json("/data/plugin/gpu/host", run="steps",
                 window="steps_but_last")
    assert h["busy_ns"] == 16 * US, h["busy_ns"]
    assert ops(h) == {"cudaLaunchKernel": 4}, ops(h)
    h = SRV.json("/data/plugin/gpu/host", run="steps", window="steps")
    assert h["busy_ns"] == 20 * US and ops(h) == {"cudaLaunchKernel": 5}


def test_no_steps_note():
    for mode in ("steps", "steps_but_last"):
        r = summary("nosteps", mode)
        w = r["window"]
        assert w["mode"] == "all" and w["requested"] == mode, w
        assert w["note"] == "no ProfilerStep annotations: the whole trace", w
        assert r["devices"][0]["kernels"] == 2, r


def test_bad_window():
    code, _, body = SRV.get("/data/plugin/gpu/summary", run="steps",
                            window="last")
    assert code == 400 and b"steps_but_last" in body, (code, body)


def report(*args):
    p = subprocess.run([TFBOARD, "report", "--logdir", TMP, "--quiet",
                        "--run", "^steps$"] + list(args),
                       capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_report_window():
    rc, out, err = report("--format", "json", "--window", "steps_but_last")
    assert rc == 0, err
    gpu = json.loads(out)["runs"][0]["gpu"]
    assert gpu["devices"][0]["kernels"] == 4, gpu
    assert gpu["window"]["mode"] == "steps_but_last", gpu["window"]
    assert gpu["window"]["end_ns"] == ns(300), gpu["window"]
    rc, out, err = report("--format", "json")
    gpu = json.loads(out)["runs"][0]["gpu"]
    assert gpu["devices"][0]["kernels"] == 7 and \
        gpu["window"]["mode"] == "all", gpu
    rc, out, err = report("--window", "steps")
    assert rc == 0 and "window: steps (3 ProfilerSteps, 0.25 ms" in out, out
    assert "device 0 (GPU 0): 5 kernels" in out, out
    rc, out, err = report("--format", "markdown", "--window", "steps")
    assert rc == 0 and "Window: steps (3 ProfilerSteps" in out, out
    rc, out, err = report("--format", "html", "--window", "steps_but_last")
    assert rc == 0 and '"window":{"mode":"steps_but_last"' in out, out[:400]
    rc, out, err = report("--window", "bogus")
    assert rc == 2 and "steps_but_last" in err, (rc, err)


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
            run_tests([test_summary_per_mode, test_other_routes,
                       test_memory_window, test_host_ops_window,
                       test_no_steps_note, test_bad_window,
                       test_report_window])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
