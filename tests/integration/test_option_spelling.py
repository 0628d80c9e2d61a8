#!/usr/bin/env python3
"""Options are spelled one way (TensorBoard's underscores) and accepted
both ways, by every command (issue 33).

- `tfboard --help`, `tfboard report --help` and `tfboard watch --help`
  list every option with '_' only after its leading "--" (the command's
  own and the dashboards'), and each lists the dashboards' options;
- for each command, the hyphenated and the underscored spelling of the
  same option both work, as --opt VALUE and --opt=VALUE: serve (a server
  starts with them; a value that only the option's check can refuse is
  refused under either spelling), report (--fail_on nan, a dashboard
  option), watch (--fail_fast, --interval);
- an unknown option and a bad value are one message each, exit 2.
Arguments: the tfboard binary.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests  # noqa: E402
import tfevents_py  # noqa: E402

TFBOARD = sys.argv[1]
# "--name" at the start of a --help row (the option itself, not a mention
# in some help text).
LISTED = re.compile(r"^\s{2}(--[A-Za-z0-9_-]+)", re.M)
STATE = {}


def tfboard(*args, timeout=60):
    return subprocess.run([TFBOARD] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def write_run(logdir, run, points):
    """A run of one "loss" series (PyTorch's layout, tfevents_py.py)."""
    d = os.path.join(logdir, run)
    os.makedirs(d)
    now = time.time() - 30  # recent: no run is stalled
    data = tfevents_py.record(tfevents_py.event(now, file_version=
                                                "brain.Event:2"))
    for s, v in points:
        data += tfevents_py.record(tfevents_py.event(
            now + s, step=s, summary=tfevents_py.scalars_summary(
                [("loss", v)])))
    with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
        f.write(data)


def setup():
    tmp = tempfile.mkdtemp(prefix="tfb_spelling_")
    STATE["tmp"] = tmp
    STATE["healthy"] = os.path.join(tmp, "healthy")
    write_run(STATE["healthy"], "ok", [(s, 1.0 / (s + 1)) for s in range(20)])
    STATE["nan"] = os.path.join(tmp, "nan")
    write_run(STATE["nan"], "bad", [(0, 1.0), (1, float("nan")), (2, 0.5)])


def test_help_lists_underscores_only():
    for argv in (["--help"], ["report", "--help"], ["watch", "--help"]):
        p = tfboard(*argv)
        assert p.returncode == 0 and p.stderr == "", (argv, p.stderr)
        listed = LISTED.findall(p.stdout)
        assert len(listed) >= 8, (argv, listed)
        hyphenated = [o for o in listed if "-" in o[2:]]
        assert not hyphenated, (argv, hyphenated)
        # the command's own options, then the dashboards'
        for want in ("--logdir", "--help", "--grad_vanish", "--loss_tags",
                     "--alert_webhook"):
            assert want in listed, (argv, want, listed)
        assert listed.index("--logdir") < listed.index("--grad_vanish")
    serve = LISTED.findall(tfboard("--help").stdout)
    for want in ("--reload_interval", "--webui_dir", "--bind_all",
                 "--max_connections_per_client", "--version"):
        assert want in serve, (want, serve)
    assert "--fail_on" in LISTED.findall(tfboard("report", "--help").stdout)
    assert "--fail_fast" in LISTED.findall(tfboard("watch", "--help").stdout)


def test_serve_both_spellings():
    for extra in (("--reload-interval", "0", "--load-threads=1",
                   "--max-connections-per-client", "8", "--grad-vanish=1e-7"),
                  ("--reload_interval=0", "--load_threads", "1",
                   "--max_connections_per_client=8", "--grad_vanish", "1e-7")):
        with Server(TFBOARD, STATE["healthy"], *extra) as srv:
            srv.wait_loaded()
            st, _, _ = srv.get("/data/runs")
            assert st == 200, extra
    # The value reaches the option under either spelling: a cache inside
    # the logdir is refused by --cache_dir's own check.
    inside = os.path.join(STATE["healthy"], "cache")
    for argv in (["--cache-dir", inside], ["--cache_dir=" + inside]):
        p = tfboard("--logdir", STATE["healthy"], "--port", "0", *argv,
                    timeout=30)
        assert p.returncode == 2 and "inside the logdir" in p.stderr, \
            (argv, p.returncode, p.stderr)


def test_report_both_spellings():
    for flag in (["--fail-on", "nan"], ["--fail_on=nan"], ["--fail_on", "nan"],
                 ["--fail-on=nan"]):
        p = tfboard("report", "--logdir", STATE["nan"], "--quiet", *flag)
        assert p.returncode == 1 and "NaN/Inf alert" in p.stderr, \
            (flag, p.returncode, p.stderr)
        p = tfboard("report", "--logdir", STATE["healthy"], "--quiet", *flag)
        assert p.returncode == 0, (flag, p.returncode, p.stderr)
    # A dashboard's option: its cross-check runs under either spelling.
    for argv in (["--grad-vanish=500"], ["--grad_vanish", "500"]):
        p = tfboard("report", "--logdir", STATE["healthy"], *argv)
        assert p.returncode == 2 and "vanish" in p.stderr, (argv, p.stderr)


def test_watch_both_spellings():
    for argv in (["--fail-fast", "--interval", "0.1"],
                 ["--fail_fast", "--interval=0.1"]):
        p = tfboard("watch", "--logdir", STATE["healthy"], "--once", *argv)
        assert p.returncode == 0 and p.stdout == "", (argv, p.returncode,
                                                      p.stderr)
    # the floor of --interval, whatever the spelling of the option
    for argv in (["--interval", "0.01"], ["--interval=0.01"]):
        p = tfboard("watch", "--logdir", STATE["healthy"], "--once", *argv)
        assert p.returncode == 2 and "0.05" in p.stderr, (argv, p.stderr)


def test_usage_errors():
    for argv in (["--logdir", STATE["healthy"], "--bogus"],
                 ["report", "--logdir", STATE["healthy"], "--bogus=1"],
                 ["watch", "--logdir", STATE["healthy"], "--bogus"],
                 ["--logdir", STATE["healthy"], "--port", "x"],
                 ["report", "--logdir", STATE["healthy"], "--format", "pdf"],
                 ["watch", "--logdir", STATE["healthy"], "--once=1"],
                 ["report", "--logdir", STATE["healthy"], "--output"]):
        p = tfboard(*argv, timeout=30)
        assert p.returncode == 2, (argv, p.returncode, p.stderr)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tfboard"), \
            (argv, p.stderr)


try:
    setup()
    run_tests([test_help_lists_underscores_only, test_serve_both_spellings,
               test_report_both_spellings, test_watch_both_spellings,
               test_usage_errors])
finally:
    import shutil
    shutil.rmtree(STATE.get("tmp", "/nonexistent"), ignore_errors=True)
