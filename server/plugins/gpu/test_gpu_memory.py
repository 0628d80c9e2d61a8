#!/usr/bin/env python3
"""Integration test of the GPU memory view (/data/plugin/gpu/memory, issue
13 item 2) and of the always-on GPU metrics enabling the GPU tab (item 3),
on the real tfboard binary.

The logdir holds:
  nsysmem/  an nsys-schema SQLite file written here with sqlite3: kernels,
            CUDA_GPU_MEMORY_USAGE_EVENTS on two devices, an NVTX range,
            our TFB_HOST_SPANS steps. Device 0 allocates and frees (its
            trace ends after frees: no post-mortem); device 1 only
            allocates until the end (the post-mortem rule holds);
  kinetomem/ a PyTorch-profiler JSON with `[memory]` events (caching
            allocator blocks, Total Reserved) and a kernel;
  nvml/     only the NVML scalars tfb_gpu_metrics_start writes
            (gpu/<dev>/sm_util, mem_used_bytes, ...), in an event file
            written with the Python tfevents writer: no trace;
  plain/    a run with an unrelated scalar only.
Every figure is checked exactly against the events written.

Arguments: the tfboard binary, the logdir generator (unused).
"""

import json
import os
import shutil
import sqlite3
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from gpu_memory_gen import (B, MEM, NVML, make_events,  # noqa: E402
                            make_kinetomem, make_nsysmem)

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_gpumem_")
SRV = None

def setup():
    make_nsysmem(os.path.join(TMP, "nsysmem"))
    make_kinetomem(os.path.join(TMP, "kinetomem"))
    steps = []
    for i in range(3):
        pairs = []
        for dev in (0, 1):
            for m, vals in NVML.items():
                pairs.append(("gpu/%d/%s" % (dev, m), vals[i]))
        steps.append(pairs)
    make_events(os.path.join(TMP, "nvml"), steps)
    make_events(os.path.join(TMP, "plain"), [[("loss", 1.0)]])
    # The same trace next to a file that is not SQLite: skipped, counted.
    make_nsysmem(os.path.join(TMP, "mixed"))
    with open(os.path.join(TMP, "mixed", "junk.sqlite"), "wb") as f:
        f.write(os.urandom(4096))
    # A memory "table" that is an endless recursive VIEW next to a real
    # kernel table: not read (only tables are), the answer comes at once.
    make_nsysmem(os.path.join(TMP, "memview"))
    db = sqlite3.connect(os.path.join(TMP, "memview", "report1.sqlite"))
    db.executescript("""DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS;
        CREATE VIEW CUDA_GPU_MEMORY_USAGE_EVENTS AS
          WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r)
          SELECT i AS start, 0 AS deviceId, 7 AS streamId, i AS address,
                 64 AS bytes, 0 AS memoryOperationType FROM r;""")
    db.close()
    # Hostile memory events (issue 21 item 5) after the normal ones:
    # sizes at the int64 extremes, sizes that overflow in sum, a pool of
    # INT64_MAX bytes, and a device id of 2^40 (which int32 cuts to 0).
    make_nsysmem(os.path.join(TMP, "hostilemem"))
    db = sqlite3.connect(os.path.join(TMP, "hostilemem", "report1.sqlite"))
    I64_MAX, I64_MIN = 2 ** 63 - 1, -2 ** 63
    for t, devid, op, addr, nb, pool, size in (
            (3900, 0, 0, 0x9000, I64_MAX, None, None),
            (3901, 0, 0, 0xa000, I64_MIN, None, None),
            (3902, 0, 1, 0xb000, I64_MIN, None, None),   # unmatched free
            (3903, 0, 1, 0xc000, I64_MAX, None, None),   # unmatched free
            (3904, 2 ** 40, 0, 0xd000, 64, None, None),
            (3905, -2 ** 40, 0, 0xe000, 64, None, None),
            (3906, 0, 0, 0xf000, 128, 0x77, I64_MAX),    # pool size
            (3907, 1, 0, 0xf100, 2 ** 50, None, None),   # fits alone
            (3908, 1, 0, 0xf200, 2 ** 50, None, None)):
        db.execute("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS(start, deviceId,"
                   " streamId, address, bytes, memKind, memoryOperationType,"
                   " localMemoryPoolAddress, localMemoryPoolSize)"
                   " VALUES(?,?,3,?,?,3,?,?,?)",
                   (B + t, devid, addr, nb, op, pool, size))
    # many allocations of 2^50 bytes: their sum would pass int64
    db.executemany("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS(start, deviceId,"
                   " streamId, address, bytes, memKind, memoryOperationType)"
                   " VALUES(?,1,5,?,?,3,0)",
                   [(B + 3950 + i, 0x100000 + i, 2 ** 50)
                    for i in range(9000)])
    db.commit()
    db.close()


def dev(res, d):
    (x,) = [v for v in res["devices"] if v["device"] == d]
    return x


def test_nsys_memory():
    r = SRV.json("/data/plugin/gpu/memory", run="nsysmem")
    assert r["files"] == 1 and r["events"] == len(MEM), r
    assert r["start_ns"] == B + 1100 and r["end_ns"] == B + 3800
    assert r["has_trace"] is True
    assert [d["device"] for d in r["devices"]] == [0, 1]
    d0 = dev(r, 0)
    # Step line: entry, each change, end.
    pts = [(t - B, b) for t, b, _ in d0["points"]]
    assert (1100, 1000) in pts and (1500, 5000) in pts
    assert (2500, 4000) in pts and (2600, 6000) in pts
    assert (3500, 2000) in pts and (3600, 0) in pts
    assert d0["peak_bytes"] == 6000 and d0["peak_t_ns"] == B + 2600
    assert d0["live_at_peak_total"] == 2
    live = d0["live_at_peak"]
    assert [(a["address"], a["bytes"]) for a in live] == [
        ("0x2000", 4000), ("0x3000", 2000)], live
    # 0x2000 was allocated inside attn and inside the NVTX range; 0x3000
    # inside the range only.
    assert live[0]["kernel"] == "void attn<float>(float*, int)"
    assert live[0]["range"] == "forward <b>"
    assert live[0]["stream"] == 3 and live[0]["pool"] is None
    assert live[1]["kernel"] is None and live[1]["range"] == "forward <b>"
    assert d0["end_bytes"] == 0 and d0["live_at_end"] == 0
    assert d0["allocs"] == 3 and d0["frees"] == 3
    assert d0["alloc_bytes"] == 7000 and d0["free_bytes"] == 7000
    assert d0["last_event_alloc"] is False and d0["post_mortem"] is False
    d1 = dev(r, 1)
    assert d1["peak_bytes"] == 56000 and d1["peak_t_ns"] == B + 3800
    assert d1["end_bytes"] == 56000 and d1["live_at_end"] == 3
    assert d1["last_event_alloc"] is True and d1["post_mortem"] is True
    la = d1["last_allocs"]
    assert [a["address"] for a in la] == ["0x30", "0x20", "0x10"], la
    assert all(a["live_at_end"] for a in la)
    assert la[0]["kernel"] == "void grow(float*)" and la[0]["range"] is None
    assert "90%" in r["post_mortem_rule"]
    # Churn per step and device.
    churn = {(c["step"], c["device"]): c for c in r["churn"]}
    assert set(churn) == {(1, 0), (1, 1), (2, 0), (2, 1)}, churn
    c = churn[(1, 0)]
    assert (c["allocs"], c["frees"], c["alloc_bytes"], c["free_bytes"]) == (
        2, 0, 5000, 0)
    c = churn[(2, 0)]
    assert (c["allocs"], c["frees"], c["alloc_bytes"], c["free_bytes"]) == (
        1, 3, 2000, 7000)
    c = churn[(2, 1)]
    assert (c["allocs"], c["alloc_bytes"]) == (2, 48000)
    assert r["events_outside_steps"] == 0
    assert r["context"]["steps"] == 2 and r["context"]["ranges"] == 1


def test_nsys_memory_window():
    # [2550, 3550]: the state on entry (4000 on device 0) is exact.
    r = SRV.json("/data/plugin/gpu/memory", run="nsysmem",
                 start_ns=B + 2550, end_ns=B + 3550, top=1, last=1)
    d0 = dev(r, 0)
    assert d0["points"][0][:2] == [B + 2550, 4000], d0["points"]
    assert d0["peak_bytes"] == 6000 and d0["peak_t_ns"] == B + 2600
    assert len(d0["live_at_peak"]) == 1 and d0["live_at_peak_total"] == 2
    assert d0["end_bytes"] == 2000
    d1 = dev(r, 1)
    # Device 1's last event in the window is an allocation (at 3000) and
    # it ends at its peak: post-mortem; one allocation asked.
    assert d1["end_bytes"] == 24000 and d1["post_mortem"] is True
    assert [a["address"] for a in d1["last_allocs"]] == ["0x20"]
    # points=4 keeps the peak.
    r = SRV.json("/data/plugin/gpu/memory", run="nsysmem", points=4)
    d0 = dev(r, 0)
    assert [B + 2600, 6000] in [p[:2] for p in d0["points"]], d0["points"]
    assert d0["changes"] == 6


def test_kineto_memory():
    r = SRV.json("/data/plugin/gpu/memory", run="kinetomem")
    assert r["files"] == 1 and r["events"] == 3, r
    (d0,) = r["devices"]
    base = 1700000000000000 * 1000
    assert d0["peak_bytes"] == 4 << 20 and d0["peak_t_ns"] == base + 3000
    assert d0["peak_reserved"] == 4 << 20
    assert d0["end_bytes"] == 3 << 20 and d0["end_reserved"] == 4 << 20
    live = d0["live_at_peak"]
    assert [a["bytes"] for a in live] == [3 << 20, 1 << 20]
    # Allocated while ampere_sgemm ran on device 0 ([1, 6) µs).
    assert live[0]["kernel"] == "ampere_sgemm" and live[0]["pool"] == "0x1"
    assert d0["post_mortem"] is False  # its last event is a free


def test_nvml_only_run():
    listing = SRV.json("/data/plugins_listing")
    assert listing["gpu"]["enabled"] is True
    # No trace: the memory route and summary answer empty, not errors.
    r = SRV.json("/data/plugin/gpu/memory", run="nvml")
    assert r["devices"] == [] and r["files"] == 0 and r["events"] == 0
    s = SRV.json("/data/plugin/gpu/summary", run="nvml")
    assert s["devices"] == []
    pts = SRV.json("/data/plugin/scalars/scalars", run="nvml",
                   tag="gpu/1/power_w")
    assert [p[2] for p in pts] == [100.0, 200.0, 300.0]


def test_gpu_tab_without_gpu_data():
    # A logdir with only a plain run: the GPU tab is disabled.
    d = tempfile.mkdtemp(prefix="tfb_gpumem_plain_")
    try:
        make_events(os.path.join(d, "plain"), [[("loss", 1.0)]])
        with Server(TFBOARD, d) as srv:
            srv.wait_loaded()
            assert srv.json("/data/plugins_listing")["gpu"]["enabled"] is False
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_skipped_and_hostile_files():
    r = SRV.json("/data/plugin/gpu/memory", run="mixed")
    assert r["files"] == 1 and r["files_skipped"] == 1, r
    assert r["events"] == len(MEM) and dev(r, 0)["peak_bytes"] == 6000
    r = SRV.json("/data/plugin/gpu/memory", run="memview")
    assert r["files"] == 0 and r["events"] == 0 and r["devices"] == [], r
    # The run's kernels are still there.
    s = SRV.json("/data/plugin/gpu/summary", run="memview")
    assert [d["kernels"] for d in s["devices"]] == [1, 1], s


def test_hostile_memory_events():
    """Item 5: impossible sizes and device ids are skipped and counted in
    the notes; no figure goes negative or wraps, and device 2^40 is not
    merged into device 0."""
    r = SRV.json("/data/plugin/gpu/memory", run="hostilemem")
    assert [d["device"] for d in r["devices"]] == [0, 1], r["devices"]
    d0, d1 = dev(r, 0), dev(r, 1)
    # device 0: the normal events, and the 128-byte allocation whose pool
    # claims INT64_MAX bytes skipped as a whole
    assert d0["peak_bytes"] == 6000 and d0["end_bytes"] == 0, d0
    assert d0["allocs"] == 3 and d0["unmatched_frees"] == 0, d0
    assert d0["unmatched_free_bytes"] == 0, d0
    for d in (d0, d1):
        for k in ("peak_bytes", "end_bytes", "peak_reserved", "end_reserved",
                  "alloc_bytes", "free_bytes", "unmatched_free_bytes"):
            assert 0 <= d[k] < 2 ** 63, (k, d)
        assert all(0 <= p[1] < 2 ** 63 for p in d["points"]), d["points"]
    # device 1: 8000 + 16000 + 32000, then as many 2^50-byte allocations
    # as int64 holds (8191: 8192 * 2^50 = 2^63)
    n_big = d1["allocs"] - 3
    assert 8190 <= n_big <= 8192, d1
    assert d1["end_bytes"] == 56000 + n_big * 2 ** 50, d1
    skipped = 9 - 2 + (9000 + 2 - n_big)  # all but device 1's fitting ones
    assert r["events_skipped"] == skipped, (r["events_skipped"], skipped)
    assert r["notes"] and "skipped" in r["notes"][0], r["notes"]
    assert SRV.json("/data/plugin/gpu/memory", run="nsysmem")["notes"] == []


def test_errors():
    st, _, _ = SRV.get("/data/plugin/gpu/memory")
    assert st == 400
    st, _, _ = SRV.get("/data/plugin/gpu/memory", run="nope")
    assert st == 404
    st, _, _ = SRV.get("/data/plugin/gpu/memory", run="nsysmem", points=2)
    assert st == 400
    st, _, body = SRV.get("/data/plugin/gpu/memory", run="nsysmem",
                          start_ns=B + 10, end_ns=B + 5)
    assert st == 400 and b"end_ns" in body
    r = SRV.json("/data/plugin/gpu/memory", run="plain")
    assert r["devices"] == [] and r["churn"] == []


def report(fmt):
    import subprocess
    p = subprocess.run([TFBOARD, "report", "--logdir", TMP, "--format", fmt],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_report():
    rep = json.loads(report("json"))
    runs = {r["run"]: r for r in rep["runs"]}
    m = runs["nsysmem"]["gpu_memory"]
    d0, d1 = m["devices"]
    assert d0["peak_bytes"] == 6000 and d0["post_mortem"] is False
    assert [a["address"] for a in d0["live_at_peak"]] == ["0x2000", "0x3000"]
    assert "last_allocs" not in d0
    assert d1["post_mortem"] is True
    assert [a["address"] for a in d1["last_allocs"]] == ["0x30", "0x20",
                                                         "0x10"]
    assert runs["nvml"]["gpu_memory"] is None
    assert runs["kinetomem"]["gpu_memory"]["devices"][0]["peak_bytes"] == \
        4 << 20
    md = report("markdown")
    assert "- GPU 0: peak 5.859 KiB at +1.5 µs, 2 allocations live" in md, md
    assert ("| 3.906 KiB | +400 ns | 3 | void attn\\<float\\>\\(float\\*, "
            "int\\) | forward \\<b\\> |") in md, md
    assert "**OOM post-mortem**" in md
    assert "| 31.25 KiB | +2.7 µs | 5 | void grow\\(float\\*\\) | - | yes |" \
        in md, md
    txt = report("text")
    assert "GPU 1: peak 54.69 KiB at +2.7 µs, 3 allocations live" in txt
    assert "OOM post-mortem" in txt.split("run nsysmem")[1], txt
    assert "OOM post-mortem" not in txt.split("run kinetomem")[1].split(
        "run ")[0], txt


def main():
    global SRV
    try:
        setup()
        with Server(TFBOARD, TMP) as srv:
            SRV = srv
            srv.wait_loaded()
            run_tests([test_nsys_memory, test_nsys_memory_window,
                       test_kineto_memory, test_nvml_only_run,
                       test_gpu_tab_without_gpu_data,
                       test_skipped_and_hostile_files,
                       test_hostile_memory_events, test_errors,
                       test_report])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
