"""add_scalar's fast call (tfb_scalar_id_ffi, python/tfboard/writer.py):
what it writes is what the general path writes, read back exactly (the
value as float32, as TensorBoard stores it; the step; the wall time), for
every kind of value and step, across the tag cache's bound, after close
and with the same errors as before."""
import math
import threading
import time

import numpy as np
import pytest

from conftest import event_file, records

import tfboard
from tfboard import writer as tfw


def scalars(pb, d):
    """[(tag, step, simple_value, wall_time, has_metadata)] in file order."""
    out = []
    for payload in records(event_file(str(d))):
        e = pb.event.Event()
        e.ParseFromString(payload)
        if e.HasField("summary"):
            for v in e.summary.value:
                out.append((v.tag, e.step, v.simple_value, e.wall_time,
                            v.HasField("metadata")))
    return out


def f32(x):
    return float(np.float32(x))


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


VALUES = [0.5, 1.0 / 3, -2.5e-8, 3.4028234663852886e38, 1e-45, 0.0, -0.0,
          7, -3, 2 ** 40, True, math.inf, -math.inf, math.nan,
          np.float16(1.5), np.float32(0.1), np.float64(0.1),
          np.int32(-9), np.int64(2 ** 33), np.uint8(255), np.bool_(True)]
STEPS = [0, 1, -1, 2 ** 30 - 1, -2 ** 30 + 1, 2 ** 30, -2 ** 30, 2 ** 31 - 1, -2 ** 31, 2 ** 31, -2 ** 31 - 1,
         2 ** 63 - 1, -2 ** 63, None, np.int64(12), np.int32(-4), 5.0, "6"]


def test_values_and_steps_exact(pb, tmp_path):
    """Every value kind at every step kind, each tag logged again and
    again (the first call per tag takes the general path, later ones the
    fast call unless the step or wall time needs the general one)."""
    want = []
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for k, v in enumerate(VALUES):
            for s in STEPS:
                tag = "v%d" % k
                before = time.time()
                w.add_scalar(tag, v, s)
                after = time.time()
                step = 0 if s is None else int(s)
                want.append((tag, step, f32(float(v)), before, after))
        # An explicit wall time is written as given.
        w.add_scalar("v0", 0.25, 3, walltime=1700000000.5)
        w.add_scalar("v0", 0.75, 4, walltime=np.float64(1.25))
    got = scalars(pb, tmp_path)
    assert len(got) == len(want) + 2
    seen = set()
    for (tag, step, val, wall, meta), (wtag, wstep, wval, b, a) in zip(
            got, want):
        assert (tag, step) == (wtag, wstep)
        assert same(val, wval), (tag, step, val, wval)
        # The writer's clock (wallclock.h: within 1 ms of realtime).
        assert b - 1e-3 <= wall <= a + 1e-3, (tag, step, wall, b, a)
        assert meta == (tag not in seen)
        seen.add(tag)
    assert got[-2][1:4] == (3, 0.25, 1700000000.5)
    assert got[-1][1:4] == (4, 0.75, 1.25)


def test_torch_scalars_exact(pb, tmp_path):
    torch = pytest.importorskip("torch")
    vals = [torch.tensor(0.1), torch.tensor(0.1, dtype=torch.float64),
            torch.tensor(3), torch.tensor(1.5, dtype=torch.bfloat16),
            torch.tensor(float("nan")), torch.tensor([2.5]),
            torch.tensor(-7, dtype=torch.int8),
            torch.tensor(0.5, requires_grad=True) * 3]
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for i in range(3):  # the tag's first call, then the fast call
            for k, v in enumerate(vals):
                w.add_scalar("t%d" % k, v, i)
    got = scalars(pb, tmp_path)
    want = [("t%d" % k, i, f32(v.item())) for i in range(3)
            for k, v in enumerate(vals)]
    assert len(got) == len(want)
    for g, x in zip(got, want):
        assert g[:2] == x[:2] and same(g[2], x[2]), (g, x)


def test_unicode_tags(pb, tmp_path):
    tags = ["损失/训练", "émoji 🚀/loss", "a" * 300, "e\u0301", "\u00e9",
            "tab\tand newline\n", "/", ""]
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for s in range(3):
            for k, t in enumerate(tags):
                w.add_scalar(t, k + s / 4, s)
    got = scalars(pb, tmp_path)
    assert [(g[0], g[1], g[2]) for g in got] == [
        (t, s, f32(k + s / 4)) for s in range(3) for k, t in enumerate(tags)]


def test_ten_thousand_tags_past_the_cache_bound(pb, tmp_path):
    """More distinct tags than TAG_CACHE_MAX: those past the bound are
    logged by name on every call, exactly as the others; the caches stop
    at the bound."""
    n = 10000
    assert n > tfw.TAG_CACHE_MAX
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for s in range(2):
            for k in range(n):
                w.add_scalar("tag/%05d" % k, k + s * 0.5, s)
        assert len(w._ids) == tfw.TAG_CACHE_MAX
        assert len(w._tags) == tfw.TAG_CACHE_MAX
    got = scalars(pb, tmp_path)
    assert [(g[0], g[1], g[2], g[4]) for g in got] == [
        ("tag/%05d" % k, s, f32(k + s * 0.5), s == 0)
        for s in range(2) for k in range(n)]


def test_closed_writer(tmp_path):
    w = tfboard.SummaryWriter(str(tmp_path))
    w.add_scalar("a", 1.0, 0)
    w.add_scalar("a", 1.0, 1)  # "a" now takes the fast call
    w.close()
    for call in (lambda: w.add_scalar("a", 1.0, 2),
                 lambda: w.add_scalar("b", 1.0, 2),
                 lambda: w.add_scalar("a", 1.0, 2 ** 40),
                 lambda: w.add_scalar("a", 1.0, 2, walltime=5.0)):
        with pytest.raises(tfboard.TfbError, match="writer is closed") as e:
            call()
        assert e.value.code == -8
    w.close()  # twice is fine


def test_close_while_logging_loses_nothing(pb, tmp_path):
    """A thread logs through the fast call while another closes: each call
    either returned (and its value is in the file) or raised 'closed'."""
    for i in range(30):
        d = tmp_path / str(i)
        w = tfboard.SummaryWriter(str(d))
        w.add_scalar("x", 0.0, 0)
        done, errors = [0], []
        started = threading.Event()

        def log():
            s = 1
            started.set()
            try:
                while True:
                    w.add_scalar("x", float(s), s)
                    done[0] = s
                    s += 1
            except tfboard.TfbError as e:
                errors.append(e)

        t = threading.Thread(target=log)
        t.start()
        started.wait()
        time.sleep(0.001 * (i % 5))
        w.close()
        t.join()
        assert len(errors) == 1 and "closed" in str(errors[0])
        steps = [g[1] for g in scalars(pb, d)]
        assert steps == list(range(done[0] + 1))


@pytest.mark.parametrize("call, exc, match", [
    (lambda w: w.add_scalar(5, 1.0, 0), TypeError, "tag must be a str"),
    (lambda w: w.add_scalar(b"x", 1.0, 0), TypeError, "tag must be a str"),
    (lambda w: w.add_scalar(["x"], 1.0, 0), TypeError, "unhashable"),
    (lambda w: w.add_scalar("lo\0ss", 1.0, 0), ValueError, "NUL"),
    (lambda w: w.add_scalar("x", "abc", 1), ValueError, "could not convert"),
    (lambda w: w.add_scalar("x", None, 1), TypeError, "NoneType"),
    (lambda w: w.add_scalar("x", [1.0, 2.0], 1), TypeError, "list"),
    (lambda w: w.add_scalar("x", np.array([1.0, 2.0]), 1), (TypeError,
                                                            ValueError), ""),
    (lambda w: w.add_scalar("x", 1.0, 2 ** 64), ValueError, "int64"),
    (lambda w: w.add_scalar("x", 1.0, "s"), ValueError, ""),
    (lambda w: w.add_scalar("x", 1.0, 1, walltime="now"), ValueError,
     "could not convert"),
    (lambda w: w.add_scalar("x", 1.0, 1, new_style=True),
     NotImplementedError, "new_style"),
])
def test_wrong_types_same_errors(tmp_path, call, exc, match):
    """As before the fast call: for a tag already cached ("x") and not."""
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("x", 1.0, 0)
        w.add_scalar("x", 1.0, 0)
        with pytest.raises(exc, match=match):
            call(w)
        w.add_scalar("x", 2.0, 3)  # the writer still works
