#!/usr/bin/env python3
"""HTA's TraceDiff in Compare (issue 34, item 4): two runs whose Kineto
traces differ by one kernel and one CPU op (each added in B, another
deleted), with a kernel launched more often and an op that got slower.
Checked exactly, by hand, in the route's JSON (/data/plugin/compare/
compare, the same object as `report --compare --format json`) and in the
text and Markdown reports.

  A: kernels k_same x2 (10 µs each), k_old x1 (5 µs)
     ops     aten::mm x2 (20 µs each), aten::relu x1 (4 µs)
  B: kernels k_same x3 (10 µs each), k_new x1 (7 µs)
     ops     aten::mm x2 (25 µs each), aten::add x1 (3 µs)

Kinds (HTA's ops_diff, by count): kernels: k_new added, k_old deleted,
k_same increased; ops: aten::add added, aten::relu deleted, aten::mm
unchanged (same count; +10 µs of time). Rows by |B - A time|: aten::mm
(+10 µs) and k_same (+10 µs) tie, by name; then k_new +7, k_old -5,
aten::relu -4, aten::add +3.

Arguments: the tfboard binary, the logdir generator (unused).
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
TMP = tempfile.mkdtemp(prefix="tfb_trace_diff_")
BASE = 1700000000000000  # µs
US = 1000


def trace(d, kernels, ops):
    """kernels, ops: [(name, count, dur µs)], laid out one after another."""
    os.makedirs(d)
    ev, t = [], 0
    for name, count, dur in ops:
        for _ in range(count):
            ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1,
                       "tid": 1, "ts": BASE + t, "dur": dur})
            t += dur + 1
    for name, count, dur in kernels:
        for _ in range(count):
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0,
                       "tid": 7, "ts": BASE + t, "dur": dur,
                       "args": {"device": 0, "stream": 7}})
            t += dur + 1
    with open(os.path.join(d, "host_1.1700000000000.pt.trace.json"),
              "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)


def setup():
    trace(os.path.join(TMP, "A"),
          [("k_same", 2, 10), ("k_old", 1, 5)],
          [("aten::mm", 2, 20), ("aten::relu", 1, 4)])
    trace(os.path.join(TMP, "B"),
          [("k_same", 3, 10), ("k_new", 1, 7)],
          [("aten::mm", 2, 25), ("aten::add", 1, 3)])


EXPECTED = [
    # name, on, change, count A, count B, total A µs, total B µs
    ("aten::mm", "cpu", "unchanged", 2, 2, 40, 50),
    ("k_same", "gpu", "increased", 2, 3, 20, 30),
    ("k_new", "gpu", "added", 0, 1, 0, 7),
    ("k_old", "gpu", "deleted", 1, 0, 5, 0),
    ("aten::relu", "cpu", "deleted", 1, 0, 4, 0),
    ("aten::add", "cpu", "added", 0, 1, 0, 3),
]


def check_diff(d):
    assert d is not None, "no trace_diff"
    assert d["kernels"] == {"added": 1, "deleted": 1, "increased": 1,
                            "decreased": 0, "unchanged": 0}, d["kernels"]
    assert d["ops"] == {"added": 1, "deleted": 1, "increased": 0,
                        "decreased": 0, "unchanged": 1}, d["ops"]
    assert d["names"] == 6 and d["rows_max"] == 200, d
    got = [(r["name"], r["device"], r["change"], r["count_a"], r["count_b"],
            r["total_ns_a"] // US, r["total_ns_b"] // US) for r in d["rows"]]
    assert got == EXPECTED, got
    for r in d["rows"]:
        assert r["diff_count"] == r["count_b"] - r["count_a"], r
        assert r["diff_ns"] == r["total_ns_b"] - r["total_ns_a"], r


def test_route():
    c = SRV.json("/data/plugin/compare/compare", a="A", b="B")
    # The route waits briefly for traces: ask until both are read.
    for _ in range(200):
        if c["trace_diff"] is not None:
            break
        c = SRV.json("/data/plugin/compare/compare", a="A", b="B")
    check_diff(c["trace_diff"])


def report(*args):
    p = subprocess.run([TFBOARD, "report", "--quiet", "--logdir", TMP,
                        "--compare", "A", "B"] + list(args),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_report():
    check_diff(json.loads(report("--format", "json"))["trace_diff"])
    txt = report()
    assert ("kernels: 1 added, 1 deleted, 1 increased, 0 decreased, "
            "0 unchanged") in txt, txt
    assert ("CPU ops: 1 added, 1 deleted, 0 increased, 0 decreased, "
            "1 unchanged") in txt, txt
    line = next(x for x in txt.splitlines() if "aten::relu" in x)
    assert "deleted" in line and "-0.004 ms" in line, line
    md = report("--format", "markdown")
    assert "## Trace diff" in md, md
    assert "| k\\_new | gpu | added | 0 | 1 |" in md, md  # _ escaped


def main():
    global SRV
    try:
        setup()
        with Server(TFBOARD, TMP) as srv:
            SRV = srv
            srv.wait_loaded()
            run_tests([test_route, test_report])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
