"""What reading a bucket costs and says when it fails (issue 32, items 16
to 18), on moto_server behind s3_util.FaultProxy (which counts every
request and answers the faults a test asks for):

- a run whose last object ends in a partial record is not fetched again
  while the listing shows the same object (no GET reaches the bucket);
  once the object changes, the rest is read on;
- `tfboard report --logdir s3://...` says what the failed listing was
  answered (403 AccessDenied, 503 SlowDown after its retries, a refused
  connection), not "no such file or directory"; a failed read names its
  request too;
- /data/environment stays valid UTF-8 when a request for an object with a
  long non-ASCII name fails: the message is cut at a character boundary.

Skips (77) without moto_server.

usage: test_objstore_reads.py TFBOARD"""
import http.server
import json
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_util  # noqa: E402
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402
from test_objstore_events import events, scalar_event  # noqa: E402

s3_util.need_moto()
TFBOARD = sys.argv[1]
MOTO = s3_util.Moto()
S3 = MOTO.client()
BUCKET = "reads"
S3.create_bucket(Bucket=BUCKET)
PROXY = s3_util.FaultProxy(MOTO.port)
s3_util.use_endpoint(PROXY.url)
# Two attempts: a 503 storm or a refused connection gives up in about a
# second instead of five attempts' backoff.
os.environ["AWS_MAX_ATTEMPTS"] = "2"


def put(key, body):
    S3.put_object(Bucket=BUCKET, Key=key, Body=body)


def gets_of(needle):
    with PROXY.lock:
        return sum(1 for m, p in PROXY.seen if m == "GET" and needle in p)


def reload_once(srv):
    n = srv.json("/data/plugin/core/progress")["reloads"]
    srv.get("/data/reload")
    wait_for(lambda: srv.json("/data/plugin/core/progress")["reloads"] > n,
             "a reload")


def points(srv, run, tag="loss"):
    return [p[1] for p in srv.json("/data/plugin/scalars/scalars", run=run,
                                   tag=tag)]


# ---- item 16: an unchanged object is not read again ----------------------

def test_partial_tail_not_fetched_while_unchanged():
    PROXY.rules[:] = []
    key = "tail/run/events.out.tfevents.1.h.1.0"
    whole = events("loss", range(20))
    nxt = scalar_event(20, "loss", 20.0)
    # the next record's header and half its body: a writer mid-record
    put(key, whole + nxt[:len(nxt) // 2])
    with Server(TFBOARD, "s3://%s/tail" % BUCKET, "--reload_interval",
                "0.2") as srv:
        srv.wait_loaded()
        assert points(srv, "run") == list(range(20))
        reload_once(srv)  # the first pass's reads are behind us
        g0 = gets_of("/tail/run/")
        for _ in range(8):
            reload_once(srv)
        # eight listings of the same object: not one GET (it was fetched
        # again at every reload)
        assert gets_of("/tail/run/") == g0, (gets_of("/tail/run/"), g0)
        st = srv.json("/data/environment")["storage"]
        assert st["last_reload"]["gets"] == 0, st
        assert st["last_reload"]["lists"] == 1, st
        f = srv.json("/data/runs_info")[0]["files"][0]
        # still said: the object ends in a partial record
        assert f["truncated_tail"] is True and f["requests"] == 0, f
        assert points(srv, "run") == list(range(20))
        # the record completed (a new version, longer): read on from there
        put(key, whole + nxt + events("loss", range(21, 25)))
        srv.get("/data/reload")
        wait_for(lambda: points(srv, "run") == list(range(25)),
                 "the completed record and the ones after it")
        assert gets_of("/tail/run/") > g0
        # the file's stats are published when its read ends, a moment
        # after its points (a slow build, TSan, shows the gap)
        wait_for(lambda: srv.json("/data/runs_info")[0]["files"][0]
                 ["truncated_tail"] is False, "the tail no longer partial")


# ---- item 17: report says what the listing was answered ------------------

def report(logdir, *extra, endpoint=None):
    env = dict(os.environ)
    if endpoint:
        env["AWS_ENDPOINT_URL"] = endpoint
    return subprocess.run([TFBOARD, "report", "--logdir", logdir] +
                          list(extra),
                          capture_output=True, text=True, env=env,
                          timeout=60)


def test_report_names_the_failed_request():
    put("rep/a/events.out.tfevents.1.h.1.0", events("loss", range(5)))
    url = "s3://%s/rep" % BUCKET
    try:
        cases = [
            ("status", 403, "AccessDenied", "HTTP 403 AccessDenied"),
            ("status", 503, "SlowDown", "HTTP 503 SlowDown after 2 attempts"),
        ]
        for act0, code, s3code, want in cases:
            PROXY.rules[:] = [lambda m, p, a=(act0, code, s3code):
                              a if "list-type" in p else None]
            r = report(url)
            assert r.returncode != 0, (want, r.returncode, r.stderr)
            err = r.stderr
            assert "no such file or directory" not in err, err
            assert ("LIST s3://%s/rep/" % BUCKET) in err and want in err, \
                (want, err)
        # nothing listens there: the connection is refused
        PROXY.rules[:] = []
        r = report(url, endpoint="http://127.0.0.1:%d" % s3_util.free_port())
        assert r.returncode != 0, r.stderr
        assert "no such file or directory" not in r.stderr, r.stderr
        assert ("LIST s3://%s/rep/" % BUCKET) in r.stderr and \
            "connect" in r.stderr.lower(), r.stderr
        # listed, but the object's read is refused: the report is
        # incomplete and names the request, with its answer (--quiet: in
        # its last line, not only in the loader's progress lines)
        PROXY.rules[:] = [lambda m, p: ("status", 403, "AccessDenied")
                          if m == "GET" and "/rep/a/" in p else None]
        r = report(url, "--quiet")
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "could not be read" in r.stderr and \
            "HTTP 403 AccessDenied" in r.stderr and \
            ("GET s3://%s/rep/a/" % BUCKET) in r.stderr, r.stderr
        # and with no fault at all, the report is written
        PROXY.rules[:] = []
        r = report(url)
        assert r.returncode == 0 and "loss" in r.stdout, r.stderr
    finally:
        PROXY.rules[:] = []


# ---- item 18: the message of a failed request stays UTF-8 ----------------

def test_environment_utf8_when_a_long_name_fails():
    # The client cuts a request's URL at 199 bytes; a name of 3-byte
    # characters padded so that the cut falls inside one (what the
    # assertions check holds wherever the cut is).
    pad = 0
    while True:
        name = "x" * pad + "\u2603" * 100
        key = "env/%s/events.out.tfevents.1.h.1.0" % name
        what = ("GET s3://%s/%s" % (BUCKET, key)).encode()
        try:
            what[:199].decode("utf-8")
            pad += 1
        except UnicodeDecodeError:
            break
    put(key, events("loss", range(3)))
    PROXY.rules[:] = [lambda m, p: ("status", 403, "AccessDenied")
                      if m == "GET" and "/env/" in p else None]
    try:
        with Server(TFBOARD, "s3://%s/env" % BUCKET, "--reload_interval",
                    "0") as srv:
            srv.wait_loaded()
            st_, ct, body = srv.get("/data/environment")
            assert st_ == 200, st_
            text = body.decode("utf-8")  # strict: fails on a cut character
            err = json.loads(text)["storage"]["last_error"]
            assert "HTTP 403 AccessDenied" in err, err
            assert "\ufffd" not in err, err
            url = err.split(": HTTP ")[0]
            full = "GET s3://%s/%s" % (BUCKET, key)
            assert full.startswith(url) and len(url) > 40, (url, full)
            # the run's note carries the same request (its line cut
            # shorter), whole characters only
            st_, ct, body = srv.get("/data/runs_info")
            runs = json.loads(body.decode("utf-8"))
            notes = [n for r in runs for n in r["notes"]]
            assert any(("GET s3://%s/env/" % BUCKET) in n for n in notes), \
                notes
            assert not any("\ufffd" in n for n in notes), notes
    finally:
        PROXY.rules[:] = []


class HostileStore:
    """An endpoint that answers every request 403 with an S3 error code
    holding a byte that is not UTF-8 and a quote."""

    def __init__(self):
        class H(http.server.BaseHTTPRequestHandler):
            def answer(self):
                body = b'<Error><Code>Deny\xff"X</Code></Error>'
                self.send_response(403)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_PUT = answer

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_environment_error_through_the_json_writer():
    bad = HostileStore()
    saved = os.environ["AWS_ENDPOINT_URL"]
    os.environ["AWS_ENDPOINT_URL"] = bad.url
    try:
        with Server(TFBOARD, "s3://%s/any" % BUCKET, "--reload_interval",
                    "0") as srv:
            srv.wait_loaded()
            st_, ct, body = srv.get("/data/environment")
            text = body.decode("utf-8")  # strict
            err = json.loads(text)["storage"]["last_error"]
            # the invalid byte as U+FFFD (the JSON writer's rule), the
            # quote escaped
            assert ("HTTP 403 Deny\ufffd\"X") in err, err
    finally:
        os.environ["AWS_ENDPOINT_URL"] = saved
        bad.stop()


try:
    run_tests([test_partial_tail_not_fetched_while_unchanged,
               test_report_names_the_failed_request,
               test_environment_utf8_when_a_long_name_fails,
               test_environment_error_through_the_json_writer])
finally:
    PROXY.stop()
    MOTO.stop()
