"""Shared helpers for the Python package tests: event-file records, our
test protos compiled with protoc for the python protobuf module, and a
reference of what PyTorch's writer writes (from torch 1.13's
torch/utils/tensorboard/summary.py behaviour: simple_value scalars,
np.histogram over TensorFlow's default edges, text under
<tag>/text_summary, the three hparams summaries)."""
import importlib
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.environ.get("TFB_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(
                          os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))


def records(path, run_end=False):
    """The payloads of every record of an event file; without run_end,
    less the end-of-run record that closing a libtfboard writer appends
    last (plugin tfboard_run_end, collector/run_end.h)."""
    data = open(path, "rb").read()
    out, off = [], 0
    while off + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        out.append(data[off + 12: off + 12 + n])
        off += 16 + n
    assert off == len(data)
    if not run_end and out and b"tfboard_run_end" in out[-1]:
        out.pop()
    return out


def event_file(d):
    fs = [f for f in os.listdir(d) if f.startswith("events.out.tfevents")]
    assert len(fs) == 1, (d, fs)
    return os.path.join(d, fs[0])


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    """Modules event_pb2 (tensorflow.Event) and hparams_pb2
    (tfbtest.HParamsEvent) compiled from tests/proto."""
    protoc = os.environ.get("TFB_PROTOC") or "protoc"
    try:
        importlib.import_module("google.protobuf")
    except ImportError:
        pytest.skip("python protobuf module missing")
    out = tmp_path_factory.mktemp("pb")
    pdir = os.path.join(ROOT, "tests", "proto")
    try:
        subprocess.run([protoc, "-I", pdir, "--python_out", str(out),
                        os.path.join(pdir, "event.proto"),
                        os.path.join(pdir, "hparams.proto")], check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("protoc missing")
    sys.path.insert(0, str(out))

    class M:
        event = importlib.import_module("event_pb2")
        hparams = importlib.import_module("hparams_pb2")
    return M


def tf_default_edges():
    """TensorFlow's default histogram edges, as PyTorch's writer builds
    them for bins='tensorflow': -1e20..-1e-12, 0, 1e-12..1e20, x1.1."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-x for x in reversed(pos)] + [0.0] + pos


def pytorch_histogram(values):
    """What PyTorch's add_histogram puts in HistogramProto, as a dict:
    min/max/num/sum/sum_squares and the non-empty buckets {right edge:
    count} (PyTorch lists the empty buckets between them too; TensorFlow's
    C++ writer, like libtfboard, collapses them)."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    counts, edges = np.histogram(v, bins=tf_default_edges())
    nz = {float(edges[i + 1]): float(c) for i, c in enumerate(counts) if c}
    return dict(min=v.min(), max=v.max(), num=float(v.size), sum=v.sum(),
                sum_squares=float(v.dot(v)), buckets=nz)


def our_histogram(h):
    nz = {b: c for b, c in zip(h.bucket_limit, h.bucket) if c}
    return dict(min=h.min, max=h.max, num=h.num, sum=h.sum,
                sum_squares=h.sum_squares, buckets=nz)


def assert_same_histogram(ours, ref):
    for k in ("min", "max", "num"):
        assert ours[k] == pytest.approx(ref[k], rel=1e-6), k
    for k in ("sum", "sum_squares"):
        assert ours[k] == pytest.approx(ref[k], rel=1e-5, abs=1e-9), k
    assert sorted(ours["buckets"]) == pytest.approx(sorted(ref["buckets"]),
                                                    rel=1e-12)
    assert [ours["buckets"][k] for k in sorted(ours["buckets"])] == \
        [ref["buckets"][k] for k in sorted(ref["buckets"])]
