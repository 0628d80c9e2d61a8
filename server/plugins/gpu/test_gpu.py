#!/usr/bin/env python3
"""Integration test of the GPU routes (issue 5), on the real tfboard binary.

The logdir holds four runs:
  ours/   a trace store written by our collector path: hand-built CUPTI
          records walked by the real libcupti into the store
          (test_gpu_gen_trace, built next to this test), plus host spans;
  nsys/   a file in the `nsys export --type sqlite` layout (names as
          StringIds ids, nsys's extra columns), made here with sqlite3;
  kineto/ a PyTorch-profiler trace, *.pt.trace.json, µs with decimals;
  kinetogz/ the same trace gzip'ed (*.pt.trace.json.gz);
and a run holding a .sqlite without a kernel table (not a trace).
Every number is checked exactly: busy time as the union of kernel, copy
and memset intervals, span, HTA idle breakdown (per stream, 30 µs), kernel statistics and shares, memcpy
breakdown, utilization buckets, timeline merging, the Chrome trace export.

Arguments: the tfboard binary, the logdir generator (unused).
TFB_BUILD_ROOT locates test_gpu_gen_trace; without it, or when libcupti
cannot be loaded, the ours/ part is skipped and the rest still runs.
"""

import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from gpu_files_gen import B, make_kineto, make_nsys  # noqa: E402

TFBOARD = sys.argv[1]
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
GEN = os.path.join(BUILD, "tests", "integration", "test_gpu_gen_trace")
TMP = tempfile.mkdtemp(prefix="tfb_gpu_")
HAVE_OURS = False


def setup():
    global HAVE_OURS
    os.makedirs(os.path.join(TMP, "ours"))
    if os.path.exists(GEN):
        r = subprocess.run([GEN, os.path.join(TMP, "ours")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            HAVE_OURS = True
        elif r.returncode != 77:
            raise AssertionError("generator failed: %s" % r.stderr)
    make_nsys(os.path.join(TMP, "nsys"))
    make_kineto(os.path.join(TMP, "kineto"), gz=False)
    make_kineto(os.path.join(TMP, "kinetogz"), gz=True)
    make_broken(os.path.join(TMP, "broken"))
    other = os.path.join(TMP, "notrace")
    os.makedirs(other)
    db = sqlite3.connect(os.path.join(other, "cache.sqlite"))
    db.execute("CREATE TABLE t(x)")
    db.commit()
    db.close()


def make_broken(d):
    """Damaged inputs: a Kineto file cut inside its second kernel event, a
    .sqlite of random bytes, a .pt.trace.json nested 200000 deep, and one
    that is not JSON at all. The server must keep what it could read."""
    os.makedirs(d)
    text = json.dumps({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k_ok", "pid": 0, "tid": 1,
         "ts": 1000, "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "k_cut", "pid": 0, "tid": 1,
         "ts": 2000, "dur": 5}]})
    cut = text.index("k_cut") + 2
    with open(os.path.join(d, "a.pt.trace.json"), "w") as f:
        f.write(text[:cut])
    with open(os.path.join(d, "junk.sqlite"), "wb") as f:
        f.write(os.urandom(4096))
    with open(os.path.join(d, "deep.pt.trace.json"), "w") as f:
        f.write('{"traceEvents": ' + "[" * 200000 + "]" * 200000 + "}")
    with open(os.path.join(d, "text.pt.trace.json.gz"), "wb") as f:
        f.write(b"not gzip, not json \x00\xff")


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(1.0, abs(b))


SRV = None


def test_ours_summary():
    if not HAVE_OURS:
        print("skip ours (libcupti or generator missing)")
        return
    s = SRV.json("/data/plugin/gpu/summary", run="ours")
    devs = {d["id"]: d for d in s["devices"]}
    assert set(devs) == {0, 1}, devs.keys()
    d = devs[0]
    assert d["name"] == "Synthetic GPU", d["name"]
    assert d["sm_count"] == 132
    assert d["kernels"] == 5
    assert d["kernel_ns"] == 5500
    # Busy: kernels, copies and memsets (HTA counts every GPU event), their
    # union: memset 50-80, HtoD 100-400, K1, K2 u K4 (2010-4500), K3, K5,
    # DtoH 7100-7150, HtoD 8000-8200.
    assert d["busy_ns"] == 30 + 300 + 1000 + 2490 + 500 + 1000 + 50 + 200, \
        d["busy_ns"]
    assert d["span_ns"] == 8200 - 50
    assert d["idle_ns"] == d["span_ns"] - d["busy_ns"]
    assert d["start_ns"] == B + 50
    assert close(d["busy_fraction"], 5570 / 8150)
    assert d["memcpy"] == {
        "HtoD": {"count": 2, "bytes": 2 << 20, "ns": 500},
        "DtoH": {"count": 1, "bytes": 4096, "ns": 50}}, d["memcpy"]
    assert d["memset"] == {"count": 1, "bytes": 256, "ns": 30}
    # HTA's breakdown, stream by stream (gaps under 30 µs are kernel wait
    # unless the launch came after the previous event ended):
    # stream 7: memset, HtoD (gap 20, no launch: kernel wait), K1 (600,
    # launched at 500 > 400: host wait), K2 (10: kernel wait), K3 (1990,
    # launched at 4000 > 3010: host wait), DtoH (1600: kernel wait), HtoD
    # (850: kernel wait); stream 8: K4, K5 (1500, launched early: kernel
    # wait). The device's parts are the sum of its streams'.
    by = {x["stream"]: x for x in d["streams"]}
    assert by[7] == {"stream": 7, "events": 7, "host_wait_ns": 600 + 1990,
                     "kernel_wait_ns": 20 + 10 + 1600 + 850,
                     "other_ns": 0}, by[7]
    assert by[8] == {"stream": 8, "events": 2, "host_wait_ns": 0,
                     "kernel_wait_ns": 1500, "other_ns": 0}, by[8]
    assert d["idle"] == {"host_wait_ns": 2590, "kernel_wait_ns": 3980,
                         "other_ns": 0}, d["idle"]
    d1 = devs[1]
    assert d1["name"] == "GPU 1"
    assert (d1["kernels"], d1["busy_ns"], d1["span_ns"]) == (1, 500, 500)
    assert d1["busy_fraction"] == 1.0
    assert d1["idle"] == {"host_wait_ns": 0, "kernel_wait_ns": 0,
                          "other_ns": 0}


def test_ours_kernels():
    if not HAVE_OURS:
        return
    k = SRV.json("/data/plugin/gpu/kernels", run="ours")
    assert k["total"] == 2 and k["total_ns"] == 6000
    g, r = k["kernels"]
    assert g["name"] == "gemm()", g["name"]
    assert (g["count"], g["total_ns"], g["min_ns"], g["max_ns"]) == \
        (4, 3500, 500, 1000)
    assert g["mean_ns"] == 875
    assert close(g["std_ns"], math.sqrt(46875))
    assert close(g["share"], 3500 / 6000)
    assert g["grid"] == [80, 1, 1] and g["block"] == [128, 2, 1]
    assert g["registers"] == 64 and g["shared_mem"] == 3072
    assert r["name"] == "relu()"
    assert (r["count"], r["total_ns"], r["mean_ns"], r["std_ns"]) == \
        (2, 2500, 1250, 750)
    assert close(r["share"], 2500 / 6000)
    one = SRV.json("/data/plugin/gpu/kernels", run="ours", limit=1)
    assert len(one["kernels"]) == 1 and one["total"] == 2
    assert one["kernels"][0]["share"] == g["share"]


def test_ours_utilization():
    if not HAVE_OURS:
        return
    u = SRV.json("/data/plugin/gpu/utilization", run="ours", device=0,
                 buckets=6)
    # Busy from B + 50 (the memset) to B + 8200: 6 buckets of 1359 ns.
    assert u["start_ns"] == B + 50 and u["bucket_ns"] == 1359, u
    want = [30 + 300 + 409, 591 + 758, 1359, 373 + 486, 14 + 845,
            155 + 50 + 200]
    assert u["busy"] == [x / 1359 for x in want], u["busy"]
    u1 = SRV.json("/data/plugin/gpu/utilization", run="ours", device=1,
                  buckets=2)
    assert u1["bucket_ns"] == 250 and u1["busy"] == [1.0, 1.0]
    st, _, body = SRV.get("/data/plugin/gpu/utilization", run="ours",
                          device=5)
    assert st == 404 and b"error" in body
    st, _, _ = SRV.get("/data/plugin/gpu/utilization", run="ours",
                       buckets=0)
    assert st == 400


def test_ours_timeline():
    if not HAVE_OURS:
        return
    t = SRV.json("/data/plugin/gpu/timeline", run="ours")
    assert t["total"] == 12 and not t["merged"]
    assert len(t["spans"]) == 12
    lanes = {l["id"]: l for l in t["lanes"]}
    kinds = sorted((l["kind"], l["device"], l["stream"]) for l in lanes.values()
                   if l["kind"] == "gpu")
    assert kinds == [("gpu", 0, 7), ("gpu", 0, 8), ("gpu", 1, 9)], kinds
    assert sum(1 for l in lanes.values() if l["kind"] == "host") == 2
    steps = [s for s in t["spans"] if s["kind"] == "step"]
    assert steps == [{"lane": steps[0]["lane"], "kind": "step", "name": None,
                      "start_ns": B, "end_ns": B + 7500, "count": 1,
                      "busy_ns": 7500, "step": 1}], steps
    m = SRV.json("/data/plugin/gpu/timeline", run="ours", max=5)
    assert m["merged"] and len(m["spans"]) <= 5
    assert sum(s["count"] for s in m["spans"]) == 12
    # Device 0 stream 7 merged into one span: its busy time is the union
    # of its kernels, copies and memset.
    lane7 = [l["id"] for l in m["lanes"] if l["stream"] == 7][0]
    s7 = [s for s in m["spans"] if s["lane"] == lane7]
    assert len(s7) == 1 and s7[0]["count"] == 7
    assert s7[0]["start_ns"] == B + 50 and s7[0]["end_ns"] == B + 8200
    assert s7[0]["busy_ns"] == 30 + 300 + 1000 + 1000 + 500 + 50 + 200
    w = SRV.json("/data/plugin/gpu/timeline", run="ours",
                 start_ns=B + 4600, end_ns=B + 5600)
    got = sorted((s["kind"], s["start_ns"]) for s in w["spans"])
    assert got == [("input", B + 3010), ("kernel", B + 5000),
                   ("step", B)], got
    st, _, _ = SRV.get("/data/plugin/gpu/timeline", run="ours",
                       start_ns=10, end_ns=5)
    assert st == 400
    st, _, _ = SRV.get("/data/plugin/gpu/timeline", run="ours", max="x")
    assert st == 400


def test_ours_trace_json():
    if not HAVE_OURS:
        return
    st, ct, body = SRV.get("/data/plugin/gpu/trace.json", run="ours")
    assert st == 200 and ct.startswith("application/json")
    tr = json.loads(body)
    assert tr["otherData"]["base_time_ns"] == B
    ev = tr["traceEvents"]
    ks = sorted((e["ts"], e["dur"], e["pid"], e["tid"]) for e in ev
                if e.get("cat") == "kernel")
    assert len(ks) == 6
    assert ks[0] == (1.0, 0.5, 1, 9) and ks[1] == (1.0, 1.0, 0, 7), ks
    assert (2.01, 1.0, 0, 7) in ks
    flows = [e for e in ev if e.get("cat") == "ac2g"]
    assert len(flows) == 10  # five launches, a start and an end each
    assert sum(1 for e in ev if e.get("cat") == "cuda_runtime") == 5
    assert sum(1 for e in ev if e.get("cat") == "gpu_memcpy") == 3
    names = [e["args"]["name"] for e in ev if e["ph"] == "M"]
    assert "GPU 0 Synthetic GPU" in names


def test_nsys():
    s = SRV.json("/data/plugin/gpu/summary", run="nsys")
    (d,) = s["devices"]
    assert d["name"] == "NVIDIA H100 80GB HBM3" and d["sm_count"] == 132
    assert d["kernels"] == 4 and d["kernel_ns"] == 1000
    # Busy: the copy 900-950 and the kernels' union.
    assert d["busy_ns"] == 50 + 100 + 300 + 500
    assert d["span_ns"] == 2100 - 900
    assert d["memcpy"] == {"DtoD": {"count": 1, "bytes": 8192, "ns": 50}}
    # stream 3 in start order: the copy 900-950, 1000-1100 (launch 500:
    # kernel wait 50), 1200-1500 (launch 600: kernel wait 100, under
    # 30 µs), 1600-1800 (launch 1550 > 1500: host wait 100), 1700-2100
    # (overlaps: no gap).
    assert d["idle"] == {"host_wait_ns": 100, "kernel_wait_ns": 150,
                         "other_ns": 0}, d["idle"]
    k = SRV.json("/data/plugin/gpu/kernels", run="nsys")
    a, n = k["kernels"]
    assert a["name"] == "void attn<float>(float*, int)", a["name"]
    assert (a["count"], a["total_ns"], a["min_ns"], a["max_ns"]) == \
        (3, 600, 100, 300)
    assert a["mean_ns"] == 200 and close(a["std_ns"], math.sqrt(20000 / 3))
    assert a["share"] == 0.6 and a["block"] == [256, 1, 1]
    assert a["registers"] == 32 and a["shared_mem"] == 512
    assert n["name"] == "void norm(float*)" and n["share"] == 0.4
    tr = json.loads(SRV.get("/data/plugin/gpu/trace.json", run="nsys")[2])
    rt = [e for e in tr["traceEvents"] if e.get("cat") == "cuda_runtime"]
    assert len(rt) == 4 and rt[0]["name"] == "cudaLaunchKernel_v7000"


def check_kineto(run):
    s = SRV.json("/data/plugin/gpu/summary", run=run)
    (d,) = s["devices"]
    assert d["kernels"] == 2
    # 2.25 µs and 1.001 µs, exact to the ns.
    assert d["kernel_ns"] == 2250 + 1001, d["kernel_ns"]
    # Busy: both kernels and the copy (10 µs - 10.5 µs).
    assert d["busy_ns"] == 3251 + 500
    base = 1700000000000000 * 1000
    assert d["start_ns"] == base + 1500, d["start_ns"]
    assert d["span_ns"] == 10500 - 1500
    assert d["memcpy"] == {"DtoH": {"count": 1, "bytes": 1024, "ns": 500}}
    # The second kernel and the copy have no launch record: gaps of 500 ns
    # and 4749 ns, both under 30 µs, are kernel wait.
    assert d["idle"] == {"host_wait_ns": 0, "kernel_wait_ns": 500 + 4749,
                         "other_ns": 0}, d["idle"]
    # deviceProperties names the device.
    assert d["name"] == "A100", d["name"]
    k = SRV.json("/data/plugin/gpu/kernels", run=run)
    first = k["kernels"][0]
    assert first["name"] == "ampere_sgemm_128x64_nn"
    assert first["grid"] == [64, 2, 1] and first["registers"] == 122
    assert first["shared_mem"] == 32768
    # Names are JSON text, escaped; never markup.
    st, _, body = SRV.get("/data/plugin/gpu/kernels", run=run)
    assert b"<b>" not in body and b"\\u003cb\\u003e" in body
    assert k["kernels"][1]["name"] == 'elementwise "quoted" <b>'


def test_kineto():
    check_kineto("kineto")


def test_kineto_gz():
    check_kineto("kinetogz")


def test_broken_inputs():
    s = SRV.json("/data/plugin/gpu/summary", run="broken")
    (d,) = s["devices"]
    assert d["kernels"] == 1 and d["kernel_ns"] == 5000, d
    k = SRV.json("/data/plugin/gpu/kernels", run="broken")
    assert [x["name"] for x in k["kernels"]] == ["k_ok"]
    assert SRV.json("/data/plugin/gpu/timeline", run="broken")["total"] == 1


def test_no_trace_and_errors():
    s = SRV.json("/data/plugin/gpu/summary", run="notrace")
    assert s["devices"] == []
    assert SRV.json("/data/plugin/gpu/kernels", run="notrace")["kernels"] == []
    t = SRV.json("/data/plugin/gpu/timeline", run="notrace")
    assert t["spans"] == [] and t["total"] == 0
    st, _, _ = SRV.get("/data/plugin/gpu/trace.json", run="notrace")
    assert st == 404
    st, _, _ = SRV.get("/data/plugin/gpu/summary")
    assert st == 400
    st, _, _ = SRV.get("/data/plugin/gpu/summary", run="no-such-run")
    assert st == 404
    st, _, _ = SRV.get("/data/plugin/gpu/kernels", run="nsys", limit=-1)
    assert st == 400


def main():
    global SRV
    try:
        setup()
        with Server(TFBOARD, TMP) as srv:
            SRV = srv
            srv.wait_loaded()
            run_tests([test_ours_summary, test_ours_kernels,
                       test_ours_utilization, test_ours_timeline,
                       test_ours_trace_json, test_nsys, test_kineto,
                       test_kineto_gz, test_broken_inputs,
                       test_no_trace_and_errors])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
