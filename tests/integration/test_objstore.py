"""tfboard over a bucket (s3://) on a real S3 server (moto_server, auth
off; tests/integration/s3_util.py): the same logdir served from disk and
from the bucket gives the same JSON on every route; runs that grow while
served are read on from their last offset; a replaced object is read
again from the start; an unchanged logdir costs one listing and no GET a
reload; keys with spaces, Unicode, '+' and '..'; `tfboard report` and
`report --compare` on s3:// logdirs. Skips (77) without moto_server.

usage: test_objstore.py TFBOARD GEN_LOGDIR GEN_GPU_TRACE"""
import json
import urllib.error
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_util  # noqa: E402
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402

s3_util.need_moto()
TFBOARD, GEN, GEN_GPU = sys.argv[1], sys.argv[2], sys.argv[3]
TMP = tempfile.mkdtemp(prefix="tfb_s3_")
MOTO = s3_util.Moto()
S3 = MOTO.client()
S3.create_bucket(Bucket="logs")
s3_util.use_endpoint(MOTO.url)


from test_objstore_events import events  # noqa: E402


def put(key, body):
    S3.put_object(Bucket="logs", Key=key, Body=body)


def env_storage(srv):
    return srv.json("/data/environment")["storage"]


def reloads(srv):
    return srv.json("/data/plugin/core/progress")["reloads"]


def wait_reload(srv, after):
    """Waits for a reload that started after `after` reloads finished."""
    wait_for(lambda: reloads(srv) >= after + 2, "two more reloads")


# ---- tests ---------------------------------------------------------------

def normalise(obj, prefixes):
    s = json.dumps(obj, sort_keys=True)
    for p in prefixes:
        s = s.replace(p, "<LOGDIR>")
    return json.loads(s)


def routes(srv):
    """Every route with a JSON answer on this logdir, queried the way the
    pages query them."""
    out = {}
    for path in ("/data/runs", "/data/runs_info", "/data/plugins_listing",
                 "/data/plugin/core/progress"):
        out[path] = srv.json(path)
    # what reading cost differs by backend (checked apart), and a trace
    # store in a bucket is read from a local copy: its name is compared
    for run in out["/data/runs_info"]:
        # seconds since the run's last event: the clock moves between two
        # servers' answers (a run of trace files only has no status)
        (run.get("status") or {}).pop("idle_s", None)
        for f in run["files"]:
            f.pop("requests")
            f.pop("request_bytes")
        run["trace_files"] = [t.rsplit("/", 1)[1].split("-", 1)[-1]
                              if "tfboard-copies-" in t else
                              t.rsplit("/", 1)[1]
                              for t in run["trace_files"]]
    for route in ("summary", "kernels", "utilization", "timeline"):
        out["gpu " + route] = srv.json("/data/plugin/gpu/" + route,
                                       run="gpu_run")
    env = srv.json("/data/environment")
    env.pop("data_location")
    env.pop("storage")
    out["/data/environment"] = env
    for plugin in srv.json("/data/plugins_listing"):
        st, ct, body = srv.get("/data/plugin/%s/tags" % plugin)
        if st != 200 or not ct.startswith("application/json"):
            continue
        tags = json.loads(body)
        out[plugin + "/tags"] = tags
        kind = {"scalars": "scalars", "histograms": "histograms",
                "distributions": "distributions", "text": "text"}
        if plugin not in kind or not isinstance(tags, dict):
            continue
        for run, ts in tags.items():
            for tag in ts:
                out["%s %s %s" % (plugin, run, tag)] = srv.json(
                    "/data/plugin/%s/%s" % (plugin, kind[plugin]),
                    run=run, tag=tag)
    return out


def test_disk_and_bucket_same_json():
    local = os.path.join(TMP, "basic")
    subprocess.run([GEN, "basic", local], check=True)
    # a GPU trace store too: read from a local copy of the object
    os.makedirs(os.path.join(local, "gpu_run"))
    subprocess.run([GEN_GPU, os.path.join(local, "gpu_run",
                                          "host.9.trace.sqlite"), "5000"],
                   check=True)
    s3_util.upload_dir(S3, "logs", local, "basic")
    with Server(TFBOARD, local, "--reload_interval", "0") as a, \
            Server(TFBOARD, "s3://logs/basic", "--reload_interval",
                   "0") as b:
        a.wait_loaded()
        b.wait_loaded()
        ra = normalise(routes(a), [local])
        rb = normalise(routes(b), ["s3://logs/basic"])
        assert ra.keys() == rb.keys(), set(ra) ^ set(rb)
        for k in ra:
            assert ra[k] == rb[k], (k, ra[k], rb[k])
        assert len(ra) > 10, sorted(ra)
        # per file, what the one reload cost: a GET per event file (the
        # local files cost no request)
        for run in b.json("/data/runs_info"):
            for f in run["files"]:
                assert f["requests"] >= 1 and \
                    f["request_bytes"] == f["bytes"], f
        for run in a.json("/data/runs_info"):
            for f in run["files"]:
                assert f["requests"] == 0, f
        st = env_storage(b)
        assert st["backend"] == "s3" and st["anonymous"] is False
        assert st["total"]["lists"] == 1, st
        assert st["last_error"] is None
        # no secret in what the page can read
        assert "test" not in json.dumps(b.json("/data/environment")["storage"])
        # the shared layout lives in local logdirs only: nothing is
        # written under the server's working directory for a bucket
        assert b.json("/data/plugin/scalars/layout") == {"layout": None}
        import urllib.request
        rq = urllib.request.Request(b.url("/data/plugin/scalars/layout"),
                                    data=b"{}", method="PUT", headers={
                                        "Content-Type": "application/json"})
        try:
            urllib.request.urlopen(rq, timeout=10)
            raise AssertionError("PUT layout to a bucket logdir succeeded")
        except urllib.error.HTTPError as e:
            assert e.code == 501, e.code
        assert not os.path.exists("s3:")


def test_report_and_compare_on_bucket():
    local = os.path.join(TMP, "basic")
    a = subprocess.run([TFBOARD, "report", "--logdir", local,
                        "--format", "json"], capture_output=True, text=True)
    b = subprocess.run([TFBOARD, "report", "--logdir", "s3://logs/basic",
                        "--format", "json"], capture_output=True, text=True)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    ja.pop("logdir"), jb.pop("logdir")
    assert normalise(ja, [local]) == normalise(jb, ["s3://logs/basic"])
    c = subprocess.run([TFBOARD, "report", "--logdir", "s3://logs/basic",
                        "--compare", "run_a", "sub/run_b"],
                       capture_output=True, text=True)
    assert c.returncode in (0, 1), c.stderr
    assert "run_a" in c.stdout and "sub/run_b" in c.stdout, c.stdout[:500]
    # two run directories named by URL, no --logdir
    e = subprocess.run([TFBOARD, "report", "--compare",
                        "s3://logs/basic/run_a", "s3://logs/basic/sub/run_b"],
                       capture_output=True, text=True)
    assert e.returncode in (0, 1), e.stderr
    assert "s3://logs/basic/sub/run_b" in e.stdout and "loss" in e.stdout, \
        e.stdout[:500]
    d = subprocess.run([TFBOARD, "report", "--logdir", "s3://nobucket/x"],
                       capture_output=True, text=True)
    assert d.returncode != 0


def test_growth_replacement_and_request_counts():
    key = "live/run1/events.out.tfevents.1.host.1.0"
    first = events("loss", range(0, 50))
    put(key, first)
    for i in range(2, 6):
        put("live/run%d/events.out.tfevents.1.host.1.0" % i,
            events("loss", range(10)))
    with Server(TFBOARD, "s3://logs/live", "--reload_interval", "0.3") as srv:
        srv.wait_loaded()
        pts = srv.json("/data/plugin/scalars/scalars", run="run1", tag="loss")
        assert [p[1] for p in pts] == list(range(50))
        # unchanged: one listing and no GET per reload
        r = reloads(srv)
        wait_reload(srv, r)
        st = env_storage(srv)
        assert st["last_reload"]["lists"] == 1, st
        assert st["last_reload"]["gets"] == 0, st
        assert st["last_reload"]["heads"] == 0, st
        for run in srv.json("/data/runs_info"):
            assert [f["requests"] for f in run["files"]] == [0], run
        total_before = st["total"]["bytes"]
        # grown: read on from the last offset (only the new bytes come)
        more = events("loss", range(50, 80))
        put(key, first + more)
        wait_for(lambda: len(srv.json("/data/plugin/scalars/scalars",
                                      run="run1", tag="loss")) == 80,
                 "the grown object's points")
        pts = srv.json("/data/plugin/scalars/scalars", run="run1", tag="loss")
        assert [p[1] for p in pts] == list(range(80))
        st = env_storage(srv)
        got = st["total"]["bytes"] - total_before
        lists = st["total"]["lists"]
        assert got < len(more) + 20000 * lists, (got, len(more))
        # replaced: a shorter object with another ETag is read from the
        # start; the run shows only the new content
        put(key, events("loss", range(7), scale=-1.0))
        wait_for(lambda: len(srv.json("/data/plugin/scalars/scalars",
                                      run="run1", tag="loss")) == 7,
                 "the replaced object's points")
        pts = srv.json("/data/plugin/scalars/scalars", run="run1", tag="loss")
        assert [p[2] for p in pts] == [-float(s) for s in range(7)]
        # deleted objects: their runs keep what they gave; no HEAD asks
        # after them (the listing says they are gone)
        for i in (3, 4, 5):
            S3.delete_object(Bucket="logs",
                             Key="live/run%d/events.out.tfevents.1.h.1.0" % i)
        r = reloads(srv)
        srv.get("/data/reload")
        wait_reload(srv, r)
        st = env_storage(srv)
        assert st["last_reload"]["heads"] == 0, st
        assert st["last_reload"]["gets"] == 0, st
        for i in (3, 4, 5):
            pts = srv.json("/data/plugin/scalars/scalars", run="run%d" % i,
                           tag="loss")
            assert [p[1] for p in pts] == list(range(10))
        # a reload asked for from the page
        r = reloads(srv)
        st_, ct, body = srv.get("/data/reload")
        assert st_ == 200 and json.loads(body) == {"reload": True}
        wait_for(lambda: reloads(srv) > r, "the reload asked for")


def test_odd_keys():
    names = ["with space", "ünïcödé ☃", "a+b", "x/../y", "q?&=%25"]
    for i, n in enumerate(names):
        put("odd/%s/events.out.tfevents.1.h.1.0" % n,
            events("t", range(i + 1)))
    with Server(TFBOARD, "s3://logs/odd", "--reload_interval", "0") as srv:
        srv.wait_loaded()
        runs = srv.json("/data/runs")
        assert sorted(runs) == sorted(names), runs
        for i, n in enumerate(names):
            pts = srv.json("/data/plugin/scalars/scalars", run=n, tag="t")
            assert [p[1] for p in pts] == list(range(i + 1)), (n, pts)
        assert env_storage(srv)["last_error"] is None


def test_idle_logdir_listed_less_often():
    put("idle/r/events.out.tfevents.1.h.1.0", events("loss", range(3)))
    with Server(TFBOARD, "s3://logs/idle", "--reload_interval",
                "0.2") as srv:
        srv.wait_loaded()
        time.sleep(3)  # unchanged: the interval grows to 8 x 0.2 s

        def lists():
            return srv.json("/data/environment")["storage"]["total"]["lists"]
        l0 = lists()
        time.sleep(3.2)
        idle = lists() - l0
        # every 0.2 s would be 16 listings; 1.6 s apart, 2 or 3
        assert idle <= 4, idle
        # a reload asked for comes at once
        r = reloads(srv)
        srv.get("/data/reload")
        wait_for(lambda: reloads(srv) > r, "the reload asked for",
                 timeout=1.5)
        put("idle/r/events.out.tfevents.1.h.1.0", events("loss", range(9)))
        srv.get("/data/reload")
        wait_for(lambda: len(srv.json("/data/plugin/scalars/scalars",
                                      run="r", tag="loss")) == 9,
                 "the new points")


def test_anonymous_public_bucket():
    S3.create_bucket(Bucket="public", ACL="public-read")
    S3.put_object(Bucket="public", Key="p/r/events.out.tfevents.1.h.1.0",
                  Body=events("loss", range(5)), ACL="public-read")
    saved = {k: os.environ.pop(k) for k in
             ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    try:
        with Server(TFBOARD, "s3://public/p", "--reload_interval",
                    "0") as srv:
            srv.wait_loaded()
            st = srv.json("/data/environment")["storage"]
            assert st["anonymous"] is True, st
            pts = srv.json("/data/plugin/scalars/scalars", run="r",
                           tag="loss")
            assert [p[1] for p in pts] == list(range(5))
    finally:
        os.environ.update(saved)


try:
    run_tests([test_disk_and_bucket_same_json,
               test_report_and_compare_on_bucket,
               test_growth_replacement_and_request_counts,
               test_odd_keys,
               test_idle_logdir_listed_less_often,
               test_anonymous_public_bucket])
finally:
    MOTO.stop()
    shutil.rmtree(TMP, ignore_errors=True)
