"""Logdirs with GPU memory events and NVML metrics, written with python's
sqlite3 and the tfevents writer of this folder: the exact small runs that
server/plugins/gpu/test_gpu_memory.py checks (nsysmem, kinetomem, nvml), and
a bigger, training-like run for the browser test (tests/webui), which calls
`python3 gpu_memory_gen.py LOGDIR`.
"""
import json
import os
import random
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfevents_py import event, record, scalars_summary  # noqa: E402

B = 1700000000000000000

# (t, device, op, address, bytes, stream)
MEM = [
    (1100, 0, 0, 0x1000, 1000, 3),
    (1200, 1, 0, 0x10, 8000, 5),
    (1500, 0, 0, 0x2000, 4000, 3),
    (2500, 0, 1, 0x1000, 1000, 3),
    (2600, 0, 0, 0x3000, 2000, 3),
    (3000, 1, 0, 0x20, 16000, 5),
    (3500, 0, 1, 0x2000, 4000, 3),
    (3600, 0, 1, 0x3000, 2000, 3),
    (3800, 1, 0, 0x30, 32000, 5),
]


def make_nsysmem(d):
    os.makedirs(d)
    db = sqlite3.connect(os.path.join(d, "report1.sqlite"))
    db.executescript("""
        CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY,
                               value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL,
            end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER,
            demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
            registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
            gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
            blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
            blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
            dynamicSharedMemory INTEGER NOT NULL);
        CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INTEGER NOT NULL,
            globalPid INTEGER, deviceId INTEGER NOT NULL,
            contextId INTEGER, streamId INTEGER, correlationId INTEGER,
            address INTEGER NOT NULL, pc INTEGER, bytes INTEGER NOT NULL,
            memKind INTEGER, memoryOperationType INTEGER NOT NULL,
            name INTEGER, isAsync INTEGER, memoryPoolType INTEGER,
            localMemoryPoolAddress INTEGER,
            localMemoryPoolReleaseThreshold INTEGER,
            localMemoryPoolSize INTEGER,
            localMemoryPoolUtilizedSize INTEGER,
            importedMemoryPoolAddress INTEGER,
            importedMemoryPoolProcessId INTEGER);
        CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER,
            eventType INTEGER NOT NULL, rangeId INTEGER, globalTid INTEGER,
            textId INTEGER, domainId INTEGER, text TEXT);
        CREATE TABLE TFB_HOST_SPANS(start INTEGER NOT NULL,
            end INTEGER NOT NULL, kind TEXT NOT NULL, step INTEGER,
            globalTid INTEGER);
    """)
    db.executemany("INSERT INTO StringIds VALUES(?,?)",
                   [(0, "void attn<float>(float*, int)"), (1, "attn"),
                    (2, "void grow(float*)"), (3, "grow"),
                    (4, "forward <b>")])
    # attn on device 0 stream 3 [1000, 2000); grow on device 1 stream 5
    # [3700, 3900).
    for s, e, dev, stream, dn, sn in ((1000, 2000, 0, 3, 0, 1),
                                      (3700, 3900, 1, 5, 2, 3)):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,?,1,?,"
                   "1,1,?,?,32,8,1,1,256,1,1,0,0)",
                   (B + s, B + e, dev, stream, dn, sn))
    for t, dev, op, addr, nb, stream in MEM:
        db.execute("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS(start, deviceId,"
                   " streamId, address, bytes, memKind, memoryOperationType)"
                   " VALUES(?,?,?,?,?,3,?)", (B + t, dev, stream, addr, nb, op))
    # NVTX push/pop range "forward <b>" [1400, 3000) (text by id), and a
    # mark (no end) that is not a range.
    db.execute("INSERT INTO NVTX_EVENTS(start, end, eventType, textId) "
               "VALUES(?,?,59,4)", (B + 1400, B + 3000))
    db.execute("INSERT INTO NVTX_EVENTS(start, end, eventType, text) "
               "VALUES(?,NULL,34,'mark')", (B + 1500,))
    db.executemany("INSERT INTO TFB_HOST_SPANS VALUES(?,?,'step',?,1)",
                   [(B + 1000, B + 2000, 1), (B + 2000, B + 4000, 2)])
    db.commit()
    db.close()


def make_kinetomem(d):
    os.makedirs(d)
    base = 1700000000000000  # µs

    def mem(ts, addr, nb, alloc, reserved):
        return {"ph": "i", "cat": "cpu_instant_event", "s": "t",
                "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
                "args": {"Total Reserved": reserved,
                         "Total Allocated": alloc, "Bytes": nb,
                         "Addr": addr, "Device Id": 0, "Device Type": 1}}
    ev = [
        {"ph": "X", "cat": "kernel", "name": "ampere_sgemm", "pid": 0,
         "tid": 7, "ts": base + 1, "dur": 5,
         "args": {"device": 0, "stream": 7, "correlation": 7}},
        mem(base + 2, 1000, 1 << 20, 1 << 20, 2 << 20),
        mem(base + 3, 2000, 3 << 20, 4 << 20, 4 << 20),
        mem(base + 10, 1000, -(1 << 20), 3 << 20, 4 << 20),
        # A CPU block (Device Type 0) is not GPU memory.
        {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
         "pid": 1, "tid": 1, "ts": base + 11,
         "args": {"Bytes": 999, "Addr": 5, "Device Id": -1,
                  "Device Type": 0}},
    ]
    with open(os.path.join(d, "host_1.1700000000000.pt.trace.json"),
              "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)


NVML = {"sm_util": [40.0, 55.0, 90.0], "mem_used_bytes": [1e9, 2e9, 3e9],
        "mem_total_bytes": [80e9] * 3, "power_w": [100.0, 200.0, 300.0],
        "temp_c": [40.0, 50.0, 60.0], "sm_clock_mhz": [1400.0] * 3}


def make_events(d, pairs_per_step, wall0=1700000000.0, dt=1.0):
    os.makedirs(d, exist_ok=True)
    recs = [record(event(wall0, file_version="brain.Event:2"))]
    for i, pairs in enumerate(pairs_per_step):
        recs.append(record(event(wall0 + i * dt, step=i,
                                 summary=scalars_summary(pairs))))
    with open(os.path.join(d, "events.out.tfevents.1700000000.h.1.0"),
              "wb") as f:
        f.write(b"".join(recs))




def nvml_steps(n, devices, seed=1):
    """n samples of every NVML metric of each device (as
    tfb_gpu_metrics_start logs them)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        pairs = []
        for dev in range(devices):
            busy = 60 + 30 * rnd.random() if 2 < i < n - 2 else 5.0
            pairs += [("gpu/%d/sm_util" % dev, busy),
                      ("gpu/%d/mem_util" % dev, busy * 0.6),
                      ("gpu/%d/mem_used_bytes" % dev,
                       (20 + 40 * min(1.0, i / (n * 0.3))) * 2 ** 30),
                      ("gpu/%d/mem_total_bytes" % dev, 80 * 2 ** 30),
                      ("gpu/%d/power_w" % dev, 90 + 4 * busy),
                      ("gpu/%d/temp_c" % dev, 35 + 0.4 * busy + i * 0.1),
                      ("gpu/%d/sm_clock_mhz" % dev, 1980 - 2 * busy)]
        out.append(pairs)
    return out


def make_train(d, steps=40, oom=False, devices=2):
    """A training-like trace: per step and device a forward (activation
    blocks allocated inside matmul kernels and an NVTX range), a backward
    (gradients; activations freed), and a 1 MiB block leaked per step.
    oom: the last step only allocates (the process died there). Steps
    are 50 ms apart from B; NVML samples every 100 ms over the same time.
    """
    os.makedirs(d, exist_ok=True)
    db = sqlite3.connect(os.path.join(d, "rank0.trace.sqlite"))
    db.executescript("""
        CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY,
                               value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL,
            end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER,
            demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
            registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
            gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
            blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
            blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
            dynamicSharedMemory INTEGER NOT NULL);
        CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS(start INTEGER NOT NULL,
            deviceId INTEGER NOT NULL, streamId INTEGER,
            address INTEGER NOT NULL, bytes INTEGER NOT NULL,
            memKind INTEGER, memoryOperationType INTEGER NOT NULL);
        CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER,
            eventType INTEGER NOT NULL, rangeId INTEGER, globalTid INTEGER,
            textId INTEGER, domainId INTEGER, text TEXT);
        CREATE TABLE TFB_HOST_SPANS(start INTEGER NOT NULL,
            end INTEGER NOT NULL, kind TEXT NOT NULL, step INTEGER,
            globalTid INTEGER);
    """)
    names = ["void gemm_fwd<float>(float const*, float*)", "gemm_fwd",
             "void gemm_bwd<float>(float const*, float*)", "gemm_bwd"]
    db.executemany("INSERT INTO StringIds VALUES(?,?)", list(enumerate(names)))
    MS = 1000000
    GIB = 2 ** 30
    kern, mem, nvtx, spans = [], [], [], []
    addr = [0x7f0000000000 + dev * 0x10000000000 for dev in range(devices)]
    n_steps = steps if not oom else steps // 2
    for dev in range(devices):
        # Weights, allocated before the first step.
        mem.append((B + 1 * MS, dev, 7, addr[dev], 6 * GIB, 0))
        addr[dev] += 1 << 33
    for s in range(n_steps):
        t = B + 5 * MS + s * 50 * MS
        spans.append((t, t + 50 * MS, "step", s + 1, 1))
        nvtx.append((t, t + 25 * MS, 59, None, "forward step %d" % (s + 1)))
        nvtx.append((t + 25 * MS, t + 48 * MS, 59, None, "backward"))
        last = oom and s == n_steps - 1
        for dev in range(devices):
            acts = []
            for k in range(8):
                ks = t + k * 3 * MS
                kern.append((ks, ks + 2 * MS, dev, 7, 0, 1))
                nb = (256 + 64 * k) * 2 ** 20 * (2 if dev == 0 else 1)
                mem.append((ks + MS // 2, dev, 7, addr[dev], nb, 0))
                acts.append((addr[dev], nb))
                addr[dev] += 1 << 32
                if last and k >= 3:
                    # Dies here: bigger and bigger blocks, never freed.
                    for j in range(6):
                        big = (4 + 2 * j) * GIB
                        mem.append((ks + MS + j * 100000, dev, 7, addr[dev],
                                    big, 0))
                        addr[dev] += 1 << 35
                    break
            if last:
                continue
            for k in range(8):
                ks = t + 25 * MS + k * 3 * MS
                kern.append((ks, ks + 2 * MS, dev, 7, 2, 3))
                a, nb = acts[7 - k]
                mem.append((ks + MS, dev, 7, a, nb, 1))
            mem.append((t + 49 * MS, dev, 7, addr[dev], 2 ** 20, 0))
            addr[dev] += 1 << 32
    for ks, ke, dev, stream, dn, sn in kern:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,?,1,?,"
                   "1,1,?,?,64,128,1,1,256,1,1,0,16384)",
                   (ks, ke, dev, stream, dn, sn))
    mem.sort(key=lambda m: m[0])
    db.executemany("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES("
                   "?,?,?,?,?,3,?)", mem)
    db.executemany("INSERT INTO NVTX_EVENTS(start, end, eventType, textId, "
                   "text) VALUES(?,?,?,?,?)", nvtx)
    db.executemany("INSERT INTO TFB_HOST_SPANS VALUES(?,?,?,?,?)", spans)
    db.commit()
    db.close()
    total_s = (5 + n_steps * 50) / 1000.0
    n = max(3, int(total_s / 0.1) + 1)
    make_events(d, nvml_steps(n, devices), wall0=B / 1e9, dt=0.1)


def main(logdir):
    make_train(os.path.join(logdir, "train"))
    make_train(os.path.join(logdir, "oom"), oom=True)
    make_events(os.path.join(logdir, "nvml"), nvml_steps(60, 2))


if __name__ == "__main__":
    main(sys.argv[1])
