#!/usr/bin/env python3
"""The input-pipeline example end to end (issue 6).

Runs examples/pipeline_train twice into one logdir: "slow" (one loader
making each batch in 12 ms of CPU, steps of 3 ms: input-bound) and "fast"
(one loader at 0.5 ms a batch, a prefetch queue of 32, steps of 20 ms:
not input-bound, with a wide margin because the costs are CPU time, which
a loaded 2-core machine stretches in wall time, and a preempted loader can
stall the queue now and then). Checks what the program printed, then that the server's
/data/plugin/pipeline/summary says "highly" for slow and "not" for fast,
with fractions that match the program's own measurement, and that
`tfboard report --format json` gives the same pipeline objects as the
route (one analysis behind both).

Arguments: the tfboard binary. pipeline_train is found under
TFB_BUILD_ROOT; without it the test is skipped (exit 77).
"""

import json
import os
import re
import subprocess
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD = sys.argv[1] if len(sys.argv) > 1 else None
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
EXAMPLE = os.path.join(BUILD, "examples", "pipeline_train")

RUNS = {
    "slow": ["--loaders", "1", "--prefetch", "2", "--loader-ms", "12", "--step-ms", "3",
             "--steps", "40"],
    "fast": ["--loaders", "1", "--prefetch", "32", "--loader-ms", "0.5", "--step-ms", "20",
             "--steps", "60"],
}
STATE = {}


def run_example(logdir, run, flags):
    p = subprocess.run([EXAMPLE, "--logdir", logdir, "--run", run] + flags,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (run, p.returncode, p.stderr)
    m = re.search(r"steps=(\d+) mean_step_ms=([\d.]+) mean_input_ms=([\d.]+) "
                  r"input_fraction=([\d.]+)", p.stdout)
    assert m, p.stdout
    return {"steps": int(m.group(1)), "step": float(m.group(2)),
            "input": float(m.group(3)), "fraction": float(m.group(4))}


def test_printed():
    slow, fast = STATE["printed"]["slow"], STATE["printed"]["fast"]
    assert slow["steps"] == 40 and fast["steps"] == 60
    # The program's own view agrees with its flags.
    assert slow["fraction"] >= 0.2, slow
    assert fast["fraction"] < 0.05, fast


def test_verdicts():
    s = STATE["server"]
    slow = s.json("/data/plugin/pipeline/summary", run="slow")
    fast = s.json("/data/plugin/pipeline/summary", run="fast")
    assert slow["verdict"] == "highly", slow
    assert fast["verdict"] == "not", fast
    assert slow["steps"] == 40 and fast["steps"] == 60
    # tfb_step_end's figures and the program's own clock agree closely.
    for name, j in (("slow", slow), ("fast", fast)):
        printed = STATE["printed"][name]
        assert abs(j["input_fraction"] - printed["fraction"]) < 0.02, (name, j, printed)
    # Steady waits on the slow run: more loader threads, quoted figures.
    recs = " ".join(slow["recommendations"])
    assert "loader threads" in recs, recs
    assert "%.1f%%" % (100 * slow["input_fraction"]) in recs, recs
    assert "not the bottleneck" in " ".join(fast["recommendations"])
    rows = s.json("/data/plugin/pipeline/steps", run="slow")
    assert [r[0] for r in rows] == list(range(40))  # the slow run
    assert all(0 <= r[2] <= r[1] for r in rows), rows


def test_report_matches_routes():
    p = subprocess.run([TFBOARD, "report", "--logdir", STATE["logdir"], "--format", "json"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    by_run = {r["run"]: r for r in rep["runs"]}
    assert set(by_run) == {"slow", "fast"}, list(by_run)
    s = STATE["server"]
    for run in ("slow", "fast"):
        assert by_run[run]["pipeline"] == s.json("/data/plugin/pipeline/summary", run=run)
        n = 40 if run == "slow" else 60
        sc = by_run[run]["scalars"]
        assert sc["pipeline/step_ms"]["count"] == n
        assert sc["train/loss"]["count"] == n
    p = subprocess.run([TFBOARD, "report", "--logdir", STATE["logdir"]],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    print(p.stdout)  # the closing note quotes this
    assert "HIGHLY input-bound" in p.stdout and "NOT input-bound" in p.stdout


def main():
    if not TFBOARD or not os.path.exists(TFBOARD) or not os.path.exists(EXAMPLE):
        print("tfboard or pipeline_train not built; skipping")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tfb_pipeline_example_") as logdir:
        STATE["logdir"] = logdir
        STATE["printed"] = {run: run_example(logdir, run, flags) for run, flags in RUNS.items()}
        with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
            srv.wait_loaded()
            STATE["server"] = srv
            run_tests([test_printed, test_verdicts, test_report_matches_routes])


if __name__ == "__main__":
    main()
