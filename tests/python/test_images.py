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


def agg_rgb(fig):
    """The figure drawn by matplotlib's Agg canvas, as RGB [H, W, 3]."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    w, h = canvas.get_width_height()
    return np.asarray(canvas.buffer_rgba()).reshape(h, w, 4)[:, :, :3]


def test_add_figure_matplotlib(pb, tmp_path):
    """Real matplotlib figures (Debian's python3-matplotlib): one figure
    and a list of figures; closed by default as PyTorch does, kept open
    with close=False; the PNGs decode to the figures' size in pixels and
    hold what Agg draws."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    one = plt.figure(figsize=(3, 2), dpi=40)
    plt.plot([0, 1, 2], [2, 0, 1])
    plt.title("one")
    pair = []
    for k in range(2):
        f, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
        ax.bar([0, 1, 2], [1, k + 2, 3])
        pair.append(f)
    kept = plt.figure(figsize=(1, 1), dpi=30)
    plt.plot([0, 1], [0, 1])
    want_one, want_pair = agg_rgb(one), [agg_rgb(f) for f in pair]
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", one, 1)
        w.add_figure("figs", pair, 2)
        w.add_figure("kept", kept, 3, close=False)
    assert not plt.fignum_exists(one.number)  # closed by default
    assert not any(plt.fignum_exists(f.number) for f in pair)
    assert plt.fignum_exists(kept.number)  # close=False keeps it
    want_kept = agg_rgb(kept)
    plt.close(kept)
    got = {g[1]: g for g in images(pb, str(tmp_path))}
    assert (got["fig"][0], got["fig"][2], got["fig"][3]) == (1, 120, 80)
    assert np.array_equal(got["fig"][4], want_one)
    # The list: side by side (torch's grid, 8 per row), each 100 x 75.
    assert (got["figs"][0], got["figs"][2], got["figs"][3]) == (2, 200, 75)
    assert np.array_equal(got["figs"][4][:, :100], want_pair[0])
    assert np.array_equal(got["figs"][4][:, 100:], want_pair[1])
    assert not np.array_equal(want_pair[0], want_pair[1])
    assert (got["kept"][2], got["kept"][3]) == (30, 30)
    assert np.array_equal(got["kept"][4], want_kept)


def wall_times(pb, d):
    """{tag: (step, wall_time)} of the run's summary values."""
    out = {}
    for payload in records(event_file(d)):
        e = pb.event.Event()
        e.ParseFromString(payload)
        for v in e.summary.value:
            out[v.tag] = (e.step, e.wall_time)
    return out


def test_walltime_everywhere(pb, tmp_path):
    """walltime= (seconds since the epoch, any number type) becomes the
    event's wall_time in every call that takes it, as in PyTorch; without
    it, the time of the call."""
    import time
    torch = pytest.importorskip("torch")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig = plt.figure(figsize=(1, 1), dpi=10)
    except ImportError:
        fig = _Figure(np.zeros((5, 6, 4), np.uint8))
    t0 = time.time()
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_image("img", np.zeros((3, 4, 4)), 1, walltime=1600000000.25)
        w.add_images("imgs", np.zeros((2, 3, 4, 4)), 2,
                     walltime=np.int64(1600000100))
        w.add_figure("fig", fig, 3, walltime=1600000200)
        w.add_text("txt", "hello", 4, walltime=1600000300.5)
        w.add_pr_curve("pr", np.array([0, 1]), np.array([0.2, 0.9]), 5,
                       walltime=torch.tensor(1600000400.0, dtype=torch.float64))
        w.add_histogram("h", np.arange(5.0), 6, walltime=1600000500.75)
        w.add_histogram("h32", np.arange(5, dtype=np.float32), 7,
                        walltime=1600000600)
        w.add_image("now", np.zeros((3, 4, 4)), 8)
        with pytest.raises(TypeError, match="walltime"):
            w.add_text("bad", "x", 0, walltime="yesterday")
        # Still unsupported: raises, naming the argument.
        with pytest.raises(NotImplementedError, match="max_bins"):
            w.add_histogram("bad", np.ones(3), 0, walltime=1.0, max_bins=8)
    got = wall_times(pb, str(tmp_path))
    assert got["img"] == (1, 1600000000.25)
    assert got["imgs"] == (2, 1600000100.0)
    assert got["fig"] == (3, 1600000200.0)
    assert got["txt/text_summary"] == (4, 1600000300.5)
    assert got["pr"] == (5, 1600000400.0)
    assert got["h"] == (6, 1600000500.75)
    assert got["h32"] == (7, 1600000600.0)
    assert got["now"][0] == 8 and t0 <= got["now"][1] <= time.time()
    assert "bad/text_summary" not in got


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


def torch_pr_reference(labels, predictions, k, weights=1.0):
    """PyTorch's compute_curve (torch/utils/tensorboard/summary.py, as its
    behaviour is documented): buckets floor(p * (k - 1)) over [0, k - 1],
    each pair counting labels * weights (TP) and (1 - labels) * weights
    (FP), reverse cumulative sums, precision/recall with a 1e-7 floor."""
    b = np.floor(predictions * (k - 1)).astype(np.int64)
    ok = (b >= 0) & (b <= k - 1)
    lab = labels.astype(np.float64)
    wt = np.broadcast_to(np.asarray(weights, np.float64), lab.shape)
    tp_b = np.bincount(b[ok], weights=(lab * wt)[ok], minlength=k)
    fp_b = np.bincount(b[ok], weights=((1.0 - lab) * wt)[ok], minlength=k)
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
    e = pb.event.Event()
    e.ParseFromString([p for p in records(event_file(str(tmp_path)))
                       if b"pr_curves" in p][0])
    got = np.array(e.summary.value[0].tensor.float_val).reshape(6, 11)
    assert np.array_equal(got, torch_pr_reference(labels.numpy(),
                                                  pred.numpy(), 11))


def pr_rows(pb, d, tag):
    for payload in records(event_file(d)):
        e = pb.event.Event()
        e.ParseFromString(payload)
        for v in e.summary.value:
            if v.tag == tag:
                k = v.tensor.tensor_shape.dim[1].size
                return np.array(v.tensor.float_val, np.float32).reshape(6, k)
    raise KeyError(tag)


def test_add_pr_curve_weights(pb, tmp_path):
    """weights= as PyTorch: weighted TP/FP counts (float32 and float64
    predictions, a weight array, a scalar weight broadcast, torch
    tensors, 2-D labels with weights of their shape); a weight array that
    does not fit the labels raises."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    labels = rng.integers(0, 2, 300)
    pred32 = rng.random(300).astype(np.float32)
    pred64 = rng.random(300)
    wts = rng.random(300) * 3
    lab2, pred2, w2 = labels.reshape(20, 15), pred64.reshape(20, 15), \
        wts.reshape(20, 15)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_pr_curve("w32", labels, pred32, 0, num_thresholds=33,
                       weights=wts)
        w.add_pr_curve("w64", labels, pred64, 0, num_thresholds=127,
                       weights=wts.astype(np.float32))
        w.add_pr_curve("scalar", labels, pred64, 0, num_thresholds=9,
                       weights=2.5)
        w.add_pr_curve("torch", torch.from_numpy(labels),
                       torch.from_numpy(pred32), 0, num_thresholds=17,
                       weights=torch.from_numpy(wts))
        w.add_pr_curve("grid", lab2, pred2, 0, num_thresholds=21,
                       weights=w2)
        with pytest.raises(ValueError, match="weights"):
            w.add_pr_curve("bad", labels, pred64, 0, weights=wts[:7])
    d = str(tmp_path)
    assert np.array_equal(pr_rows(pb, d, "w32"),
                          torch_pr_reference(labels, pred32, 33, wts))
    assert np.array_equal(
        pr_rows(pb, d, "w64"),
        torch_pr_reference(labels, pred64, 127, wts.astype(np.float32)))
    assert np.array_equal(pr_rows(pb, d, "scalar"),
                          torch_pr_reference(labels, pred64, 9, 2.5))
    assert np.array_equal(pr_rows(pb, d, "torch"),
                          torch_pr_reference(labels, pred32, 17, wts))
    assert np.array_equal(pr_rows(pb, d, "grid"),
                          torch_pr_reference(labels, pred64, 21, wts))
    unweighted = torch_pr_reference(labels, pred32, 33)
    assert not np.array_equal(pr_rows(pb, d, "w32"), unweighted)


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
