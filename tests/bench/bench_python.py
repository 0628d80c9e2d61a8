#!/usr/bin/env python3
"""Python add_scalar cost (numbers only; never fails on a time).

- tfboard.SummaryWriter.add_scalar: ns per call of the calling thread's
  CPU time (time.thread_time: steadier than wall time on a shared
  machine), the median of REPEATS runs, next to the goal (GOAL_NS) and
  to the floor: the same ctypes call with no Python around it
  (tfb_scalar_id_ffi, add_scalar's hot call), and the by-name call
  (tfb_scalar through ctypes, what add_scalar called before);
- 4 threads on one writer (wall time / total calls);
- the same work done by a pure-Python protobuf-encoding writer:
  torch.utils.tensorboard's SummaryWriter when it can be imported (it
  needs the tensorboard package), else a minimal writer over the python
  protobuf module (Event messages from tests/proto, TFRecord framing with a
  table-driven CRC-32C in Python, as TensorBoard's own no-TensorFlow
  fallback does), else the ratio is reported as unavailable.
Run with TFBOARD_LIB and PYTHONPATH=python set (meson does)."""
import importlib
import os
import struct
import subprocess
import sys
import tempfile
import statistics
import threading
import time

ROOT = os.environ.get("TFB_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.dirname(
                          os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tfboard  # noqa: E402

N = int(os.environ.get("TFB_BENCH_N", "100000"))


REPEATS = 7
GOAL_NS = 500  # issue 28: add_scalar <= 500 ns a call


def per_call_ns(fn, n, clock=time.thread_time_ns):
    """The median of REPEATS runs of fn(n), in ns a call of `clock`."""
    runs = []
    for _ in range(REPEATS):
        t0 = clock()
        fn(n)
        runs.append((clock() - t0) / n)
    return statistics.median(runs)


def bench_tfboard(d):
    from tfboard._lib import lib
    with tfboard.SummaryWriter(d) as w:
        add = w.add_scalar

        def run(n):
            for i in range(n):
                add("loss", 0.5, i)
        run(10000)  # warm-up: tag cache, buffers
        # The floors, on the same writer: the hot call alone (what
        # add_scalar's Python adds is the difference) and the by-name one.
        fast, cell, tid = w._fast, w._pcell, w._ids["loss"]
        h, by_name = w._w, lib.tfb_scalar

        def bare(n):
            for i in range(n):
                fast(0.5, cell, tid, i)

        def bare_by_name(n):
            for i in range(n):
                by_name(h, b"loss", 0.5, i)
        # Interleaved, so that load from elsewhere falls on all three.
        one, floor, floor_name = [], [], []
        for _ in range(3):
            one.append(per_call_ns(run, N))
            floor.append(per_call_ns(bare, N))
            floor_name.append(per_call_ns(bare_by_name, N))
        one, floor, floor_name = (statistics.median(x)
                                  for x in (one, floor, floor_name))

        def threaded(n):
            ts = [threading.Thread(target=run, args=(n // 4,))
                  for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        four = per_call_ns(threaded, N, time.perf_counter_ns)
    return one, floor, floor_name, four


# ---- a pure-Python protobuf writer --------------------------------------
def _crc_table():
    poly, t = 0x82F63B78, []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc_table()


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(b):
    c = crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def pure_python_writer(d):
    try:
        importlib.import_module("google.protobuf")
    except ImportError:
        return None
    os.makedirs(d, exist_ok=True)
    out = tempfile.mkdtemp(dir=d)
    pdir = os.path.join(ROOT, "tests", "proto")
    try:
        subprocess.run([os.environ.get("TFB_PROTOC") or "protoc", "-I", pdir,
                        "--python_out", out,
                        os.path.join(pdir, "event.proto")], check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    sys.path.insert(0, out)
    ev = importlib.import_module("event_pb2")

    class W:
        def __init__(self, path):
            self.f = open(path, "wb")

        def add_scalar(self, tag, value, step):
            e = ev.Event(wall_time=time.time(), step=step)
            e.summary.value.add(tag=tag, simple_value=value)
            data = e.SerializeToString()
            hdr = struct.pack("<Q", len(data))
            self.f.write(hdr + struct.pack("<I", masked(hdr)) + data +
                         struct.pack("<I", masked(data)))

        def close(self):
            self.f.close()
    return W(os.path.join(d, "events.out.tfevents.pure"))


def bench_reference(d):
    try:
        from torch.utils.tensorboard import SummaryWriter as TW
        w, what = TW(d), "torch.utils.tensorboard.SummaryWriter"
    except Exception:
        w = pure_python_writer(d)
        what = "pure-Python protobuf writer (python protobuf %s)" % (
            importlib.import_module("google.protobuf").__version__
            if w else "")
    if w is None:
        return None, "none (no tensorboard, no python protobuf)"
    n = max(1000, N // 10)

    def run(k):
        for i in range(k):
            w.add_scalar("loss", 0.5, i)
    run(1000)
    ns = per_call_ns(run, n)
    w.close()
    return ns, what


def main():
    with tempfile.TemporaryDirectory() as d:
        one, floor, floor_name, four = bench_tfboard(os.path.join(d, "tfb"))
        ref, what = bench_reference(os.path.join(d, "ref"))
    print("median of %d runs of %d calls, thread CPU time" % (REPEATS, N))
    print("python add_scalar (tfboard, 1 thread): %.0f ns/call vs goal "
          "<= %d ns (%s)" % (one, GOAL_NS,
                             "met" if one <= GOAL_NS else "NOT met"))
    print("  floor, the bare ctypes call (tfb_scalar_id_ffi): %.0f ns/call; "
          "add_scalar's Python: %.0f ns" % (floor, one - floor))
    print("  by-name ctypes call (tfb_scalar, argtypes): %.0f ns/call"
          % floor_name)
    print("python add_scalar (tfboard, 4 threads): %.0f ns/call "
          "(wall time / total calls)" % four)
    if ref is None:
        print("reference writer: %s" % what)
    else:
        print("reference add_scalar: %.0f ns/call (%s)" % (ref, what))
        print("ratio reference / tfboard: %.1fx" % (ref / one))


if __name__ == "__main__":
    main()
