#!/usr/bin/env python3
"""The Ranks dashboard over HTTP (issue 11, item 3): the real tfboard
binary on a logdir holding

  slow/, even/  examples/ddp_train, 4 ranks x 100 steps, rank 2 slowed by
                1.3 in slow/, no slow rank in even/;
  train/, bad/  gen_ranks_logdir: 8 ranks with rank 5 25 % slower, and bad
                input (rank 1 twice, world sizes 4 and 3, a rank directory
                with no event file);
  trA/, trB/    nsys-schema SQLite traces of 4 ranks (no event files), NCCL
                kernels named ncclKernel_* in trA and ncclDevKernel_* in trB
                with the same timings (ranks_traces.py);
  trC/          rank 0 traced, rank 1's trace unreadable, rank 2 untraced.

Checks: the job list, the straggler named with its measured slowdown within
10 % of the one asked for and none without a slow rank, the notes on bad
input, the overlap and breakdown figures (equal under both naming schemes
and to a brute-force count), parameter errors, the listing, and the job
section of `tfboard report`.

Arguments: tfboard, gen_ranks_logdir. ddp_train is found under
TFB_BUILD_ROOT.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
import ranks_traces  # noqa: E402
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, record, scalars_summary  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
EXAMPLE = os.path.join(os.environ.get("TFB_BUILD_ROOT", ""), "examples", "ddp_train")
STATE = {}


def ddp(logdir, job, extra):
    p = subprocess.run([EXAMPLE, "--logdir", logdir, "--job", job, "--ranks", "4",
                        "--steps", "100", "--compute-ms", "20"] + extra,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (job, p.returncode, p.stderr)


def setup():
    d = tempfile.mkdtemp(prefix="tfb_ranks_")
    STATE["tmp"] = d
    logdir = os.path.join(d, "logs")
    os.makedirs(logdir)
    ddp(logdir, "slow", ["--slow-rank", "2", "--slow-factor", "1.3"])
    ddp(logdir, "even", [])
    subprocess.run([GEN, logdir], check=True, timeout=120)
    ranks_traces.write_job(os.path.join(logdir, "trA"), 4, "a")
    ranks_traces.write_job(os.path.join(logdir, "trB"), 4, "b")
    # trC: rank 0 traced, rank 1's trace unreadable (its kernel table is a
    # view), rank 2 without a trace.
    ranks_traces.write_job(os.path.join(logdir, "trC"), 1, "a")
    bad = os.path.join(logdir, "trC", "rank-00001")
    os.makedirs(bad)
    import sqlite3
    db = sqlite3.connect(os.path.join(bad, "report1.sqlite"))
    db.executescript("CREATE TABLE t(x); CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS "
                     "SELECT 1 AS start, 2 AS end, 0 AS deviceId, 1 AS streamId FROM t;")
    db.close()
    # rank 2: event files only, no rank record (a rank by its directory).
    untraced = os.path.join(logdir, "trC", "rank-00002")
    os.makedirs(untraced)
    with open(os.path.join(untraced, "events.out.tfevents.1.test"), "wb") as f:
        f.write(record(event(1.7e9, file_version="brain.Event:2")))
        for step in range(5):
            f.write(record(event(1.7e9 + step, step, summary=scalars_summary(
                [("pipeline/step_ms", 10.0), ("pipeline/input_ms", 1.0)]))))
    STATE["logdir"] = logdir


def job(srv, name, **kw):
    return srv.json("/data/plugin/ranks/job", job=name, **kw)


def test_jobs_listed():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        jobs = srv.json("/data/plugin/ranks/jobs")["jobs"]
        names = [j["job"] for j in jobs]
        assert names == sorted(["bad", "even", "slow", "train", "trA", "trB", "trC"]), names
        by = {j["job"]: j for j in jobs}
        assert by["slow"]["ranks"] == 4 and by["slow"]["world_size"] == 4, by["slow"]
        assert [r["rank"] for r in by["slow"]["runs"]] == [0, 1, 2, 3]
        assert by["slow"]["runs"][2]["run"] == "slow/rank-00002"
        # rank-N directories without a rank record make a job too.
        assert [r["rank"] for r in by["trA"]["runs"]] == [0, 1, 2, 3], by["trA"]
        assert by["trA"]["world_size"] == 0
        assert by["bad"]["empty_dirs"] == ["bad/rank-00003"], by["bad"]
        listing = srv.json("/data/plugins_listing")
        assert listing["ranks"]["enabled"] is True, listing["ranks"]
        assert listing["ranks"]["loading_mechanism"]["module_path"] == "js/pages/ranks.js"
        keys = list(listing)
        assert keys.index("ranks") == keys.index("pipeline") + 1, keys


def test_ddp_straggler():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        j = job(srv, "slow")
        assert j["n_ranks"] == 4 and j["world_size"] == 4 and j["n_steps"] == 100, j["n_ranks"]
        assert j["notes"] == [], j["notes"]
        st = j["stragglers"]
        assert [s["rank"] for s in st] == [2], st
        factor = 1 + st[0]["slowdown"]
        assert abs(factor / 1.3 - 1) <= 0.10, f"slowdown factor {factor:.3f} vs 1.3"
        s = st[0]["sentence"]
        assert s.startswith("rank 2 is %.0f %% slower than the median rank" %
                            (100 * st[0]["slowdown"])), s
        assert "the other ranks spend %.0f %% of each step waiting" % (
            100 * j["others_comm_share"]) in s, s
        assert j["others_comm_share"] > 0.1, j["others_comm_share"]
        ranks = {r["rank"]: r for r in j["ranks"]}
        assert ranks[2]["straggler"] and not any(ranks[r]["straggler"] for r in (0, 1, 3))
        for r in (0, 1, 3):
            assert ranks[r]["comm_share"] > ranks[2]["comm_share"], (r, ranks[r])
        for r in ranks.values():
            assert r["steps"] == 100 and r["host"], r
            for k in ("step_ms", "input_ms", "comm_ms", "compute_ms"):
                d = r[k]
                assert d["n"] == 100 and d["p50"] <= d["p90"], (k, d)
        # The heat map: one row per rank, the columns cover the 100 steps.
        m = j["matrix"]
        assert m["metric"] == "step_ms" and len(m["rows"]) == 4, m.keys()
        assert len(m["columns"]) == 100 and m["columns"][0] == [0, 0], m["columns"][:3]
        assert all(len(row) == 100 for row in m["rows"])
        assert all(c is not None and c > 15 for row in m["rows"] for c in row)
        m = job(srv, "slow", columns=10, metric="compute_ms")["matrix"]
        assert m["metric"] == "compute_ms" and len(m["columns"]) == 10
        assert m["columns"][0] == [0, 9] and m["columns"][-1] == [90, 99], m["columns"]
        # Rank 2 computes longer in every column.
        for c in range(10):
            assert m["rows"][2][c] > max(m["rows"][r][c] for r in (0, 1, 3)), c
        # Skew: every step has all 4 wall times.
        sk = j["skew"]
        assert sk["n"] == 100 and len(sk["steps"]) == 100, sk["n"]
        assert all(v is not None and v >= 0 for _, v in sk["steps"])
        assert sk["p50_ms"] <= sk["p90_ms"] <= sk["max_ms"]


def test_ddp_even():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        j = job(srv, "even")
        assert j["stragglers"] == [], j["stragglers"]
        assert not any(r["straggler"] for r in j["ranks"])


def test_generated_straggler():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        j = job(srv, "train")
        assert [s["rank"] for s in j["stragglers"]] == [5], j["stragglers"]
        assert abs((1 + j["stragglers"][0]["slowdown"]) / 1.25 - 1) <= 0.10
        assert j["rule"] == {"straggler_excess": 0.05, "straggler_share": 0.75}


def test_bad_input_notes():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        j = job(srv, "bad")
        kinds = sorted(n["kind"] for n in j["notes"])
        assert "duplicate_rank" in kinds and "world_size" in kinds and \
            "empty_rank_dir" in kinds, j["notes"]
        texts = " | ".join(n["text"] for n in j["notes"])
        assert "rank 1 appears more than once" in texts, texts
        assert "bad/rank-00003 holds no event file" in texts, texts
        assert "disagree on the world size" in texts, texts
        # The repeated rank is left out.
        assert [r["rank"] for r in j["ranks"]] == [0, 1, 2], j["ranks"]
        assert [r["run"] for r in j["ranks"]] == ["bad/rank-00000", "bad/rank-00001",
                                                  "bad/rank-00002"], j["ranks"]


def test_overlap_two_schemes():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        a = srv.json("/data/plugin/ranks/gpu", job="trA")
        b = srv.json("/data/plugin/ranks/gpu", job="trB")
        assert a["n_traced"] == 4 and b["n_traced"] == 4, (a, b)
        strip = lambda g: json.dumps({k: v for k, v in g.items() if k != "job"}).replace("trB", "trA")
        assert strip(a) == strip(b), (a, b)
        tot_u = tot_o = 0
        for r in a["ranks"]:
            e = ranks_traces.expected(r["rank"])
            assert r["has_trace"] and r["comm_kernels"] == 2, r
            for k in ("compute_ns", "comm_ns", "memory_ns", "idle_ns", "comm_union_ns",
                      "overlap_ns", "span_ns"):
                assert r[k] == e[k], (r["rank"], k, r[k], e[k])
            assert abs(r["overlap"] - e["overlap"]) < 1e-12, r
            assert abs(r["busy_pct"] - e["busy_pct"]) < 1e-9, r
            tot_u += e["comm_union_ns"]
            tot_o += e["overlap_ns"]
        assert abs(a["overlap"] - tot_o / tot_u) < 1e-12, a["overlap"]
        assert a["notes"] == []
        # A job without traces: no figures, no notes.
        g = srv.json("/data/plugin/ranks/gpu", job="slow")
        assert g["n_traced"] == 0 and g["overlap"] is None and g["notes"] == [], g


def test_trace_errors():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        g = srv.json("/data/plugin/ranks/gpu", job="trC")
        by = {r["rank"]: r for r in g["ranks"]}
        assert by[0]["state"] == "ready" and by[0]["has_trace"], by[0]
        assert by[1]["state"] == "failed" and "report1.sqlite" in by[1]["error"], by[1]
        assert by[2]["state"] == "none" and not by[2]["has_trace"], by[2]
        assert g["n_traced"] == 1 and g["n_failed"] == 1 and g["n_loading"] == 0, g
        assert g["overlap"] == ranks_traces.expected(0)["overlap"], g["overlap"]
        kinds = sorted((n["rank"], n["kind"]) for n in g["notes"])
        assert kinds == [(1, "trace_error"), (2, "no_trace")], g["notes"]
        assert "rank 1: cannot read the GPU trace: " in g["notes"][0]["text"], g["notes"]


def write_steps(path, first, n, mode):
    with open(path, mode) as f:
        if mode == "wb":
            f.write(record(event(1.7e9, file_version="brain.Event:2")))
        for step in range(first, first + n):
            f.write(record(event(1.7e9 + step, step, summary=scalars_summary(
                [("pipeline/step_ms", 10.0), ("comm/ms", 2.0)]))))


def test_live_job_not_stale():
    """The job view follows new steps (its answers are cached)."""
    logdir = os.path.join(STATE["tmp"], "live")
    files = []
    for r in range(2):
        d = os.path.join(logdir, "job", "rank-%d" % r)
        os.makedirs(d)
        files.append(os.path.join(d, "events.out.tfevents.1.test"))
        write_steps(files[-1], 0, 3, "wb")
    with Server(TFBOARD, logdir, "--reload_interval", "0.2") as srv:
        srv.wait_loaded()
        assert job(srv, "job")["n_steps"] == 3
        assert job(srv, "job")["n_steps"] == 3  # from the cache
        for f in files:
            write_steps(f, 3, 4, "ab")
        end = time.time() + 20
        while time.time() < end and job(srv, "job")["n_steps"] != 7:
            time.sleep(0.1)
        j = job(srv, "job")
        assert j["n_steps"] == 7 and [r["steps"] for r in j["ranks"]] == [7, 7], j["ranks"]


def test_errors():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        st, _, body = srv.get("/data/plugin/ranks/job", job="nope")
        assert st == 404 and b"no job" in body, (st, body)
        st, _, body = srv.get("/data/plugin/ranks/job", job="slow", metric="bogus")
        assert st == 400, (st, body)
        st, _, body = srv.get("/data/plugin/ranks/job", job="slow", columns="0")
        assert st == 400, (st, body)
        st, _, body = srv.get("/data/plugin/ranks/gpu", job="nope")
        assert st == 404, (st, body)
    # An empty logdir: no job, the route says so.
    empty = os.path.join(STATE["tmp"], "empty")
    os.makedirs(empty)
    with Server(TFBOARD, empty) as srv:
        srv.wait_loaded()
        assert srv.json("/data/plugin/ranks/jobs") == {"jobs": []}
        st, _, body = srv.get("/data/plugin/ranks/job")
        assert st == 404 and b"no distributed job" in body, (st, body)


def report(*args):
    p = subprocess.run([TFBOARD, "report", "--logdir", STATE["logdir"]] + list(args),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    return p.stdout


def test_report():
    md = report("--format", "markdown", "--run", "^(slow|trA)/")
    sec = md.split("## Run slow/rank\\-00000")[1].split("## Run")[0] if \
        "## Run slow/rank\\-00000" in md else md.split("## Run slow/rank-00000")[1].split("## Run")[0]
    assert "### Distributed job slow" in sec, sec[:2000]
    assert "**Straggler**: rank 2 is" in sec and "slower than the median rank" in sec, sec
    assert "| 2 | 100 |" in sec, sec
    # The other ranks point to the section.
    assert "the job's section is under run slow" in md, md[:3000]
    # A traced job shows its GPU breakdown and overlap.
    assert "Job comm/compute overlap: 63.0%" in md, md
    txt = report("--run", "^slow/")
    assert "distributed job slow: 4 ranks (world size 4), 100 steps" in txt, txt[:3000]
    assert "straggler: rank 2 is" in txt, txt[:3000]
    rep = json.loads(report("--format", "json", "--run", "^(slow|even)/"))
    runs = {r["run"]: r for r in rep["runs"]}
    first = runs["slow/rank-00000"]["ranks"]
    assert [s["rank"] for s in first["stragglers"]] == [2], first
    assert "matrix" not in first and runs["slow/rank-00000"]["ranks_gpu"] is None
    assert runs["slow/rank-00003"]["ranks"] == {"job": "slow", "rank": 3,
                                                "section_run": "slow/rank-00000"}
    assert runs["even/rank-00000"]["ranks"]["stragglers"] == []
    # --run leaving out rank 0: the section moves to the first rank covered.
    rep = json.loads(report("--format", "json", "--run", "^slow/rank-0000[23]$"))
    runs = {r["run"]: r for r in rep["runs"]}
    assert "stragglers" in runs["slow/rank-00002"]["ranks"], runs.keys()
    assert runs["slow/rank-00003"]["ranks"]["section_run"] == "slow/rank-00002"


def main():
    if not os.path.exists(EXAMPLE):
        print("ddp_train not built; skipping")
        return 77
    setup()
    try:
        run_tests([test_jobs_listed, test_ddp_straggler, test_ddp_even,
                   test_generated_straggler, test_bad_input_notes,
                   test_overlap_two_schemes, test_trace_errors,
                   test_live_job_not_stale, test_errors,
                   test_report])
    finally:
        shutil.rmtree(STATE["tmp"], ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
