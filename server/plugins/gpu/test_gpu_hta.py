#!/usr/bin/env python3
"""The GPU summary against HTA's definitions (issue 34), on the real
tfboard binary, over small Kineto traces each built to show one definition
(tests/integration/hta_traces.py, where every answer is worked out by hand):

  1. HTA's idle breakdown: per stream, gaps under 30 µs (not ns) are kernel
     wait, a launch after the previous event's end is host wait; memcpy is
     busy time, not idle; µs and ns timestamps; two streams (per stream and
     per device = the sum of its streams, beside the device's own idle);
  2. MTIA's device work (mtia_ccp_events) read as kernels, a category not
     understood named in a note, a trace of only such events: 0 devices
     and the note, never silence;
  3. deviceProperties (name, SMs, memory, compute capability) and
     distributedInfo in the summary and in `tfboard report`.
Every figure is read twice: from the sources, then from the columnar cache
the first server wrote (a second server on the same cache directory).

Arguments: the tfboard binary, the logdir generator (unused).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
import hta_traces as H  # noqa: E402
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_gpu_hta_")
LOG = os.path.join(TMP, "log")
CACHE = os.path.join(TMP, "cache")
SRV = None
PASS = "sources"
RUNS = ["gaps_us", "gaps_ns", "two_streams", "mtia", "unknown_only",
        "job/rank-00000", "hostile"]


def cache_files():
    return [f for f in os.listdir(CACHE) if f.endswith(".tfbc")]


def summary(run):
    return SRV.json("/data/plugin/gpu/summary", run=run)


def idle(d):
    return d["idle"]


def test_gaps_us():
    (d,) = summary("gaps_us")["devices"]
    # Kernel wait is 20 + 10 + 10 µs: the threshold is 30 µs (HTA's code),
    # not 30 ns (its docstring), under which nothing would be kernel wait.
    assert idle(d) == H.GAPS_US_WANT, (PASS, idle(d))
    # Busy: 5 kernels and the memcpy, 10 µs each; the memcpy between K4
    # and K5 is busy, so the gaps around it are 10 µs each.
    assert (d["kernels"], d["kernel_ns"]) == (5, 50_000), d
    assert d["busy_ns"] == 60_000 and d["span_ns"] == 180_000, d
    assert d["idle_ns"] == 120_000 == sum(idle(d).values())
    assert d["memcpy"]["HtoD"]["count"] == 1
    assert d["streams"] == [dict(stream=7, events=6, **H.GAPS_US_WANT)], \
        d["streams"]
    assert d["start_ns"] == H.BASE_NS + 1_000_000


def test_gaps_ns():
    (d,) = summary("gaps_ns")["devices"]
    # Exact ns from µs with three decimals ("displayTimeUnit": "ns" is a
    # display hint: ts stays µs).
    assert idle(d) == H.GAPS_NS_WANT, (PASS, idle(d))
    assert d["busy_ns"] == 10200 + 10000 + 9999 + 1000, d["busy_ns"]
    assert d["span_ns"] == 1_132_000 - 1_000_100
    assert d["start_ns"] == H.BASE_NS + 1_000_100


def test_two_streams():
    (d,) = summary("two_streams")["devices"]
    by = {s["stream"]: s for s in d["streams"]}
    assert by[7] == {"stream": 7, "events": 2, "host_wait_ns": 0,
                     "kernel_wait_ns": 0, "other_ns": 40_000}, by[7]
    assert by[8] == {"stream": 8, "events": 2, "host_wait_ns": 15_000,
                     "kernel_wait_ns": 0, "other_ns": 0}, by[8]
    # The device's breakdown is the sum of its streams' ...
    assert idle(d) == {"host_wait_ns": 15_000, "kernel_wait_ns": 0,
                       "other_ns": 40_000}, idle(d)
    # ... beside its own idle time: no event on any stream.
    assert (d["busy_ns"], d["span_ns"], d["idle_ns"]) == \
        (35_000, 60_000, 25_000), d


def test_mtia():
    s = summary("mtia")
    (d,) = s["devices"]
    assert (d["kernels"], d["kernel_ns"]) == (2, 20_000), d
    # mtia_runtime calls are launches: C2 was launched before C1 ended.
    assert idle(d) == {"host_wait_ns": 0, "kernel_wait_ns": 10_000,
                       "other_ns": 0}, idle(d)
    assert [(n["category"], n["events"]) for n in s["notes"]] == \
        [("npu_kernel", 3)], s["notes"]
    assert 'category "npu_kernel" not understood' in s["notes"][0]["text"]
    k = SRV.json("/data/plugin/gpu/kernels", run="mtia")
    assert sorted(x["name"] for x in k["kernels"]) == ["ccp_add", "ccp_gemm"]
    # The mtia_runtime launches are the CPU lane's runtime calls, paired
    # with their kernels by correlation.
    h = SRV.json("/data/plugin/gpu/host", run="mtia")
    calls = [x for x in h["spans"] if x["kind"] == "runtime"]
    assert len(calls) == 2 and all("correlation" in x for x in calls), h


def test_unknown_only():
    s = summary("unknown_only")
    assert s["devices"] == [], s
    assert [(n["category"], n["events"]) for n in s["notes"]] == \
        [("xla_op", 2)], s["notes"]


def test_device_properties_and_distributed():
    s = summary("job/rank-00000")
    # deviceProperties also lists GPU 1, which the rank never used: not a
    # device of the trace.
    (d,) = s["devices"]
    assert d["name"] == "Tesla V100-SXM2-32GB", d["name"]
    assert d["sm_count"] == 80
    assert d["compute_capability"] == "7.0"
    assert d["total_mem"] == 34089730048
    assert s["distributed"] == {
        "rank": 0, "world_size": 128, "pg_count": 2, "backend": "nccl",
        "process_groups": [
            {"name": "0", "desc": "default_pg", "backend": "cuda:nccl",
             "size": 128, "ranks": "0-127"},
            {"name": "1", "desc": "tp_group", "backend": "cuda:nccl",
             "size": 8, "ranks": "0-7"}]}, s["distributed"]
    # A trace without them: nulls, not zeros.
    g = summary("gaps_us")
    assert g["distributed"] is None and g["notes"] == []
    (gd,) = g["devices"]
    assert gd["name"] == "GPU 0" and gd["sm_count"] is None
    assert gd["compute_capability"] is None and gd["total_mem"] is None


def report(*args):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(TMP, "xdg"))
    p = subprocess.run([TFBOARD, "report", "--logdir", LOG, "--quiet"] +
                       list(args), capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_report():
    md = report("--format", "markdown", "--run", "^(job/rank-00000|mtia)$")
    # (Markdown escapes - and _ in names.)
    assert "Tesla V100\\-SXM2\\-32GB, 80 SMs, 31.7 GiB, compute 7.0" in md, md
    assert "rank 0 of world size 128, backend nccl, 2 process groups" in md
    assert ('**Trace note:** 3 events of category "npu\\_kernel" not '
            'understood') in md, md
    # The job's world size, which its directories do not say.
    assert "2 ranks (world size 128 from the traces, backend nccl)" in md, md
    rep = json.loads(report("--format", "json", "--run", "^mtia$"))
    (run,) = rep["runs"]
    assert run["gpu"]["notes"][0]["category"] == "npu_kernel", run["gpu"]
    rep = json.loads(report("--format", "json", "--run", "^gaps_us$"))
    (d,) = rep["runs"][0]["gpu"]["devices"]
    assert d["idle"] == H.GAPS_US_WANT and d["idle_ns"] == 120_000, d


def test_hostile_metadata():
    s = summary("hostile")
    # The kernel is read; the metadata of the wrong types is left out.
    (d,) = s["devices"]
    assert d["kernels"] == 1 and d["busy_ns"] == 10_000, d
    assert (d["name"], d["sm_count"], d["compute_capability"],
            d["total_mem"]) == ("GPU 0", None, None, None), d
    # 16 categories named (the 100 KB name cut to 128 bytes), the events
    # of the other 24 counted in one more note.
    notes = s["notes"]
    assert len(notes) == 17, len(notes)
    assert notes[0]["category"] == "x" * 128 and notes[0]["events"] == 1
    assert notes[16]["category"] is None and notes[16]["events"] == 24
    assert "24 more events" in notes[16]["text"], notes[16]
    dist = s["distributed"]
    # rank of the wrong type: null; 1e30 is no world size either.
    assert dist["rank"] is None and dist["backend"] is None, dist
    assert dist["world_size"] is None, dist
    assert dist["pg_count"] == 100
    pgs = dist["process_groups"]
    assert len(pgs) == 64, len(pgs)
    # 100000 ranks: one run; ranks that are not numbers are left out.
    assert pgs[0]["ranks"] == "0-99999" and pgs[0]["size"] == 100000
    assert pgs[1]["ranks"] == "3-4,6" and pgs[1]["size"] is None, pgs[1]


ALL = [test_gaps_us, test_gaps_ns, test_two_streams, test_mtia,
       test_unknown_only, test_device_properties_and_distributed,
       test_hostile_metadata]


def main():
    global SRV, PASS
    try:
        H.write_all(LOG)
        failed = []
        with Server(TFBOARD, LOG, "--cache_dir", CACHE) as srv:
            SRV = srv
            srv.wait_loaded()
            for t in ALL:
                try:
                    t()
                except Exception as e:  # the cache pass runs anyway
                    failed.append((t.__name__, e))
            first = {r: summary(r) for r in RUNS}
            # The built traces are written to the cache after they are
            # answered: wait for every run's file.
            end = time.time() + 30
            while time.time() < end and len(cache_files()) < len(RUNS):
                time.sleep(0.2)
        assert not failed, failed
        assert len(cache_files()) == len(RUNS), cache_files()
        # Again from the columnar cache: the same answers.
        PASS = "cache"
        with Server(TFBOARD, LOG, "--cache_dir", CACHE) as srv:
            SRV = srv
            srv.wait_loaded()

            def test_cache_same_answers():
                for r in RUNS:
                    assert summary(r) == first[r], (r, summary(r), first[r])
            run_tests(ALL + [test_cache_same_answers, test_report])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
