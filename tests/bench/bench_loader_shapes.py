#!/usr/bin/env python3
"""The loader's rate on three shapes of logdir (issue 28, item 3), each next
to `cat` of the same bytes in the same run and next to the goal (1.2 GB/s):

  20 runs x 50 tags x 10,000 steps    a few large runs
  100 runs x 50 tags x 2,000 steps    many medium runs
  1 run x 50 tags x 200,000 steps     one huge run (one file)

each 10 M scalar points, ~440 MB. The rate is "polled from outside", as a
user sees it: the time from starting tfboard until /data/plugin/core/
progress says done, over the event files' bytes. The poll asks every 20 ms
on one kept-alive connection (a browser's way; a new connection a poll
costs the server a connection's memory pool each time). CPU time
(user+sys of the server) is printed next to wall: on a shared machine
wall time says more about the neighbours than about the loader.

Give two tfboard binaries (a build from before a change, then after) and
each shape is measured A B A B... over --rounds rounds, the medians
printed side by side.

usage: bench_loader_shapes.py GEN_LOGDIR TFBOARD [TFBOARD_B]
                              [--dir DIR] [--rounds N] [--only SHAPE]
--dir keeps the generated logdirs for the next run. It never fails on a
time; it prints numbers."""
import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_sweep  # noqa: E402  (serve, stop, cat_seconds, generate)

GOAL_MBS = 1200.0
POLL_S = 0.02
SHAPES = [("20x50x10k", 20, 50, 10000),
          ("100x50x2k", 100, 50, 2000),
          ("1x50x200k", 1, 50, 200000)]


def load_once(tfboard, logdir, nbytes):
    """Seconds until the progress says done, and the server's CPU
    seconds."""
    p, port, t0 = bench_sweep.serve(tfboard, logdir)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while True:
            conn.request("GET", "/data/plugin/core/progress")
            prog = json.loads(conn.getresponse().read())
            if prog["done"]:
                secs = time.time() - t0
                break
            if time.time() - t0 > 600:
                raise SystemExit("tfboard did not finish loading in 600 s")
            time.sleep(POLL_S)
        cpu = bench_sweep.cpu_seconds(p.pid)
        conn.close()
    finally:
        bench_sweep.stop(p)
    return secs, cpu, prog["points"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gen_logdir")
    ap.add_argument("tfboard", nargs="+")
    ap.add_argument("--dir")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=[s[0] for s in SHAPES])
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="tfb_bench_loader_")
    ncpu = os.cpu_count() or 1
    try:
        print("goal: >= %.0f MB/s polled from outside, every shape; "
              "%d CPUs, load average %.1f" % (GOAL_MBS, ncpu,
                                               os.getloadavg()[0]))
        for i, b in enumerate(a.tfboard):
            print("  %s = %s" % ("AB"[i] if len(a.tfboard) > 1 else "tfboard",
                                 b))
        for name, runs, tags, steps in SHAPES:
            if a.only and a.only != name:
                continue
            logdir = os.path.join(d, name)
            bench_sweep.generate(a.gen_logdir, logdir, runs, tags, steps)
            files = bench_sweep.event_files(logdir)
            nbytes = sum(os.path.getsize(f) for f in files)
            bench_sweep.cat_seconds(files)  # into the page cache
            cat = [bench_sweep.cat_seconds(files) for _ in range(3)]
            cat_wall = min(c[0] for c in cat)
            cat_cpu = min(c[1] for c in cat)
            res = [[] for _ in a.tfboard]
            pts = 0
            for _ in range(a.rounds):
                for i, b in enumerate(a.tfboard):
                    secs, cpu, pts = load_once(b, logdir, nbytes)
                    res[i].append((secs, cpu))
            print("%s: %d files, %.1f MB, %d points" % (name, len(files),
                                                         nbytes / 1e6, pts))
            print("  %-10s wall %7.3f s %7.0f MB/s   cpu %6.3f s"
                  % ("cat", cat_wall, nbytes / 1e6 / cat_wall, cat_cpu))
            for i, r in enumerate(res):
                wall = statistics.median(x[0] for x in r)
                cpu = statistics.median(x[1] for x in r)
                rate = nbytes / 1e6 / wall
                label = ("tfboard " + "AB"[i]) if len(res) > 1 else "tfboard"
                print("  %-10s wall %7.3f s %7.0f MB/s   cpu %6.3f s  "
                      "(%.1f cores busy; %.0f MB per CPU second)  goal %.0f "
                      "MB/s: %s  [walls %s]"
                      % (label, wall, rate, cpu, cpu / wall,
                         nbytes / 1e6 / cpu, GOAL_MBS,
                         "met" if rate >= GOAL_MBS else "not met",
                         " ".join("%.2f" % x[0] for x in r)))
            print("  load average %.1f" % os.getloadavg()[0])
    finally:
        if not a.dir:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
