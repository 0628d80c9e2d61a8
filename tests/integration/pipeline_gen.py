"""Event files and a trace store with host spans for the input-pipeline
tests (the pipeline dashboard's test_pipeline.py, and test_report.py),
written without any TensorBoard code.
"""
import os
import sqlite3
import struct

import tfevents_py

# ---- event files, written without any TensorBoard code -------------------


def event(wall, step=None, file_version=None, scalars=()):
    """Event{wall_time, step, file_version | summary{value{tag, simple_value}}}."""
    return tfevents_py.event(wall, step, file_version,
                             tfevents_py.scalars_summary(scalars) if scalars else None)


record = tfevents_py.record


def write_events(run_dir, events, name="events.out.tfevents.1700000000.test.1.0"):
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, name), "wb") as f:
        f.write(record(event(1700000000.0, file_version="brain.Event:2")))
        for e in events:
            f.write(record(e))


def pipeline_events(steps, step_ms, input_ms, t0=1700000000.0, first=0):
    """One event per scalar, as tfb_step_end writes them."""
    evs = []
    for i in range(steps):
        s = first + i
        w = t0 + 1 + s * 0.1
        evs.append(event(w, s, scalars=[("pipeline/step_ms", step_ms)]))
        evs.append(event(w, s, scalars=[("pipeline/input_ms", input_ms)]))
    return evs


# ---- trace store with host spans -----------------------------------------

TRACE_SCHEMA = [
    "CREATE TABLE StringIds(id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
    " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
    " shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,"
    " gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,"
    " blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL,"
    " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,"
    " localMemoryPerThread INTEGER, gridId INTEGER, launchType INTEGER, graphNodeId INTEGER)",
    "CREATE TABLE TFB_HOST_SPANS(start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " step INTEGER, globalTid INTEGER, kind TEXT NOT NULL)",
    "CREATE TABLE META(key TEXT NOT NULL PRIMARY KEY, value TEXT)",
]

MS = 1000000
T0_NS = 1700000001 * 1000000000


def write_trace(run_dir, steps):
    """Each step: 100 ms; input wait its first 1 ms; one kernel from 2 ms to
    90 ms. So inside the steps: GPU idle 12 ms a step, of which 1 ms in
    input; host time neither in input nor under a kernel: 11 ms."""
    path = os.path.join(run_dir, "testhost.1.trace.sqlite")
    db = sqlite3.connect(path)
    for s in TRACE_SCHEMA:
        db.execute(s)
    db.execute("INSERT INTO StringIds VALUES (1, 'matmul_kernel')")
    db.execute("INSERT INTO META VALUES ('clock', 'CLOCK_REALTIME')")
    for i in range(steps):
        t = T0_NS + i * 100 * MS
        db.execute("INSERT INTO TFB_HOST_SPANS VALUES (?,?,?,1,'step')",
                   (t, t + 100 * MS, i))
        db.execute("INSERT INTO TFB_HOST_SPANS VALUES (?,?,?,1,'input')",
                   (t, t + 1 * MS, i))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                   "(?,?,0,1,7,?,1,1,1,64,1,1,256,1,1,32,0,0,0,?,0,0)",
                   (t + 2 * MS, t + 90 * MS, i, i))
    db.commit()
    db.close()


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]
