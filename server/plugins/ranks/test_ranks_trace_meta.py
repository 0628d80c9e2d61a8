#!/usr/bin/env python3
"""The Ranks view and what the ranks' Kineto traces say of themselves
(issue 34), on the real tfboard binary, over tests/integration/
hta_traces.py's jobs (answers worked out there by hand):

  job/   2 ranks whose directories say nothing of the world size, whose
         traces' distributedInfo says 128 (backend nccl, 2 process groups)
         and whose deviceProperties name a Tesla V100 (80 SMs, 7.0);
  jobm/  rank 0 an MTIA trace (mtia_ccp_events) with 3 events of a
         category not understood, rank 1 device work only in such a
         category: 0 devices, said in a note, never silently;
  jobg/  one rank, the one-stream trace with a memcpy between kernels:
         its idle time here is the GPU summary's (one definition of busy:
         kernels, copies and memsets).

Arguments: tfboard, hta_traces.py (its directory is imported).
"""

import os
import shutil
import sys
import tempfile

TFBOARD, GEN = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(GEN)))
import hta_traces as H  # noqa: E402
from tfb_server_util import Server, run_tests  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tfb_ranks_meta_")
SRV = None


def gpu(job):
    return SRV.json("/data/plugin/ranks/gpu", job=job)


def test_world_from_traces():
    jobs = {j["job"]: j for j in SRV.json("/data/plugin/ranks/jobs")["jobs"]}
    assert jobs["job"]["world_size"] == 0  # the directories do not say it
    g = gpu("job")
    dist = g["distributed"]
    assert dist["world_size"] == 128 and dist["backend"] == "nccl", dist
    assert [(p["desc"], p["size"], p["ranks"])
            for p in dist["process_groups"]] == \
        [("default_pg", 128, "0-127"), ("tp_group", 8, "0-7")], dist
    by = {r["rank"]: r for r in g["ranks"]}
    assert by[1]["distributed"]["rank"] == 1
    for r in (0, 1):
        (d,) = by[r]["device_info"]
        assert d == {"id": 0, "name": "Tesla V100-SXM2-32GB",
                     "sm_count": 80, "compute_capability": "7.0",
                     "total_mem": 34089730048}, d


def test_mtia_and_notes():
    g = gpu("jobm")
    by = {r["rank"]: r for r in g["ranks"]}
    assert by[0]["has_trace"] and by[0]["devices"] == 1, by[0]
    # 2 MTIA kernels of 10 µs over a 30 µs span.
    assert by[0]["compute_ns"] == 20_000 and by[0]["idle_ns"] == 10_000
    assert by[1]["has_trace"] and by[1]["devices"] == 0, by[1]
    texts = [(n["kind"], n["rank"], n["text"]) for n in g["notes"]]
    assert ("trace_note", 0, 'rank 0: 3 events of category "npu_kernel" '
            'not understood: not read as device work') in texts, texts
    assert ("trace_note", 1, 'rank 1: 2 events of category "xla_op" '
            'not understood: not read as device work') in texts, texts
    assert ("trace_note", 1, "rank 1: the trace holds no device work (no "
            "kernel, copy or memset read)") in texts, texts
    assert by[1]["trace_notes"][0]["category"] == "xla_op"
    assert g["distributed"] is None


def test_one_busy_definition():
    (r,) = gpu("jobg")["ranks"]
    (d,) = SRV.json("/data/plugin/gpu/summary",
                    run="jobg/rank-00000")["devices"]
    # The memcpy is busy time in both: 60 µs busy, 120 µs idle of 180.
    assert r["memory_ns"] == 10_000 and r["idle_ns"] == 120_000, r
    assert d["busy_ns"] == 60_000 and d["idle_ns"] == r["idle_ns"], d
    assert r["span_ns"] == d["span_ns"] == 180_000


def main():
    global SRV
    try:
        H.write_all(TMP)
        with Server(TFBOARD, TMP, "--cache_dir", "") as srv:
            SRV = srv
            srv.wait_loaded()
            run_tests([test_world_from_traces, test_mtia_and_notes,
                       test_one_busy_definition])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
