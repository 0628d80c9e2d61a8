"""hparams at scale and from hostile writers (issue 21 items 4 and 7):
40,000 hparams in one run (and 50 names given twice: the last wins), a
session of more than TFB_HPARAMS_MAX_PER_SESSION hparams (the rest left
out, with a note), an experiment with more metric infos than the bound,
and hparam names and strings with an embedded NUL (kept whole).

The routes are linear (names hashed) and bounded per request; the
figures printed (request time, /data/runs while two such requests run)
are not asserted: tests/bench/bench_hparams.py measures them.

usage: test_hparams_scale.py TFBOARD GEN_LOGDIR"""
import json
import os
import shutil
import sys
import tempfile
import threading
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
import hparams_gen as G  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_hpscale_")
MAX_PER_SESSION = 65536   # hparams_analysis.h
MAX_METRICS = 1024        # hparams_analysis.h


def setup():
    big = G.many(40000)
    dups = [(n, "dup") for n, _ in big[:50]]
    G.write_run(TMP, "big", start=G.session_start(big + dups),
                exp=G.experiment([n for n, _ in big]),
                scalars=[("acc", 0.5)])
    G.write_run(TMP, "huge", start=G.session_start(G.compact(70000)))
    G.write_run(TMP, "metrics", exp=G.experiment(
        ["m"], ["metric%05d" % i for i in range(MAX_METRICS + 500)]),
        start=G.session_start([("m", 1.0)]))
    G.write_run(TMP, "nul", start=G.session_start(
        [(b"x\0y", b"a\0b"), (b"plain", b"tail\0")], group=b"g\0h"))


def test_40000_hparams_and_duplicates():
    with Server(TFBOARD, TMP, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        t = time.time()
        rows = srv.json("/data/plugin/hparams/runs")
        dt = time.time() - t
        by = {r["run"]: r for r in rows}
        hp = by["big"]["hparams"]
        assert len(hp) == 40000, len(hp)
        assert all(hp["hp%06d" % i] == "dup" for i in range(50))
        assert hp["hp000052"] == "s52" and hp["hp000060"] == 30.0
        assert hp["hp039999"] == 19999.5 and hp["hp039997"] == "s39997"
        assert "note" not in by["big"], by["big"].get("note")
        exp = srv.json("/data/plugin/hparams/experiment")
        names = [c["name"] for c in exp["hparams"]]
        # the experiment's order first, then the other names sorted
        assert names[:40000] == ["hp%06d" % i for i in range(40000)]
        assert len(names) == len(set(names))
        col = exp["hparams"][0]
        assert col["runs"] == 1 and col["values"] == ["dup"], col
        # /data/runs while two such requests run (printed, not asserted)
        lat, done = [], []

        def heavy():
            srv.json("/data/plugin/hparams/runs")
            done.append(1)
        ts = [threading.Thread(target=heavy) for _ in range(2)]
        for x in ts:
            x.start()
        while len(done) < 2:
            t0 = time.time()
            srv.json("/data/runs")
            lat.append(time.time() - t0)
        for x in ts:
            x.join()
        print("  hparams/runs with 40,000 + 70,000 hparams: %.0f ms; "
              "/data/runs meanwhile: max %.0f ms over %d requests"
              % (dt * 1000, max(lat) * 1000, len(lat)))


def test_bounds_per_request():
    with Server(TFBOARD, TMP, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        rows = {r["run"]: r for r in srv.json("/data/plugin/hparams/runs")}
        h = rows["huge"]
        assert len(h["hparams"]) == MAX_PER_SESSION, len(h["hparams"])
        assert "%05x" % (MAX_PER_SESSION - 1) in h["hparams"]
        assert "%05x" % MAX_PER_SESSION not in h["hparams"]
        assert "4464 hparams" in h["note"] and "left out" in h["note"], h
        exp = srv.json("/data/plugin/hparams/experiment")
        assert len(exp["metrics"]) == MAX_METRICS, len(exp["metrics"])
        assert exp["metrics_left_out"] == 500, exp.get("metrics_left_out")
        m = rows["metrics"]["metrics"]
        assert len(m) <= MAX_METRICS


def test_nul_in_foreign_strings_kept():
    with Server(TFBOARD, TMP, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        st, _, body = srv.get("/data/plugin/hparams/runs")
        assert b'"x\\u0000y":"a\\u0000b"' in body, body[-400:]
        rows = {r["run"]: r for r in json.loads(body)}
        assert rows["nul"]["hparams"] == {"x\0y": "a\0b",
                                           "plain": "tail\0"}, rows["nul"]
        assert rows["nul"]["group"] == "g\0h"
        exp = srv.json("/data/plugin/hparams/experiment")
        cols = {c["name"]: c for c in exp["hparams"]}
        assert cols["x\0y"]["values"] == ["a\0b"], cols.get("x\0y")
        g = srv.json("/data/plugin/hparams/groups", tag="acc",
                     group_by="hparam:plain")
        assert g["left_out"] == 1  # "big" has acc but no "plain"


setup()
try:
    run_tests([test_40000_hparams_and_duplicates, test_bounds_per_request,
               test_nul_in_foreign_strings_kept])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
