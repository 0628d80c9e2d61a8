#!/usr/bin/env python3
"""NCCL bandwidth (issue 29; server/analysis/comm_bandwidth.h, server/API.md
"Collectives") through the real loaders: a 4-rank job's Kineto traces in
PyTorch's shape (comm_traces.py: PyTorch 2.x traces whose NCCL kernels
carry the collective's args, and older ones joined to record_param_comms by
External id) give, per rank, collective and size bucket, the algorithm and
bus bandwidth of the hand figures within 1 %; the link's percentage and the
"far below" flag follow the --link_gbps value, and the peak table names
the H100's link when none is given. A run without traces answers from the
collector's comm/collectives record (host time, n from the rank record).
Hostile traces (missing args, negative and huge counts, unknown dtype, NCCL
kernels without an op, a cut file) give rows of unknown size or none,
never a crash.

usage: test_comm_bandwidth.py COMM_DRIVER"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import comm_traces  # noqa: E402
from tfevents_py import event, key, ld, record, varint  # noqa: E402

LINK = 450.0
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def rows_of(driver, logdir, link):
    p = subprocess.run([driver, logdir, str(link)], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, "driver exit %d: %s" % (p.returncode, p.stderr))
    return [json.loads(line) for line in p.stdout.splitlines() if line]


def string_tensor_value(tag, plugin, text):
    """Summary.Value{tag, metadata{plugin_data{plugin_name}}, tensor{
    DT_STRING, rank 0, string_val}}."""
    meta = ld(1, ld(1, plugin.encode()))
    tensor = key(1, 0) + varint(7) + ld(2, b"") + ld(8, text.encode())
    return ld(1, ld(1, tag.encode()) + ld(8, tensor) + ld(9, meta))


def write_host_run(logdir, run, comm_text):
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    rank = ("version=1\njob=hostjob\nrank=1\nworld_size=4\nlocal_rank=1\n"
            "host=h\n")
    with open(os.path.join(d, "events.out.tfevents.1.h.1.0"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        f.write(record(event(1.0, 0, summary=string_tensor_value(
            "tfboard/rank", "tfboard_rank", rank))))
        f.write(record(event(2.0, 5, summary=string_tensor_value(
            "comm/collectives", "tfboard_comm", comm_text))))


def kernel(name, ts, dur, args):
    a = {"device": 0, "stream": 24, "correlation": int(ts)}
    a.update(args)
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 24,
            "ts": ts, "dur": dur, "args": a}


def hostile_events():
    ar = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    good = {"Collective name": "allreduce", "In msg nelems": 1024,
            "Out msg nelems": 1024, "dtype": "Float", "Group size": 2}
    ev = [kernel(ar, 10, 10, good)]
    bad_args = [
        {"Collective name": "allreduce", "In msg nelems": 1024,
         "Out msg nelems": 1024},                               # no dtype
        dict(good, **{"In msg nelems": -5}),                    # negative
        dict(good, **{"In msg nelems": 1e30}),                  # huge
        dict(good, **{"Out msg nelems": 99999999999999999999}),  # huge
        dict(good, **{"Out msg nelems": "many"}),               # not a number
        dict(good, dtype="Quux"),                               # unknown dtype
    ]
    for i, a in enumerate(bad_args):
        ev.append(kernel(ar, 100 + 50 * i, 10, a))
    # a bad group size and no world size known: algbw, no busbw
    ev.append(kernel(ar, 700, 10, dict(good, **{
        "Group size": -5, "In msg nelems": 2048, "Out msg nelems": 2048})))
    # a barrier: a known size, no bus factor
    ev.append(kernel("ncclDevKernel_AllReduce_Sum_u8_RING_LL", 800, 10,
                     dict(good, **{"Collective name": "barrier"})))
    # NCCL kernels without args: no op with their External id, none at all
    ev.append(kernel(ar, 900, 10, {"External id": 424242}))
    ev.append(kernel(ar, 950, 10, {}))
    # an op without External id, and one of a collective name of 1 MiB
    ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms",
               "pid": 1, "tid": 1, "ts": 5, "dur": 1, "args": good})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms",
               "pid": 1, "tid": 1, "ts": 6, "dur": 1,
               "args": {"Collective name": "x" * 100000,
                        "External id": 7}})
    ev.append(kernel(ar, 990, 10, {"External id": 7}))
    return ev


def main():
    driver = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "logs")
        runs = comm_traces.write_job(logdir)
        exp = comm_traces.expected()

        # --- the job, link given --------------------------------------
        rows = [r for r in rows_of(driver, logdir, LINK)
                if r["run"].startswith("job/")]
        got = {}
        for r in rows:
            check(r["run"] == runs[r["rank"]], "rank of %s" % r)
            check(r["source"] == "trace", "source %s" % r)
            got[(r["rank"], r["kind"], r["bucket_lo"])] = r
        check(set(got) == set(exp),
              "rows: extra %s missing %s" % (sorted(set(got) - set(exp)),
                                             sorted(set(exp) - set(got))))
        kinds = set()
        for k, e in exp.items():
            r = got.get(k)
            if not r:
                continue
            kinds.add(k[1])
            check(r["count"] == e["count"] and r["bytes"] == e["bytes"],
                  "count/bytes %s: %s vs %s" % (k, r, e))
            for f in ("algbw", "busbw"):
                v = r[f + "_gbps"]
                check(v is not None and abs(v / e[f] - 1) < 0.01,
                      "%s %s: %s vs hand %.6g" % (f, k, v, e[f]))
            check(r["link_gbps"] == LINK, "link %s" % r)
            check(abs(r["link_pct"] - r["busbw_gbps"] / LINK * 100) < 1e-9,
                  "link_pct %s" % r)
            below = k[2] >= (1 << 20) and e["busbw"] < 0.25 * LINK
            check(r["below"] == int(below), "below %s: %s" % (k, r))
        check(kinds == set(comm_traces.FACTORS), "kinds %s" % kinds)
        check(any(r["below"] for r in rows) and
              not all(r["below"] for r in rows), "below: some, not all")
        print("job: %d rows, busbw within 1 %% of the hand figure" %
              len(rows))

        # --- no link given: the H100's from the peak table --------------
        for r in rows_of(driver, logdir, 0):
            if r["run"].startswith("job/"):
                check(r["link_gbps"] is not None and r["link_gbps"] > 0,
                      "table link %s" % r)

        # --- the collector's record, no trace ------------------------------
        host = os.path.join(tmp, "host")
        write_host_run(host, "run", (
            "version=1\n"
            "allreduce\t16777216\t10\t335544320\t50000000\n"
            "all_gather_into_tensor\t8388608\t4\t33554432\t2000000\n"
            "nccl:all_reduce\t16777216\t2\t67108864\t10000000\n"
            "not a line\n"
            "allreduce\t3\t1\t3\t1\n"          # bucket not a power of two
            "allreduce\t4\t-1\t4\t1\n"))       # negative count
        hr = rows_of(driver, host, LINK)
        check(len(hr) == 2, "host rows %s" % hr)
        for r in hr:
            check(r["source"] == "host" and r["rank"] == 1, "host %s" % r)
            if r["kind"] == "all_reduce":
                alg = 402653184 / 0.06 / 1e9
                check(r["count"] == 12 and r["bucket_lo"] == 16777216,
                      "host all_reduce %s" % r)
                check(abs(r["busbw_gbps"] / (alg * 1.5) - 1) < 0.01,
                      "host all_reduce busbw %s vs %.6g" % (r, alg * 1.5))
            else:
                alg = 33554432 / 0.002 / 1e9
                check(r["kind"] == "all_gather" and
                      abs(r["busbw_gbps"] / (alg * 0.75) - 1) < 0.01,
                      "host all_gather %s vs %.6g" % (r, alg * 0.75))

        # --- hostile traces ---------------------------------------------
        bad = os.path.join(tmp, "bad")
        os.makedirs(os.path.join(bad, "hostile"))
        with open(os.path.join(bad, "hostile", "h.pt.trace.json"), "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": hostile_events()},
                      f)
        os.makedirs(os.path.join(bad, "cut"))
        text = json.dumps(comm_traces.trace_doc(
            0, comm_traces.rank_trace(0, True)))
        with open(os.path.join(bad, "cut", "c.pt.trace.json"), "w") as f:
            f.write(text[:len(text) * 2 // 3])
        br = rows_of(driver, bad, LINK)
        hostile = {(r["kind"], r["bucket_lo"]): r for r in br
                   if r["run"] == "hostile"}
        good = hostile.get(("all_reduce", 4096))
        check(good is not None and good["count"] == 1 and
              abs(good["busbw_gbps"] - 4096 / 10e-6 / 1e9) < 1e-6,
              "hostile good row %s" % good)
        nogroup = hostile.get(("all_reduce", 8192))
        check(nogroup is not None and nogroup["busbw_gbps"] is None and
              abs(nogroup["algbw_gbps"] - 8192 / 10e-6 / 1e9) < 1e-6,
              "no group size row %s" % nogroup)
        longname = hostile.get(("other", 0))
        check(longname is not None and longname["count"] == 1 and
              longname["busbw_gbps"] is None, "long name row %s" % longname)
        unknown = hostile.get(("all_reduce", 0))
        check(unknown is not None and unknown["count"] == 6 and
              unknown["busbw_gbps"] is None and
              unknown["algbw_gbps"] is None,
              "hostile unknown-size row %s" % unknown)
        other = hostile.get(("other", 4096))
        check(other is not None and other["busbw_gbps"] is None and
              other["algbw_gbps"] is not None, "barrier row %s" % other)
        check(len(hostile) == 5, "hostile rows %s" % sorted(hostile))
        check(sum(r["count"] for r in hostile.values()) == 10,
              "hostile: NCCL kernels without an op give no row")
        cut = [r for r in br if r["run"] == "cut"]
        check(all(r["busbw_gbps"] is None or math.isfinite(r["busbw_gbps"])
                  for r in cut), "cut file rows %s" % cut)
        print("hostile: %d rows, cut file: %d rows" % (len(hostile),
                                                       len(cut)))
    if FAILS:
        print("%d failures" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
