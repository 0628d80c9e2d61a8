#!/usr/bin/env python3
"""A trace file cannot stop the server (issue 10 item 1).

The logdir holds two runs:
  hostile/  a *.trace.sqlite whose CUPTI_ACTIVITY_KIND_KERNEL is a VIEW
            over an endless recursive CTE (each row a span that ends before
            it starts, so an old server read it forever without growing);
  normal/   an nsys-layout trace in WAL journal mode, closed cleanly.
Checked: while the hostile run's GPU request is (or was) being answered,
the normal run's GPU routes answer; the hostile run gets a clear error
naming the view; no -wal/-shm file appears next to either trace (they are
opened read-only and immutable); SIGTERM stops the server promptly;
`tfboard report` finishes and prints an error line for the hostile run.
On the old server the hostile request held the process-wide trace lock
forever: the normal run's request timed out and SIGTERM did nothing.

Arguments: the tfboard binary, the logdir generator (unused).
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_gpu_hostile_")
B = 1700000000000000000


def make_hostile(d):
    os.makedirs(d)
    db = sqlite3.connect(os.path.join(d, "rank0.trace.sqlite"))
    db.executescript("""
        CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
        INSERT INTO StringIds VALUES(1, 'k');
        CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
          WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r)
          SELECT 100 AS start, 50 AS "end", 0 AS deviceId, 7 AS streamId,
                 i AS correlationId, 1 AS demangledName FROM r;
    """)
    db.commit()
    db.close()


def make_normal(d):
    os.makedirs(d)
    db = sqlite3.connect(os.path.join(d, "report1.sqlite"))
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript("""
        CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER,
            deviceId INTEGER, streamId INTEGER, correlationId INTEGER,
            demangledName INTEGER);
    """)
    db.execute("INSERT INTO StringIds VALUES(1, 'gemm')")
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
                   "(?,?,0,7,?,1)",
                   [(B + 1000 * i, B + 1000 * i + 600, i) for i in range(50)])
    db.commit()
    db.close()


def sidecars():
    return sorted(f for d in ("hostile", "normal")
                  for f in os.listdir(os.path.join(TMP, d))
                  if f.endswith(("-wal", "-shm", "-journal")))


def get(srv, path, timeout, **params):
    url = srv.url(path + "?" + urllib.parse.urlencode(params))
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


SRV = None


def test_normal_run_answers_while_hostile_loads():
    # The hostile request first, on its own thread (on the old server it
    # never came back).
    hostile = {}

    def ask():
        try:
            hostile["answer"] = get(SRV, "/data/plugin/gpu/summary", 30,
                                    run="hostile")
        except Exception as e:  # a timeout on the old server
            hostile["answer"] = (0, repr(e).encode())
    th = threading.Thread(target=ask, daemon=True)
    th.start()
    time.sleep(0.3)
    t0 = time.time()
    for route, params in (("summary", {}), ("kernels", {}),
                          ("timeline", {}), ("utilization", {}),
                          ("trace.json", {})):
        st, body = get(SRV, "/data/plugin/gpu/" + route, 10, run="normal",
                       **params)
        deadline = time.time() + 20
        while st == 202 and time.time() < deadline:
            time.sleep(0.05)
            st, body = get(SRV, "/data/plugin/gpu/" + route, 10,
                           run="normal", **params)
        assert st == 200, (route, st, body[:300])
    s = json.loads(get(SRV, "/data/plugin/gpu/summary", 10, run="normal")[1])
    assert s["devices"][0]["kernels"] == 50, s
    assert time.time() - t0 < 20
    th.join(30)
    assert not th.is_alive(), "the hostile run's request never came back"


def test_hostile_run_gets_clear_error():
    deadline = time.time() + 30
    while True:
        st, body = get(SRV, "/data/plugin/gpu/summary", 10, run="hostile")
        if st != 202 or time.time() > deadline:
            break
        p = json.loads(body)
        assert p["loading"] is True and 0 <= p["progress"] <= 1, p
        time.sleep(0.05)
    assert st == 500, (st, body)
    msg = json.loads(body)["error"]
    assert "rank0.trace.sqlite" in msg and "view" in msg, msg
    # Every GPU route of that run says the same; the other run still works.
    for route in ("kernels", "timeline", "trace.json", "utilization"):
        st, body = get(SRV, "/data/plugin/gpu/" + route, 10, run="hostile")
        assert st == 500 and b"view" in body, (route, st, body)
    st, _ = get(SRV, "/data/plugin/gpu/kernels", 10, run="normal")
    assert st == 200


def test_no_wal_or_shm_files():
    assert sidecars() == [], sidecars()


def test_report_finishes_with_error_line():
    for fmt in ("text", "markdown", "json"):
        p = subprocess.run([TFBOARD, "report", "--logdir", TMP, "--format",
                            fmt, "--quiet"], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, (fmt, p.returncode, p.stderr)
        if fmt == "json":
            runs = {r["run"]: r for r in json.loads(p.stdout)["runs"]}
            err = runs["hostile"]["gpu"]["error"]
            assert "view" in err and "rank0.trace.sqlite" in err, err
            assert runs["normal"]["gpu"]["devices"][0]["kernels"] == 50
        else:
            # Markdown escapes punctuation with backslashes.
            line = [ln.replace("\\", "") for ln in p.stdout.splitlines()
                    if "rank0.trace.sqlite" in ln.replace("\\", "")]
            assert line and "error" in line[0].lower(), p.stdout
            assert "view" in line[0], line
    out = os.path.join(TMP, "..", os.path.basename(TMP) + ".html")
    try:
        p = subprocess.run([TFBOARD, "report", "--logdir", TMP, "--format",
                            "html", "--quiet", "--output", out],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        with open(out) as f:
            page = f.read()
        assert "is a view, not a table" in page and "gpu.error" in page
    finally:
        if os.path.exists(out):
            os.remove(out)
    assert sidecars() == [], sidecars()


def main():
    global SRV
    try:
        make_hostile(os.path.join(TMP, "hostile"))
        make_normal(os.path.join(TMP, "normal"))
        assert sidecars() == []
        srv = Server(TFBOARD, TMP)
        with srv:
            SRV = srv
            srv.wait_loaded()
            failed = []
            for t in (test_normal_run_answers_while_hostile_loads,
                      test_hostile_run_gets_clear_error,
                      test_no_wal_or_shm_files):
                try:
                    t()
                    print("ok   " + t.__name__)
                except Exception as e:
                    import traceback
                    traceback.print_exc()
                    print("FAIL " + t.__name__ + ": " + repr(e))
                    failed.append(t.__name__)
            # SIGTERM stops it promptly (the old server hung on the lock).
            t0 = time.time()
            srv.proc.terminate()
            try:
                srv.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                failed.append("sigterm")
                print("FAIL sigterm: the server did not stop within 10 s")
            else:
                print("ok   sigterm (%.2f s)" % (time.time() - t0))
        if failed:
            sys.exit(1)
        run_tests([test_report_finishes_with_error_line])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
