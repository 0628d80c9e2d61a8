"""The small GPU traces of the GPU dashboard's test_gpu.py, for the tests
that read them too (tests/integration/test_trace_cache.py): an `nsys export
--type sqlite` file (names as StringIds ids, nsys's extra columns) and a
PyTorch-profiler (Kineto) trace, plain or gzip'ed. Times are ns from B.
"""
import gzip
import json
import os
import sqlite3

B = 1700000000000000000


def make_nsys(d):
    os.makedirs(d)
    db = sqlite3.connect(os.path.join(d, "report1.sqlite"))
    db.executescript("""
        CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY,
                               value TEXT NOT NULL);
        CREATE TABLE TARGET_INFO_GPU(vmId INTEGER, id INTEGER NOT NULL,
            name TEXT, busLocation TEXT, smCount INTEGER,
            totalMemory INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL,
            end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER,
            demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
            mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
            registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
            gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
            blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
            blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
            dynamicSharedMemory INTEGER NOT NULL,
            localMemoryPerThread INTEGER NOT NULL,
            localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
            sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
            sharedMemoryLimitConfig INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER NOT NULL,
            end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
            copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
            srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
            srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
            migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL,
            end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
            globalTid INTEGER, correlationId INTEGER,
            nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
            callchainId INTEGER);
    """)
    strings = [(0, "void attn<float>(float*, int)"), (1, "attn"),
               (2, "_Z4attnIfEvPfi"), (3, "cudaLaunchKernel_v7000"),
               (4, "void norm(float*)"), (5, "norm"),
               (6, "NVIDIA H100 80GB HBM3")]
    db.executemany("INSERT INTO StringIds VALUES(?,?)", strings)
    db.execute("INSERT INTO TARGET_INFO_GPU(vmId, id, name, smCount) "
               "VALUES(0, 0, 'NVIDIA H100 80GB HBM3', 132)")
    # attn x3 (100, 300, 200 ns), norm x1 (400 ns); stream 3; the third
    # attn overlaps the norm.
    ks = [(1000, 1100, 0, 0, 1, 11), (1200, 1500, 0, 0, 1, 12),
          (1600, 1800, 0, 0, 1, 13), (1700, 2100, 4, 5, 2, 14)]
    for s, e, dn, sn, regs, corr in ks:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,0,1,3,"
                   "?,1,?,?,2,0,0,?,8,1,1,256,1,1,0,512,0,0,0,0,NULL,0)",
                   (B + s, B + e, corr, dn, sn, regs * 32))
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(start, end, deviceId,"
               " contextId, streamId, correlationId, bytes, copyKind) "
               "VALUES(?,?,0,1,3,10,8192,8)", (B + 900, B + 950))
    # launches: corr 13 starts after kernel 12 ended (1500): host wait 100.
    for corr, s in ((11, 500), (12, 600), (13, 1550), (14, 700)):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,0,1,?,"
                   "3,0,NULL)", (B + s, B + s + 20, corr))
    db.commit()
    db.close()


def kineto_events():
    base = 1700000000000000  # µs
    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
         "ts": base, "dur": 50},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
         "pid": 1, "tid": 1, "ts": base + 1, "dur": 2,
         "args": {"correlation": 7}},
        {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn",
         "pid": 0, "tid": 7, "ts": "%d.500" % (base + 1), "dur": 2.25,
         "args": {"device": 0, "stream": 7, "correlation": 7,
                  "registers per thread": 122, "shared memory": 32768,
                  "grid": [64, 2, 1], "block": [128, 1, 1]}},
        {"ph": "X", "cat": "kernel", "name": "elementwise \"quoted\" <b>",
         "pid": 0, "tid": 7, "ts": "%d.250" % (base + 4), "dur": 1.001,
         "args": {"device": 0, "stream": 7, "correlation": 8}},
        {"ph": "X", "cat": "gpu_memcpy",
         "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7,
         "ts": base + 10, "dur": 0.5, "args": {"device": 0, "stream": 7,
                                                 "bytes": 1024}},
        {"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts": base + 1,
         "cat": "ac2g", "name": "ac2g", "bp": "e"},
    ]
    return ev


def make_kineto(d, gz):
    os.makedirs(d)
    events = kineto_events()
    # ts written as raw JSON numbers (strings above mark decimal text).
    parts = []
    for e in events:
        s = json.dumps(e)
        if isinstance(e.get("ts"), str):
            s = s.replace('"ts": "%s"' % e["ts"], '"ts": %s' % e["ts"])
        parts.append(s)
    text = ('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": '
            '"A100"}], "traceEvents": [' + ",\n".join(parts) +
            '], "traceName": "x"}')
    name = "host_1234.1700000000000.pt.trace.json"
    if gz:
        with gzip.open(os.path.join(d, name + ".gz"), "wt") as f:
            f.write(text)
    else:
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
