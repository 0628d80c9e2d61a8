#!/usr/bin/env python3
"""The Ranks dashboard's GPU route while the ranks' traces load in the
background: a job of 2 ranks, rank 0 with a trace of 6 M kernels
(gen_gpu_trace), rank 1 with a small one (ranks_traces.py). The first
request answers 202 {"loading": true, "progress", "ranks_loading",
"ranks"}; other routes answer meanwhile; once loaded the figures come.
Suite 'slow' (a big trace: too slow under the sanitizers on a small
machine).

Arguments: tfboard, gen_gpu_trace.
"""

import os
import shutil
import sys
import tempfile
import time

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
import ranks_traces  # noqa: E402
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD, GEN_TRACE = sys.argv[1], sys.argv[2]
# Big enough that the load cannot finish inside the route's 1 s wait on a
# quiet machine (2 M kernels sometimes did once loading got faster, and
# the first answer was then 200, not 202).
KERNELS = os.environ.get("TFB_RANKS_LOADING_KERNELS", "6000000")
STATE = {}


def setup():
    d = tempfile.mkdtemp(prefix="tfb_ranks_loading_")
    STATE["tmp"] = d
    logdir = os.path.join(d, "logs")
    big = os.path.join(logdir, "job", "rank-00000")
    os.makedirs(big)
    import subprocess
    subprocess.run([GEN_TRACE, os.path.join(big, "report1.sqlite"), KERNELS],
                   check=True, timeout=600)
    small = os.path.join(logdir, "job", "rank-00001")
    os.makedirs(small)
    ranks_traces.make_trace(os.path.join(small, "report1.sqlite"), 1, "b")
    STATE["logdir"] = logdir


def test_loading_then_figures():
    with Server(TFBOARD, STATE["logdir"]) as srv:
        srv.wait_loaded()
        st, _, body = srv.get("/data/plugin/ranks/gpu", job="job")
        import json
        first = json.loads(body)
        assert st == 202, (st, body[:300])
        assert first["loading"] is True and first["ranks"] == 2, first
        assert first["ranks_loading"] >= 1 and 0 <= first["progress"] <= 1, first
        # Other routes answer while the trace loads.
        jobs = srv.json("/data/plugin/ranks/jobs")["jobs"]
        assert [j["job"] for j in jobs] == ["job"], jobs
        assert srv.json("/data/runs") != []
        end = time.time() + 300
        g = None
        while time.time() < end:
            st, _, body = srv.get("/data/plugin/ranks/gpu", job="job")
            g = json.loads(body)
            if st == 200:
                break
            assert st == 202 and g["loading"], (st, body[:300])
            time.sleep(0.3)
        assert st == 200, "still loading"
        assert g["n_traced"] == 2 and g["n_loading"] == 0, g
        r0, r1 = g["ranks"]
        assert r0["state"] == "ready" and r0["intervals"] >= int(KERNELS), r0
        assert r0["comm_kernels"] == 0 and r0["overlap"] is None, r0
        e = ranks_traces.expected(1)
        for k in ("compute_ns", "comm_ns", "memory_ns", "idle_ns", "overlap_ns"):
            assert r1[k] == e[k], (k, r1[k], e[k])
        assert g["overlap"] == e["overlap"], g["overlap"]


def main():
    setup()
    try:
        run_tests([test_loading_then_figures])
    finally:
        shutil.rmtree(STATE["tmp"], ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
