"""Images from Python (issue 22): add_image, add_images and add_figure with
PyTorch's conventions, and the C writer's tfb_image through ctypes; every
image is read back from the event file (TensorFlow 2's format, checked
with the protoc-compiled Event) and decoded with Pillow to the pixels
written."""
import ctypes
import io

import numpy as np
import pytest

from conftest import event_file, records

PIL = pytest.importorskip("PIL.Image")
import tfboard  # noqa: E402
from tfboard._lib import TfbError, lib  # noqa: E402


def images(pb, d):
    """[(step, tag, width, height, RGB(A) pixels as ndarray)] of the run."""
    out = []
    for payload in records(event_file(d)):
        e = pb.event.Event()
        e.ParseFromString(payload)
        for v in e.summary.value:
            t = v.tensor
            assert t.dtype == 7 and [x.size for x in t.tensor_shape.dim] == [3]
            w, h, data = t.string_val
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            img = PIL.open(io.BytesIO(data))
            img.load()
            assert img.size == (int(w), int(h))
            out.append((e.step, v.tag, int(w), int(h), np.asarray(img)))
    return out


def torch_scaled(a):
    """PyTorch's rule: uint8 as is, anything else * 255, clipped,
    truncated."""
    a = np.asarray(a)
    if a.dtype == np.uint8:
        return a
    return np.clip(a.astype(np.float32) * 255.0, 0, 255).astype(np.uint8)


def test_c_writer_pixels_round_trip(pb, tmp_path):
    """tfb_image (C) for 1, 3 and 4 channels: the PNG holds those pixels."""
    rng = np.random.default_rng(1)
    w = ctypes.c_void_p()
    assert lib.tfb_writer_open(ctypes.byref(w), str(tmp_path).encode(),
                               None) == 0
    imgs = {c: rng.integers(0, 256, (17, 23, c), dtype=np.uint8)
            for c in (1, 3, 4)}
    for c, a in imgs.items():
        assert lib.tfb_image(w, b"c%d" % c, a.ctypes.data, 17, 23, c, c) == 0
    # Limits: clear codes, nothing written.
    assert lib.tfb_image(w, b"bad", imgs[3].ctypes.data, 17, 23, 2, 0) == -1
    assert lib.tfb_image(w, b"big", imgs[3].ctypes.data, 100000, 100000, 3,
                         0) == -16
    assert lib.tfb_writer_close(w) == 0
    got = images(pb, str(tmp_path))
    assert [(s, t) for s, t, *_ in got] == [(1, "c1"), (3, "c3"), (4, "c4")]
    for step, tag, width, height, px in got:
        want = imgs[step]
        if step == 1:
            want = want[:, :, 0]
        assert (width, height) == (23, 17)
        assert np.array_equal(px, want), tag


@pytest.mark.parametrize("fmt,shape", [("CHW", (3, 6, 5)), ("HWC", (6, 5, 3)),
                                       ("HWC", (6, 5, 4)), ("HW", (6, 5)),
                                       ("CHW", (1, 6, 5))])
def test_add_image_dataformats(pb, tmp_path, fmt, shape):
    rng = np.random.default_rng(2)
    a = rng.random(shape, dtype=np.float32)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_image("img", a, 3, dataformats=fmt)
    (step, tag, width, height, px), = images(pb, str(tmp_path))
    hwc = {"CHW": lambda x: x.transpose(1, 2, 0), "HWC": lambda x: x,
           "HW": lambda x: np.stack([x] * 3, 2)}[fmt](a)
    if hwc.shape[2] == 1:
        hwc = np.repeat(hwc, 3, 2)
    assert (step, tag, width, height) == (3, "img", 5, 6)
    assert np.array_equal(px, torch_scaled(hwc))


@pytest.mark.parametrize("dtype", [np.uint8, np.float64, np.float16, np.int64,
                                   np.int32, np.bool_])
def test_add_image_numpy_dtypes(pb, tmp_path, dtype):
    rng = np.random.default_rng(3)
    if dtype == np.uint8:
        a = rng.integers(0, 256, (3, 4, 4)).astype(dtype)
    elif dtype == np.bool_:
        a = rng.random((3, 4, 4)) > 0.5
    elif np.issubdtype(dtype, np.integer):
        a = rng.integers(-2, 3, (3, 4, 4)).astype(dtype)  # clipped
    else:
        a = (rng.random((3, 4, 4)) * 1.4 - 0.2).astype(dtype)  # clipped too
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_image("img", a, 0)
    (_, _, _, _, px), = images(pb, str(tmp_path))
    assert np.array_equal(px, torch_scaled(a.transpose(1, 2, 0)))


def test_add_images_grid(pb, tmp_path):
    """A batch is tiled 8 per row, as torch's make_grid (empty places 0)."""
    rng = np.random.default_rng(4)
    b = rng.integers(0, 256, (10, 3, 4, 5), dtype=np.uint8)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_images("batch", b, 1)
        w.add_images("nhwc", b.transpose(0, 2, 3, 1), 2, dataformats="NHWC")
    got = images(pb, str(tmp_path))
    want = np.zeros((8, 40, 3), np.uint8)
    for i in range(10):
        r, c = divmod(i, 8)
        want[r * 4:(r + 1) * 4, c * 5:(c + 1) * 5] = b[i].transpose(1, 2, 0)
    assert [g[1] for g in got] == ["batch", "nhwc"]
    for g in got:
        assert (g[2], g[3]) == (40, 8)
        assert np.array_equal(g[4], want)


def test_torch_tensors(pb, tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(5)
    ts = {"f32": torch.rand(3, 4, 6, generator=g),
          "f16": torch.rand(3, 4, 6, generator=g).half(),
          "bf16": torch.rand(3, 4, 6, generator=g).bfloat16(),
          "u8": torch.randint(0, 256, (3, 4, 6), generator=g,
                              dtype=torch.uint8),
          "i64": torch.randint(0, 2, (3, 4, 6), generator=g)}
    nc = torch.rand(6, 4, 3, generator=g).permute(2, 1, 0)  # not contiguous
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for k, t in ts.items():
            w.add_image(k, t, 0)
        w.add_image("noncontig", nc, 0)
        w.add_images("batch", torch.rand(6, 3, 10, 10, generator=g), 0)
    got = {g[1]: g for g in images(pb, str(tmp_path))}
    for k, t in ts.items():
        # NumPy has no bfloat16: its values, widened exactly.
        ref = t.float().numpy() if k == "bf16" else t.numpy()
        assert np.array_equal(got[k][4], torch_scaled(ref.transpose(1, 2, 0))), k
    assert np.array_equal(got["noncontig"][4],
                          torch_scaled(nc.numpy().transpose(1, 2, 0)))
    assert (got["batch"][2], got["batch"][3]) == (60, 10)


class _Canvas:
    """A figure canvas with matplotlib's Agg API (draw, buffer_rgba,
    get_width_height): matplotlib is not installed here, and add_figure
    needs only that API from it."""

    def __init__(self, rgba):
        self.rgba, self.drawn = rgba, 0

    def draw(self):
        self.drawn += 1

    def get_width_height(self):
        return self.rgba.shape[1], self.rgba.shape[0]

    def buffer_rgba(self):
        return memoryview(self.rgba.tobytes())


class _Figure:
    def __init__(self, rgba):
        self.canvas = _Canvas(rgba)


def test_add_figure(pb, tmp_path):
    try:
        import matplotlib  # noqa: F401
        pytest.skip("matplotlib present: test_add_figure_matplotlib runs")
    except ImportError:
        pass
    rng = np.random.default_rng(6)
    rgba = [rng.integers(0, 256, (7, 9, 4), dtype=np.uint8) for _ in range(2)]
    figs = [_Figure(x) for x in rgba]
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", figs[0], 1)
        w.add_figure("figs", figs, 2)
    got = images(pb, str(tmp_path))
    assert figs[0].canvas.drawn == 2  # once alone, once in the list
    assert np.array_equal(got[0][4], rgba[0][:, :, :3])  # alpha dropped
    assert (got[1][2], got[1][3]) == (18, 7)
    assert np.array_equal(got[1][4][:, :9], rgba[0][:, :, :3])
    assert np.array_equal(got[1][4][:, 9:], rgba[1][:, :, :3])


def test_add_figure_matplotlib(pb, tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", fig, 0)
    (_, _, width, height, px), = images(pb, str(tmp_path))
    assert (width, height) == (100, 50)
    assert not plt.fignum_exists(fig.number)  # closed by default


def test_bad_images_raise(tmp_path):
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match="dataformats"):
            w.add_image("x", np.zeros((3, 4, 4)), 0, dataformats="CHWX")
        with pytest.raises(ValueError, match="does not match"):
            w.add_image("x", np.zeros((4, 4)), 0)
        with pytest.raises(ValueError, match="channels"):
            w.add_image("x", np.zeros((2, 4, 4)), 0)
        with pytest.raises(TypeError):
            w.add_image("x", np.array([["a"]]), 0, dataformats="HW")
        with pytest.raises(TfbError, match="too large"):
            w.add_image("x", np.zeros((1, 70000), np.uint8), 0,
                        dataformats="HW")
        with pytest.raises(NotImplementedError, match="walltime"):
            w.add_image("x", np.zeros((3, 4, 4)), 0, walltime=1.0)


def torch_pr_reference(labels, predictions, k):
    """PyTorch's compute_curve (torch/utils/tensorboard/summary.py, as its
    behaviour is documented): buckets floor(p * (k - 1)) over [0, k - 1],
    reverse cumulative sums, precision/recall with a 1e-7 floor."""
    b = np.floor(predictions * (k - 1)).astype(np.int64)
    ok = (b >= 0) & (b <= k - 1)
    lab = labels.astype(np.float64)
    tp_b = np.bincount(b[ok], weights=lab[ok], minlength=k)
    fp_b = np.bincount(b[ok], weights=1.0 - lab[ok], minlength=k)
    tp = np.cumsum(tp_b[::-1])[::-1]
    fp = np.cumsum(fp_b[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    return np.stack((tp, fp, tn, fn, tp / np.maximum(1e-7, tp + fp),
                     tp / np.maximum(1e-7, tp + fn))).astype(np.float32)


@pytest.mark.parametrize("dtype,k", [(np.float32, 21), (np.float64, 127),
                                     (np.float32, 500)])
def test_add_pr_curve(pb, tmp_path, dtype, k):
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 400).astype(bool)
    pred = np.clip(rng.random(400) * 0.6 + labels * 0.35, 0, 1).astype(dtype)
    pred[:4] = [0.0, 1.0, 0.5, 0.05]  # edges and bucket boundaries
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_pr_curve("pr", labels, pred, 3, num_thresholds=k)
    (payload,) = [p for p in records(event_file(str(tmp_path)))
                  if b"pr_curves" in p]
    e = pb.event.Event()
    e.ParseFromString(payload)
    v = e.summary.value[0]
    kk = min(k, 127)
    assert e.step == 3 and v.tag == "pr"
    assert v.metadata.plugin_data.plugin_name == "pr_curves"
    # PrCurvePluginData{num_thresholds = 2}
    assert v.metadata.plugin_data.content == bytes([0x10, kk])
    assert v.tensor.dtype == 1
    assert [d.size for d in v.tensor.tensor_shape.dim] == [6, kk]
    got = np.array(v.tensor.float_val, np.float32).reshape(6, kk)
    assert np.array_equal(got, torch_pr_reference(labels, pred, kk))


def test_add_pr_curve_torch_tensors(pb, tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(8)
    labels = torch.randint(0, 2, (300,), generator=g)
    pred = torch.rand(300, generator=g)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_pr_curve("pr", labels, pred, 0, num_thresholds=11)
        with pytest.raises(ValueError, match="labels"):
            w.add_pr_curve("pr", labels[:5], pred, 0)
        with pytest.raises(NotImplementedError, match="weights"):
            w.add_pr_curve("pr", labels, pred, 0, weights=pred)
    e = pb.event.Event()
    e.ParseFromString([p for p in records(event_file(str(tmp_path)))
                       if b"pr_curves" in p][0])
    got = np.array(e.summary.value[0].tensor.float_val).reshape(6, 11)
    assert np.array_equal(got, torch_pr_reference(labels.numpy(),
                                                  pred.numpy(), 11))


def test_add_custom_scalars_same_bytes_as_torch(pb, tmp_path):
    """The layout record holds the very bytes PyTorch's own writer wrote for
    the same layout (testdata torch_media, SOURCES.md)."""
    import os
    src = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_media",
                       "vision")
    if not os.path.isdir(src):
        pytest.skip("no testdata torch_media")
    layout = {"Losses": {"train vs val": ["Multiline",
                                          ["loss/train", "loss/val"]]},
              "Accuracy": {"with band": ["Margin",
                                         ["acc/mean", "acc/low", "acc/high"]]}}
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_custom_scalars(layout)
        with pytest.raises(ValueError, match="Margin"):
            w.add_custom_scalars({"c": {"t": ["Margin", ["a", "b"]]}})

    def layout_value(path):
        for payload in records(path):
            e = pb.event.Event()
            e.ParseFromString(payload)
            for v in e.summary.value:
                if v.tag == "custom_scalars__config__":
                    return e.step, v
    step, ours = layout_value(event_file(str(tmp_path)))
    _, theirs = layout_value(event_file(src))
    assert step == 0
    assert ours.metadata.plugin_data.plugin_name == "custom_scalars"
    assert ours.tensor.dtype == theirs.tensor.dtype == 7
    assert list(ours.tensor.string_val) == list(theirs.tensor.string_val)


# A PyTorch media script; the test runs it with `from tfboard import
# SummaryWriter` in place of torch's import, the only change.
TORCH_SCRIPT = '''
import numpy as np
import torch
{import_line}

w = SummaryWriter(LOGDIR)
for step in (0, 7, 20):
    w.add_image("samples/gradient", torch.linspace(0, 1, 3 * 8 * 12)
                .reshape(3, 8, 12), step)
    w.add_image("samples/noise_gray", (np.arange(64, dtype=np.uint8)
                                       * step).reshape(8, 8), step,
                dataformats="HW")
    w.add_images("batch/grid", torch.rand(6, 3, 10, 10), step)
    w.add_figure("figures/confusion", FIGURE(step), step)
    labels = torch.arange(100) % 2
    w.add_pr_curve("pr/class0", labels, torch.rand(100) * 0.5 + labels * 0.4,
                   step, num_thresholds=21)
    w.add_scalar("loss/train", 1.0 / (step + 1), step)
    w.add_scalar("loss/val", 1.2 / (step + 1), step)
w.add_text("notes/markdown", "# Run notes\\n\\n| a | b |\\n| - | - |\\n| 1 | 2 |")
w.add_custom_scalars({{"Losses": {{"train vs val": ["Multiline",
                                                   ["loss/train", "loss/val"]]}}}})
w.close()
'''


def test_torch_script_by_changing_its_import(tmp_path):
    import os
    pytest.importorskip("torch")
    server = os.environ.get("TFB_SERVER")
    if not server or not os.path.exists(server):
        pytest.skip("tfboard server not built")
    from tfb_server_util import Server
    src = TORCH_SCRIPT.format(
        import_line="from tfboard import SummaryWriter")
    # matplotlib is not installed here: FIGURE makes an object with the
    # figure canvas API add_figure uses (see _Figure above).
    exec(compile(src, "torch_media_script.py", "exec"), {
        "LOGDIR": str(tmp_path / "vision"),
        "FIGURE": lambda s: _Figure(np.full((30, 40, 4), s * 10, np.uint8))})
    with Server(server, str(tmp_path)) as srv:
        srv.wait_loaded()
        tags = srv.json("/data/plugin/images/tags")["vision"]
        assert sorted(tags) == ["batch/grid", "figures/confusion",
                                "samples/gradient", "samples/noise_gray"]
        for t in tags:
            got = srv.json("/data/plugin/images/images", run="vision", tag=t)
            assert [g["step"] for g in got] == [0, 7, 20]
            st, ct, body = srv.get("/data/plugin/images/individualImage?" +
                                   got[-1]["query"])
            assert st == 200 and ct == "image/png"
            PIL.open(io.BytesIO(body)).load()
        pr = srv.json("/data/plugin/pr_curves/pr_curves", run="vision",
                      tag="pr/class0")["vision"]
        assert [c["step"] for c in pr] == [0, 7, 20]
        assert pr[0]["true_positives"][0] == 50
        (tx,) = srv.json("/data/plugin/text/text", run="vision",
                         tag="notes/markdown/text_summary")
        assert "<h1>Run notes</h1>" in tx["html"] and "<td>2</td>" in tx["html"]
        lay = srv.json("/data/plugin/custom_scalars/layout")
        assert lay["category"][0]["chart"][0]["multiline"]["tag"] == [
            "loss/train", "loss/val"]
