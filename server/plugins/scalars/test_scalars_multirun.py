"""The batched scalars routes (/data/plugin/scalars/multirun and /nearest)
against the per-series route and a numpy computation, on a sweep with
NaN/Inf, spikes and ragged step sets.

usage: test_scalars_multirun.py TFBOARD"""
import math
import os
import random
import re
import struct
import sys
import tempfile
import urllib.parse

import numpy as np

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, record, scalars_summary  # noqa: E402

TFBOARD = sys.argv[1]
TAG = "loss"


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def make_sweep(logdir, n_runs, seed=7):
    """Writes n_runs runs of tag loss (and acc in even runs only) with
    ragged step sets; returns {run: [(wall, step, value)]} of loss as
    float32, the numbers the server holds."""
    rng = random.Random(seed)
    truth = {}
    for i in range(n_runs):
        run = "lr_%g/seed_%d" % ([0.1, 0.01, 0.001][i % 3], i)
        d = os.path.join(logdir, run)
        os.makedirs(d)
        start = rng.randrange(0, 40)
        stride = rng.choice([1, 2, 3, 7])
        n = rng.randrange(30, 400)
        pts = []
        with open(os.path.join(d, "events.out.tfevents.1.h"), "wb") as f:
            f.write(record(event(1000.0 + i, file_version="brain.Event:2")))
            for k in range(n):
                step = start + k * stride + (rng.randrange(0, 3) if stride > 2
                                             else 0)
                v = 2.0 / (1 + 0.01 * step) + rng.gauss(0, 0.05) + 0.3 * (i % 5)
                if rng.random() < 0.01:
                    v *= 50  # a spike
                if i % 11 == 3 and k == n // 2:
                    v = float("nan")
                if i % 13 == 4 and k == n // 3:
                    v = float("inf") if k % 2 else float("-inf")
                wall = 1000.0 + i + step * 0.25
                pairs = [(TAG, v)]
                if i % 2 == 0:
                    pairs.append(("acc", 1 - v))
                f.write(record(event(wall, step,
                                     summary=scalars_summary(pairs))))
                pts.append((wall, step, f32(v)))
        truth[run] = pts
    return truth


def q(**params):
    return "?" + urllib.parse.urlencode(params, doseq=True)


def same_number(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a == b


def value_at(pts, step):
    """The bands' rule: the last point at or before step, within the
    run's own span."""
    if not pts or step < pts[0][1] or step > pts[-1][1]:
        return None
    last = None
    for p in pts:
        if p[1] <= step:
            last = p
        else:
            break
    return last


def test_lines_equal_per_series():
    with tempfile.TemporaryDirectory() as logdir:
        truth = make_sweep(logdir, 40)
        with Server(TFBOARD, logdir) as srv:
            srv.wait_loaded()
            for samples in (7, 60, 1000):
                m = srv.json("/data/plugin/scalars/multirun" +
                             q(tag=TAG, samples=samples, summary="lines"))
                assert m["mode"] == "lines" and m["tag"] == TAG
                assert m["runs"] == len(truth), m["runs"]
                assert sorted(m["series"]) == sorted(truth)
                for run in truth:
                    one = srv.json("/data/plugin/scalars/scalars" +
                                   q(run=run, tag=TAG, samples=samples))
                    assert m["series"][run] == one, (run, samples)
                    if samples >= 1000:
                        assert len(one) == len(truth[run])
            # auto is lines up to 200 runs
            m = srv.json("/data/plugin/scalars/multirun" + q(tag=TAG))
            assert m["mode"] == "lines"
            # non-finite values are the quoted strings
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, samples=1000, summary="lines"))
            texts = {p[2] for s in m["series"].values() for p in s
                     if isinstance(p[2], str)}
            assert texts and texts <= {"NaN", "Infinity", "-Infinity"}, texts
            # only runs with the tag: acc is in even runs only
            a = srv.json("/data/plugin/scalars/multirun" +
                         q(tag="acc", summary="lines"))
            assert a["runs"] == (len(truth) + 1) // 2
            z = srv.json("/data/plugin/scalars/multirun" +
                         q(tag="nope", summary="lines"))
            assert z["runs"] == 0 and z["series"] == {}


def test_run_selection():
    with tempfile.TemporaryDirectory() as logdir:
        truth = make_sweep(logdir, 30)
        names = sorted(truth)
        with Server(TFBOARD, logdir) as srv:
            srv.wait_loaded()
            for rx in ("seed_1", "^lr_0\\.1/", "seed_(2|3)$", "0\\.0+1/seed_[0-9]*5$",
                       "SEED", "."):
                m = srv.json("/data/plugin/scalars/multirun" +
                             q(tag=TAG, run_regex=rx, summary="lines",
                               samples=5))
                want = sorted(r for r in names if re.search(rx, r))
                assert sorted(m["series"]) == want, (rx, sorted(m["series"]))
                assert m["runs"] == len(want)
                nb = srv.json("/data/plugin/scalars/nearest" +
                              q(tag=TAG, step=100, value=1.0, k=1000,
                                run_regex=rx))
                assert {r["run"] for r in nb["runs"]} <= set(want)
            # repeated run params, in request order, duplicates and
            # unknown runs left out; intersected with a regex
            pick = [names[5], names[2], "no/such", names[5], names[9]]
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, run=pick, summary="lines", samples=5))
            assert list(m["series"]) == [names[5], names[2], names[9]]
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, run=pick, run_regex=re.escape(names[2]),
                           summary="lines"))
            assert list(m["series"]) == [names[2]]
            for bad in ("(", "a{2,1}", "[z-a]"):
                st, ct, body = srv.get("/data/plugin/scalars/multirun",
                                       tag=TAG, run_regex=bad)
                assert st == 400 and b"run_regex" in body, (bad, st, body)
            for params in ({"tag": TAG, "summary": "dots"},
                           {"tag": TAG, "samples": "1"},
                           {"summary": "lines"}):
                st, _, _ = srv.get("/data/plugin/scalars/multirun", **params)
                assert st == 400, params
            st, _, _ = srv.get("/data/plugin/scalars/nearest", tag=TAG,
                               step=1, value="nan")
            assert st == 400


def test_bands_against_numpy():
    with tempfile.TemporaryDirectory() as logdir:
        truth = make_sweep(logdir, 45)
        with Server(TFBOARD, logdir) as srv:
            srv.wait_loaded()
            hl = sorted(truth)[17]
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, summary="bands", samples=150, k=3,
                           highlight=hl))
    assert m["mode"] == "bands" and m["runs"] == 45
    b = m["bands"]
    steps = b["step"]
    s0 = min(p[0][1] for p in truth.values())
    s1 = max(p[-1][1] for p in truth.values())
    assert steps[0] == s0 and steps[-1] == s1
    assert len(steps) == 150 and steps == sorted(set(steps))
    nonfinite_first = {}
    for run, pts in truth.items():
        for p in pts:
            if not math.isfinite(p[2]):
                nonfinite_first[run] = p[1]
                break
    assert m["nonfinite"] == nonfinite_first
    for i, s in enumerate(steps):
        vals = []
        for pts in truth.values():
            p = value_at(pts, s)
            if p is not None and math.isfinite(p[2]):
                vals.append(p[2])
        assert b["n"][i] == len(vals), (s, b["n"][i], len(vals))
        if not vals:
            assert b["p50"][i] is None
            continue
        want = np.percentile(np.array(vals, dtype=np.float64),
                             [5, 25, 50, 75, 95])
        for name, w in zip(("p5", "p25", "p50", "p75", "p95"), want):
            got = b[name][i]
            assert abs(got - w) <= 1e-9 * max(1.0, abs(w)), (s, name, got, w)
    # best / worst by the last finite value
    last = {}
    for run, pts in truth.items():
        fin = [p[2] for p in pts if math.isfinite(p[2])]
        if fin:
            last[run] = fin[-1]
    order = sorted(last, key=lambda r: last[r])
    assert m["best"] == order[:3], (m["best"], order[:3])
    assert m["worst"] == order[::-1][:3]
    assert set(m["series"]) == set(order[:3]) | set(order[-3:]) | {hl}
    # the density counts every (bucket, run) value once
    d = m["density"]
    assert len(d["counts"]) == d["nx"] * d["ny"]
    assert sum(d["counts"]) == sum(b["n"])
    assert d["v0"] <= min(b["p5"][i] for i in range(len(steps)) if b["n"][i])
    assert d["step0"] == s0 and d["step1"] == s1


def ema(values, w):
    """TensorBoard's debiased EMA over the whole series, in doubles:
    non-finite values pass through and do not move it."""
    out, last, wn = [], 0.0, 1.0
    for x in values:
        if not math.isfinite(x):
            out.append(x)
            continue
        last = last * w + (1 - w) * x
        wn *= w
        out.append(last / (1 - wn))
    return out


def as_float(v):
    return float(v) if not isinstance(v, str) else \
        {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]


def test_smoothing_and_window_equal_per_series():
    """smoothing= and min_step/max_step on /multirun give, for every run,
    the single-series route's answers with the same parameters: the raw
    lines in series, the smoothed ones in smoothed."""
    with tempfile.TemporaryDirectory() as logdir:
        truth = make_sweep(logdir, 40, seed=11)
        with Server(TFBOARD, logdir) as srv:
            srv.wait_loaded()
            windows = [None, (60, 180), (100, None), (None, 45),
                       (170, 171), (5000, 6000)]
            for samples in (7, 60, 1000):
                for w in (0, 0.6, 0.95):
                    for win in windows:
                        extra = {}
                        if w:
                            extra["smoothing"] = w
                        if win and win[0] is not None:
                            extra["min_step"] = win[0]
                        if win and win[1] is not None:
                            extra["max_step"] = win[1]
                        m = srv.json("/data/plugin/scalars/multirun" +
                                     q(tag=TAG, samples=samples,
                                       summary="lines", **extra))
                        what = (samples, w, win)
                        assert m["mode"] == "lines" and \
                            m["runs"] == len(truth), what
                        assert sorted(m["series"]) == sorted(truth), what
                        assert ("smoothed" in m) == (w > 0), what
                        if w:
                            assert sorted(m["smoothed"]) == sorted(truth)
                        for run in truth:
                            sm = {k: v for k, v in extra.items()
                                  if k != "smoothing"}
                            raw = srv.json("/data/plugin/scalars/scalars" +
                                           q(run=run, tag=TAG,
                                             samples=samples, **sm))
                            assert m["series"][run] == raw, (run, what)
                            if w:
                                one = srv.json(
                                    "/data/plugin/scalars/scalars" +
                                    q(run=run, tag=TAG, samples=samples,
                                      **extra))
                                assert m["smoothed"][run] == one, (run, what)
            # The smoothed values are the EMA over the whole series, also
            # inside a window (so a zoom keeps the curve), and every step
            # of a window fits in 1000 samples here.
            w = 0.9
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, samples=1000, summary="lines",
                           smoothing=w, min_step=60, max_step=180))
            checked = 0
            for run, pts in truth.items():
                want = ema([p[2] for p in pts], w)
                inwin = [(p, e) for p, e in zip(pts, want)
                         if 60 <= p[1] <= 180]
                got = m["smoothed"][run]
                assert [r[1] for r in got] == [p[1] for p, _ in inwin], run
                assert [r[1] for r in m["series"][run]] == \
                    [p[1] for p, _ in inwin], run
                for r, (p, e) in zip(got, inwin):
                    g = as_float(r[2])
                    if math.isfinite(e):
                        assert abs(g - e) <= 1e-12 * max(1.0, abs(e)), \
                            (run, p, g, e)
                        checked += 1
                    else:
                        assert g == e or (math.isnan(g) and math.isnan(e))
                    assert r[0] == p[0]
            assert checked > 1000, checked
            # Bands: the lines it carries come smoothed too; a step window
            # is for lines only.
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, summary="bands", samples=80, k=2,
                           smoothing=0.6))
            assert m["mode"] == "bands"
            assert sorted(m["smoothed"]) == sorted(m["series"])
            for run in m["series"]:
                one = srv.json("/data/plugin/scalars/scalars" +
                               q(run=run, tag=TAG, samples=80,
                                 smoothing=0.6))
                assert m["smoothed"][run] == one, run
            for params in ({"summary": "bands", "min_step": 3},
                           {"summary": "bands", "max_step": 3},
                           {"smoothing": 1}, {"smoothing": -0.1},
                           {"smoothing": "x"}, {"min_step": "1.5"}):
                st, _, body = srv.get("/data/plugin/scalars/multirun",
                                      tag=TAG, **params)
                assert st == 400, (params, st, body[:300])
                assert b"min_step" in body or b"max_step" in body or \
                    b"smoothing" in body, (params, body[:300])


def test_auto_bands_and_nearest():
    with tempfile.TemporaryDirectory() as logdir:
        truth = make_sweep(logdir, 210, seed=3)
        with Server(TFBOARD, logdir) as srv:
            srv.wait_loaded()
            m = srv.json("/data/plugin/scalars/multirun" + q(tag=TAG))
            assert m["mode"] == "bands" and m["runs"] == 210
            assert len(m["series"]) <= 10
            # auto turned bands: a step window is refused, not ignored
            st, _, body = srv.get("/data/plugin/scalars/multirun", tag=TAG,
                                  min_step=10, max_step=20)
            assert st == 400 and b"summary=lines" in body, (st, body[:300])
            st, _, _ = srv.get("/data/plugin/scalars/multirun", tag=TAG,
                               min_step=10, max_step=20, summary="lines",
                               samples=50)
            assert st == 200
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, run_regex="seed_1[0-9]$"))
            assert m["mode"] == "lines" and m["runs"] == 10
            # lines forced over every run: fine at this size
            m = srv.json("/data/plugin/scalars/multirun" +
                         q(tag=TAG, summary="lines", samples=50))
            assert m["mode"] == "lines" and len(m["series"]) == 210
            step, value = 150, 1.3
            nb = srv.json("/data/plugin/scalars/nearest" +
                          q(tag=TAG, step=step, value=value, k=7))
    cands = []
    for run, pts in truth.items():
        p = value_at(pts, step)
        if p is not None and math.isfinite(p[2]):
            cands.append((abs(p[2] - value), run, p))
    cands.sort(key=lambda c: c[0])
    got = nb["runs"]
    assert len(got) == 7
    assert [g["run"] for g in got] == [c[1] for c in cands[:7]], got
    for g, c in zip(got, cands):
        assert g["step"] == c[2][1] and abs(g["value"] - c[2][2]) < 1e-6


run_tests([test_lines_equal_per_series, test_run_selection,
           test_bands_against_numpy, test_smoothing_and_window_equal_per_series,
           test_auto_bands_and_nearest])
