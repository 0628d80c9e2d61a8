#!/usr/bin/env python3
"""Python add_scalar cost (numbers only; never fails on a time).

- tfboard.SummaryWriter.add_scalar: ns per call, one thread and 4 threads
  on one writer (ctypes releases the GIL around each call);
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
import threading
import time

ROOT = os.environ.get("TFB_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.dirname(
                          os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tfboard  # noqa: E402

N = int(os.environ.get("TFB_BENCH_N", "100000"))


REPEATS = 5


def per_call_ns(fn, n):
    """The best of REPEATS runs (the machine may be shared: the minimum is
    the figure least disturbed by other load)."""
    best = None
    for _ in range(REPEATS):
        t0 = time.perf_counter_ns()
        fn(n)
        ns = (time.perf_counter_ns() - t0) / n
        best = ns if best is None else min(best, ns)
    return best


def bench_tfboard(d):
    with tfboard.SummaryWriter(d) as w:
        add = w.add_scalar

        def run(n):
            for i in range(n):
                add("loss", 0.5, i)
        run(10000)  # warm-up: tag cache, buffers
        one = per_call_ns(run, N)

        def threaded(n):
            ts = [threading.Thread(target=run, args=(n // 4,))
                  for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        four = per_call_ns(threaded, N)
    return one, four


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
        one, four = bench_tfboard(os.path.join(d, "tfb"))
        ref, what = bench_reference(os.path.join(d, "ref"))
    print("best of %d runs of %d calls" % (REPEATS, N))
    print("python add_scalar (tfboard, 1 thread):  %.0f ns/call" % one)
    print("python add_scalar (tfboard, 4 threads): %.0f ns/call "
          "(wall time / total calls)" % four)
    if ref is None:
        print("reference writer: %s" % what)
    else:
        print("reference add_scalar: %.0f ns/call (%s)" % (ref, what))
        print("ratio reference / tfboard: %.1fx" % (ref / one))


if __name__ == "__main__":
    main()
