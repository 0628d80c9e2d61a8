#!/usr/bin/env python3
"""Server benchmark: generate a logdir (default 100 runs x 50 tags x 4600
steps, about 23 M scalar points and 1 GB of event files), start tfboard on
it, and print time to first byte, time until all data is loaded, resident
memory per point, and wrk latency (p50/p99) and requests/s for a scalars
query with samples=1000, saturated and paced at about 1000 req/s.

usage: bench_server.py TFBOARD GEN_LOGDIR [--runs N] [--tags N]
                       [--steps N] [--dir DIR] [--duration S]
It never fails on a time; it prints numbers (DESIGN.md has the targets).
The page cache is warm after generation: "cold" means a fresh process, not
a cold disk."""
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
import urllib.request


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) * 1024


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    """A port nobody listens on now (--quiet prints no banner to read the
    port of --port 0 from)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(tfboard, logdir):
    port = free_port()
    t0 = time.time()
    p = subprocess.Popen([tfboard, "--logdir", logdir, "--port", str(port),
                          "--reload_interval", "0", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         text=True)
    end = time.time() + 20
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.01)
    return p, port, t0


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                timeout=30) as r:
        return r.read()


def wrk(url_lua, port, duration, conns, paced):
    script = url_lua
    if paced:
        # each connection waits 10 ms between requests: about 100 req/s a
        # connection, so conns=10 gives about 1000 req/s in all
        script += "\nfunction delay() return 10 end\n"
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
        path = f.name
    try:
        out = subprocess.run(
            ["wrk", "-t2", "-c%d" % conns, "-d%ds" % duration, "--latency",
             "-s", path, "http://127.0.0.1:%d" % port],
            capture_output=True, text=True, timeout=duration + 60).stdout
    finally:
        os.unlink(path)

    def lat(pct):
        m = re.search(r"^\s*%s%%\s+([\d.]+)(us|ms|s)\s*$" % pct, out, re.M)
        if not m:
            return float("nan")
        v = float(m.group(1))
        return v / 1000 if m.group(2) == "us" else v * 1000 \
            if m.group(2) == "s" else v
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"p50_ms": lat(50), "p99_ms": lat(99),
            "rps": float(rps.group(1)) if rps else float("nan"),
            "non2xx": int(errs.group(1)) if errs else 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfboard")
    ap.add_argument("gen")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--tags", type=int, default=50)
    ap.add_argument("--steps", type=int, default=4600)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--duration", type=int, default=10)
    a = ap.parse_args()

    base = a.dir or os.path.join(tempfile.gettempdir(), "tfb_bench_%d_%d_%d"
                                 % (a.runs, a.tags, a.steps))
    marker = os.path.join(base, ".complete")
    if not os.path.exists(marker):
        shutil.rmtree(base, ignore_errors=True)
        t = time.time()
        subprocess.run([a.gen, "scalars", base, str(a.runs), str(a.tags),
                        str(a.steps)], check=True)
        open(marker, "w").close()
        print("generated %s in %.1f s" % (base, time.time() - t))
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(base) for f in fs)
    points = a.runs * a.tags * a.steps
    print("logdir: %d runs x %d tags x %d steps = %d points, %.2f GB"
          % (a.runs, a.tags, a.steps, points, size / 1e9))

    empty = tempfile.mkdtemp(prefix="tfb_bench_empty_")
    p0, port0, _ = start(a.tfboard, empty)
    time.sleep(0.3)
    get(port0, "/data/runs")
    base_rss = rss_bytes(p0.pid)
    p0.terminate()
    p0.wait()
    os.rmdir(empty)

    p, port, t0 = start(a.tfboard, base)
    try:
        ttfb = None
        while ttfb is None:
            try:
                get(port, "/data/runs")
                ttfb = time.time() - t0
            except OSError:
                time.sleep(0.002)
        while True:
            prog = json.loads(get(port, "/data/plugin/core/progress"))
            if prog["done"]:
                break
            time.sleep(0.01)
        t_all = time.time() - t0
        rss = rss_bytes(p.pid)
        load_cpu = cpu_seconds(p.pid)
        lua = ('math.randomseed(1)\nrequest = function()\n'
               '  local r = math.random(0, %d)\n'
               '  local t = math.random(0, %d)\n'
               '  return wrk.format(nil, string.format('
               '"/data/plugin/scalars/scalars?run=run%%03d&tag=tag%%02d%%%%2Ft'
               '&samples=1000", r, t))\nend\n' % (a.runs - 1, a.tags - 1))
        sample = json.loads(get(port, "/data/plugin/scalars/scalars?run=run000"
                                "&tag=tag00%2Ft&samples=1000"))
        sat = wrk(lua, port, a.duration, 32, False)
        paced = wrk(lua, port, a.duration, 10, True)
    finally:
        p.terminate()
        p.wait()

    print()
    print("| what | measured | target |")
    print("| --- | ---: | ---: |")
    print("| time to first byte (/data/runs) | %.3f s | <= 2 s |" % ttfb)
    print("| all data loaded (%d points, %.2f GB) | %.2f s | <= 3 s |"
          % (prog["points"], prog["bytes_total"] / 1e9, t_all))
    print("| load rate | %.0f MB/s | |" % (prog["bytes_total"] / 1e6 / t_all))
    print("| CPU time spent loading (user+sys, all threads) | %.2f s | |"
          % load_cpu)
    print("| resident memory | %.0f MB (empty server %.0f MB) | |"
          % (rss / 1e6, base_rss / 1e6))
    print("| memory per point | %.1f B | <= 24 B |"
          % ((rss - base_rss) / max(prog["points"], 1)))
    print("| scalars?samples=1000 answer | %d points | |" % len(sample))
    print("| wrk saturated, 32 conns: p50 / p99 | %.2f / %.2f ms | |"
          % (sat["p50_ms"], sat["p99_ms"]))
    print("| wrk saturated: requests/s | %.0f | >= 1000 |" % sat["rps"])
    print("| wrk paced ~1000 req/s, 10 conns: p50 / p99 | %.2f / %.2f ms "
          "| p99 <= 5 ms |" % (paced["p50_ms"], paced["p99_ms"]))
    print("| wrk paced: requests/s | %.0f | |" % paced["rps"])
    print("| machine load average (1 min) at the end | %.2f on %d CPUs | |"
          % (os.getloadavg()[0], os.cpu_count()))
    if sat["non2xx"] or paced["non2xx"]:
        print("WARNING: non-2xx answers: %d / %d"
              % (sat["non2xx"], paced["non2xx"]))


if __name__ == "__main__":
    sys.exit(main())
