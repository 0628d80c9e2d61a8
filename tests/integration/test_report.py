#!/usr/bin/env python3
"""`tfboard report` in every format (issue 6).

A logdir written here in pure Python (see test_pipeline.py's writer):
  input_bound   pipeline scalars at 30 % input (highly), a loss
  healthy       pipeline scalars at 1 % input (not), a loss, gradient
                norms with one vanishing layer
  diverged      a loss that turns NaN at step 6 and +Inf at step 8
  <b>odd|name   a run name full of markup and Markdown punctuation
  traced        pipeline scalars at 1 % input and a trace store with host
                spans and kernels (other host time 11 %: "potentially")
Checks: JSON field by field; text and Markdown carry the verdicts, the
alert and escape names; html is one file that loads nothing from outside
and draws in headless Chromium (when installed); --run selects runs;
--fail-on nan exits 1 only when an alert is selected; bad usage exits 2.

Arguments: the tfboard binary.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import run_tests  # noqa: E402
from pipeline_gen import (event, f32, pipeline_events, write_events,  # noqa: E402
                          write_trace)

TFBOARD = sys.argv[1] if len(sys.argv) > 1 else None
STATE = {}
ODD = "<b>odd|name"
NAN = float("nan")
INF = float("inf")


def make_logdir(root):
    t0 = 1700000000.0
    write_events(os.path.join(root, "input_bound"),
                 pipeline_events(20, 10.0, 3.0)
                 + [event(t0 + 10 + s, s, scalars=[("train/loss", 2.0 - s / 10)])
                    for s in range(20)])
    evs = pipeline_events(20, 10.0, 0.1)
    for s in range(20):
        evs.append(event(t0 + 5 + s, s, scalars=[
            ("train/loss", 1.0 / (s + 1)),
            ("grad_norm/dense1", 0.5), ("grad_norm/dense2", 1e-9 if s >= 15 else 0.2)]))
    write_events(os.path.join(root, "healthy"), evs)
    evs = []
    for s in range(10):
        v = NAN if s in (6, 7) else INF if s == 8 else 1.0 + s
        evs.append(event(t0 + 100 + s, s, scalars=[("train/loss", v)]))
    write_events(os.path.join(root, "diverged"), evs)
    write_events(os.path.join(root, ODD),
                 [event(t0 + 200, 0, scalars=[("a|b*c", 1.0)])])
    write_events(os.path.join(root, "traced"), pipeline_events(10, 100.0, 1.0))
    write_trace(os.path.join(root, "traced"), 10)


def report(*args, check_rc=0):
    p = subprocess.run([TFBOARD, "report", "--logdir", STATE["logdir"]] + list(args),
                       capture_output=True, text=True, timeout=60)
    if check_rc is not None:
        assert p.returncode == check_rc, (args, p.returncode, p.stderr, p.stdout[-2000:])
    return p


def test_json():
    rep = json.loads(report("--format", "json").stdout)
    runs = {r["run"]: r for r in rep["runs"]}
    assert set(runs) == {"input_bound", "healthy", "diverged", ODD, "traced"}, list(runs)
    keys = {"run", "steps", "first_wall_time", "last_wall_time", "scalars", "alerts",
            "gradient_flags", "pipeline", "gpu"}
    for name, r in runs.items():
        assert keys <= set(r), sorted(r)
        assert (r["gpu"] is None) == (name != "traced"), (name, r["gpu"])

    tr = runs["traced"]
    assert tr["pipeline"]["verdict"] == "potentially", tr["pipeline"]
    assert abs(tr["pipeline"]["gpu_idle_in_input_fraction"] - 1 / 12) < 1e-9
    dev = tr["gpu"]["devices"]
    assert len(dev) == 1 and dev[0]["kernels"] == 10, dev
    assert dev[0]["busy_ns"] == 10 * 88 * 1000000, dev[0]
    k = tr["gpu"]["kernels"]
    assert k[0]["name"] == "matmul_kernel" and k[0]["count"] == 10 and k[0]["share"] == 1, k

    ib = runs["input_bound"]
    assert ib["steps"] == 19
    assert ib["first_wall_time"] == 1700000000.0
    assert ib["last_wall_time"] == 1700000000.0 + 10 + 19
    p = ib["pipeline"]
    assert p["verdict"] == "highly" and p["steps"] == 20
    assert abs(p["input_fraction"] - f32(3.0) / f32(10.0)) < 1e-9
    assert p["mean_step_ms"] == 10 and p["gpu_idle_in_input_fraction"] is None
    assert set(p["step_ms"]) == {"mean", "stddev", "min", "max", "p50", "p90", "p99"}
    assert p["recommendations"]
    loss = ib["scalars"]["train/loss"]
    assert loss["count"] == 20
    assert loss["last"] == f32(2.0 - 19 / 10) and loss["min"] == f32(2.0 - 19 / 10)
    assert loss["max"] == 2.0
    assert ib["alerts"] == [] and ib["gradient_flags"] == []

    h = runs["healthy"]
    assert h["pipeline"]["verdict"] == "not"
    flags = h["gradient_flags"]
    assert flags and all(f["layer"] == "dense2" and f["kind"] == "vanishing" for f in flags), flags
    assert [f["step"] for f in flags] == list(range(15, 20)), flags
    assert set(flags[0]) == {"layer", "step", "kind"}
    assert h["alerts"] == []

    d = runs["diverged"]
    assert d["pipeline"] is None
    assert len(d["alerts"]) == 1, d["alerts"]
    a = d["alerts"][0]
    assert a["run"] == "diverged" and a["tag"] == "train/loss"
    assert a["first_step"] == 6 and a["first_wall_time"] == 1700000000.0 + 106
    assert (a["nan"], a["pos_inf"], a["neg_inf"]) == (2, 1, 0), a
    loss = d["scalars"]["train/loss"]
    assert loss["last"] == 10.0 and loss["min"] == 1.0 and loss["max"] == 10.0
    assert loss["count"] == 10

    odd = runs[ODD]
    assert odd["scalars"]["a|b*c"]["last"] == 1.0


def test_text():
    out = report().stdout
    assert "HIGHLY input-bound" in out and "NOT input-bound" in out, out
    assert "30.0% of step time waiting for input" in out
    assert "train/loss" in out and "vanishing" in out and "dense2" in out
    assert "NaN" in out and "alerts: 1 tag held NaN/Inf" in out, out
    m = re.search(r"run diverged\n(.*?)(\nrun |\Z)", out, re.S)
    assert m and "train/loss" in m.group(1) and "6" in m.group(1)
    assert "POTENTIALLY input-bound" in out
    assert "device 0 (" in out and "10 kernels" in out and "matmul_kernel" in out, out
    assert "gpu: not traced" in out


def test_markdown():
    out = report("--format", "markdown").stdout
    assert out.startswith("# tfboard report")
    assert "**HIGHLY input-bound**" in out and "**NOT input-bound**" in out, out
    assert "### Health alerts" in out and "| train/loss | 6 |" in out.replace("\\/", "/"), out
    # Run names and tags cannot inject markup or break a table.
    assert "<b>" not in out
    assert "\\<b\\>odd\\|name" in out and "a\\|b\\*c" in out, out
    assert "### GPU" in out and "| matmul\\_kernel | 10 |" in out, out


def test_html():
    path = os.path.join(STATE["logdir"], "..", "report.html")
    p = report("--format", "html", "--output", path)
    assert p.stdout == ""
    html = open(path, encoding="utf-8").read()
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert "default-src 'none'" in html
    # One file: nothing is fetched from anywhere (no src/href attributes,
    # no stylesheet links, no imports); Chart.js is inlined.
    assert not re.search(r"<(script|img|link|iframe)[^>]*\s(src|href)=", html, re.I)
    assert "@import" not in html and "<link" not in html.lower()
    assert "Chart.js v4" in html
    # The data block keeps markup from event files inert.
    assert "<b>odd" not in html and "\\u003cb\\u003eodd" in html
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("chromium not installed: html not rendered")
        return
    with tempfile.TemporaryDirectory(prefix="tfb_chromium_") as prof:
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--user-data-dir=" + prof, "--virtual-time-budget=5000",
                            "--dump-dom", "file://" + os.path.abspath(path)],
                           capture_output=True, text=True, timeout=90)
    dom = r.stdout
    assert 'data-rendered="1"' in dom, (r.returncode, r.stderr[-2000:], dom[:500])
    charts = int(re.search(r'data-charts="(\d+)"', dom).group(1))
    # input_bound: 1 pipeline + 3 scalars; healthy: 1 + 5; diverged: 1; odd: 1;
    # traced: 1 + 2.
    assert charts == 15, charts
    assert "matmul_kernel" in dom and "Top kernels by total time" in dom
    assert "Highly input-bound" in dom and "Not input-bound" in dom
    assert "&lt;b&gt;odd|name" in dom  # shown as text, not as markup


def test_run_filter_and_fail_on():
    rep = json.loads(report("--format", "json", "--run", "^(input_bound|healthy)$").stdout)
    assert [r["run"] for r in rep["runs"]] == ["input_bound", "healthy"] or \
        sorted(r["run"] for r in rep["runs"]) == ["healthy", "input_bound"], rep["runs"]
    report("--run", "^(input_bound|healthy)$", "--fail-on", "nan", check_rc=0)
    p = report("--fail-on", "nan", check_rc=1)
    assert "1 NaN/Inf alert" in p.stderr, p.stderr
    assert "diverged" in p.stdout  # the report is still written
    report("--run", "div", "--fail-on=nan", "--format", "json", check_rc=1)


def test_bad_usage():
    for args in (["--format", "pdf"], ["--fail-on", "inf"], ["--run", "("], ["--bogus"],
                 ["--grad-vanish", "x"], ["--format"]):
        p = report(*args, check_rc=2)
        assert "tfboard report:" in p.stderr, (args, p.stderr)
    p = subprocess.run([TFBOARD, "report"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--logdir" in p.stderr
    p = subprocess.run([TFBOARD, "report", "--logdir", "/nonexistent/tfb"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "not a readable directory" in p.stderr
    p = subprocess.run([TFBOARD, "report", "--help"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and "--fail_on" in p.stdout  # '_' in --help


def test_empty_logdir():
    """An empty or event-less directory (a typo in a CI job) exits 2 with
    "no runs found under DIR", never 0 "no run diverged" (issue 27)."""
    with tempfile.TemporaryDirectory(prefix="tfb_report_empty_") as d:
        for what in ("empty", "event-less"):
            if what == "event-less":
                os.makedirs(os.path.join(d, "run1"))
                with open(os.path.join(d, "run1", "notes.txt"), "w") as f:
                    f.write("not an event file\n")
            for fmt in ("json", "text"):
                p = subprocess.run([TFBOARD, "report", "--logdir", d, "--format", fmt,
                                    "--fail-on", "nan"], capture_output=True, text=True,
                                   timeout=30)
                assert p.returncode == 2, (what, fmt, p.returncode, p.stdout, p.stderr)
                assert "no runs found under " + d in p.stderr, (what, p.stderr)
                assert "no run diverged" not in p.stdout, p.stdout


def main():
    if not TFBOARD or not os.path.exists(TFBOARD):
        print("tfboard binary not given; skipping")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tfb_report_") as root:
        logdir = os.path.join(root, "logs")
        make_logdir(logdir)
        STATE["logdir"] = logdir
        run_tests([test_json, test_text, test_markdown, test_html,
                   test_run_filter_and_fail_on, test_bad_usage, test_empty_logdir])


if __name__ == "__main__":
    main()
