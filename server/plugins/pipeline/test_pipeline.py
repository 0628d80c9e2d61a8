#!/usr/bin/env python3
"""Integration test of the input-pipeline routes (issue 6).

Writes runs with known input fractions (event files framed and encoded
here in pure Python: TFRecord with masked CRC-32C, Event/Summary with
simple_value scalars pipeline/step_ms and pipeline/input_ms), one at each
side of each verdict boundary, one with a trace store (SQLite, the
TFB_HOST_SPANS and CUPTI_ACTIVITY_KIND_KERNEL tables) whose other host time
and GPU idle time are known exactly, one restarted run (a step logged
twice) and one without pipeline scalars. Then starts the real tfboard on
127.0.0.1 and checks /data/plugin/pipeline/summary and /steps field by
field, and their 400/404 answers.

Arguments: the tfboard binary (then the logdir generator, unused).
Bounded in time; the server is always stopped.
"""

import math
import os
import sys
import tempfile
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from pipeline_gen import (event, f32, pipeline_events, write_events,  # noqa: E402
                          write_trace)

TFBOARD = sys.argv[1] if len(sys.argv) > 1 else None

# ---- the logdir -----------------------------------------------------------

# run: (step_ms, input_ms, expected verdict)
BOUNDARY_RUNS = {
    "b_highly": (100.0, 20.0, "highly"),
    "b_mod_hi": (100.0, 19.99, "moderately"),
    "b_mod": (100.0, 5.0, "moderately"),
    "b_not": (100.0, 4.99, "not"),
    "b_zero": (100.0, 0.0, "not"),
    "b_all_input": (10.0, 10.0, "highly"),
}
N_STEPS = 30


def make_logdir(root):
    for run, (st, inp, _) in BOUNDARY_RUNS.items():
        write_events(os.path.join(root, run), pipeline_events(N_STEPS, st, inp))
    traced = os.path.join(root, "b_traced")
    write_events(traced, pipeline_events(10, 100.0, 1.0))
    write_trace(traced, 10)
    # A restarted job: steps 0-9, then 5-9 again with other values; the
    # last write of a step wins.
    write_events(os.path.join(root, "b_restart"),
                 pipeline_events(10, 50.0, 10.0)
                 + pipeline_events(5, 40.0, 2.0, first=5))
    write_events(os.path.join(root, "b_none"),
                 [event(1700000001.0 + s, s, scalars=[("train/loss", 1.0 / (s + 1))])
                  for s in range(5)])
    # Mixed step times for the statistics: 1..20 ms, input 0.5 ms each.
    evs = []
    for s in range(20):
        evs.append(event(1700000001.0 + s, s, scalars=[("pipeline/step_ms", s + 1.0),
                                                       ("pipeline/input_ms", 0.5)]))
    write_events(os.path.join(root, "b_stats"), evs)


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(b))


def percentile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(pos)
    if lo + 1 >= len(v):
        return v[-1]
    return v[lo] + (v[lo + 1] - v[lo]) * (pos - lo)


SUMMARY_KEYS = {"steps", "mean_step_ms", "mean_input_ms", "input_fraction", "verdict",
                "step_ms", "gpu_idle_in_input_fraction", "recommendations"}
STAT_KEYS = {"mean", "stddev", "min", "max", "p50", "p90", "p99"}

STATE = {}


def test_boundaries():
    s = STATE["server"]
    for run, (st, inp, verdict) in BOUNDARY_RUNS.items():
        j = s.json("/data/plugin/pipeline/summary", run=run)
        assert SUMMARY_KEYS <= set(j), (run, sorted(j))
        assert set(j["step_ms"]) == STAT_KEYS, j["step_ms"]
        assert j["steps"] == N_STEPS, (run, j["steps"])
        assert j["verdict"] == verdict, (run, j["verdict"], j["input_fraction"])
        assert close(j["input_fraction"], f32(inp) / f32(st)), (run, j["input_fraction"])
        assert close(j["mean_step_ms"], f32(st)) and close(j["mean_input_ms"], f32(inp))
        assert j["step_ms"]["stddev"] == 0 and j["step_ms"]["p99"] == f32(st)
        assert j["gpu_idle_in_input_fraction"] is None, run
        assert j["recommendations"] and all(isinstance(r, str) for r in j["recommendations"])
        # The recommendations quote the run's own numbers.
        pct = "%.1f%%" % (100 * f32(inp) / f32(st))
        assert any(pct in r for r in j["recommendations"]), (run, pct, j["recommendations"])


def test_traced_run():
    j = STATE["server"].json("/data/plugin/pipeline/summary", run="b_traced")
    assert j["verdict"] == "potentially", j
    assert close(j["input_fraction"], 0.01, 1e-6)
    assert close(j["gpu_idle_in_input_fraction"], 1.0 / 12.0), j
    assert close(j["other_host_fraction"], 0.11), j
    assert j["has_trace"] is True
    assert any("11.0% of step time" in r for r in j["recommendations"]), j["recommendations"]


def test_stats():
    j = STATE["server"].json("/data/plugin/pipeline/summary", run="b_stats")
    v = [float(x) for x in range(1, 21)]
    mean = sum(v) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / len(v))
    st = j["step_ms"]
    assert close(st["mean"], mean) and close(st["stddev"], sd), st
    assert st["min"] == 1 and st["max"] == 20
    for q, k in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
        assert close(st[k], percentile(v, q)), (k, st[k], percentile(v, q))
    assert close(j["input_fraction"], 10.0 / 210.0)
    assert j["verdict"] == "not"
    assert j["input_ms"]["mean"] == 0.5


def test_steps_route():
    s = STATE["server"]
    rows = s.json("/data/plugin/pipeline/steps", run="b_restart")
    assert [r[0] for r in rows] == list(range(10)), rows
    for step, st, inp in rows:
        if step < 5:
            assert (st, inp) == (50, 10), (step, st, inp)
        else:
            assert (st, inp) == (40, 2), (step, st, inp)
    rows = s.json("/data/plugin/pipeline/steps", run="b_highly")
    assert rows == [[i, 100, 20] for i in range(N_STEPS)], rows[:3]
    j = s.json("/data/plugin/pipeline/summary", run="b_restart")
    assert j["steps"] == 10 and close(j["input_fraction"], 60.0 / 450.0)


def test_no_pipeline_data():
    s = STATE["server"]
    j = s.json("/data/plugin/pipeline/summary", run="b_none")
    assert j["steps"] == 0 and j["verdict"] is None and j["recommendations"] == [], j
    assert j["step_ms"] is None and j["input_fraction"] is None
    assert s.json("/data/plugin/pipeline/steps", run="b_none") == []


def test_bad_requests():
    s = STATE["server"]
    for route in ("summary", "steps"):
        st, ct, body = s.get("/data/plugin/pipeline/" + route)
        assert st == 400 and b"error" in body, (route, st, body)
        st, ct, body = s.get("/data/plugin/pipeline/" + route, run="no_such_run")
        assert st == 404 and b"error" in body, (route, st, body)
        # A run name full of markup comes back as JSON, never as HTML.
        st, ct, body = s.get("/data/plugin/pipeline/" + route, run="<script>x</script>")
        assert st == 404 and b"<script>" not in body, body


def main():
    if not TFBOARD or not os.path.exists(TFBOARD):
        print("tfboard binary not given; skipping")
        sys.exit(77)
    deadline = time.monotonic() + 90
    with tempfile.TemporaryDirectory(prefix="tfb_pipeline_") as root:
        make_logdir(root)
        with Server(TFBOARD, root, "--reload_interval", "0") as srv:
            srv.wait_loaded()
            STATE["server"] = srv
            tests = [test_boundaries, test_traced_run, test_stats, test_steps_route,
                     test_no_pipeline_data, test_bad_requests]
            assert time.monotonic() < deadline
            run_tests(tests)


if __name__ == "__main__":
    main()
