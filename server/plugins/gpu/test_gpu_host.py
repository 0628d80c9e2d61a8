#!/usr/bin/env python3
"""The host side of Kineto traces: /data/plugin/gpu/host (issue 20).

Runs, each a directory with one *.pt.trace.json:
  kineto/    two threads (one named by thread_name metadata), nested cpu_op
             events, cuda_runtime calls under them, a user_annotation range,
             a kernel (correlation) and baseTimeNanoseconds;
  legacy/    a bare array of category-less events (torch.profiler without
             Kineto, as Debian's python3-torch writes it);
  broken/    a file cut off in the middle of an event;
  deep/      300 nested ops (past the 255 rows a lane draws);
  names/     op names with JSON escapes and markup;
  none/      an event file only.
Checked: lanes, rows (depth), self times and top ops; the window and max
(the longest kept); the kernel's launch_ns in /timeline is its call's start
on the same clock; bad input answers what was read and never stops the
server; names come back as JSON strings, unchanged.

Arguments: the tfboard binary, the logdir generator (unused).
"""

import json
import os
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_gpu_host_")
BASE_NS = 1000000000000  # baseTimeNanoseconds


def write(run, obj, raw=None):
    d = os.path.join(TMP, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "host.pt.trace.json"), "w") as f:
        f.write(raw if raw is not None else json.dumps(obj))


def X(cat, name, tid, ts, dur, **args):
    e = {"ph": "X", "name": name, "pid": 7, "tid": tid, "ts": ts, "dur": dur, "args": args}
    if cat:
        e["cat"] = cat
    return e


def setup():
    ev = [{"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "main"}}]
    # main: step [100, 1100) > linear [110, 610) > addmm [120, 520)
    #       > cudaLaunchKernel [130, 140); relu [620, 720); a range.
    ev += [X("cpu_op", "ProfilerStep#1", 1, 100, 1000),
           X("cpu_op", "aten::linear", 1, 110, 500),
           X("cpu_op", "aten::addmm", 1, 120, 400),
           X("cuda_runtime", "cudaLaunchKernel", 1, 130, 10, correlation=5),
           X("cpu_op", "aten::relu", 1, 620, 100),
           X("user_annotation", "forward", 1, 105, 700),
           X("cpu_op", "DataLoader::collate", 2, 200, 300),
           {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 150.5,
            "dur": 40, "args": {"device": 0, "stream": 7, "correlation": 5}}]
    write("kineto", {"schemaVersion": 1, "baseTimeNanoseconds": BASE_NS, "traceEvents": ev})
    write("legacy", None, json.dumps([
        {"name": "aten::mm", "ph": "X", "ts": 10, "dur": 50, "tid": 1, "pid": "CPU functions",
         "args": {}},
        {"name": "aten::zeros", "ph": "X", "ts": 70, "dur": 5, "tid": 1, "pid": "CPU functions",
         "args": {}}]))
    good = json.dumps({"traceEvents": [X("cpu_op", "kept", 1, 0, 10),
                                       X("cpu_op", "kept2", 1, 20, 10)]})
    write("broken", None, good[:good.index("kept2") + 10])
    write("deep", {"traceEvents": [X("cpu_op", "op%d" % i, 1, i, 1000 - 2 * i)
                                   for i in range(300)]})
    write("names", {"traceEvents": [X("cpu_op", "<b>\"q\"\\é</b>", 1, 0, 10),
                                    X("cpu_op", "\u2603 snow", 1, 20, 10)]})
    d = os.path.join(TMP, "none")
    os.makedirs(d)
    with open(os.path.join(d, "events.out.tfevents.1.host"), "wb") as f:
        f.write(b"")


def test_kineto_lanes_rows_self():
    s = STATE["server"]
    j = s.json("/data/plugin/gpu/host", run="kineto")
    lanes = {l["label"]: l for l in j["lanes"]}
    assert set(lanes) == {"CPU main", "NVTX main", "CPU thread 2"}, lanes
    assert lanes["CPU main"]["kind"] == "thread" and lanes["NVTX main"]["kind"] == "nvtx"
    assert lanes["CPU main"]["depth"] == 4, lanes  # step > linear > addmm > launch
    by = {sp["name"]: sp for sp in j["spans"]}
    assert by["cudaLaunchKernel"]["kind"] == "runtime" and by["cudaLaunchKernel"]["depth"] == 3
    assert by["forward"]["kind"] == "range" and by["forward"]["depth"] == 0
    assert by["aten::relu"]["depth"] == 1
    # µs to ns exactly, plus baseTimeNanoseconds.
    assert by["aten::addmm"]["start_ns"] == BASE_NS + 120000, by["aten::addmm"]
    assert by["aten::addmm"]["end_ns"] == BASE_NS + 520000
    top = {o["name"]: o for o in j["top_ops"]}
    # Self time: the op less its direct children.
    assert top["aten::addmm"]["self_ns"] == 390000, top
    assert top["aten::linear"]["self_ns"] == 100000
    assert top["ProfilerStep#1"]["self_ns"] == 1000000 - 500000 - 100000
    assert "forward" not in top  # ranges are not ops
    assert j["top_ops"][0]["name"] == "ProfilerStep#1"  # most self time first
    assert j["busy_ns"] == 1000000 + 300000  # top-level time, both threads
    assert j["total"] == 7 and not j["truncated"]


def test_window_and_max():
    s = STATE["server"]
    j = s.json("/data/plugin/gpu/host", run="kineto", start_ns=BASE_NS + 600000,
               end_ns=BASE_NS + 700000)
    names = sorted(sp["name"] for sp in j["spans"])
    assert names == ["ProfilerStep#1", "aten::linear", "aten::relu", "forward"], names
    j = s.json("/data/plugin/gpu/host", run="kineto", max=2)
    assert j["truncated"] and [sp["name"] for sp in j["spans"]] == ["ProfilerStep#1", "forward"]
    assert len(j["top_ops"]) == 6  # the whole trace, whatever the window


def test_launch_ns_matches_the_call():
    s = STATE["server"]
    t = s.json("/data/plugin/gpu/timeline", run="kineto")
    k = [sp for sp in t["spans"] if sp["name"] == "gemm"]
    assert len(k) == 1 and k[0]["launch_ns"] == BASE_NS + 130000, t["spans"]
    assert k[0]["start_ns"] == BASE_NS + 150500


def test_legacy_broken_deep_names_none():
    s = STATE["server"]
    j = s.json("/data/plugin/gpu/host", run="legacy")
    assert [sp["name"] for sp in j["spans"]] == ["aten::mm", "aten::zeros"], j
    assert j["lanes"][0]["label"] == "CPU thread 1"
    j = s.json("/data/plugin/gpu/host", run="broken")
    assert [sp["name"] for sp in j["spans"]] == ["kept"], j  # what was read is kept
    j = s.json("/data/plugin/gpu/host", run="deep")
    assert j["total"] == 300 and j["lanes"][0]["depth"] == 256, j["lanes"]
    assert max(sp["depth"] for sp in j["spans"]) == 255
    j = s.json("/data/plugin/gpu/host", run="names")
    assert sorted(sp["name"] for sp in j["spans"]) == ["<b>\"q\"\\\u00e9</b>", "\u2603 snow"], j
    j = s.json("/data/plugin/gpu/host", run="none")
    assert j["spans"] == [] and j["lanes"] == [] and j["total"] == 0
    # Still serving, and bad parameters are 400s.
    assert s.get("/data/plugin/gpu/host", run="kineto", start_ns=5, end_ns=1)[0] == 400
    assert s.get("/data/plugin/gpu/host", run="nope")[0] == 404
    assert s.json("/data/plugin/gpu/host", run="kineto")["total"] == 7


STATE = {}

if __name__ == "__main__":
    setup()
    with Server(TFBOARD, TMP) as srv:
        STATE["server"] = srv
        srv.wait_loaded()
        run_tests([test_kineto_lanes_rows_self, test_window_and_max,
                   test_launch_ns_matches_the_call, test_legacy_broken_deep_names_none])
