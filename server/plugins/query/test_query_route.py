"""SQL on the server (issue 30 items 3 and 5; server/API.md "SQL", the
Query dashboard's API.md): POST /data/query answers {"columns", "rows",
"truncated", "elapsed_ms"}; bad SQL and refused statements are 400 with
SQLite's message and the byte of the error; the time, row and memory
limits fire; statements run on the dashboard's own threads, so with ONE
HTTP thread (--http_threads 1) a statement that runs until its time limit
does not hold other routes (they all answer before it does); the token
covers it; fuzzing (random SQL, huge literals, recursive CTEs,
randomblob(1e9)) keeps other routes answering and writes no file.
test_run_filter.py covers the run filters.

usage: test_query_route.py TFBOARD GEN_LOGDIR"""
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD, GEN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = tempfile.mkdtemp(prefix="tfb_query_")
LOGDIR = os.path.join(TMP, "logs")
subprocess.run([GEN, "basic", LOGDIR], check=True)
# Where a statement could write a file (SQLite's temporary files go to
# TMPDIR, relative names to the working directory): both must stay empty.
SCRATCH = os.path.join(TMP, "scratch")
os.mkdir(SCRATCH)
ENV = dict(os.environ, TMPDIR=SCRATCH, SQLITE_TMPDIR=SCRATCH)


class QServer(Server):
    """The server, with TMPDIR and the working directory in SCRATCH."""

    def __enter__(self):
        real = subprocess.Popen
        subprocess.Popen = lambda *a, **k: real(*a, env=ENV, cwd=SCRATCH, **k)
        try:
            return super().__enter__()
        finally:
            subprocess.Popen = real


def post(srv, sql, headers=None, body=None, timeout=60):
    """POST /data/query; returns (status, parsed JSON or None)."""
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    data = body if body is not None else json.dumps({"sql": sql}).encode()
    c.request("POST", "/data/query", body=data, headers=h)
    r = c.getresponse()
    raw = r.read()
    c.close()
    try:
        return r.status, json.loads(raw)
    except ValueError:
        return r.status, None


def engine_or_skip(srv):
    st, _, _ = srv.get("/data/plugin/query/tables")
    if st == 501:
        print("SKIP: this build has no query engine")
        sys.exit(77)


def test_answer_shape():
    with QServer(TFBOARD, LOGDIR) as s:
        s.wait_loaded()
        engine_or_skip(s)
        st, a = post(s, "SELECT 1 AS one, 'x' AS two, 2.5 AS three, NULL AS four")
        assert st == 200, (st, a)
        assert a["columns"] == ["one", "two", "three", "four"], a
        assert a["rows"] == [[1, "x", 2.5, None]], a
        assert a["truncated"] is False
        assert isinstance(a["elapsed_ms"], (int, float)) and a["elapsed_ms"] >= 0
        # The store's data: run_a's loss is 1/(step+1) over 100 steps.
        st, a = post(s, "SELECT run, count(*), max(step) FROM scalars "
                        "WHERE tag = 'loss' GROUP BY run ORDER BY run")
        assert st == 200, (st, a)
        assert a["rows"] == [["run_a", 100, 99], ["sub/run_b", 50, 49]], a
        # No row: the columns still come.
        st, a = post(s, "SELECT run FROM runs WHERE run = 'nope'")
        assert st == 200 and a["columns"] == ["run"] and a["rows"] == [], a
        # The tables route lists the engine's tables with their columns.
        t = s.json("/data/plugin/query/tables")
        names = {x["name"]: x["columns"] for x in t["tables"]}
        assert "run" in names["runs"] and "value" in names["scalars"], names
        assert "loss.last" in names["runs_wide"], names["runs_wide"]
        assert len(t["examples"]) == 4, t["examples"]


def test_bad_and_refused():
    with QServer(TFBOARD, LOGDIR) as s:
        s.wait_loaded()
        engine_or_skip(s)
        st, a = post(s, "SELECT run FROM runs WHERE")
        assert st == 400 and "error" in a, (st, a)
        st, a = post(s, "SELECT nosuch FROM runs")
        assert st == 400 and "nosuch" in a["error"], (st, a)
        assert a["offset"] == 7, a  # the byte of the unknown column
        for sql in ["ATTACH DATABASE '%s/x.db' AS x" % SCRATCH,
                    "PRAGMA writable_schema = 1",
                    "SELECT load_extension('libm.so.6')",
                    "CREATE TABLE t(x)",
                    "DELETE FROM runs",
                    "SELECT 1; SELECT 2"]:
            st, a = post(s, sql)
            assert st == 400 and a and a["error"], (sql, st, a)
        # The body: JSON {"sql": string} only, as application/json, of at
        # most TFB_QUERY_BODY_MAX bytes.
        for body in [b"", b"{}", b"[\"SELECT 1\"]", b"{\"sql\": 1}",
                     b"{\"sql\": \"SELECT 1\", \"x\": 2}",
                     b"{\"sql\": \"SELECT 1\\u0000; DROP\"}"]:
            st, a = post(s, None, body=body)
            assert st == 400 and a["error"], (body, st, a)
        st, a = post(s, "SELECT 1", headers={"Content-Type": "text/plain"})
        assert st == 415, (st, a)
        st, _ = post(s, "SELECT '" + "x" * (300 * 1024) + "'")
        assert st == 413, st
        assert s.get("/data/runs")[0] == 200


def test_limits():
    with QServer(TFBOARD, LOGDIR, "--query_timeout", "0.5",
                 "--query_max_rows", "10", "--query_max_mem", "8") as s:
        s.wait_loaded()
        engine_or_skip(s)
        st, a = post(s, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                        "SELECT x + 1 FROM c LIMIT 1000) SELECT x FROM c")
        assert st == 200 and a["truncated"] is True, (st, a)
        assert [r[0] for r in a["rows"]] == list(range(1, 11)), a
        # Runs forever but for the time limit.
        st, a = post(s, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                        "SELECT x + 1 FROM c) SELECT count(*) FROM c")
        assert st == 400 and a["error"], (st, a)
        # 8 MiB: a sort of 1 M distinct strings does not fit.
        st, a = post(s, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT "
                        "x + 1 FROM c LIMIT 1000000) SELECT DISTINCT "
                        "printf('%020d', x) FROM c ORDER BY 1 DESC LIMIT 1")
        assert st == 400 and a["error"], (st, a)
        st, a = post(s, "SELECT length(randomblob(1e9))")
        assert st == 400 and a["error"], (st, a)


def test_own_threads():
    """One HTTP thread: a statement that runs until its time limit (15 s)
    holds no HTTP thread, so 20 requests of other routes all answer while
    it runs (it answers last). With the statement on the HTTP thread,
    they would wait for it."""
    with QServer(TFBOARD, LOGDIR, "--http_threads", "1",
                 "--query_timeout", "15") as s:
        s.wait_loaded()
        engine_or_skip(s)
        order = []
        done = threading.Event()

        def slow():
            st, a = post(s, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                            "SELECT x + 1 FROM c) SELECT count(*) FROM c")
            order.append(("query", st))
            done.set()

        t = threading.Thread(target=slow)
        t.start()
        # Time for the statement to reach the server. Were it not there
        # yet, the requests below would answer first anyway: this can
        # only let a server without its own threads pass, never fail one
        # that has them.
        time.sleep(1.0)
        for i in range(20):
            st, _, _ = s.get("/data/runs", _timeout=60)
            order.append(("runs", st))
        t.join(60)
        assert done.is_set(), "the query never answered"
        assert order[-1] == ("query", 400), order
        assert all(x == ("runs", 200) for x in order[:-1]), order


def test_token():
    with QServer(TFBOARD, LOGDIR, "--token", "s3cret-token-0123456789") as s:
        engine_or_skip_auth = s.get("/data/runs")[0]
        assert engine_or_skip_auth == 401
        st, a = post(s, "SELECT 1")
        assert st == 401, (st, a)
        st, a = post(s, "SELECT 1", headers={
            "Authorization": "Bearer s3cret-token-0123456789"})
        assert st in (200, 501), (st, a)
        if st == 200:
            assert a["rows"] == [[1]], a


def test_fuzz_keeps_serving():
    rnd = random.Random(30)
    words = ["SELECT", "FROM", "WHERE", "runs", "scalars", "kernels", "(",
             ")", ",", "*", "1", "'x'", "AND", "OR", "GROUP BY", "ORDER BY",
             "run", "value", "JOIN", "ON", "=", "<", "NULL", "UNION",
             "WITH", "RECURSIVE", "AS", "LIMIT", "zeroblob(1e9)", "--",
             "/*", "\"", "'", ";", "randomblob(1e9)", "x'00'", "\u00e9",
             "\ufffd", "\\", "%", "printf('%.*c', 1000000000, 'x')"]
    hostile = [
        "SELECT '" + "a" * 200000 + "'",
        "SELECT " + "(" * 5000 + "1" + ")" * 5000,
        "SELECT randomblob(1e9)",
        "SELECT zeroblob(1e9)",
        "SELECT printf('%.*c', 1000000000, 'x')",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT max(x) FROM c",
        "WITH RECURSIVE c(x) AS (SELECT randomblob(1000000) UNION ALL "
        "SELECT x || x FROM c) SELECT length(x) FROM c",
        "SELECT writefile('%s/w', 'x')" % SCRATCH,
        "SELECT * FROM sqlite_master; ATTACH 'x' AS y",
        "VACUUM INTO '%s/v.db'" % SCRATCH,
        "SELECT a.value FROM scalars a, scalars b, scalars c, scalars d",
    ]
    before = sorted(os.listdir(LOGDIR))
    with QServer(TFBOARD, LOGDIR, "--query_timeout", "1",
                 "--query_max_mem", "64") as s:
        s.wait_loaded()
        engine_or_skip(s)
        sqls = hostile + [" ".join(rnd.choice(words) for _ in
                                    range(rnd.randint(1, 30)))
                          for _ in range(150)]
        results = []

        def fire(batch):
            for q in batch:
                results.append(post(s, q)[0])

        threads = [threading.Thread(target=fire, args=(sqls[i::4],))
                   for i in range(4)]
        for t in threads:
            t.start()
        # Other routes answer all along.
        answered = 0
        while any(t.is_alive() for t in threads):
            st, _, _ = s.get("/data/runs", _timeout=60)
            assert st == 200, st
            answered += 1
        for t in threads:
            t.join()
        assert answered > 0
        assert len(results) == len(sqls)
        assert all(st in (200, 400, 413, 503) for st in results), results
        st, a = post(s, "SELECT count(*) FROM runs")
        assert st == 200 and a["rows"][0][0] >= 2, (st, a)
    assert os.listdir(SCRATCH) == [], os.listdir(SCRATCH)
    assert sorted(os.listdir(LOGDIR)) == before


try:
    run_tests([test_answer_shape, test_bad_and_refused, test_limits,
               test_own_threads, test_token, test_fuzz_keeps_serving])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
