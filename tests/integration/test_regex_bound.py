"""Costly regular expressions are refused before regcomp (issue 32 item 4;
base/regex_bound.h, server/API.md "Regular expressions"): glibc compiles
X{m,n} as n copies of X, so a short pattern of nested counts cost
gigabytes and seconds of one request. run_regex of multirun and nearest
and group_by=regex: of hparams groups answer 400 with the reason; `tfboard
report --run` and `--loss_tags` exit 2; realistic patterns, and the long
alternation of names the page sends for a large selection, still work.

The costly patterns here are the mild ones (10,000 to 100,000 copies:
tens of MB unbounded), so the test costs little even where the bound is
missing; the unit test test_regex_bound measures the monsters.

usage: test_regex_bound.py TFBOARD GEN_LOGDIR"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_regex_")
LOGDIR = os.path.join(TMP, "logs")
subprocess.run([GEN, "basic", LOGDIR], check=True, stdout=subprocess.DEVNULL)

# Each adds more copies than the bound (1,000) allows.
COSTLY = ["(.{1,100}){1,100}",        # about 10,000 copies
          "run_(a|b){1,1001}",        # 3,000
          "((r+)+){1,400}"]           # 2,797: '+' copies too
DEEP = "(" * 65 + "run" + ")" * 65    # nested past 64
BACKREF = "(run)_\\1"
# Realistic filters, and the page's selection of many runs: one
# alternation of escaped names (scalars page.js runSpec), 16 KiB of URI.
NAMES = ["run_a", "sub/run_b"] + ["lr_0\\.%04d/seed_%d" % (i, i % 7)
                                  for i in range(500)]
SELECTION = "^(" + "|".join(NAMES) + ")$"
FINE = [("run_[ab]$", ["run_a", "sub/run_b"]),
        ("^sub/", ["sub/run_b"]),
        ("run_[a-z]{1,3}$", ["run_a", "sub/run_b"]),
        ("^(run_a){1,100}$", ["run_a"]),     # 594 copies: allowed
        (SELECTION, ["run_a", "sub/run_b"])]


def timed_get(srv, path, **params):
    t0 = time.monotonic()
    st, _, body = srv.get(path, _timeout=60, **params)
    # generous: a bounded refusal is immediate even on a loaded machine
    assert time.monotonic() - t0 < 30, (path, params)
    return st, body


def test_http_routes():
    with Server(TFBOARD, LOGDIR, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        for rx, want in FINE:
            m = srv.json("/data/plugin/scalars/multirun", tag="loss",
                         run_regex=rx, summary="lines", samples=5)
            assert sorted(m["series"]) == want, (rx[:60], m["series"])
            n = srv.json("/data/plugin/scalars/nearest", tag="loss", step=3,
                         value=1.0, run_regex=rx)
            assert sorted(r["run"] for r in n["runs"]) == want, rx[:60]
            g = srv.json("/data/plugin/hparams/groups", tag="loss",
                         group_by="regex:" + rx)
            got = sorted(r for gr in g["groups"] for r in gr["runs"])
            assert got == want, (rx[:60], g)
        for rx in COSTLY + [DEEP, BACKREF]:
            why = ("too costly" if rx in COSTLY else
                   "nested more than 64" if rx == DEEP else
                   "back-references")
            for path, params in (
                    ("/data/plugin/scalars/multirun",
                     {"tag": "loss", "run_regex": rx}),
                    ("/data/plugin/scalars/nearest",
                     {"tag": "loss", "step": 3, "value": 1, "run_regex": rx}),
                    ("/data/plugin/hparams/groups",
                     {"tag": "loss", "group_by": "regex:" + rx})):
                st, body = timed_get(srv, path, **params)
                assert st == 400, (path, rx, st, body[:200])
                assert why.encode() in body, (path, rx, body)
        # still serving
        assert srv.get("/data/runs")[0] == 200


def test_command_line():
    for rx in COSTLY + [DEEP, BACKREF]:
        p = subprocess.run([TFBOARD, "report", "--logdir", LOGDIR, "--run",
                            rx, "--quiet"], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 2, (rx, p.returncode, p.stderr)
        assert "bad --run regex" in p.stderr, (rx, p.stderr)
        p = subprocess.run([TFBOARD, "--logdir", LOGDIR, "--port", "0",
                            "--loss_tags", rx], capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 2 and "--loss_tags" in p.stderr, (rx, p)
    p = subprocess.run([TFBOARD, "report", "--logdir", LOGDIR, "--run",
                        "run_[a-z]{1,3}$", "--format", "json", "--quiet"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "run_a" in p.stdout and "sub/run_b" in p.stdout


try:
    run_tests([test_http_routes, test_command_line])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
