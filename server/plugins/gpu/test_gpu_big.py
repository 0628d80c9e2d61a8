#!/usr/bin/env python3
"""The GPU routes on a big trace (issue 13 item 4): 2 M kernels (TFB_BIG_
KERNELS overrides), 2 M launch calls and 20 000 copies in an nsys-layout
file written by gen_gpu_trace (tests/integration/gen_gpu_trace.c). Every
figure is checked against what the generator wrote
(tests/integration/gpu_trace_gen.py): the summary (busy time, span, idle
breakdown, copies), the kernel table (50 names, counts and totals), the
utilization (busy time adds up), the timeline (whole trace: at most max
merged spans whose counts add up to every span; a 1 % window: exactly the
spans overlapping it, unmerged when few), and trace.json of a window (all
its events, or at most max_events with truncated and events_total).
While the trace loads, the routes answer 202 {"loading", "progress"}.

Arguments: the tfboard binary, the logdir generator (unused), the trace
generator.
"""
import json
import os
import shutil
import sys
import tempfile
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
import gpu_trace_gen as G  # noqa: E402

TFBOARD = sys.argv[1]
GEN = sys.argv[3]
N = int(os.environ.get("TFB_BIG_KERNELS", "2000000"))
TMP = tempfile.mkdtemp(prefix="tfb_gpu_big_")
SRV = None
E = None
SEEN = {"loading": 0}


def gpu(route, **params):
    """A GPU route's answer, waiting out the 202 "loading" answers."""
    end = time.time() + 300
    while True:
        st, ct, body = SRV.get("/data/plugin/gpu/" + route, run="big",
                               **params)
        if st != 202:
            break
        p = json.loads(body)
        assert p["loading"] is True and 0 <= p["progress"] <= 1, p
        SEEN["loading"] += 1
        assert time.time() < end, "still loading"
        time.sleep(0.1)
    assert st == 200, (route, params, st, body[:300])
    return json.loads(body)


def test_summary():
    t0 = time.time()
    s = gpu("summary")
    print("  loaded in %.1f s (%d loading answers)"
          % (time.time() - t0, SEEN["loading"]))
    (d,) = s["devices"]
    assert d["name"] == "Big GPU" and d["sm_count"] == 132
    for k in ("kernels", "kernel_ns", "busy_ns", "start_ns", "end_ns",
              "span_ns"):
        assert d[k] == E[k], (k, d[k], E[k])
    assert d["idle"] == {"host_wait_ns": E["host_wait_ns"],
                         "kernel_wait_ns": 0, "other_ns": E["other_ns"]}, \
        d["idle"]
    c = E["copies"]
    assert d["memcpy"] == {"HtoD": {"count": c, "bytes": 4096 * c,
                                    "ns": 10 * c}}, d["memcpy"]


def test_kernels():
    k = gpu("kernels", limit=0)
    assert k["total"] == G.K and k["total_ns"] == E["kernel_ns"]
    got = {x["name"]: (x["count"], x["total_ns"]) for x in k["kernels"]}
    assert got == E["per_name"]
    totals = [x["total_ns"] for x in k["kernels"]]
    assert totals == sorted(totals, reverse=True)
    first = [x for x in k["kernels"]
             if x["name"] == "kernel_07<float>(float*, int)"][0]
    assert first["grid"] == [8, 1, 1] and first["block"] == [128, 1, 1]
    assert len(gpu("kernels", limit=5)["kernels"]) == 5


def test_utilization():
    u = gpu("utilization", device=0, buckets=1000)
    assert u["start_ns"] == E["start_ns"] and len(u["busy"]) == 1000
    busy = sum(u["busy"]) * u["bucket_ns"]
    assert abs(busy - E["busy_ns"]) < 1e-6 * E["busy_ns"], (busy, E)


def spans_in(w0, w1):
    """Kernels and copies overlapping [w0, w1)."""
    n = 0
    i0 = max(0, (w0 - G.B) // 1000 - 1)
    i1 = min(N, (w1 - G.B) // 1000 + 2)
    for i in range(i0, i1):
        s = G.B + 1000 * i
        if s < w1 and s + G.dur(i) > w0:
            n += 1
        if i % 100 == 0 and s + 600 < w1 and s + 610 > w0:
            n += 1
    return n


def calls_in(w0, w1):
    n = 0
    i0 = max(0, (w0 - G.B) // 1000 - 1)
    i1 = min(N, (w1 - G.B) // 1000 + 2)
    for i in range(i0, i1):
        c = G.B + 1000 * i - (300 if i % 2 == 0 else 900)
        n += w0 <= c < w1
    return n


def test_timeline():
    t = gpu("timeline", max=3000)
    assert t["total"] == N + E["copies"], t["total"]
    assert t["merged"] and len(t["spans"]) <= 3000, len(t["spans"])
    assert sum(s["count"] for s in t["spans"]) == t["total"]
    assert len(t["lanes"]) == 5
    # A 1 % window in the middle, not on a kernel boundary.
    w0 = E["start_ns"] + E["span_ns"] // 2 + 137
    w1 = w0 + E["span_ns"] // 100
    t = gpu("timeline", max=3000, start_ns=w0, end_ns=w1)
    assert t["total"] == spans_in(w0, w1), (t["total"], spans_in(w0, w1))
    assert len(t["spans"]) <= 3000
    assert sum(s["count"] for s in t["spans"]) == t["total"]
    # A small window: every span, unmerged, each inside or across it.
    w1 = w0 + 20000
    t = gpu("timeline", max=3000, start_ns=w0, end_ns=w1)
    assert not t["merged"] and len(t["spans"]) == spans_in(w0, w1)
    for s in t["spans"]:
        assert s["start_ns"] < w1 and s["end_ns"] > w0, s
        assert s["count"] == 1


def test_trace_json_window():
    w0 = E["start_ns"] + E["span_ns"] // 3 + 11
    w1 = w0 + 2000000
    total = spans_in(w0, w1) + calls_in(w0, w1)
    tr = gpu("trace.json", start_ns=w0, end_ns=w1)
    od = tr["otherData"]
    assert od["truncated"] is False and od["events_total"] == total, od
    x = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    assert len(x) == total == od["events"]
    assert od["base_time_ns"] == min(E["start_ns"], E["start_ns"] - 300)
    # A budget of 1000 events: cut in time, says so.
    tr = gpu("trace.json", start_ns=w0, end_ns=w1, max_events=1000)
    od = tr["otherData"]
    x = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    assert od["truncated"] is True and od["events_total"] == total, od
    assert len(x) == od["events"] and 900 <= len(x) <= 1000, len(x)
    cut = od["cut_at_ns"]
    assert w0 < cut < w1
    base = od["base_time_ns"]
    late = [e for e in x
            if round(float(e["ts"]) * 1000) + base >= cut and
            round(float(e["ts"]) * 1000) + base >= w0]
    assert not late, late[:3]
    st, _, _ = SRV.get("/data/plugin/gpu/trace.json", run="big",
                       max_events=0)
    assert st == 400


def main():
    global SRV, E
    try:
        os.makedirs(os.path.join(TMP, "big"))
        t0 = time.time()
        G.write(GEN, os.path.join(TMP, "big", "report1.sqlite"), N)
        print("generated %d kernels in %.1f s" % (N, time.time() - t0))
        E = G.expected(N)
        code = 0
        with Server(TFBOARD, TMP) as srv:
            SRV = srv
            srv.wait_loaded()
            try:
                run_tests([test_summary, test_kernels, test_utilization,
                           test_timeline, test_trace_json_window])
            except SystemExit as e:
                code = e.code
        # (Leaving the with block stopped the server with SIGTERM and
        # checked that it exited cleanly, without sanitizer reports.)
        sys.exit(code)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
