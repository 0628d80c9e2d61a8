"""Trace files for the timeline tests, written with python's sqlite3:
stores in our collector's schema (docs/trace-store.md) and nsys exports,
with NVTX ranges and marks, runtime calls and kernels. Used by
test_timeline_sources.py (exact small files) and by the browser test of
the timeline (server/plugins/gpu/test_timeline.js), which calls
`python3 timeline_gen.py store DIR` for a training-like store.
"""
import os
import sqlite3
import sys

B = 1700000000000000000

def G(pid, tid, hw=0):
    """globalTid as our collector writes it; nsys sets hardware/VM id
    bits above the pid (hw)."""
    return (hw << 48) | (pid << 24) | tid


STORE_DDL = """
    CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY,
                           value TEXT NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL,
        end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
        contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER,
        demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER NOT NULL,
        end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
        globalTid INTEGER, correlationId INTEGER,
        nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
        cbid INTEGER);
    CREATE TABLE NVTX_EVENTS(start INTEGER NOT NULL, end INTEGER,
        eventType INTEGER NOT NULL, rangeId INTEGER, globalTid INTEGER,
        textId INTEGER, domainId INTEGER, text TEXT);
"""


def make_store(path, pid, calls, kernels, ranges):
    """calls: (corr, start, end); kernels: (corr, stream, start, end,
    name); ranges: (text, start, end), all on thread 1 of pid."""
    db = sqlite3.connect(path)
    db.executescript(STORE_DDL)
    names = {}

    def sid(s):
        if s not in names:
            names[s] = len(names) + 1
            db.execute("INSERT INTO StringIds VALUES(?,?)", (names[s], s))
        return names[s]
    for corr, s, e in calls:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,1,?,?,"
                   "?,0,211)", (B + s, B + e, G(pid, 1), corr,
                                sid("cudaLaunchKernel_v7000")))
    for corr, stream, s, e, name in kernels:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,0,1,?,"
                   "?,?,?,?)", (B + s, B + e, stream, corr, pid << 24,
                                sid(name), sid(name)))
    for text, s, e in ranges:
        db.execute("INSERT INTO NVTX_EVENTS VALUES(?,?,59,1,?,?,0,NULL)",
                   (B + s, B + e, G(pid, 1), sid(text)))
    db.commit()
    db.close()


def make_nsys(d):
    os.makedirs(d)
    db = sqlite3.connect(os.path.join(d, "report1.sqlite"))
    db.executescript(STORE_DDL + """
        CREATE TABLE ThreadNames(nameId INTEGER NOT NULL, priority INTEGER,
            globalTid INTEGER);
    """)
    db.executemany("INSERT INTO StringIds VALUES(?,?)", [
        (1, "cudaLaunchKernel_v7000"), (2, "void gemm<float>()"),
        (3, "gemm"), (4, "python3"), (5, "step 1"), (6, "pt_data_worker")])
    # globalTids with the hardware id bits a real export sets (1 << 48)
    main, worker = G(100, 100, hw=1), G(100, 101, hw=1)
    db.executemany("INSERT INTO ThreadNames VALUES(?,0,?)",
                   [(4, main), (6, worker)])
    db.executemany(
        "INSERT INTO NVTX_EVENTS(start, end, eventType, globalTid, textId, "
        "text) VALUES(?,?,?,?,?,?)",
        [(B + 1000, B + 9000, 59, main, 5, None),      # push/pop by textId
         (B + 1500, B + 4000, 60, worker, None, "load"),  # start/end, text
         (B + 5000, None, 34, main, None, "sync"),     # a mark
         (B + 10, None, 75, main, None, "mydomain"),   # domain: not drawn
         (B + 1200, None, 59, main, None, "never closed")])
    for corr, s in ((7, 2000), (8, 2200)):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,1,?,?,"
                   "1,0,211)", (B + s, B + s + 100, main, corr))
    # A call of another process (no kernel of its own: not linked).
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,1,?,NULL,"
               "1,0,211)", (B + 2500, B + 2600, G(200, 200, hw=1)))
    for corr, s, e in ((7, 3000, 4000), (8, 4100, 4500)):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,0,1,7,"
                   "?,?,2,3)", (B + s, B + e, corr, 100 << 24))
    db.commit()
    db.close()




def make_store_demo(d, steps=3):
    """A training-like store in our schema: per step an NVTX push/pop
    range "step N" holding "forward" and "backward", a cudaLaunchKernel
    per kernel on the main thread (the kernels run on stream 7 a little
    later), a mark per step, and a data loader thread's ranges."""
    os.makedirs(d, exist_ok=True)
    pid = 4242
    calls, kernels, ranges = [], [], []
    t, corr = 0, 0
    for step in range(steps):
        s0 = t
        for phase, names in (("forward", ["gemm", "relu", "gemm"]),
                             ("backward", ["gemm_bwd", "relu_bwd",
                                           "gemm_bwd", "sgd"])):
            p0 = t
            for n in names:
                corr += 1
                calls.append((corr, t + 2000, t + 9000))
                kernels.append((corr, 7, t + 30000, t + 30000 + 40000,
                                n))
                t += 50000
            ranges.append((phase, p0, t))
        ranges.append(("step %d" % step, s0, t + 10000))
        t += 60000
    make_store(os.path.join(d, "host.4242.trace.sqlite"), pid, calls,
               kernels, ranges)
    db = sqlite3.connect(os.path.join(d, "host.4242.trace.sqlite"))
    for step in range(steps):
        db.execute("INSERT INTO NVTX_EVENTS VALUES(?,NULL,34,0,?,NULL,0,?)",
                   (B + 5000 + step * 460000, G(pid, 1), "ckpt %d" % step))
        db.execute("INSERT INTO NVTX_EVENTS VALUES(?,?,59,0,?,NULL,0,?)",
                   (B + step * 460000, B + step * 460000 + 300000,
                    G(pid, 2), "load batch"))
    db.commit()
    db.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "store":
        sys.exit("usage: timeline_gen.py store DIR")
    make_store_demo(sys.argv[2])
