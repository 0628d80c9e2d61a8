#!/usr/bin/env python3
"""The trace-side SQL tables (server/query/query_trace_tables.h; server/
API.md "Trace tables") on a Kineto trace written here, whose every row is
worked out below from the events the test writes: kernels, memcpy,
memset, comms, host_spans, nvtx and memory_events; the plan and the rows a
time window reads (EXPLAIN QUERY PLAN, tfb_trace_rows_read()); a run whose
trace cannot be read ends the query with its name, and is never loaded
when the query names another run; and the same answers from an s3://
logdir on moto_server (skipped without moto).

usage: test_query_trace_tables.py QUERY_TRACE_DRIVER"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

BASE = 1_700_000_000_000_000_000  # baseTimeNanoseconds
US = 1000

# kernels: name, device, stream, ts µs, dur µs, grid, block, regs, smem
KERNELS = [
    ("gemm", 0, 7, 100, 10, [4, 2, 1], [128, 1, 1], 32, 1024),
    ("gemm", 0, 7, 120, 20, [4, 2, 1], [128, 1, 1], 32, 1024),
    ("relu", 0, 8, 130, 5, [8, 1, 1], [256, 1, 1], 16, 0),
    ("ncclDevKernel_AllReduce_RING_LL_Sum_float", 1, 9, 140, 50,
     [2, 1, 1], [512, 1, 1], 64, 4096),
]
# PyTorch 2.x's args on the NCCL kernel: 1024 floats, 4096 bytes
NCCL_ARGS = {"Collective name": "allreduce", "In msg nelems": 1024,
             "Out msg nelems": 1024, "dtype": "Float", "Group size": 2}
# the window test's lane: TINY kernels on device 0 stream 20, 2 µs apart
TINY = 2000
TINY_T0 = 1000


def ns(us):
    return BASE + us * US


def write_good(path):
    ev = []
    corr = 0
    for name, dev, st, ts, dur, grid, block, regs, smem in KERNELS:
        corr += 1
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": dev,
                   "tid": st, "ts": ts, "dur": dur,
                   "args": {"device": dev, "stream": st, "correlation": corr,
                            "grid": grid, "block": block,
                            "registers per thread": regs,
                            "shared memory": smem,
                            **(NCCL_ARGS if name.startswith("nccl")
                               else {})}})
    for i in range(TINY):
        ev.append({"ph": "X", "cat": "kernel", "name": "tiny", "pid": 0,
                   "tid": 20, "ts": TINY_T0 + 2 * i, "dur": 1,
                   "args": {"device": 0, "stream": 20,
                            "correlation": 100 + i}})
    ev.append({"ph": "X", "cat": "gpu_memcpy",
               "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
               "tid": 7, "ts": 200, "dur": 4,
               "args": {"device": 0, "stream": 7, "correlation": 50,
                        "bytes": 4096}})
    ev.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)",
               "pid": 0, "tid": 7, "ts": 210, "dur": 2,
               "args": {"device": 0, "stream": 7, "correlation": 51,
                        "bytes": 512}})
    # host: an NVTX range holding an op holding the first kernel's launch
    ev.append({"ph": "X", "cat": "user_annotation", "name": "fwd",
               "pid": 1, "tid": 11, "ts": 80, "dur": 40})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1,
               "tid": 11, "ts": 90, "dur": 20})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
               "pid": 1, "tid": 11, "ts": 95, "dur": 3,
               "args": {"correlation": 1}})
    # GPU memory: 1 MiB allocated at 105 µs, freed at 150 µs
    for ts, nb in ((105, 1 << 20), (150, -(1 << 20))):
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t",
                   "name": "[memory]", "pid": 1, "tid": 11, "ts": ts,
                   "args": {"Total Reserved": 2 << 20,
                            "Total Allocated": max(nb, 0), "Bytes": nb,
                            "Addr": 4096, "Device Id": 0,
                            "Device Type": 1}})
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": BASE,
                   "traceEvents": ev}, f)


def write_logdir(root):
    write_good(os.path.join(root, "tr", "w.1.pt.trace.json"))
    # a second run: one kernel
    os.makedirs(os.path.join(root, "tr2"))
    with open(os.path.join(root, "tr2", "w.2.pt.trace.json"), "w") as f:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": BASE,
                   "traceEvents": [
                       {"ph": "X", "cat": "kernel", "name": "gemm",
                        "pid": 0, "tid": 7, "ts": 5, "dur": 7,
                        "args": {"device": 0, "stream": 7,
                                 "correlation": 1}}]}, f)
    # a run whose trace store is not an SQLite file (the trace layer
    # skips it; the tables must say so)
    os.makedirs(os.path.join(root, "zbad"))
    with open(os.path.join(root, "zbad", "w.3.trace.sqlite"), "wb") as f:
        f.write(bytes(range(256)) * 20)


# What every query below must answer, from the events above.
def expected():
    e = {}
    rows = []
    for i, (name, dev, st, ts, dur, g, b, regs, smem) in enumerate(KERNELS):
        if (dev, st) == (0, 7):
            rows.append("tr|%d|%d|%d|%d|%d|%s|%d|%d|%d|%d|%d|%d|%d|%d|%d"
                        % (dev, st, ns(ts), ns(ts + dur), dur * US, name,
                           g[0], g[1], g[2], b[0], b[1], b[2], regs, smem,
                           i + 1))
    e["kernels_d0s7"] = rows
    total = {}
    for name, _, _, _, dur, *_ in KERNELS:
        c, s = total.get(name, (0, 0))
        total[name] = (c + 1, s + dur * US)
    total["tiny"] = (TINY, TINY * US)
    e["by_name"] = ["%s|%d|%d" % (n, c, s) for n, (c, s) in
                    sorted(total.items(), key=lambda kv: (-kv[1][1], kv[0]))]
    e["memcpy"] = ["tr|0|7|%d|%d|%d|HtoD|4096|50"
                   % (ns(200), ns(204), 4 * US)]
    e["memset"] = ["tr|0|7|%d|%d|%d|512|51" % (ns(210), ns(212), 2 * US)]
    e["comms"] = ["tr|1|9|%d|%d|AllReduce|4096|NULL|%s|4"
                  % (ns(140), ns(190), KERNELS[3][0])]
    # ops and calls: the launch sits in aten::mm (depth 1), self time of
    # the op is its 20 µs less the call's 3
    e["host_spans"] = [
        "tr|thread 11|op|aten::mm|%d|%d|%d|0|%d|NULL"
        % (ns(90), ns(110), 20 * US, 17 * US),
        "tr|thread 11|runtime|cudaLaunchKernel|%d|%d|%d|1|%d|1"
        % (ns(95), ns(98), 3 * US, 3 * US),
    ]
    e["nvtx"] = ["tr|thread 11|range|fwd|%d|%d|%d|0" % (ns(80), ns(120), 40 * US)]
    # Kineto's blocks are the caching allocator's (pool 1); a free
    # carries the block's size
    e["memory"] = [
        "tr|0|%d|alloc|4096|%d|NULL|1|%d" % (ns(105), 1 << 20, 2 << 20),
        "tr|0|%d|free|4096|%d|NULL|1|%d" % (ns(150), 1 << 20, 2 << 20),
    ]
    e["per_run"] = ["tr|%d" % (len(KERNELS) + TINY), "tr2|1"]
    e["names_refiltered"] = ["tr|tiny|gemm", "tr2|gemm|gemm", "tr|tiny|gemm"]
    return e


QUERIES = [
    ("kernels_d0s7",
     "SELECT * FROM kernels WHERE run = 'tr' AND device = 0 AND stream = 7 "
     "ORDER BY start_ns"),
    ("by_name",
     "SELECT name, count(*), sum(dur_ns) FROM kernels WHERE run = 'tr' "
     "GROUP BY name ORDER BY 3 DESC, 1"),
    ("memcpy", "SELECT * FROM memcpy WHERE run = 'tr'"),
    ("memset", "SELECT * FROM memset WHERE run = 'tr'"),
    ("comms",
     "SELECT run, device, stream, start_ns, end_ns, collective, bytes, "
     "group_name, name, correlation FROM comms WHERE run = 'tr'"),
    ("host_spans",
     "SELECT run, thread, kind, name, start_ns, end_ns, dur_ns, depth, "
     "self_ns, correlation FROM host_spans WHERE run = 'tr' "
     "AND thread = 'thread 11' ORDER BY start_ns"),
    ("nvtx", "SELECT * FROM nvtx WHERE run = 'tr'"),
    ("memory", "SELECT * FROM memory_events WHERE run = 'tr' "
     "ORDER BY time_ns"),
    ("per_run", "SELECT run, count(*) FROM kernels "
     "WHERE run IN ('tr', 'tr2') GROUP BY run ORDER BY run"),
    # one cursor filtered again on another run and back: the names of the
    # first run's trace go to SQLite without a copy and must stay valid
    # (the trace held to the statement's end; the ASan build checks it),
    # the other run's are copied
    ("names_refiltered",
     "WITH r(x) AS (VALUES ('tr'), ('tr2'), ('tr')) SELECT x, "
     "(SELECT max(name) FROM kernels WHERE run = r.x), "
     "(SELECT min(name) FROM kernels WHERE run = r.x) FROM r"),
]


def run_driver(driver, logdir, sqls):
    p = subprocess.run([driver, logdir] + sqls, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr)
    out, cur = [], []
    for line in p.stdout.splitlines():
        if line == "--":
            out.append(cur)
            cur = []
        else:
            cur.append(line)
    assert len(out) == len(sqls), p.stdout
    return out


def check_answers(driver, logdir):
    exp = expected()
    got = run_driver(driver, logdir, [q for _, q in QUERIES])
    for (key, q), rows in zip(QUERIES, got):
        assert rows == exp[key], (key, q, rows, exp[key])
    return got


def check_index(driver, logdir):
    lo, hi = ns(TINY_T0 + 2 * 100), ns(TINY_T0 + 2 * 109)
    window = ("SELECT count(*), min(start_ns), max(start_ns) FROM kernels "
              "WHERE run = 'tr' AND start_ns BETWEEN %d AND %d" % (lo, hi))
    tail = ("SELECT count(*) FROM kernels WHERE run = 'tr' AND stream = 20 "
            "AND end_ns >= %d" % ns(TINY_T0 + 2 * (TINY - 5)))
    out = run_driver(driver, logdir, [
        "EXPLAIN QUERY PLAN " + window,
        "SELECT tfb_trace_rows_read()", window,
        "SELECT tfb_trace_rows_read()", tail,
        "SELECT tfb_trace_rows_read()",
        "SELECT count(*) FROM kernels WHERE run = 'tr'",
        "SELECT tfb_trace_rows_read()"])
    plan = " ".join(out[0])
    assert "VIRTUAL TABLE INDEX" in plan and "run=" in plan \
        and "start_ns>=" in plan and "start_ns<=" in plan, plan
    r0, r1, r2, r3 = (int(out[i][0]) for i in (1, 3, 5, 7))
    # ten tiny kernels in the window, found by binary search: the spans
    # read are the window's (one more per lane where the search stops)
    assert out[2] == ["10|%d|%d" % (lo, hi)], out[2]
    read_window = r1 - r0
    assert 10 <= read_window <= 20, ("window read", read_window)
    # the last 5 kernels of the lane by their end, through the max-end
    # tree: a few blocks, not the lane's 2000
    assert out[4] == ["5"], out[4]
    read_tail = r2 - r1
    assert read_tail <= 100, ("end_ns bound read", read_tail)
    # the same count without constraints reads every span of the run
    # (the memcpy and the memset share stream 7 with the kernels)
    assert out[6] == ["%d" % (len(KERNELS) + TINY)], out[6]
    assert r3 - r2 >= TINY, ("full scan read", r3 - r2)
    print("rows read: window %d, end tail %d, full %d"
          % (read_window, read_tail, r3 - r2))


def check_order(driver, logdir):
    """GROUP BY / ORDER BY name of one run: the scan gives the rows in name
    order (the plan says order=, SQLite sorts nothing), with the same
    answers as a sort would; across runs (IN) SQLite sorts."""
    group = ("SELECT name, count(*), sum(dur_ns) FROM kernels "
             "WHERE run = 'tr' GROUP BY name")
    desc = ("SELECT name, stream FROM kernels WHERE run = 'tr' "
            "AND stream <> 20 ORDER BY name DESC")
    both = ("SELECT name, count(*) FROM kernels WHERE run IN ('tr', 'tr2') "
            "GROUP BY name")
    out = run_driver(driver, logdir, [
        "EXPLAIN QUERY PLAN " + group, group, "EXPLAIN QUERY PLAN " + desc,
        desc, both])
    plan = " ".join(out[0])
    assert "order=asc" in plan and "B-TREE" not in plan, plan
    exp = expected()["by_name"]
    assert out[1] == sorted(exp, key=lambda r: r.split("|")[0]), out[1]
    assert "order=desc" in " ".join(out[2]), out[2]
    rows = sorted(((n, st) for n, d, st, *_ in KERNELS if st != 20),
                  key=lambda r: r[0], reverse=True)
    assert [r.split("|")[0] for r in out[3]] == [n for n, _ in rows], out[3]
    counts = {}
    for n, *_ in KERNELS:
        counts[n] = counts.get(n, 0) + 1
    counts["gemm"] += 1  # tr2's
    counts["tiny"] = TINY
    assert out[4] == ["%s|%d" % kv for kv in sorted(counts.items())], out[4]


def check_failed_run(driver, logdir):
    out = run_driver(driver, logdir, [
        "SELECT count(*) FROM kernels",
        "SELECT count(*) FROM kernels WHERE run = 'tr2'",
        "SELECT count(*) FROM nvtx WHERE run = 'nope'",
        "SELECT count(*) FROM host_spans",
        "SELECT count(*) FROM memory_events WHERE run = 'zbad'"])
    for rows in (out[0], out[3], out[4]):
        assert len(rows) == 1 and rows[0].startswith("ERROR: run 'zbad'") \
            and "w.3.trace.sqlite" in rows[0], rows
    # naming another run never loads the broken one
    assert out[1] == ["1"], out[1]
    assert out[2] == ["0"], out[2]


def check_cpu_only(driver, tmp):
    # torch.profiler without a GPU writes CPU ops only: the run has a trace,
    # no kernels. A query over every run answers the others' rows, never an
    # error for it (the demo's torch_profile run on a machine without GPU).
    root = os.path.join(tmp, "cpu_logs")
    os.makedirs(os.path.join(root, "gpu"))
    os.makedirs(os.path.join(root, "cpu"))
    with open(os.path.join(root, "gpu", "w.1.pt.trace.json"), "w") as f:
        json.dump({"schemaVersion": 1, "baseTimeNanoseconds": BASE,
                   "traceEvents": [
                       {"ph": "X", "cat": "kernel", "name": "gemm",
                        "pid": 0, "tid": 7, "ts": 5, "dur": 7,
                        "args": {"device": 0, "stream": 7,
                                 "correlation": 1}}]}, f)
    # PyTorch 1.13's export_chrome_trace without CUDA: a bare list of
    # CPU functions (no "cat", pid "CPU functions"), as the demo writes it.
    with open(os.path.join(root, "cpu", "w.2.pt.trace.json"), "w") as f:
        json.dump([{"name": "aten::mm", "ph": "X", "ts": 10, "dur": 20,
                    "tid": 1, "pid": "CPU functions", "args": {}},
                   {"name": "aten::relu", "ph": "X", "ts": 40, "dur": 5,
                    "tid": 1, "pid": "CPU functions", "args": {}}], f)
    out = run_driver(driver, root, [
        "SELECT run, count(*) FROM kernels GROUP BY run",
        "SELECT count(*) FROM kernels WHERE run = 'cpu'",
        "SELECT count(*) FROM host_spans WHERE run = 'cpu'"])
    assert out[0] == ["gpu|1"], out[0]
    assert out[1] == ["0"], out[1]
    assert out[2] == ["2"], out[2]


def check_s3(driver, logdir, local_answers):
    import s3_util
    try:
        s3_util.need_moto()
    except SystemExit:
        print("s3 part skipped: no moto_server or boto3")
        return
    with s3_util.Moto() as m:
        s3_util.use_endpoint(m.url)
        s3 = m.client()
        s3.create_bucket(Bucket="traces")
        s3_util.upload_dir(s3, "traces", logdir, "logs")
        got = run_driver(driver, "s3://traces/logs",
                         [q for _, q in QUERIES])
        assert got == local_answers, (got, local_answers)


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "logs")
        write_logdir(logdir)
        answers = check_answers(driver, logdir)
        check_index(driver, logdir)
        check_order(driver, logdir)
        check_failed_run(driver, logdir)
        check_cpu_only(driver, tmp)
        print("local answers: ok")
        check_s3(driver, logdir, answers)
        print("s3 answers: ok")


if __name__ == "__main__":
    main()
