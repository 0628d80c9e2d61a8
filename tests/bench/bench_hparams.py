"""hparams routes at scale (issue 21 item 4): one run of 40,000 hparams
(a 1.3 MB session record, as the red-team probe), the time of
/data/plugin/hparams/runs and /experiment, and the latency of /data/runs
while two /hparams/runs requests hold the HTTP threads.

usage: bench_hparams.py TFBOARD [N_HPARAMS]"""
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from tfb_server_util import Server  # noqa: E402
import hparams_gen as G  # noqa: E402

TFBOARD = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 40000


def fetch(srv, path):
    # no 10 s client timeout here: the quadratic code took 15 s a request
    with urllib.request.urlopen(srv.url(path), timeout=600) as r:
        assert r.status == 200
        return r.read()


def timed(srv, path):
    t = time.time()
    fetch(srv, path)
    return time.time() - t


def main():
    tmp = tempfile.mkdtemp(prefix="tfb_bench_hp_")
    try:
        hp = G.many(N)
        G.write_run(tmp, "big", start=G.session_start(hp),
                    exp=G.experiment([n for n, _ in hp]))
        G.write_run(tmp, "small", start=G.session_start([("lr", 0.1)]))
        size = os.path.getsize(os.path.join(tmp, "big",
                                            "events.out.tfevents.1.h.1.0"))
        with Server(TFBOARD, tmp, "--reload_interval", "0",
                    "--http_threads", "2") as srv:
            srv.wait_loaded()
            idle = min(timed(srv, "/data/runs") for _ in range(5))
            runs = sorted(timed(srv, "/data/plugin/hparams/runs")
                          for _ in range(3))
            exp = sorted(timed(srv, "/data/plugin/hparams/experiment")
                         for _ in range(3))
            lat, done = [], []

            def heavy():
                try:
                    fetch(srv, "/data/plugin/hparams/runs")
                except OSError as e:  # the old server dropped some
                    print("  a /hparams/runs request failed: %r" % e)
                finally:
                    done.append(1)
            ts = [threading.Thread(target=heavy) for _ in range(2)]
            for t in ts:
                t.start()
            time.sleep(0.01)
            while len(done) < 2:
                try:
                    lat.append(timed(srv, "/data/runs"))
                except OSError as e:
                    print("  a /data/runs request failed: %r" % e)
                    lat.append(float("inf"))
            for t in ts:
                t.join()
        print("hparams: %d in one run (%.1f MB file)" % (N, size / 1e6))
        print("  /data/plugin/hparams/runs:       %8.1f ms (median of 3)"
              % (runs[1] * 1000))
        print("  /data/plugin/hparams/experiment: %8.1f ms (median of 3)"
              % (exp[1] * 1000))
        print("  /data/runs idle:                 %8.1f ms" % (idle * 1000))
        print("  /data/runs during 2 hparams/runs (2 HTTP threads): max "
              "%.1f ms over %d requests" % (max(lat) * 1000, len(lat)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
