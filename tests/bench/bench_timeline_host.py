#!/usr/bin/env python3
"""The timeline's host side at scale: writes an nsys-layout trace of N
kernels with a launch call each (gen_gpu_trace), starts tfboard on it and
prints: the GPU trace's load (first /timeline until it answers), the host
side's first read (first /data/plugin/gpu/host after the trace: every
runtime call read into CPU lanes and linked to its kernel by
correlation), the latency of /host for the whole trace and for a 1 %
window after that, and the server's resident memory per runtime call
added by the host side. Run with and without a cache directory: the host
side is read from the sources either way, and answers the same.

usage: bench_timeline_host.py TFBOARD GEN_GPU_TRACE [--kernels N]
It never fails on a time; it prints numbers."""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import gpu_trace_gen  # noqa: E402

B = 1700000000000000000


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) * 1024


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                    timeout=600) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def timed(port, path):
    """(seconds until a non-202 answer, body)"""
    t0 = time.time()
    while True:
        st, body = get(port, path)
        if st != 202:
            assert st == 200, (path, st, body[:200])
            return time.time() - t0, body
        time.sleep(0.02)


def serve(tfboard, logdir, cache_dir, n):
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    p = subprocess.Popen([tfboard, "--logdir", logdir, "--port", str(port),
                          "--reload_interval", "0", "--quiet",
                          "--cache_dir", cache_dir],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 30
        while time.time() < end:
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.02)
        while not json.loads(get(port, "/data/plugin/core/progress")[1])[
                "done"]:
            time.sleep(0.05)
        s, _ = timed(port, "/data/plugin/gpu/timeline?run=big&max=2000")
        print("  GPU trace load (first /timeline): %.2f s" % s)
        rss0 = rss_bytes(p.pid)
        s, body = timed(port, "/data/plugin/gpu/host?run=big&max=4000")
        rss1 = rss_bytes(p.pid)
        j = json.loads(body)
        print("  host side first read (first /host): %.2f s, %d spans, "
              "%.1f bytes a runtime call" % (s, j["total"],
                                             (rss1 - rss0) / max(1, n)))
        s, whole = timed(port, "/data/plugin/gpu/host?run=big&max=4000")
        print("  /host whole trace (cached): %.3f s" % s)
        w0, w1 = B, B + n * 10  # 1 % of the kernels' span (1000 ns each)
        s, win = timed(port, "/data/plugin/gpu/host?run=big&start_ns=%d"
                       "&end_ns=%d&max=4000" % (w0, w1))
        jw = json.loads(win)
        linked = sum(1 for x in jw["spans"] if "correlation" in x)
        print("  /host 1 %% window: %.3f s, %d spans, %d linked to their "
              "kernel" % (s, len(jw["spans"]), linked))
        return whole, win
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfboard")
    ap.add_argument("gen")
    ap.add_argument("--kernels", type=int,
                    default=int(os.environ.get("TFB_BENCH_KERNELS",
                                               "1000000")))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tfb_bench_host_")
    try:
        logdir = os.path.join(tmp, "logdir")
        os.makedirs(os.path.join(logdir, "big"))
        n = a.kernels
        gpu_trace_gen.write(a.gen, os.path.join(logdir, "big",
                                                "report1.sqlite"), n)
        print("%d kernels, %d runtime calls" % (n, n))
        cache = os.path.join(tmp, "cache")
        got = []
        for label, cdir in (("no cache", ""), ("first load", cache),
                            ("reopen (trace mapped)", cache)):
            print("--- " + label)
            got.append(serve(a.tfboard, logdir, cdir, n))
        print("answers identical across the three: %s"
              % (got[0] == got[1] == got[2]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
