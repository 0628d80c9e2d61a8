"""Loading a logdir from a bucket (issue 19): a ~100 MB logdir (20 runs x
50 tags x 2,300 steps, TFB_BENCH_S3_STEPS overrides) on a local
moto_server, loaded by tfboard from s3:// next to, in the same run, curl
fetching the same objects (all at once, --parallel) and tfboard loading
the same files from disk; then the requests each reload makes (an
unchanged logdir, and one run grown). Prints figures; never fails on a
time. Skips (77) without moto_server.

usage: bench_objstore.py TFBOARD GEN_LOGDIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import s3_util  # noqa: E402
from tfb_server_util import Server, wait_for  # noqa: E402

s3_util.need_moto()
TFBOARD, GEN = sys.argv[1], sys.argv[2]
STEPS = int(os.environ.get("TFB_BENCH_S3_STEPS", "2300"))
TMP = tempfile.mkdtemp(prefix="tfb_bench_s3_")
LOCAL = os.path.join(TMP, "logs")
subprocess.run([GEN, "scalars", LOCAL, "20", "50", str(STEPS)], check=True)
files = []
for d, _, fs in os.walk(LOCAL):
    files += [os.path.join(d, f) for f in fs]
size = sum(os.path.getsize(f) for f in files)

moto = s3_util.Moto()
try:
    s3 = moto.client()
    s3.create_bucket(Bucket="bench")
    s3_util.use_endpoint(moto.url)
    items = []
    for f in files:
        with open(f, "rb") as fh:
            items.append(("logs/" + os.path.relpath(f, LOCAL), fh.read()))
    s3_util.put_many(moto.url, "bench", items, threads=4)

    def load(logdir):
        t0 = time.time()
        srv = Server(TFBOARD, logdir, "--reload_interval", "0.5").__enter__()
        try:
            p = srv.wait_loaded()
            took = time.time() - t0
            env = srv.json("/data/environment")
            return srv, took, p, env
        except BaseException:
            srv.stop()
            raise

    # curl: the same objects, all in parallel over one process
    urls = ["%s/bench/%s" % (moto.url, k) for k, _ in items]
    t0 = time.time()
    cmd = ["curl", "-sS", "--fail", "--parallel", "--parallel-max", "16",
           "-w", "%{size_download}\n",
           # plain GETs without a query: curl's own signer is right here
           "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "test:test"]
    for u in urls:
        cmd += ["-o", "/dev/null", u]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    curl_s = time.time() - t0
    got = sum(int(x) for x in out.stdout.split())
    assert got == size, (got, size)  # curl really fetched every byte

    srv, s3_s, prog, env = load("s3://bench/logs")
    st = env["storage"]
    print("logdir: %d objects, %.1f MB, %d points"
          % (len(files), size / 1e6, prog["points"]))
    print("curl --parallel fetching the objects: %.2f s (%.0f MB/s)"
          % (curl_s, size / 1e6 / curl_s))
    print("tfboard loading s3://: %.2f s (%.0f MB/s) to all points served; "
          "requests %d (lists %d, GETs %d), %.1f MB in"
          % (s3_s, size / 1e6 / s3_s, st["total"]["requests"],
             st["total"]["lists"], st["total"]["gets"],
             st["total"]["bytes"] / 1e6))
    r = srv.json("/data/plugin/core/progress")["reloads"]
    wait_for(lambda: srv.json("/data/plugin/core/progress")["reloads"]
             >= r + 2, "two more reloads", timeout=60)
    print("an unchanged reload: %s" % json.dumps(
        srv.json("/data/environment")["storage"]["last_reload"]))
    # one run grows by one more copy of another run's bytes
    k0, b0 = items[0]
    s3.put_object(Bucket="bench", Key=k0, Body=b0 + items[1][1])
    t0 = time.time()
    wait_for(lambda: srv.json("/data/environment")["storage"]["total"]
             ["bytes"] > st["total"]["bytes"] + len(items[1][1]) // 2,
             "the grown run", timeout=60)
    r = srv.json("/data/plugin/core/progress")["reloads"]
    wait_for(lambda: srv.json("/data/plugin/core/progress")["reloads"]
             >= r + 1, "a reload", timeout=60)
    st2 = srv.json("/data/environment")["storage"]
    print("one run grown by %.1f MB: read in %.2f s; requests since the "
          "first load: %d (lists %d, GETs %d), %.1f MB in"
          % (len(items[1][1]) / 1e6, time.time() - t0,
             st2["total"]["requests"] - st["total"]["requests"],
             st2["total"]["lists"] - st["total"]["lists"],
             st2["total"]["gets"] - st["total"]["gets"],
             (st2["total"]["bytes"] - st["total"]["bytes"]) / 1e6))
    srv.stop()
    lsrv, local_s, _, _ = load(LOCAL)
    lsrv.stop()
    print("tfboard loading the same files from disk: %.2f s" % local_s)
    print("load average: %s" % open("/proc/loadavg").read().strip())
finally:
    moto.stop()
    shutil.rmtree(TMP, ignore_errors=True)
