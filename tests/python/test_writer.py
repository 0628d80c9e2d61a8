"""tfboard.SummaryWriter without torch: records decoded with protoc's
Python output of tests/proto and compared with what PyTorch's writer
writes for the same call; files read back over tfboard's HTTP API."""
import math
import os
import subprocess
import sys
import threading
import time as _time

import numpy as np
import pytest

from conftest import (assert_same_histogram, event_file, our_histogram,
                      pytorch_histogram, records)

import tfboard


def events(pb, path):
    out = []
    for payload in records(path):
        e = pb.event.Event()
        e.ParseFromString(payload)
        out.append(e)
    return out


def values(pb, path):
    """[(step, Summary.Value)] of the summary events."""
    return [(e.step, v) for e in events(pb, path)
            if e.HasField("summary") for v in e.summary.value]


def test_scalars(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("loss", 0.5, 1)
        w.add_scalar("loss", np.float32(0.25), 2)
        w.add_scalar("loss", 3, global_step=None)
        w.add_scalar("acc", 0.75, 4, walltime=1700000000.5)
    evs = events(pb, event_file(str(tmp_path)))
    assert evs[0].file_version == "brain.Event:2"
    vals = values(pb, event_file(str(tmp_path)))
    # PyTorch: Summary.Value(tag, simple_value) at the given step.
    assert [(s, v.tag, v.simple_value) for s, v in vals] == [
        (1, "loss", 0.5), (2, "loss", 0.25), (0, "loss", 3.0),
        (4, "acc", 0.75)]
    assert all(v.WhichOneof("value") == "simple_value" for _, v in vals)
    assert evs[4].wall_time == 1700000000.5
    # The plugin metadata on a tag's first value only (PyTorch writes none;
    # TensorBoard reads both).
    assert vals[0][1].metadata.plugin_data.plugin_name == "scalars"
    assert not vals[1][1].HasField("metadata")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64,
                                   np.int32, np.int64, np.uint8])
def test_histogram_dtypes(pb, tmp_path, dtype):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(3000) * 50).astype(dtype)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("h", a, 3)
    (step, v), = values(pb, event_file(str(tmp_path)))
    assert step == 3 and v.tag == "h"
    assert v.WhichOneof("value") == "histo"
    assert v.metadata.plugin_data.plugin_name == "histograms"
    assert_same_histogram(our_histogram(v.histo), pytorch_histogram(a))


def test_histogram_noncontiguous_and_shapes(pb, tmp_path):
    base = np.arange(-600, 600, dtype=np.float32).reshape(40, 30)
    views = [base[::3, ::2], base.T, base[5]]
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for i, a in enumerate(views):
            w.add_histogram("h", a, i)
    vals = values(pb, event_file(str(tmp_path)))
    for (step, v), a in zip(vals, views):
        assert_same_histogram(our_histogram(v.histo), pytorch_histogram(a))


def test_histogram_nonfinite_kept(pb, tmp_path):
    a = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, np.nan, 3.0])
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("h", a, 7)
        with pytest.raises(ValueError):
            w.add_histogram("h", np.array([]), 8)  # as PyTorch
    vals = values(pb, event_file(str(tmp_path)))
    assert [v.tag for _, v in vals] == ["h", "h"]
    h = vals[0][1].histo
    # The finite values in the buckets; the non-finite ones counted apart
    # in a numerics record (NaN 2, +Inf 1, -Inf 1), as tfb_histogram does.
    assert_same_histogram(our_histogram(h), pytorch_histogram([1, 2, 3]))
    t = vals[1][1]
    assert t.metadata.plugin_data.plugin_name == "tfboard_numerics"
    assert list(t.tensor.int64_val) == [2, 1, 1]


def test_text(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_text("notes", "héllo *md*", 2)
    (step, v), = values(pb, event_file(str(tmp_path)))
    # PyTorch: tag <tag>/text_summary, plugin text, a DT_STRING tensor.
    assert step == 2 and v.tag == "notes/text_summary"
    assert v.metadata.plugin_data.plugin_name == "text"
    assert v.tensor.dtype == 7
    assert list(v.tensor.string_val) == ["héllo *md*".encode()]


def test_add_scalars_runs(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_scalars("a/b", {"x": 1.0, "y": 2.0}, 5)
        w.add_scalars("a/b", {"x": 3.0}, 6)
    # PyTorch: one run folder per key, <main_tag with / as _>_<key>.
    for key, want in (("x", [(5, 1.0), (6, 3.0)]), ("y", [(5, 2.0)])):
        vals = values(pb, event_file(str(tmp_path / ("a_b_" + key))))
        assert [(s, v.tag, v.simple_value) for s, v in vals] == \
            [(s, "a/b", x) for s, x in want]


def test_add_hparams_as_pytorch(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"lr": 0.1, "bs": 32, "opt": "adam", "nesterov": True,
                       "skip": None},
                      {"hparam/loss": 0.5, "hparam/acc": 0.9},
                      run_name="trial1")
    path = event_file(str(tmp_path / "trial1"))
    evs = []
    for payload in records(path)[1:]:
        e = pb.hparams.HParamsEvent()
        e.ParseFromString(payload)
        evs.append(e)
    tags = [e.summary.value[0].tag for e in evs]
    # PyTorch's order: experiment, session start, session end, metrics.
    assert tags == ["_hparams_/experiment", "_hparams_/session_start_info",
                    "_hparams_/session_end_info", "hparam/loss",
                    "hparam/acc"]
    assert all(e.step == 0 for e in evs)
    by_tag = {e.summary.value[0].tag: e.summary.value[0] for e in evs}
    for t in ("_hparams_/experiment", "_hparams_/session_start_info",
              "_hparams_/session_end_info"):
        v = by_tag[t]
        assert v.metadata.plugin_data.plugin_name == "hparams"
        assert v.metadata.plugin_data.content.version == 0
        assert v.tensor.dtype == 1  # an empty DT_FLOAT tensor
    exp = by_tag["_hparams_/experiment"].metadata.plugin_data.content.experiment
    assert [(h.name, h.type) for h in exp.hparam_infos] == [
        ("lr", 3), ("bs", 3), ("opt", 1), ("nesterov", 2)]
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/loss",
                                                      "hparam/acc"]
    ssi = by_tag["_hparams_/session_start_info"] \
        .metadata.plugin_data.content.session_start_info
    assert ssi.hparams["lr"].number_value == 0.1
    assert ssi.hparams["bs"].number_value == 32
    assert ssi.hparams["opt"].string_value == "adam"
    assert ssi.hparams["nesterov"].bool_value is True
    assert "skip" not in ssi.hparams
    sei = by_tag["_hparams_/session_end_info"] \
        .metadata.plugin_data.content.session_end_info
    assert sei.status == 1
    assert by_tag["hparam/loss"].simple_value == 0.5


def test_unsupported_calls_raise(tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for name in ("add_image_with_boxes", "add_onnx_graph",
                     "add_pr_curve_raw", "add_mesh"):
            with pytest.raises(NotImplementedError, match=name):
                getattr(w, name)("t", None)
        with pytest.raises(NotImplementedError, match="bins"):
            w.add_histogram("h", np.ones(3), 0, bins="auto")
        with pytest.raises(NotImplementedError, match="new_style"):
            w.add_scalar("s", 1.0, 0, new_style=True)
    with pytest.raises(NotImplementedError, match="purge_step"):
        tfboard.SummaryWriter(str(tmp_path), purge_step=3)


def test_closed_writer_raises(tmp_path):
    w = tfboard.SummaryWriter(str(tmp_path))
    w.add_scalar("a", 1.0, 0)
    w.close()
    w.close()  # closing twice is fine
    for call in (lambda: w.add_scalar("a", 1.0, 1),
                 lambda: w.add_histogram("h", np.ones(2), 1),
                 lambda: w.add_text("t", "x", 1), w.flush,
                 lambda: w.grad_norms({}, 1)):
        with pytest.raises(tfboard.TfbError, match="writer is closed") as e:
            call()
        assert e.value.code == -8


def test_errors_carry_strerror(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(tfboard.TfbError) as e:
        tfboard.SummaryWriter(str(blocker / "run"))
    assert e.value.code < 0
    assert "tfb_writer_open" in str(e.value)


def test_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    with tfboard.SummaryWriter(comment="_exp") as w:
        d = w.get_logdir()
    parts = d.split(os.sep)
    assert parts[0] == "runs"
    assert parts[1].endswith("_exp_rank3")
    assert os.path.isdir(d) and w.rank == 3 and w.world_size == 4


def test_library_lookup_override(tmp_path):
    env = dict(os.environ, TFBOARD_LIB=str(tmp_path / "nope.so"))
    # the library is loaded on first use: import works, a writer does not
    r = subprocess.run([sys.executable, "-c", "import tfboard\n"
                        "tfboard.SummaryWriter(%r)" % str(tmp_path)],
                       env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "TFBOARD_LIB" in r.stderr
    env["TFBOARD_LIB"] = os.environ["TFBOARD_LIB"]
    r = subprocess.run([sys.executable, "-c",
                        "import tfboard; print(tfboard.lib_path)"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == env["TFBOARD_LIB"]


def test_many_threads_one_writer(pb, tmp_path):
    n_threads, per = 8, 2000
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        def run(k):
            for i in range(per):
                w.add_scalar("t%d" % k, float(i), i)
            w.add_histogram("h%d" % k, np.arange(100.0) + k, k)
        ts = [threading.Thread(target=run, args=(k,))
              for k in range(n_threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    vals = values(pb, event_file(str(tmp_path)))
    for k in range(n_threads):
        mine = [(s, v.simple_value) for s, v in vals if v.tag == "t%d" % k]
        assert mine == [(i, float(i)) for i in range(per)]
        assert sum(1 for _, v in vals if v.tag == "h%d" % k) == 1


def test_check_numerics_numpy(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        assert w.check_numerics(np.ones(5, np.float32), 1, tag="x") == 0
        assert w.check_numerics({"a": np.array([np.nan, 1.0]),
                                 "b": np.array([np.inf], np.float32)}, 2) == 2
    vals = values(pb, event_file(str(tmp_path)))
    assert [(s, v.tag, list(v.tensor.int64_val)) for s, v in vals] == [
        (2, "a", [1, 0, 0]), (2, "b", [0, 1, 0])]


def test_read_back_over_http(tmp_path):
    server = os.environ.get("TFB_SERVER")
    if not server or not os.path.exists(server):
        pytest.skip("tfboard server not built")
    from tfb_server_util import Server
    run = tmp_path / "run1"
    a = np.linspace(-3, 3, 1000)
    with tfboard.SummaryWriter(str(run)) as w:
        for i in range(5):
            w.add_scalar("loss", 1.0 / (i + 1), i)
        w.add_histogram("weights", a, 2)
        w.add_text("notes", "hello", 3)
    with Server(server, str(tmp_path)) as s:
        s.wait_loaded()
        pts = s.json("/data/plugin/scalars/scalars", run="run1", tag="loss")
        assert [(p[1], p[2]) for p in pts] == [
            (i, pytest.approx(1.0 / (i + 1), rel=1e-6)) for i in range(5)]
        hs = s.json("/data/plugin/histograms/histograms", run="run1",
                    tag="weights")
        assert len(hs) == 1 and hs[0][1] == 2
        assert sum(b[2] for b in hs[0][2]) == 1000
        # The outer buckets reach past min and max by at most one bucket
        # (10 %).
        assert -3.31 < min(b[0] for b in hs[0][2]) <= -3
        assert 3 <= max(b[1] for b in hs[0][2]) < 3.31
        tx = s.json("/data/plugin/text/text", run="run1",
                    tag="notes/text_summary")
        assert [t["text"] for t in tx] == ["hello"] and tx[0]["step"] == 3


def test_writer_opts_layout():
    """The known fields of tfb_writer_opts sit where tfboard.h puts them:
    the defaults that tfb_writer_opts_init writes read back by name."""
    from tfboard import _lib
    buf, o = _lib.writer_opts()
    assert o.queue_bytes == 8 << 20 and o.flush_interval_ms == 2000
    assert o.drop_when_full == 0 and o.filename_suffix is None
    assert not o.on_nonfinite and not o.on_nonfinite_user


def test_flush_secs_and_suffix(tmp_path):
    with tfboard.SummaryWriter(str(tmp_path), filename_suffix=".v2",
                               flush_secs=0.05) as w:
        w.add_scalar("a", 1.0, 0)
        assert w.path.endswith(".v2")
        # Written by the background flush alone, well before close.
        import time
        deadline = time.time() + 30  # a bound for a stuck writer only
        while os.path.getsize(w.path) < 60 and time.time() < deadline:
            time.sleep(0.01)
        assert os.path.getsize(w.path) >= 60


def test_close_writes_end_of_run_record(pb, tmp_path):
    """Closing the writer appends the end-of-run record (issue 23) last:
    `tfboard` reads it as "finished"; TensorBoard skips its plugin."""
    w = tfboard.SummaryWriter(str(tmp_path))
    w.add_scalar("loss", 1.0, 1)
    w.close()
    recs = records(event_file(str(tmp_path)), run_end=True)
    ev = pb.event.Event()
    ev.ParseFromString(recs[-1])
    v = ev.summary.value[0]
    assert v.tag == "tfboard/run_end"
    assert v.metadata.plugin_data.plugin_name == "tfboard_run_end"
    assert len(records(event_file(str(tmp_path)))) == len(recs) - 1


def test_batch_id(pb, tmp_path):
    """SummaryWriter.batch_id writes the id as text under batch/id (the
    tag tfb_step_batch uses), exactly, even past float32's integers."""
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.batch_id(2 ** 40 + 1, 7)
        w.batch_id("shard3:81920", 8)
    vals = values(pb, event_file(str(tmp_path)))
    got = [(s, v.tag, v.tensor.string_val[0].decode()) for s, v in vals]
    assert got == [(7, "batch/id", str(2 ** 40 + 1)),
                   (8, "batch/id", "shard3:81920")]


def test_batch_id_current_step(pb, tmp_path):
    """Without global_step, batch_id names the writer's current step:
    the open step inside `with writer.step(s)`, else the highest step
    logged so far (0 before any)."""
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.batch_id("first")              # nothing logged yet: step 0
        w.add_scalar("loss", 1.0, 41)
        w.batch_id("after-41")           # highest step so far: 41
        with w.step(50):
            w.batch_id("in-step-50")     # the open step
        w.add_scalar("loss", 1.0, 45)    # older step: the highest stays
        w.batch_id("still-50")
    vals = values(pb, event_file(str(tmp_path)))
    got = [(s, v.tensor.string_val[0].decode()) for s, v in vals
           if v.tag == "batch/id"]
    assert got == [(0, "first"), (41, "after-41"), (50, "in-step-50"),
                   (50, "still-50")]


# ---- Work per step from Python (issue 29 item 6): writer.step_work inside
# writer.step gives perf/tflops, tokens/s and samples/s from the step's own
# pipeline/step_ms, perf/mfu only with a known peak; checkpoint() gives
# goodput/checkpoint_ms; comm(name, nbytes) fills the comm/collectives
# record. ----

def summary_values(pb, path):
    out = []
    for payload in records(path):
        e = pb.event.Event()
        e.ParseFromString(payload)
        if e.HasField("summary"):
            out += [(e.step, v) for v in e.summary.value]
    return out


def scalars(vals, tag):
    return {s: v.simple_value for s, v in vals if v.tag == tag}


def latest_text(vals, tag):
    got = [v.tensor.string_val[0].decode() for _, v in vals if v.tag == tag]
    return got[-1] if got else None


def test_step_work_scalars(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path), dtype="torch.bfloat16",
                               peak_tflops=50.0) as w:
        with pytest.raises(tfboard.TfbError):
            w.step_work(flops=1.0)          # outside a step
        for s in range(3):
            with w.step(s):
                _time.sleep(0.002)
                with pytest.raises(ValueError):
                    w.step_work(flops=-1)
                w.step_work(flops=4e11, samples=8, tokens=8 * 512)
    vals = summary_values(pb, event_file(str(tmp_path)))
    step_ms = scalars(vals, "pipeline/step_ms")
    tflops = scalars(vals, "perf/tflops")
    mfu = scalars(vals, "perf/mfu")
    tps = scalars(vals, "perf/tokens_per_s")
    sps = scalars(vals, "perf/samples_per_s")
    assert sorted(step_ms) == [0, 1, 2]
    for s, ms in step_ms.items():
        t = ms / 1e3
        assert tflops[s] == pytest.approx(4e11 / t / 1e12, rel=1e-5)
        assert mfu[s] == pytest.approx(tflops[s] / 50.0 * 100, rel=1e-5)
        assert tps[s] == pytest.approx(4096 / t, rel=1e-5)
        assert sps[s] == pytest.approx(8 / t, rel=1e-5)
    rec = latest_text(vals, "perf/work")
    assert "flops_per_step=400000000000\n" in rec
    assert "dtype=bf16\n" in rec
    assert "peak_source=opts\n" in rec


def test_no_peak_no_mfu(pb, tmp_path):
    """No peak given, no GPU metrics: throughput, never an MFU."""
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        with w.step(1):
            w.step_work(flops=1e12, tokens=100)
    vals = summary_values(pb, event_file(str(tmp_path)))
    assert scalars(vals, "perf/tflops")
    assert not scalars(vals, "perf/mfu")
    assert "peak_tflops=unknown\n" in latest_text(vals, "perf/work")


def test_bad_dtype_refused(tmp_path):
    with pytest.raises(tfboard.TfbError):
        tfboard.SummaryWriter(str(tmp_path), dtype="int3")


def test_checkpoint_and_comm(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        with w.checkpoint():
            _time.sleep(0.003)
        for s in (1, 2):
            with w.step(s):
                with w.comm("all_reduce", nbytes=3 << 20):
                    pass
                with w.comm("barrier"):
                    pass
        with w.checkpoint():
            pass
    vals = summary_values(pb, event_file(str(tmp_path)))
    ck = scalars(vals, "goodput/checkpoint_ms")
    assert sorted(ck) == [0, 2]             # before any step; last begun
    assert ck[0] >= 3
    rec = latest_text(vals, "comm/collectives")
    lines = rec.splitlines()
    assert lines[0] == "version=1"
    rows = [ln.split("\t") for ln in lines[1:]]
    assert [r[:4] for r in rows] == [["all_reduce", str(2 << 20), "2",
                                      str(2 * (3 << 20))]]
    assert int(rows[0][4]) >= 0
