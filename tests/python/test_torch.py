"""tfboard.SummaryWriter with torch tensors and modules (skipped without
torch): histograms of every dtype and layout, gradient norms, numerics,
step timing, and the example script."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import (ROOT, assert_same_histogram, event_file,
                      our_histogram, pytorch_histogram, records)

torch = pytest.importorskip("torch")
import tfboard  # noqa: E402


def values(pb, path):
    out = []
    for payload in records(path):
        e = pb.event.Event()
        e.ParseFromString(payload)
        if e.HasField("summary"):
            out += [(e.step, v) for v in e.summary.value]
    return out


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16,
                                   torch.float32, torch.float64, torch.int32,
                                   torch.int64, torch.uint8])
def test_histogram_tensor_dtypes(pb, tmp_path, dtype):
    g = torch.Generator().manual_seed(3)
    t = (torch.randn(2000, generator=g) * 40).to(dtype)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("h", t, 1)
    (step, v), = values(pb, event_file(str(tmp_path)))
    ref = pytorch_histogram(t.to(torch.float64).numpy())
    assert_same_histogram(our_histogram(v.histo), ref)


def test_histogram_noncontiguous_tensor(pb, tmp_path):
    base = torch.arange(-500.0, 500.0).reshape(25, 40)
    views = [base.t(), base[:, ::3], base[3:20:2, 1:]]
    assert not any(x.is_contiguous() for x in views)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for i, x in enumerate(views):
            w.add_histogram("h", x, i)
    for (s, v), x in zip(values(pb, event_file(str(tmp_path))), views):
        assert_same_histogram(our_histogram(v.histo),
                              pytorch_histogram(x.contiguous().numpy()))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_histogram_cuda_tensor(pb, tmp_path):
    t = torch.randn(10000, device="cuda")
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("h", t, 1)
        w.add_scalar("s", t.sum(), 1)
        w.grad_norms({"x": t}, 1)
    vals = values(pb, event_file(str(tmp_path)))
    assert_same_histogram(our_histogram(vals[0][1].histo),
                          pytorch_histogram(t.cpu().numpy()))


def test_histogram_tensor_nonfinite(pb, tmp_path):
    t = torch.tensor([1.0, float("nan"), float("inf"), 2.0])
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("h", t, 4)
    vals = values(pb, event_file(str(tmp_path)))
    assert vals[0][1].histo.num == 2
    assert list(vals[1][1].tensor.int64_val) == [1, 1, 0]


def test_scalar_tensor(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("loss", torch.tensor(0.125), torch.tensor(3))
    (s, v), = values(pb, event_file(str(tmp_path)))
    assert (s, v.simple_value) == (3, 0.125)


def test_grad_norms(pb, tmp_path):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                            torch.nn.Linear(8, 2))
    m(torch.randn(16, 4)).pow(2).sum().backward()
    m[2].bias.grad = None  # a parameter without a gradient is skipped
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        g = w.grad_norms(m, 7)
    want = {n: p.grad.double().norm().item()
            for n, p in m.named_parameters() if p.grad is not None}
    glob = math.sqrt(sum(x * x for x in want.values()))
    assert g == pytest.approx(glob, rel=1e-12)
    vals = values(pb, event_file(str(tmp_path)))
    got = {v.tag: v.simple_value for s, v in vals}
    assert all(s == 7 for s, _ in vals)
    assert set(got) == {"grad_norm/" + n for n in want} | {"grad_norm/global"}
    for n, x in want.items():
        assert got["grad_norm/" + n] == pytest.approx(x, rel=1e-6)
    assert got["grad_norm/global"] == pytest.approx(glob, rel=1e-6)


def test_check_numerics_tensor(pb, tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        assert w.check_numerics(torch.ones(3), 1) == 0
        assert w.check_numerics(torch.arange(3), 1) == 0
        t = torch.tensor([[1.0, float("nan")], [float("-inf"), 0.0]]).t()
        assert w.check_numerics({"g": t.half()}, 2) == 2
    (s, v), = values(pb, event_file(str(tmp_path)))
    assert (s, v.tag, list(v.tensor.int64_val)) == (2, "g", [1, 0, 1])


def test_step_timing(pb, tmp_path):
    data = [torch.randn(4) for _ in range(5)]
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        n = 0
        for batch in w.timed(data):
            n += 1
        with w.step(10):
            with w.input_wait():
                pass
        # An iterator without len(): one more input-only step at the end.
        for batch in w.timed(iter(data[:2]), start_step=20):
            pass
    assert n == 5
    vals = values(pb, event_file(str(tmp_path)))
    steps = sorted(s for s, v in vals if v.tag == "pipeline/step_ms")
    assert steps == [0, 1, 2, 3, 4, 10, 20, 21, 22]
    assert sorted(s for s, v in vals if v.tag == "pipeline/input_ms") == steps


def test_gpu_trace_without_gpu(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("has a GPU")
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        with pytest.warns(RuntimeWarning, match="gpu_trace"):
            with w.gpu_trace():
                w.add_scalar("x", 1.0, 0)
        with pytest.raises(tfboard.TfbError):
            with w.gpu_trace(strict=True):
                pass


def test_example_runs(tmp_path):
    ex = os.path.join(ROOT, "examples", "python", "train_mnist_like.py")
    r = subprocess.run([sys.executable, ex, "--logdir", str(tmp_path),
                        "--steps", "30"], capture_output=True, text=True,
                       timeout=240)
    assert r.returncode == 0, r.stderr
    runs = [d for d in os.listdir(tmp_path)]
    assert runs
    f = event_file(os.path.join(str(tmp_path), sorted(runs)[0]))
    assert os.path.getsize(f) > 1000



def test_same_as_torch_writer(pb, tmp_path):
    """The same calls through torch.utils.tensorboard.SummaryWriter and
    tfboard.SummaryWriter decode to the same tags, steps, plugins, values
    and histogram buckets. Needs the tensorboard package (torch's writer
    imports it); skipped without it. Known differences, not compared: our
    scalars carry plugin "scalars" metadata on a tag's first value, our
    text tensor is rank 0 (PyTorch's has shape [1]), our hparams values
    carry an empty DT_FLOAT tensor and start/end times (as TensorBoard's
    own hparams API and newer PyTorch write them)."""
    try:
        from torch.utils.tensorboard import SummaryWriter as TorchWriter
    except Exception as e:  # ImportError, or tensorboard's own errors
        pytest.skip("torch.utils.tensorboard unavailable: %s" % e)
    a = torch.randn(5000, generator=torch.Generator().manual_seed(1)) * 7
    hp = {"lr": 0.01, "layers": 3, "opt": "adam"}
    metrics = {"hparam/loss": 0.25}
    for name, cls in (("torch", TorchWriter), ("ours", tfboard.SummaryWriter)):
        w = cls(str(tmp_path / name))
        w.add_scalar("loss", 0.5, 1)
        w.add_scalar("loss", 0.25, 2)
        w.add_histogram("w", a, 3)
        w.add_text("notes", "hello", 4)
        w.add_hparams(hp, metrics, run_name="hp")
        w.close()

    def decoded(d, msg):
        out = []
        for payload in records(event_file(d)):
            e = msg()
            e.ParseFromString(payload)
            if e.HasField("summary"):
                out += [(e.step, v) for v in e.summary.value]
        return out

    ref = decoded(str(tmp_path / "torch"), pb.event.Event)
    ours = decoded(str(tmp_path / "ours"), pb.event.Event)
    assert [(s, v.tag) for s, v in ours] == [(s, v.tag) for s, v in ref]
    for (_, o), (_, r) in zip(ours, ref):
        assert o.WhichOneof("value") == r.WhichOneof("value")
        if r.tag == "loss":
            assert o.simple_value == r.simple_value
        if r.tag == "w":
            assert_same_histogram(our_histogram(o.histo),
                                  our_histogram(r.histo))
        if r.HasField("metadata"):
            assert o.metadata.plugin_data.plugin_name == \
                r.metadata.plugin_data.plugin_name
        if r.WhichOneof("value") == "tensor":
            assert o.tensor.dtype == r.tensor.dtype
            assert list(o.tensor.string_val) == list(r.tensor.string_val)

    hr = decoded(str(tmp_path / "torch" / "hp"), pb.hparams.HParamsEvent)
    ho = decoded(str(tmp_path / "ours" / "hp"), pb.hparams.HParamsEvent)
    assert sorted(v.tag for _, v in ho) == sorted(v.tag for _, v in hr)
    by_tag = {v.tag: v for _, v in hr}
    for _, o in ho:
        r = by_tag[o.tag]
        if not o.tag.startswith("_hparams_/"):
            assert o.simple_value == r.simple_value
            continue
        assert o.metadata.plugin_data.plugin_name == "hparams"
        c, rc = o.metadata.plugin_data.content, r.metadata.plugin_data.content
        assert c.version == rc.version
        assert c.WhichOneof("data") == rc.WhichOneof("data")
        assert list(c.experiment.hparam_infos) == \
            list(rc.experiment.hparam_infos)
        assert list(c.experiment.metric_infos) == \
            list(rc.experiment.metric_infos)
        assert dict(c.session_start_info.hparams) == \
            dict(rc.session_start_info.hparams)
        assert c.session_end_info.status == rc.session_end_info.status
