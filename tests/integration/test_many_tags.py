"""One run with 200 000 distinct scalar tags (issue 10 item 5: tag
registration was quadratic, 200 k tags took minutes to load). The real
tfboard binary must load it, list every tag once, and answer queries for
tags anywhere in the list.

usage: test_many_tags.py TFBOARD GEN_LOGDIR"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
N = 200000
TMP = tempfile.mkdtemp(prefix="tfb_manytags_")
# gen_logdir scalars DIR RUNS TAGS STEPS: tags tag00/t, tag01/t, ...
subprocess.run([GEN, "scalars", TMP, "1", str(N), "1"], check=True)
TAGS = ["tag%02d/t" % t for t in range(N)]


def loaded(s):
    p = s.json("/data/plugin/core/progress")
    return p if p["done"] else None


def test_every_tag_listed_and_queryable():
    with Server(TFBOARD, TMP, "--reload_interval", "0") as s:
        # generous: a bound for a stuck load under the sanitizers, not a
        # timing check
        p = wait_for(lambda: loaded(s), "loading", timeout=240)
        assert p["points"] == N + 1, p  # + the end-of-run record
        tags = s.json("/data/plugin/scalars/tags")
        assert list(tags) == ["run000"], list(tags)[:5]
        listed = tags["run000"]
        assert len(listed) == N, len(listed)
        assert sorted(listed) == sorted(TAGS)
        info = s.json("/data/runs_info")
        assert info[0]["tags"]["scalars"] == N, info[0]["tags"]
        rng = random.Random(5)
        sample = [0, 1, N // 2, N - 2, N - 1] + rng.sample(range(N), 300)
        for t in sample:
            pts = s.json("/data/plugin/scalars/scalars", run="run000",
                         tag=TAGS[t])
            assert len(pts) == 1, (t, pts)
            assert pts[0][1] == 0, (t, pts)  # step 0
        st, _, _ = s.get("/data/plugin/scalars/scalars", run="run000",
                         tag="tag%02d/t" % N)
        assert st == 404, st


try:
    run_tests([test_every_tag_listed_and_queryable])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
