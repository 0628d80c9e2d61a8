"""Run filters that say what you mean (issue 30 item 5; server/API.md
"SQL"): GET /data/runs_filter?where=EXPR and where= of the multi-run chart
route select the runs a boolean expression over runs_wide selects, the
same ones; `tfboard report --where` and `tfboard watch --where` too; bad
and hostile expressions are refused with the position of the error, and
the server keeps answering.

usage: test_run_filter.py TFBOARD GEN_LOGDIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD, GEN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="tfb_runfilter_")
LOGDIR = os.path.join(TMP, "logs")
subprocess.run([GEN, "basic", LOGDIR], check=True)


def engine_or_skip(srv):
    st, _, _ = srv.get("/data/plugin/query/tables")
    if st == 501:
        print("SKIP: this build has no query engine")
        sys.exit(77)


def test_run_filter():
    with Server(TFBOARD, LOGDIR) as s:
        s.wait_loaded()
        engine_or_skip(s)
        a = s.json("/data/runs_filter", where='"loss.last" < 0.5')
        assert a == {"count": 1, "runs": ["run_a"]}, a
        a = s.json("/data/runs_filter", where='steps >= 50 OR run LIKE \'sub/%\'')
        assert sorted(a["runs"]) == ["run_a", "sub/run_b"], a
        # The multi-run chart route selects the same runs.
        m = s.json("/data/plugin/scalars/multirun", tag="loss",
                   where='"loss.last" < 0.5')
        assert list(m["series"]) == ["run_a"], m
        m = s.json("/data/plugin/scalars/multirun", tag="loss",
                   where='"loss.last" > 0.5')
        assert list(m["series"]) == ["sub/run_b"], m
        # Bad and hostile expressions: 400 with the message and where.
        for expr, off in [('"loss.last" <', None), ("nosuch > 1", 0),
                          ("1) OR (1", None), ("1; DROP TABLE runs", None),
                          ("1 /* x", None), ("'unterminated", None),
                          ("1) UNION SELECT name FROM sqlite_master --", None)]:
            st, _, body = s.get("/data/runs_filter", where=expr)
            a = json.loads(body)
            assert st == 400 and a["error"], (expr, st, a)
            if off is not None:
                assert a["offset"] == off, (expr, a)
            st, _, body = s.get("/data/plugin/scalars/multirun", tag="loss",
                                where=expr)
            assert st == 400 and b"where" in body, (expr, st, body)
        st, _, _ = s.get("/data/runs_filter", where="x" * 5000)
        assert st == 400
        st, _, body = s.get("/data/runs_filter", where="length(randomblob(1e9)) > 0")
        assert st == 400, (st, body)
        assert s.get("/data/runs")[0] == 200


def test_report_and_watch_where():
    r = subprocess.run([TFBOARD, "report", "--logdir", LOGDIR, "--format",
                        "json", "--where", '"loss.last" > 0.5'],
                       capture_output=True, text=True, timeout=120)
    if "needs the query engine" in r.stderr:
        print("SKIP: this build has no query engine")
        sys.exit(77)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    names = [x["run"] for x in rep["runs"]]
    assert names == ["sub/run_b"], names
    r = subprocess.run([TFBOARD, "report", "--logdir", LOGDIR, "--where",
                        "nosuch = 1"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "--where" in r.stderr, (r.returncode,
                                                          r.stderr)
    # watch: run_a's "weird" tag went non-finite; with --where that
    # leaves run_a out, no alert of it is printed.
    r = subprocess.run([TFBOARD, "watch", "--logdir", LOGDIR, "--once"],
                       capture_output=True, text=True, timeout=120)
    assert "run=run_a" in r.stdout, r.stdout
    r = subprocess.run([TFBOARD, "watch", "--logdir", LOGDIR, "--once",
                        "--where", "run <> 'run_a'"],
                       capture_output=True, text=True, timeout=120)
    assert "run=run_a" not in r.stdout, r.stdout
    r = subprocess.run([TFBOARD, "watch", "--logdir", LOGDIR, "--once",
                        "--where", "1 +"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "--where" in r.stderr, r


try:
    run_tests([test_run_filter, test_report_and_watch_where])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
