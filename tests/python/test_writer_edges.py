"""The Python binding's edges (issue 21 items 6, 7, 8, 11, 12; issue 17
item 5): steps outside int64, strings with a NUL, close() while other
threads log, add_hparams that raises, add_scalars keys that climb out,
and the binding's library handling (loaded on first use, struct sizes
from the library, version from the library, py.typed); issue 32 items 14
and 15: num_thresholds that would wrap through a C int, add_hparams
names equal after str()."""
import os
import random
import subprocess
import sys
import threading
import time

import pytest

from conftest import event_file, records
from tfevents_py import varint

import tfboard
from tfboard import _lib


def all_files(d):
    return sorted(os.path.relpath(os.path.join(r, f), d)
                  for r, _, fs in os.walk(d) for f in fs)


# -- item 6: steps outside int64 ------------------------------------------

@pytest.mark.parametrize("step", [2 ** 64 + 5, 2 ** 63, -2 ** 63 - 1, 1e30,
                                  -1e30, float("inf")])
def test_step_outside_int64_raises(tmp_path, step):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for call in (lambda: w.add_scalar("a", 1.0, step),
                     lambda: w.add_text("t", "x", step),
                     lambda: w.add_histogram("h", [1.0, 2.0], step),
                     lambda: w.add_scalars("m", {"k": 1.0}, step)):
            with pytest.raises(ValueError, match="outside the int64"):
                call()
        # the extremes that fit are kept as they are
        w.add_scalar("a", 1.0, 2 ** 63 - 1)
        w.add_scalar("a", 2.0, -2 ** 63)
    n = len(records(event_file(str(tmp_path))))
    assert n == 3  # file version + the two good scalars


# -- item 7: embedded NUL ---------------------------------------------------

def test_embedded_nul_refused(tmp_path):
    with tfboard.SummaryWriter(str(tmp_path / "w")) as w:
        with pytest.raises(ValueError, match="NUL"):
            w.add_scalar("lo\0ss", 1.0, 0)
        with pytest.raises(ValueError, match="NUL"):
            w.add_text("t", "before\0after", 0)
        with pytest.raises(ValueError, match="NUL"):
            w.add_text("t\0x", "text", 0)
        with pytest.raises(ValueError, match="NUL"):
            w.add_scalars("m", {"a\0b": 1.0}, 0)
        with pytest.raises(ValueError, match="NUL"):
            w.add_hparams({"opt": "ad\0am"}, {"acc": 1.0}, run_name="r1")
        with pytest.raises(ValueError, match="NUL"):
            w.add_hparams({"o\0pt": "adam"}, {"acc": 1.0}, run_name="r2")
        with pytest.raises(ValueError, match="NUL"):
            w.add_hparams({"opt": "adam"}, {"ac\0c": 1.0}, run_name="r3")
        with pytest.raises(ValueError, match="NUL"):
            w.log_hparams({"opt": "ad\0am"})
        w.add_text("t", "whole", 0)
    with pytest.raises(ValueError, match="NUL"):
        tfboard.SummaryWriter(str(tmp_path / "a\0b"))
    # nothing cut was written: one text record, no sub-runs
    assert all_files(str(tmp_path / "w")) == \
        [os.path.basename(event_file(str(tmp_path / "w")))]
    assert len(records(event_file(str(tmp_path / "w")))) == 2


# -- item 8: close() while other threads log --------------------------------

def test_close_while_logging_1000_races(tmp_path):
    """1,000 times: a thread logs (scalars, text, add_scalars, flush) in a
    loop while the main thread closes the writer. The thread must stop
    with TfbError every time, never hang or crash."""
    rng = random.Random(21)
    t0 = time.time()
    for i in range(1000):
        w = tfboard.SummaryWriter(str(tmp_path / ("r%d" % (i % 16))),
                                  flush_secs=3600)
        started, outcome = threading.Event(), []

        def logger():
            k = 0
            try:
                while True:
                    w.add_scalar("a", 1.0, k)
                    if k % 7 == 0:
                        w.add_text("t", "x", k)
                    if k % 11 == 0:
                        w.add_scalars("m", {"x": 1.0}, k)
                    if k % 13 == 0:
                        w.flush()
                    k += 1
                    started.set()
            except tfboard.TfbError as e:
                outcome.append(e)
            except BaseException as e:  # noqa: B902 - reported below
                outcome.append(e)
            started.set()

        t = threading.Thread(target=logger, daemon=True)
        t.start()
        assert started.wait(10)
        if rng.random() < 0.5:
            time.sleep(rng.random() * 0.0005)
        w.close()
        t.join(10)
        assert not t.is_alive(), "race %d: the logging thread hangs" % i
        assert len(outcome) == 1 and isinstance(outcome[0], tfboard.TfbError) \
            and "closed" in str(outcome[0]), (i, outcome)
    print("1000 close-while-logging races: %.1f s" % (time.time() - t0))


def test_calls_after_close_raise(tmp_path):
    w = tfboard.SummaryWriter(str(tmp_path))
    w.close()
    for call in (lambda: w.add_scalar("a", 1.0, 0), w.flush,
                 lambda: w.add_text("t", "x"), lambda: w.path,
                 lambda: w.add_scalars("m", {"k": 1.0}),
                 lambda: w.end_hparams()):
        with pytest.raises(tfboard.TfbError, match="closed"):
            call()
    w.close()  # twice is fine


# -- item 11: add_hparams checks first --------------------------------------

@pytest.mark.parametrize("hp,metrics", [
    ({"lr": 0.1, "bad": object()}, {"acc": 1.0}),
    ({"lr": 0.1, "bad": [1, 2]}, {"acc": 1.0}),
    ({"lr": 0.1}, {"acc": "not a number"}),
    ({"lr": 0.1}, {"acc": object()}),
])
def test_add_hparams_leaves_nothing_when_it_raises(tmp_path, hp, metrics):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        before = all_files(str(tmp_path))
        with pytest.raises((ValueError, TypeError)):
            w.add_hparams(hp, metrics, run_name="trial")
        assert not os.path.exists(tmp_path / "trial")
        assert all_files(str(tmp_path)) == before


# Issue 32 item 15: keys equal after str() (and empty names) are refused
# before the run folder is made, not by the library after.
@pytest.mark.parametrize("hp,metrics", [
    ({1: 0.1, "1": 0.2}, {"acc": 1.0}),
    ({"lr": 0.1, 2.5: "a", "2.5": "b"}, {"acc": 1.0}),
    ({"": 0.1}, {"acc": 1.0}),
    ({"lr": 0.1}, {"": 1.0}),
])
def test_add_hparams_same_name_leaves_nothing(tmp_path, hp, metrics):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        before = all_files(str(tmp_path))
        with pytest.raises(ValueError, match="same name|empty"):
            w.add_hparams(hp, metrics, run_name="trial")
        assert not os.path.exists(tmp_path / "trial")
        assert all_files(str(tmp_path)) == before
        with pytest.raises(ValueError, match="same name|empty"):
            w.log_hparams(hp, list(metrics))
        # the writer goes on
        w.add_hparams({"lr": 0.1}, {"acc": 1.0}, run_name="good")
    assert os.path.isdir(tmp_path / "good")


# -- item 12: add_scalars keys that climb out -------------------------------

@pytest.mark.parametrize("key", ["../../up", "/../../up", "x/../../../up",
                                 "a/../..", "a/../../x"])
def test_add_scalars_key_cannot_climb_out(tmp_path, key):
    logdir = tmp_path / "logs" / "run"
    with tfboard.SummaryWriter(str(logdir)) as w:
        with pytest.raises(ValueError, match="outside"):
            w.add_scalars("loss", {"ok": 1.0, key: 2.0}, 0)
    # nothing outside, and nothing of the call inside either
    assert all_files(str(tmp_path)) == \
        [os.path.relpath(event_file(str(logdir)), str(tmp_path))]


def test_add_scalars_keys_inside_still_work(tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_scalars("loss", {"train": 1.0, "a/b": 2.0, "x..y": 3.0}, 0)
    for d in ("loss_train", "loss_a/b", "loss_x..y"):
        assert os.path.isdir(tmp_path / d), all_files(str(tmp_path))


# -- issue 17 item 5: the library on first use, sizes, version, py.typed ---

def _py(code):
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_library_loaded_on_first_use():
    out = _py("import tfboard, tfboard._lib as L\n"
              "print(L._cdll is None)\n"
              "v = tfboard.__version__\n"
              "print(L._cdll is not None, v)")
    first, second = out.splitlines()
    assert first == "True"
    ok, v = second.split()
    assert ok == "True" and v == _lib.version()


def test_version_from_library():
    v = tfboard.__version__
    assert v == _lib.lib.tfb_version().decode()
    major, minor, patch = (int(x) for x in v.split("."))
    assert tfboard.library_version_number() == \
        major * 1000000 + minor * 1000 + patch


def test_struct_sizes_from_library():
    n = _lib.struct_size(init="tfb_writer_opts_init")
    assert n >= _lib.ctypes.sizeof(_lib.WriterOpts)
    buf, o = _lib.writer_opts()
    assert len(buf) == n and o.size == n
    # any sized struct of tfboard.h, by its _init
    for init in ("tfb_writer_stats_init", "tfb_reader_stats_init",
                 "tfb_gpu_opts_init"):
        s = _lib.struct_size(init=init)
        assert _lib.ctypes.sizeof(_lib.ctypes.c_size_t) < s < 4096, (init, s)
    with pytest.raises(TypeError):
        _lib.struct_size()


def test_py_typed_shipped():
    pkg = os.path.dirname(tfboard.__file__)
    assert os.path.isfile(os.path.join(pkg, "py.typed"))
    root = os.path.dirname(pkg)
    with open(os.path.join(root, "meson.build")) as f:
        assert "tfboard/py.typed" in f.read()
    with open(os.path.join(root, "pyproject.toml")) as f:
        assert "py.typed" in f.read()


# -- issue 32 item 14: num_thresholds never wraps through ctypes.c_int ------

def _pr_payloads(d):
    return [p for p in records(event_file(d)) if b"pr_curves" in p]


@pytest.mark.parametrize("k,want", [(2 ** 32 + 3, 127), (2 ** 64 + 5, 127),
                                    (2 ** 31, 127), (1000, 127),
                                    (127.0, 127), (5, 5), (2, 2)])
def test_pr_curve_num_thresholds_capped(tmp_path, k, want):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_pr_curve("pr", [0, 1, 1], [0.1, 0.6, 0.9], 0, num_thresholds=k)
        # the weighted path (tfb_pr_curve_at) takes the same number
        w.add_pr_curve("prw", [0, 1, 1], [0.1, 0.6, 0.9], 1,
                       num_thresholds=k, weights=[1.0, 2.0, 3.0])
    payloads = _pr_payloads(str(tmp_path))
    assert len(payloads) == 2
    for p in payloads:
        # PluginData{plugin_name "pr_curves", content
        # PrCurvePluginData{num_thresholds}} and the tensor's 6 x k
        # floats, packed (read without protobuf, which the interpreter
        # may lack)
        assert b"\x0a\x09pr_curves\x12\x02\x10" + bytes([want]) in p, p[:80]
        assert b"\x2a" + varint(6 * want * 4) in p


@pytest.mark.parametrize("k", [1, 0, -1, -2 ** 32 + 3, -2 ** 63, 2.5, "7",
                               None])
def test_pr_curve_bad_num_thresholds_raise(tmp_path, k):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        with pytest.raises((ValueError, TypeError), match="num_thresholds"):
            w.add_pr_curve("pr", [0, 1], [0.2, 0.8], 0, num_thresholds=k)
    assert not _pr_payloads(str(tmp_path))
