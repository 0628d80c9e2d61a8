#!/usr/bin/env python3
"""The timeline's host lanes and launch -> kernel flows from every source
alike (issue 20 item 9): /data/plugin/gpu/host (CPU-thread lanes, NVTX
lanes, runtime calls with their correlation) against
/data/plugin/gpu/timeline (kernels with correlation and launch_ns).

Runs:
  ours/    a trace store written by our collector (test_timeline_gen_store:
           CUPTI records walked by the real libcupti: NVTX push/pop ranges
           and a mark, launches on two threads, kernels); skipped when
           libcupti cannot load;
  store/   two hand-made stores in our schema (docs/trace-store.md), two
           processes whose correlation ids collide (1 in both): each call
           must pair with its own file's kernel;
  nsys/    an `nsys export --type sqlite` layout: ThreadNames, NVTX text
           in the text column and by textId, push/pop (59), start/end (60),
           mark (34) and domain (75, not drawn) rows, names by nameId;
  kineto/  Kineto JSON: cpu_op, cuda_runtime with correlation,
           user_annotation, kernels, thread_name, baseTimeNanoseconds;
  cpuonly/ Kineto JSON without a GPU event: its CPU ops;
  nohost/  a store with kernels only: no host lanes, no error;
  odd/     rows a hostile or damaged file may hold (an end before its
           start, NULL thread and text, a text id that resolves to
           nothing, markup in names);
  view/    NVTX_EVENTS as an endless recursive VIEW: a 500 naming the
           file, and the server serves on.
Every figure is checked exactly: lane labels and kinds, names, times,
rows, and each kernel's correlation and launch_ns against its call. A
second server over the same --cache_dir (traces mapped from the columnar
cache) answers the same bytes as the first load.

Arguments: the tfboard binary, the logdir generator (unused).
TFB_BUILD_ROOT locates test_timeline_gen_store.
"""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server  # noqa: E402
from timeline_gen import B, G, make_nsys, make_store  # noqa: E402

TFBOARD = sys.argv[1]
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
GEN = os.path.join(BUILD, "tests", "integration", "test_timeline_gen_store")
TMP = tempfile.mkdtemp(prefix="tfb_timeline_")
LOG = os.path.join(TMP, "logdir")
CACHE = os.path.join(TMP, "cache")
HAVE_OURS = False


BASE_NS = 1000000000000


def make_kineto(d, gpu=True):
    os.makedirs(d)

    def X(cat, name, tid, ts, dur, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": tid,
                "ts": ts, "dur": dur, "args": args}
    ev = [{"ph": "M", "name": "thread_name", "pid": 7, "tid": 1,
           "args": {"name": "main"}},
          X("cpu_op", "aten::linear", 1, 100, 500),
          X("user_annotation", "forward", 1, 90, 700),
          X("cpu_op", "DataLoader::collate", 2, 200, 300)]
    if gpu:
        ev += [X("cuda_runtime", "cudaLaunchKernel", 1, 130, 10,
                 correlation=5),
               X("cuda_runtime", "cudaLaunchKernel", 1, 300.5, 10,
                 correlation=6),
               {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0,
                "tid": 7, "ts": 150.5, "dur": 40,
                "args": {"device": 0, "stream": 7, "correlation": 5}},
               {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0,
                "tid": 7, "ts": 400, "dur": 20,
                "args": {"device": 0, "stream": 7, "correlation": 6}}]
    with open(os.path.join(d, "host.pt.trace.json"), "w") as f:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": BASE_NS,
                   "traceEvents": ev}, f)


def setup():
    global HAVE_OURS
    os.makedirs(os.path.join(LOG, "ours"))
    if os.path.exists(GEN):
        r = subprocess.run([GEN, os.path.join(LOG, "ours")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            HAVE_OURS = True
        elif r.returncode != 77:
            raise AssertionError("generator failed: %s" % r.stderr)
    d = os.path.join(LOG, "store")
    os.makedirs(d)
    make_store(os.path.join(d, "a.10.trace.sqlite"), 10,
               calls=[(1, 100, 200)],
               kernels=[(1, 7, 300, 400, "ka")],
               ranges=[("fa", 50, 450)])
    make_store(os.path.join(d, "b.20.trace.sqlite"), 20,
               calls=[(1, 150, 250), (2, 260, 270)],
               kernels=[(1, 9, 500, 600, "kb"), (2, 9, 700, 800, "kb2")],
               ranges=[])
    make_nsys(os.path.join(LOG, "nsys"))
    make_kineto(os.path.join(LOG, "kineto"))
    make_kineto(os.path.join(LOG, "cpuonly"), gpu=False)
    d = os.path.join(LOG, "nohost")
    os.makedirs(d)
    make_store(os.path.join(d, "x.trace.sqlite"), 5, calls=[],
               kernels=[(1, 7, 10, 20, "k")], ranges=[])
    db = sqlite3.connect(os.path.join(d, "x.trace.sqlite"))
    db.executescript("DROP TABLE NVTX_EVENTS; "
                     "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME;")
    db.close()
    d = os.path.join(LOG, "odd")
    os.makedirs(d)
    path = os.path.join(d, "x.trace.sqlite")
    make_store(path, 5, calls=[], kernels=[(1, 7, 10, 20, "k")], ranges=[])
    db = sqlite3.connect(path)
    db.executemany(
        "INSERT INTO NVTX_EVENTS(start, end, eventType, globalTid, textId, "
        "text) VALUES(?,?,?,?,?,?)",
        [(B + 100, B + 50, 59, None, None, "backwards"),
         (B + 200, B + 300, 59, None, 999, None),
         (B + 400, B + 500, 60, None, None, '<b>"x"</b>'),
         (B + 450, B + 460, 75, None, None, 'a domain: not drawn')])
    db.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,1,NULL,?,999,0,"
        "NULL)", [(B + 300, B + 200, 3), (B + 600, B + 700, None)])
    db.commit()
    db.close()
    d = os.path.join(LOG, "view")
    os.makedirs(d)
    path = os.path.join(d, "x.trace.sqlite")
    make_store(path, 5, calls=[], kernels=[(1, 7, 10, 20, "k")], ranges=[])
    db = sqlite3.connect(path)
    db.executescript("""
        DROP TABLE NVTX_EVENTS;
        CREATE VIEW NVTX_EVENTS AS WITH RECURSIVE n(start) AS
            (SELECT 1 UNION ALL SELECT start + 1 FROM n)
            SELECT start, start + 1 AS end, 59 AS eventType, 1 AS globalTid,
                   NULL AS textId, 'x' AS text FROM n;
    """)
    db.close()


def host(run, **kw):
    return SRV.json("/data/plugin/gpu/host", run=run, **kw)


def lanes(j):
    """{label: (kind, depth)}"""
    return {l["label"]: (l["kind"], l["depth"]) for l in j["lanes"]}


def spans(j):
    """[(lane label, kind, name, start, end, depth, correlation)], sorted"""
    lab = {l["id"]: l["label"] for l in j["lanes"]}
    return sorted((lab[s["lane"]], s["kind"], s["name"], s["start_ns"],
                   s["end_ns"], s["depth"], s.get("correlation"))
                  for s in j["spans"])


def flows(run):
    """[(call lane, call name, call start, kernel name, kernel start,
    correlation)]: each kernel of /timeline with the runtime call of
    /host that has its correlation; asserts the call starts at launch_ns
    and that no correlation is shared by two calls."""
    h = host(run)
    t = SRV.json("/data/plugin/gpu/timeline", run=run)
    lab = {l["id"]: l["label"] for l in h["lanes"]}
    calls = {}
    for s in h["spans"]:
        if "correlation" in s:
            assert s["kind"] == "runtime", s
            assert s["correlation"] not in calls, (s, calls)
            calls[s["correlation"]] = s
    out = []
    for k in t["spans"]:
        if k["kind"] != "kernel" or "correlation" not in k:
            continue
        c = calls.get(k["correlation"])
        assert c, ("no call for", k, calls)
        assert k["launch_ns"] == c["start_ns"], (k, c)
        out.append((lab[c["lane"]], c["name"], c["start_ns"], k["name"],
                    k["start_ns"], k["correlation"]))
    return sorted(out, key=lambda f: f[4])


def test_ours():
    if not HAVE_OURS:
        print("skip test_ours: libcupti cannot load")
        return
    j = host("ours")
    assert lanes(j) == {"NVTX thread 1": ("nvtx", 2),
                        "CPU thread 1": ("thread", 1),
                        "CPU thread 2": ("thread", 1)}, lanes(j)
    assert spans(j) == sorted([
        ("NVTX thread 1", "range", "forward", B + 100, B + 2200, 0, None),
        ("NVTX thread 1", "range", "attn", B + 300, B + 900, 1, None),
        ("NVTX thread 1", "mark", "ckpt", B + 2100, B + 2100, 1, None),
        ("CPU thread 1", "runtime", "cudaLaunchKernel_v7000", B + 500,
         B + 600, 0, 1),
        ("CPU thread 2", "runtime", "cudaLaunchKernel_v7000", B + 700,
         B + 800, 0, 2)]), spans(j)
    assert flows("ours") == [
        ("CPU thread 1", "cudaLaunchKernel_v7000", B + 500, "gemm()",
         B + 1000, 1),
        ("CPU thread 2", "cudaLaunchKernel_v7000", B + 700, "relu()",
         B + 2500, 2)], flows("ours")  # kernel names demangled
    assert j["trace_start_ns"] == B + 100 and j["trace_end_ns"] == B + 2200


def test_store_two_processes():
    j = host("store")
    assert lanes(j) == {"NVTX thread 1 (pid 10)": ("nvtx", 1),
                        "CPU thread 1 (pid 10)": ("thread", 1),
                        "CPU thread 1 (pid 20)": ("thread", 1)}, lanes(j)
    # Correlation ids 1 of both files pair with their own file's kernel:
    # the second file's ids live above the first's in the GPU trace.
    f = flows("store")
    assert [(x[0], x[2] - B, x[3], x[4] - B) for x in f] == [
        ("CPU thread 1 (pid 10)", 100, "ka", 300),
        ("CPU thread 1 (pid 20)", 150, "kb", 500),
        ("CPU thread 1 (pid 20)", 260, "kb2", 700)], f
    assert len({x[5] for x in f}) == 3, f


def test_nsys():
    j = host("nsys")
    # Two processes: the labels name the pids (nsys's globalTids carry
    # hardware id bits above the pid, which are not part of it).
    assert lanes(j) == {"NVTX python3 (pid 100)": ("nvtx", 2),
                        "CPU python3 (pid 100)": ("thread", 1),
                        "NVTX pt_data_worker (pid 100)": ("nvtx", 1),
                        "CPU thread 200 (pid 200)": ("thread", 1)}, lanes(j)
    assert spans(j) == sorted([
        ("NVTX python3 (pid 100)", "range", "step 1", B + 1000, B + 9000, 0,
         None),
        ("NVTX python3 (pid 100)", "mark", "sync", B + 5000, B + 5000, 1,
         None),
        ("NVTX pt_data_worker (pid 100)", "range", "load", B + 1500,
         B + 4000, 0, None),
        ("CPU python3 (pid 100)", "runtime", "cudaLaunchKernel_v7000",
         B + 2000, B + 2100, 0, 7),
        ("CPU python3 (pid 100)", "runtime", "cudaLaunchKernel_v7000",
         B + 2200, B + 2300, 0, 8),
        ("CPU thread 200 (pid 200)", "runtime", "cudaLaunchKernel_v7000",
         B + 2500, B + 2600, 0, None)]), spans(j)
    assert flows("nsys") == [
        ("CPU python3 (pid 100)", "cudaLaunchKernel_v7000", B + 2000,
         "void gemm<float>()", B + 3000, 7),
        ("CPU python3 (pid 100)", "cudaLaunchKernel_v7000", B + 2200,
         "void gemm<float>()", B + 4100, 8)], flows("nsys")
    # Past max: the longest, longest first, ties by start.
    m = host("nsys", max=3)
    assert m["truncated"] and [(x["name"], x["start_ns"] - B)
                               for x in m["spans"]] == [
        ("step 1", 1000), ("load", 1500),
        ("cudaLaunchKernel_v7000", 2000)], m["spans"]
    # The window: only what overlaps it.
    w = host("nsys", start_ns=B + 4200, end_ns=B + 4300)
    assert [s["name"] for s in w["spans"]] == ["step 1"], w["spans"]


def test_kineto():
    j = host("kineto")
    assert lanes(j) == {"NVTX main": ("nvtx", 1), "CPU main": ("thread", 2),
                        "CPU thread 2": ("thread", 1)}, lanes(j)
    assert flows("kineto") == [
        ("CPU main", "cudaLaunchKernel", BASE_NS + 130000, "gemm",
         BASE_NS + 150500, 5),
        ("CPU main", "cudaLaunchKernel", BASE_NS + 300500, "relu",
         BASE_NS + 400000, 6)], flows("kineto")
    sp = spans(j)
    assert ("CPU main", "op", "aten::linear", BASE_NS + 100000,
            BASE_NS + 600000, 0, None) in sp, sp
    assert ("NVTX main", "range", "forward", BASE_NS + 90000,
            BASE_NS + 790000, 0, None) in sp, sp


def test_cpu_only_and_no_host():
    j = host("cpuonly")
    assert lanes(j) == {"NVTX main": ("nvtx", 1), "CPU main": ("thread", 1),
                        "CPU thread 2": ("thread", 1)}, lanes(j)
    assert {o["name"] for o in j["top_ops"]} == {"aten::linear",
                                                 "DataLoader::collate"}
    assert SRV.json("/data/plugin/gpu/summary", run="cpuonly")["devices"] == []
    j = host("nohost")
    assert j["lanes"] == [] and j["spans"] == [] and j["total"] == 0, j
    # Its kernel is there all the same.
    t = SRV.json("/data/plugin/gpu/timeline", run="nohost")
    assert [s["name"] for s in t["spans"]] == ["k"], t


def test_odd_rows_and_a_view():
    j = host("odd")
    assert lanes(j) == {"NVTX thread 0": ("nvtx", 1),
                        "CPU thread 0": ("thread", 1)}, lanes(j)
    assert spans(j) == sorted([
        ("NVTX thread 0", "range", "(unnamed)", B + 200, B + 300, 0, None),
        ("NVTX thread 0", "range", '<b>"x"</b>', B + 400, B + 500, 0, None),
        ("CPU thread 0", "runtime", "CUDA API call", B + 600, B + 700, 0,
         None)]), spans(j)
    st, _, body = SRV.get("/data/plugin/gpu/host", run="view")
    assert st == 500 and b"x.trace.sqlite" in body and b"view" in body, body
    # Its kernels still answer, and so does everything else.
    t = SRV.json("/data/plugin/gpu/timeline", run="view")
    assert [s["name"] for s in t["spans"]] == ["k"], t
    assert host("nsys")["total"] == 6


RUNS = ["ours", "store", "nsys", "kineto", "cpuonly", "nohost", "odd"]


def bodies(srv):
    out = {}
    # without our store (no CUDA headers, or libcupti cannot load) the
    # "ours" directory is empty: no run to compare
    for run in (RUNS if HAVE_OURS else RUNS[1:]):
        for path, kw in (("/data/plugin/gpu/host", {}),
                         ("/data/plugin/gpu/host", {"max": 2}),
                         ("/data/plugin/gpu/timeline", {})):
            srv.json(path, run=run, **kw)  # waits out the 202s
            out[(run, path, tuple(kw.items()))] = srv.get(path, run=run,
                                                          **kw)[2]
    return out


def test_same_answers_from_the_cache():
    """A restart over the same --cache_dir maps the GPU traces from the
    columnar cache: the host lanes and the flows answer the same bytes."""
    first = FIRST
    with Server(TFBOARD, LOG, "--cache_dir", CACHE) as srv:
        srv.wait_loaded()
        again = bodies(srv)
    assert os.listdir(CACHE), "no cache file was written"
    for k in first:
        assert first[k] == again[k], (k, first[k][:300], again[k][:300])


FIRST = {}
SRV = None


def run_all(tests):
    """Runs each test, a line each; True when all passed."""
    ok = True
    for t in tests:
        try:
            t()
            print("ok   " + t.__name__)
        except Exception:  # report every failing test, not just one
            import traceback
            traceback.print_exc()
            print("FAIL " + t.__name__)
            ok = False
    sys.stdout.flush()
    return ok


def main():
    global SRV
    setup()
    os.makedirs(CACHE)
    with Server(TFBOARD, LOG, "--cache_dir", CACHE) as srv:
        SRV = srv
        srv.wait_loaded()
        FIRST.update(bodies(srv))
        ok = run_all([test_ours, test_store_two_processes, test_nsys,
                      test_kineto, test_cpu_only_and_no_host,
                      test_odd_rows_and_a_view])
    # After the first server stopped: a second one over its cache.
    ok = run_all([test_same_answers_from_the_cache]) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
