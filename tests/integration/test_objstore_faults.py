"""Faults between tfboard and a bucket, injected by a proxy in front of
moto_server (s3_util.FaultProxy): connections reset mid-body, 500 and
503 SlowDown answers and stalls past the timeout are retried (with
backoff) until the run loads; 403 on one run only leaves that run with a
note while the rest is served; a failing listing or read later loses
nothing already loaded; SIGTERM exits at once even with a request
hanging; connections are kept alive between reloads. Skips (77) without
moto_server.

usage: test_objstore_faults.py TFBOARD"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_util  # noqa: E402
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402
from test_objstore_events import events  # noqa: E402

s3_util.need_moto()
TFBOARD = sys.argv[1]
MOTO = s3_util.Moto()
S3 = MOTO.client()
S3.create_bucket(Bucket="faults")
PROXY = s3_util.FaultProxy(MOTO.port)
s3_util.use_endpoint(PROXY.url)
os.environ["TFBOARD_S3_TIMEOUT"] = "1"   # a stall of 1 s is a timeout
os.environ["AWS_MAX_ATTEMPTS"] = "5"

RUNS = {"good1": 40, "good2": 30, "flaky": 20, "slow": 25, "denied": 10}
BODIES = {}
for run, n in RUNS.items():
    BODIES[run] = events("loss", range(n))
    S3.put_object(Bucket="faults", Key="logs/%s/events.out.tfevents.1.h.1.0" % run,
                  Body=BODIES[run])


def get_of(run):
    return lambda m, p: m == "GET" and ("/logs/%s/" % run) in p


def points(srv, run):
    st, _, body = srv.get("/data/plugin/scalars/scalars", run=run, tag="loss")
    import json
    return [p[1] for p in json.loads(body)] if st == 200 else None


def notes(srv, run):
    for r in srv.json("/data/runs_info"):
        if r["name"] == run:
            return r["notes"]
    return None


def test_faults_retried_and_one_run_denied():
    PROXY.rules[:] = [
        s3_util.once(1, ("reset",), get_of("flaky")),
        s3_util.once(1, ("status", 500, "InternalError"), get_of("flaky")),
        s3_util.once(1, ("status", 503, "SlowDown"), get_of("flaky")),
        s3_util.once(1, ("stall", 4), get_of("slow")),
        lambda m, p: ("status", 403, "AccessDenied")
        if get_of("denied")(m, p) else None,
    ]
    with Server(TFBOARD, "s3://faults/logs", "--reload_interval", "0.3") as srv:
        srv.wait_loaded()
        for run in ("good1", "good2", "flaky", "slow"):
            assert points(srv, run) == list(range(RUNS[run])), run
        assert points(srv, "denied") is None or points(srv, "denied") == []
        n = notes(srv, "denied")
        assert any("403" in x and "AccessDenied" in x for x in n), n
        assert notes(srv, "good1") == []
        st = srv.json("/data/environment")["storage"]
        assert st["total"]["retries"] >= 4, st
        assert "403" in st["last_error"], st
        assert "test" not in st["last_error"]  # no key id or secret

        # Later faults lose nothing already read: a listing answered 503
        # and reads of a grown run answered 500.
        PROXY.rules[:] = [
            lambda m, p: ("status", 500, "InternalError")
            if get_of("good1")(m, p) else None]
        S3.put_object(Bucket="faults",
                      Key="logs/good1/events.out.tfevents.1.h.1.0",
                      Body=BODIES["good1"] + events("loss", range(40, 60)))
        wait_for(lambda: any("500" in x for x in notes(srv, "good1")),
                 "a note on the run whose reads fail")
        got = points(srv, "good1")
        assert got == list(range(40)), (got, notes(srv, "good1"))
        PROXY.rules[:] = [lambda m, p: ("status", 503, "SlowDown")
                          if "list-type" in p else None]
        e0 = srv.json("/data/environment")["storage"]["errors"]
        wait_for(lambda: srv.json("/data/environment")["storage"]["errors"]
                 > e0 + 1, "failed listings")
        assert srv.json("/data/environment")["storage"]["last_error"]
        for run in ("good2", "flaky", "slow"):
            assert points(srv, run) == list(range(RUNS[run])), run
        # (its reads pass again: the grown size it listed before comes in)
        assert points(srv, "good1")[:40] == list(range(40))
        # the store answers again: the grown run comes in, its note goes
        PROXY.rules[:] = []
        wait_for(lambda: points(srv, "good1") == list(range(60)),
                 "the grown run after the faults")
        wait_for(lambda: notes(srv, "good1") == [], "the note to go")


def test_sigterm_with_a_request_hanging():
    srv = Server(TFBOARD, "s3://faults/logs", "--reload_interval",
                 "0.3").__enter__()
    try:
        srv.wait_loaded()
        # connections are kept alive: reloads reuse them
        time.sleep(0.5)
        c0, r0 = PROXY.connections, len(PROXY.seen)
        for _ in range(4):
            n = srv.json("/data/plugin/core/progress")["reloads"]
            srv.get("/data/reload")
            wait_for(lambda: srv.json("/data/plugin/core/progress")
                     ["reloads"] > n, "a reload")
        assert len(PROXY.seen) - r0 >= 4, len(PROXY.seen) - r0
        assert PROXY.connections - c0 <= 1, (PROXY.connections - c0)
        PROXY.rules[:] = [lambda m, p: ("stall", 60)]
        time.sleep(1.0)  # a listing is now stuck in the stall
        t0 = time.time()
        rc, err = srv.stop()
        took = time.time() - t0
        PROXY.rules[:] = []
        assert rc == 0, (rc, err[-500:])
        assert took < 3, took
    finally:
        srv.stop()
        PROXY.rules[:] = []


try:
    run_tests([test_faults_retried_and_one_run_denied,
               test_sigterm_with_a_request_hanging])
finally:
    PROXY.stop()
    MOTO.stop()
