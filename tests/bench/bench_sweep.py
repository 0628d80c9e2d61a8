#!/usr/bin/env python3
"""Sweep benchmark (issue 18): the loader's rate and per-file cost, memory
per point and the batched scalars route, on two generated logdirs:

  big    20 runs x 50 tags x 10,000 steps (10 M points, ~460 MB): load
         rate next to `cat` of the same bytes in the same run;
  sweep  10,000 runs x 10 tags x 200 steps (20 M points in 10,000 files):
         time until all data is served, memory, and the multirun route's
         time for one chart of 10,000 runs.

For each: `cat` of the files (once, then again warm), tfboard's time until
/data/plugin/core/progress says done (and its CPU time), resident memory
and bytes per point (RSS above an empty server's, over the points). Where
TensorBoard is importable, the same load is timed for it (it is not on
this machine).

usage: bench_sweep.py TFBOARD GEN_LOGDIR [--dir DIR] [--only big|sweep]
                      [--runs N --tags N --steps N] [--keep-serving]
                      [--no-routes]
--dir keeps the generated logdirs for the next run (they take a minute to
write); --keep-serving leaves tfboard serving the sweep after the figures
and prints its URL, for the browser's time-to-first-chart measure
(tests/webui), until interrupted. serve() is the same hook for a script.
It never fails on a time; it prints numbers."""
import argparse
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) * 1024


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, timeout=60):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                timeout=timeout) as r:
        return r.read()


def serve(tfboard, logdir, *extra):
    """Starts tfboard on logdir (no reload) and returns (process, port,
    start time) once it accepts connections. The caller stops it."""
    port = free_port()
    t0 = time.time()
    p = subprocess.Popen([tfboard, "--logdir", logdir, "--port", str(port),
                          "--reload_interval", "0", "--quiet"] + list(extra),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time() + 30
    while time.time() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.005)
    return p, port, t0


def wait_done(port, t0, timeout=600):
    while time.time() - t0 < timeout:
        p = json.loads(get(port, "/data/plugin/core/progress?profile=1"))
        if p["done"]:
            return time.time() - t0, p
        time.sleep(0.02)
    raise SystemExit("tfboard did not finish loading in %d s" % timeout)


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def event_files(logdir):
    out = []
    for root, _, files in os.walk(logdir):
        out += [os.path.join(root, f) for f in files if "tfevents" in f]
    return sorted(out)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cat_seconds(files):
    """cat of the files to /dev/null (in batches under ARG_MAX): wall and
    CPU seconds."""
    t, c = time.time(), children_cpu()
    for i in range(0, len(files), 2000):
        subprocess.run(["cat"] + files[i:i + 2000], stdout=subprocess.DEVNULL,
                       check=True)
    return time.time() - t, children_cpu() - c


def generate(gen, d, runs, tags, steps):
    mark = os.path.join(d, ".generated")
    want = "%d %d %d" % (runs, tags, steps)
    if os.path.exists(mark) and open(mark).read() == want:
        return
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    t = time.time()
    subprocess.run([gen, "scalars", d, str(runs), str(tags), str(steps)],
                   check=True)
    with open(mark, "w") as f:
        f.write(want)
    print("  generated %s (%d x %d x %d) in %.1f s" % (d, runs, tags, steps,
                                                     time.time() - t))


def baseline_rss(tfboard):
    """RSS of a server on an empty logdir: the part no point pays for."""
    with tempfile.TemporaryDirectory() as empty:
        p, port, t0 = serve(tfboard, empty)
        try:
            wait_done(port, t0)
            return rss_bytes(p.pid)
        finally:
            stop(p)


# Goals by shape (issue 28 item 1): 100,000 runs x 5 tags x 100 steps,
# all data served in 10 s at 12 B a point (it was 22.9 s and 27.0 B).
GOALS = {(100000, 5, 100): (10.0, 12.0)}


def measure_load(tfboard, logdir, label, base_rss, goal=None):
    files = event_files(logdir)
    nbytes = sum(os.path.getsize(f) for f in files)
    c1, _ = cat_seconds(files)
    c2, cat_cpu = cat_seconds(files)
    p, port, t0 = serve(tfboard, logdir)
    try:
        secs, prog = wait_done(port, t0)
        cpu = cpu_seconds(p.pid)
        rss = rss_bytes(p.pid)
    except BaseException:
        stop(p)
        raise
    pts = prog["points"]
    print("%s: %d files, %.1f MB, %d points" % (label, len(files),
                                                 nbytes / 1e6, pts))
    print("  cat (first / warm)        %7.3f s %8.0f MB/s / %7.3f s %8.0f MB/s"
          % (c1, nbytes / 1e6 / c1, c2, nbytes / 1e6 / c2))
    print("  tfboard all data served   %7.3f s %8.0f MB/s  (cpu %.2f s, "
          "%.1f cores busy, %.1f us a file)%s"
          % (secs, nbytes / 1e6 / secs, cpu, cpu / secs,
             secs / len(files) * 1e6,
             "  goal <= %.0f s" % goal[0] if goal else ""))
    # On a shared machine wall time says more about the neighbours than
    # about us: the CPU-bound rates (bytes over CPU seconds) say what a
    # core does, and what the machine's cores would do if they were ours.
    ncpu = os.cpu_count() or 1
    print("  per CPU second            cat %8.0f MB/s, tfboard %8.0f MB/s a "
          "core; %d cores: %.0f MB/s, all data in %.2f s"
          % (nbytes / 1e6 / max(cat_cpu, 1e-9), nbytes / 1e6 / cpu, ncpu,
             nbytes / 1e6 / cpu * ncpu, cpu / ncpu))
    print("  load average              %.1f on %d cores"
          % (os.getloadavg()[0], ncpu))
    print("  tfboard RSS               %7.1f MB  %.1f B a point (above an "
          "empty server's %.1f MB)%s" % (rss / 1e6, (rss - base_rss) / pts,
                                         base_rss / 1e6,
                                         "  goal <= %.0f B" % goal[1]
                                         if goal else ""))
    print_profile(prog.get("profile"))
    return p, port


# The loader's own account of a file's cost (/data/plugin/core/progress
# "profile", server/API.md "Loading and reloading"): thread time a file,
# by phase, summed over the loader's threads.
PROFILE_PHASES = [
    ("scan_ns", "scan (listing, grouping)"),
    ("runs_ns", "  of it: runs and files registered"),
    ("stat_ns", "stat"),
    ("open_ns", "open"),
    ("read_ns", "read"),
    ("parse_ns", "parse (framing, protobuf)"),
    ("index_ns", "index (into series; sampled)"),
    ("tags_ns", "tags interned"),
    ("series_ns", "series created"),
    ("finish_ns", "run finish (notes, infos, trim)"),
    ("progress_ns", "progress published"),
]


def print_profile(prof):
    if not prof or not prof.get("files"):
        print("  per-file profile          (not served by this tfboard)")
        return
    files = prof["files"]
    total = sum(prof[k] for k, _ in PROFILE_PHASES if k != "runs_ns")
    print("  per-file cost (thread time, %d file reads, %d passes): %.1f us "
          "a file" % (files, prof["passes"], total / files / 1e3))
    for key, label in PROFILE_PHASES:
        print("    %-34s %8.2f us  %5.1f %%"
              % (label, prof[key] / files / 1e3,
                 100.0 * prof[key] / max(total, 1)))


def time_route(port, path, reps=5):
    ts, size = [], 0
    for _ in range(reps):
        t = time.time()
        body = get(port, path)
        ts.append(time.time() - t)
        size = len(body)
    return statistics.median(ts), min(ts), size


def measure_routes(port, runs):
    tag = "tag00/t"
    print("  routes (median of 5 / best, answer size):")
    for label, params in [
            ("multirun %d runs (auto: bands)" % runs, {"tag": tag}),
            ("multirun %d runs, samples=500" % runs,
             {"tag": tag, "samples": 500}),
            ("multirun run_regex 100 runs (lines)",
             {"tag": tag, "run_regex": "^run[0-9]*00$"}),
            # a smoothed chart, then zoomed: still one request each
            ("  the same, smoothing=0.6",
             {"tag": tag, "run_regex": "^run[0-9]*00$", "smoothing": 0.6}),
            ("  the same, smoothed, steps 50..150",
             {"tag": tag, "run_regex": "^run[0-9]*00$", "smoothing": 0.6,
              "min_step": 50, "max_step": 150}),
            ("nearest over %d runs" % runs,
             {"tag": tag, "step": 100, "value": 0.5, "k": 5}),
            ("scalars one series", {"tag": tag, "run": "run000",
                                    "samples": 1000})]:
        route = ("nearest" if "step" in params else
                 "scalars" if "run" in params else "multirun")
        path = "/data/plugin/scalars/%s?%s" % (route,
                                               urllib.parse.urlencode(params))
        try:
            med, best, size = time_route(port, path)
        except urllib.error.HTTPError as e:  # an older tfboard, to compare
            print("    %-38s HTTP %d" % (label, e.code))
            continue
        print("    %-38s %7.1f ms / %7.1f ms  %8.1f kB"
              % (label, med * 1e3, best * 1e3, size / 1e3))


def measure_tensorboard(logdir, label):
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        print("  TensorBoard: not importable here; not measured")
        return
    port = free_port()
    t0 = time.time()
    p = subprocess.Popen([sys.executable, "-m", "tensorboard.main",
                          "--logdir", logdir, "--port", str(port),
                          "--reload_interval", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # TensorBoard has no "done" flag: wait until the run list is
        # complete and a second ask gives the same tags answer.
        n_runs = len({os.path.dirname(f) for f in event_files(logdir)})
        last = None
        while time.time() - t0 < 3600:
            try:
                body = get(port, "/data/plugin/scalars/tags")
                tags = json.loads(body)
                if len(tags) >= n_runs and body == last:
                    break
                last = body
            except OSError:
                pass
            time.sleep(0.5)
        secs = time.time() - t0
        print("  TensorBoard %s: all runs listed after %.1f s, RSS %.1f MB"
              % (label, secs, rss_bytes(p.pid) / 1e6))
    finally:
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfboard")
    ap.add_argument("gen_logdir")
    ap.add_argument("--dir")
    ap.add_argument("--only", choices=["big", "sweep"])
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--tags", type=int, default=10)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--keep-serving", action="store_true")
    ap.add_argument("--no-routes", action="store_true",
                    help="the load's figures only (no route timings)")
    a = ap.parse_args()
    tmp = None
    d = a.dir
    if not d:
        tmp = tempfile.mkdtemp(prefix="tfb_bench_sweep_")
        d = tmp
    try:
        base = baseline_rss(a.tfboard)
        if a.only in (None, "big"):
            big = os.path.join(d, "big")
            generate(a.gen_logdir, big, 20, 50, 10000)
            p, _ = measure_load(a.tfboard, big, "big logdir", base)
            stop(p)
            measure_tensorboard(big, "big logdir")
        if a.only in (None, "sweep"):
            sweep = os.path.join(d, "sweep")
            generate(a.gen_logdir, sweep, a.runs, a.tags, a.steps)
            p, port = measure_load(a.tfboard, sweep,
                                   "sweep of %d runs" % a.runs, base,
                                   GOALS.get((a.runs, a.tags, a.steps)))
            try:
                if not a.no_routes:
                    measure_routes(port, a.runs)
                if a.keep_serving:
                    print("serving the sweep at http://127.0.0.1:%d/ "
                          "(Ctrl-C stops)" % port, flush=True)
                    p.wait()
            except KeyboardInterrupt:
                pass
            finally:
                stop(p)
            measure_tensorboard(sweep, "sweep")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
