#!/usr/bin/env python3
"""Replicas that share their trace caches through a bucket (issue 28 item
6; --cache_dir s3://bucket/prefix, server/trace/trace_cachebucket.c), on a
real S3 server (moto_server; tests/integration/s3_util.py) with the
logdir in the same bucket. Each server is a replica with its own local
spool (its own XDG_CACHE_HOME), as a second pod or a restarted one:

  - replica A reads the trace and stores its cache in the bucket;
  - replica B's first load fetches that cache (its requests, seen by a
    proxy: GETs of the cache object, no write to the cache prefix, so no
    rebuild) and answers every trace route as A did, byte for byte;
  - a replica whose cache hits never GETs the trace store itself (its
    listing names the version the cache is keyed by) until a route that
    reads the store (memory, host) needs it;
  - a corrupted and a truncated cache object are rebuilt (the answers
    unchanged), never trusted, and replaced by a sound one that the next
    replica maps;
  - a new version of the trace (the object replaced: another ETag) is
    another key: the old cache is not used; the old version's cache put
    under the new version's key is refused (it claims other sources) and
    replaced;
  - the 412 path: a replica that finds no cache (the proxy answers its
    HEAD 404) builds, then loses the conditional write to the object
    there (moto 5.2 checks If-None-Match: *), which is left as it was.
Skips (77) without moto_server.

usage: test_trace_cache_bucket.py TFBOARD GEN_GPU_TRACE"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_util  # noqa: E402
from tfb_server_util import Server, check_clean_exit, run_tests, \
    wait_for  # noqa: E402

s3_util.need_moto()
TFBOARD, GEN_GPU = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_s3cache_")
MOTO = s3_util.Moto()
S3 = MOTO.client()
S3.create_bucket(Bucket="rep")
s3_util.use_endpoint(MOTO.url)
KERNELS = 100000
TRACE_KEY = "logs/gpu_run/host.1.trace.sqlite"
ROUTES = ("summary", "kernels", "utilization", "timeline", "trace.json",
          "launches", "queue", "memory", "host")
STATE = {}
REPLICAS = [0]


def make_trace(kernels):
    p = os.path.join(TMP, "t%d.trace.sqlite" % kernels)
    if not os.path.exists(p):
        subprocess.run([GEN_GPU, p, str(kernels)], check=True,
                       stdout=subprocess.DEVNULL)
    with open(p, "rb") as f:
        S3.put_object(Bucket="rep", Key=TRACE_KEY, Body=f.read())


def cache_objects():
    r = S3.list_objects_v2(Bucket="rep", Prefix="cache/")
    return {o["Key"]: o["ETag"] for o in r.get("Contents", [])}


def get_object(key):
    return S3.get_object(Bucket="rep", Key=key)["Body"].read()


class Replica:
    """A server over s3://rep/logs with --cache_dir s3://rep/cache and a
    fresh local spool, talking to the bucket through `endpoint`."""

    def __init__(self, endpoint=None):
        REPLICAS[0] += 1
        os.environ["XDG_CACHE_HOME"] = os.path.join(
            TMP, "replica%d" % REPLICAS[0])
        os.environ["AWS_ENDPOINT_URL"] = endpoint or MOTO.url
        self.srv = Server(TFBOARD, "s3://rep/logs", "--reload_interval", "0",
                          "--cache_dir", "s3://rep/cache")
        self.srv.__enter__()
        os.environ["AWS_ENDPOINT_URL"] = MOTO.url
        # stderr read as it comes: the cache's lines say what it did
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.srv.wait_loaded()

    def _read(self):
        for line in self.srv.proc.stderr:
            self.lines.append(line)

    def said(self, what):
        """Waits until the server wrote `what` on stderr."""
        wait_for(lambda: any(what in ln for ln in self.lines),
                 "the server to say " + repr(what), 60)

    def routes(self, names=ROUTES):
        out = {}
        for r in names:
            # trace.json of the whole trace is 56 MB: its first 5,000
            # events say the same (the cut is part of the answer)
            extra = {"max_events": 5000} if r == "trace.json" else {}
            out[r] = self.srv.json("/data/plugin/gpu/" + r, run="gpu_run",
                                   **extra)
        return out

    def stop(self):
        p = self.srv.proc
        p.terminate()
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        self.reader.join(15)
        p.stdout.close()
        self.srv.proc = None
        err = "".join(self.lines)
        check_clean_exit(p.returncode, err)
        return err


def writes_to_cache(proxy):
    return [(m, p) for m, p in proxy.seen
            if m in ("PUT", "POST") and p.startswith("/rep/cache/")]


def test_first_replica_stores_its_cache():
    make_trace(KERNELS)
    a = Replica()
    STATE["routes"] = a.routes()
    assert STATE["routes"]["summary"]["devices"][0]["kernels"] == KERNELS
    # stored after the trace answered (off the request path)
    a.said("stored s3://rep/cache/")
    objs = cache_objects()
    err = a.stop()
    assert len(objs) == 1, objs
    STATE["key"] = next(iter(objs))
    STATE["etag"] = objs[STATE["key"]]
    STATE["object"] = get_object(STATE["key"])
    assert "stored s3://rep/" + STATE["key"] in err, err[-2000:]
    assert "fetched from the bucket" not in err
    # kept packed (trace_cachepack.h): zstd frames, named apart from a
    # raw cache file, a fraction of the cache file's bytes
    assert STATE["key"].endswith(".tfbc.zst"), STATE["key"]
    assert STATE["object"][:4] == b"\x28\xb5\x2f\xfd", STATE["object"][:8]
    m = re.search(r"stored s3://rep/\S+ \((\d+) bytes, packed from (\d+)", err)
    assert m and int(m.group(1)) == len(STATE["object"]), err[-2000:]
    assert int(m.group(1)) * 2 < int(m.group(2)), m.group(0)
    STATE["raw_bytes"] = int(m.group(2))


def test_second_replica_maps_it():
    proxy = s3_util.FaultProxy(MOTO.port)
    b = Replica(proxy.url)
    routes = b.routes()
    err = b.stop()
    proxy.stop()
    assert "fetched from the bucket" in err, err[-2000:]
    assert "unsound" not in err, err[-2000:]
    assert "%d bytes unpacked from %d" % (STATE["raw_bytes"], len(STATE["object"])) \
        in err, err[-2000:]
    # the cache object was read, nothing was written: no rebuild
    gets = [p for m, p in proxy.seen
            if m == "GET" and p.startswith("/rep/" + STATE["key"])]
    assert gets, proxy.seen
    assert not writes_to_cache(proxy), writes_to_cache(proxy)
    assert cache_objects() == {STATE["key"]: STATE["etag"]}
    # every trace route answers as the replica that built it
    for r in ROUTES:
        assert json.dumps(routes[r], sort_keys=True) == \
            json.dumps(STATE["routes"][r], sort_keys=True), r


def source_requests(proxy):
    return [(m, p) for m, p in proxy.seen
            if p.split("?")[0] == "/rep/" + TRACE_KEY]


def test_cache_hit_fetches_no_source():
    # A replica that maps the bucket's cache never downloads the trace
    # store (809 MB for 10 M kernels: most of a replica's load was that
    # copy, made while listing): the listing names its version, which is
    # the cache's key. The routes that read the store itself (memory,
    # host) fetch it when they first need it, and answer as before.
    proxy = s3_util.FaultProxy(MOTO.port)
    h = Replica(proxy.url)
    trace_only = [r for r in ROUTES if r not in ("memory", "host")]
    first = h.routes(trace_only)
    h.said("fetched from the bucket")
    assert not source_requests(proxy), source_requests(proxy)
    rest = h.routes(("memory", "host"))
    fetched = source_requests(proxy)
    # no write to the cache prefix: the store's bytes did not make the
    # trace load again
    err = h.stop()
    proxy.stop()
    assert fetched and all(m == "GET" for m, _ in fetched), fetched
    assert not writes_to_cache(proxy), writes_to_cache(proxy)
    assert err.count("fetched from the bucket") == 1, err[-2000:]
    for r in ROUTES:
        assert (first.get(r) or rest.get(r)) == STATE["routes"][r], r


def unsound_object_is_rebuilt(body):
    S3.put_object(Bucket="rep", Key=STATE["key"], Body=body)
    bad_etag = cache_objects()[STATE["key"]]
    c = Replica()
    routes = c.routes()
    # replaced (conditionally on the bad version) once rebuilt
    c.said("in place of an unsound one")
    assert cache_objects().get(STATE["key"]) != bad_etag
    err = c.stop()
    assert "unsound" in err, err[-2000:]
    assert "fetched from the bucket" not in err, err[-2000:]
    assert "in place of an unsound one" in err, err[-2000:]
    for r in ROUTES:
        assert routes[r] == STATE["routes"][r], r
    # the replacement is sound: the next replica maps it
    d = Replica()
    routes = d.routes()
    err = d.stop()
    assert "fetched from the bucket" in err, err[-2000:]
    assert routes == STATE["routes"]


def test_corrupted_object_rebuilt():
    body = bytearray(STATE["object"])
    body[len(body) // 2] ^= 0x40
    unsound_object_is_rebuilt(bytes(body))


def test_truncated_object_rebuilt():
    unsound_object_is_rebuilt(STATE["object"][:len(STATE["object"]) // 3])


def test_other_trace_version_ignored():
    old_key, old_body = STATE["key"], get_object(STATE["key"])
    make_trace(KERNELS + 500)  # the trace object replaced: a new ETag
    e = Replica()
    routes = e.routes()
    e.said("stored s3://rep/cache/")
    assert len(cache_objects()) == 2, cache_objects()
    err = e.stop()
    assert routes["summary"]["devices"][0]["kernels"] == KERNELS + 500
    assert "fetched from the bucket" not in err, err[-2000:]
    new_key = [k for k in cache_objects() if k != old_key][0]
    # the old version's cache under the new version's key: refused
    S3.put_object(Bucket="rep", Key=new_key, Body=old_body)
    forged = cache_objects()[new_key]
    f = Replica()
    again = f.routes()
    f.said("in place of an unsound one")
    assert cache_objects()[new_key] != forged
    err = f.stop()
    assert "unsound" in err, err[-2000:]
    assert again == routes
    STATE["key"], STATE["routes"] = new_key, routes
    STATE["etag"] = cache_objects()[new_key]


def test_lost_race_keeps_the_winner():
    # the replica sees no cache (its HEAD answers 404), builds, and its
    # conditional write meets the object another replica stored
    proxy = s3_util.FaultProxy(MOTO.port)
    proxy.rules.append(lambda m, p: ("status", 404, "NoSuchKey")
                       if m == "HEAD" and p.startswith("/rep/cache/")
                       else None)
    g = Replica(proxy.url)
    routes = g.routes()
    g.said("another server stored it first")
    err = g.stop()
    proxy.stop()
    assert "another server stored it first" in err, err[-2000:]
    assert "fetched from the bucket" not in err
    assert cache_objects()[STATE["key"]] == STATE["etag"]
    assert routes == STATE["routes"]


if __name__ == "__main__":
    try:
        run_tests([test_first_replica_stores_its_cache,
                   test_second_replica_maps_it,
                   test_cache_hit_fetches_no_source,
                   test_corrupted_object_rebuilt,
                   test_truncated_object_rebuilt,
                   test_other_trace_version_ignored,
                   test_lost_race_keeps_the_winner])
    finally:
        MOTO.stop()
        shutil.rmtree(TMP, ignore_errors=True)
