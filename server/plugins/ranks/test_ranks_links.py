"""Symbolic links among a job's rank directories (issue 21 item 10): a
rank directory that links elsewhere inside the logdir is loaded as the
rank it names; links that leave the logdir or loop are not followed and
the Ranks view says which they are (not "holds no event file"). And a
rank record whose job name holds a NUL keeps the whole name (item 7).

usage: test_ranks_links.py TFBOARD GEN_LOGDIR"""
import json
import os
import shutil
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, check_clean_exit, run_tests  # noqa: E402
from tfevents_py import (event, key, ld, record,  # noqa: E402
                         scalars_summary, varint)

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_ranklinks_")
LOGDIR = os.path.join(TMP, "logdir")


def events(d, v):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "events.out.tfevents.1.h.1.0"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for s in range(3):
            f.write(record(event(2.0 + s, s,
                                 summary=scalars_summary([("loss", v + s)]))))


def rank_record(text):
    """Summary.Value of tag tfboard/rank, plugin tfboard_rank: a DT_STRING
    tensor holding the record's text (tfboard.h, "Distributed jobs")."""
    tensor = key(1, 0) + varint(7) + ld(8, text)
    meta = ld(1, ld(1, b"tfboard_rank"))
    return ld(1, ld(1, b"tfboard/rank") + ld(8, tensor) + ld(9, meta))


def setup():
    for r in range(2):
        d = os.path.join(LOGDIR, "nuljob", "w%d" % r)
        events(d, 5.0)
        with open(os.path.join(d, "events.out.tfevents.1.h.1.0"), "ab") as f:
            f.write(record(event(1.5, 0, summary=rank_record(
                b"version=1\njob=a\0b\nrank=%d\nworld_size=2" % r))))
    events(os.path.join(LOGDIR, "job", "rank-00000"), 1.0)
    events(os.path.join(LOGDIR, "store", "r1"), 2.0)       # inside
    events(os.path.join(TMP, "elsewhere", "r2"), 3.0)       # outside
    os.symlink(os.path.join("..", "store", "r1"),
               os.path.join(LOGDIR, "job", "rank-00001"))
    os.symlink(os.path.join(TMP, "elsewhere", "r2"),
               os.path.join(LOGDIR, "job", "rank-00002"))
    os.symlink("..", os.path.join(LOGDIR, "job", "rank-00003"))  # a loop


def test_symlinked_rank_dirs():
    srv = Server(TFBOARD, LOGDIR, "--reload_interval", "0").__enter__()
    try:
        srv.wait_loaded()
        runs = srv.json("/data/runs")
        assert "job/rank-00001" in runs, runs
        assert "job/rank-00002" not in runs and not any(
            r.startswith("job/rank-00003") for r in runs), runs
        loss = srv.json("/data/plugin/scalars/scalars", run="job/rank-00001",
                        tag="loss")
        assert [p[2] for p in loss] == [2.0, 3.0, 4.0], loss
        jobs = {j["job"]: j for j in
                srv.json("/data/plugin/ranks/jobs")["jobs"]}
        jb = jobs["job"]
        assert jb["ranks"] == 2, jb  # rank-00000 and the linked rank-00001
        assert jb["empty_dirs"] == ["job/rank-00002", "job/rank-00003"], jb
        res = srv.json("/data/plugin/ranks/job", job="job")
        texts = [n["text"] for n in res["notes"]
                 if n["kind"] == "empty_rank_dir"]
        assert texts == [
            "job/rank-00002 is a symbolic link that leaves the logdir; not "
            "followed; that rank is missing from the job",
            "job/rank-00003 is a symbolic link to a directory above it (a "
            "loop); not followed; that rank is missing from the job"], texts
    finally:
        rc, err = srv.stop()
    check_clean_exit(rc, err)
    assert "rank-00002 is a symbolic link that leaves the logdir" in err, err
    assert err.count("rank-00003 is a symbolic link") == 1, err


def test_job_name_with_nul():
    with Server(TFBOARD, LOGDIR, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        st, _, body = srv.get("/data/plugin/ranks/jobs")
        assert b'"job":"a\\u0000b"' in body, body
        jobs = {j["job"]: j for j in json.loads(body)["jobs"]}
        assert jobs["a\0b"]["ranks"] == 2, jobs


setup()
try:
    run_tests([test_symlinked_rank_dirs, test_job_name_with_nul])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
