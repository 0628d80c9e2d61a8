"""Images for tfboard.SummaryWriter: add_image, add_images and add_figure
with torch.utils.tensorboard's conventions, written by libtfboard's
tfb_image (PNG encoded on the writer's background thread).

Conventions kept from PyTorch (torch/utils/tensorboard/summary.py, 1.13+):
  * dataformats CHW, HWC, HW (add_image) and NCHW, NHWC (add_images), any
    order of the letters; a batch is tiled into one image, 8 per row;
  * one channel (and HW) becomes three equal channels (RGB);
  * uint8 values are taken as they are; any other dtype (float, int,
    bool) is multiplied by 255, clipped to [0, 255] and truncated to uint8.
"""
import ctypes

from ._lib import check, lib

__all__ = ["to_hwc_uint8", "figure_to_chw", "log_image", "log_pr_curve",
           "layout_pb", "log_custom_scalars", "log_audio", "video_frames",
           "log_video"]

# Their ctypes declarations are in _lib._declare (made at first load).


def _numpy(x):
    """A NumPy view or copy of a torch tensor, NumPy array or sequence."""
    import numpy as np
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(x, torch.Tensor):
        t = x.detach().cpu()
        if t.dtype in (torch.bfloat16,):
            t = t.to(torch.float32)  # NumPy has no bfloat16
        return t.numpy()
    return np.asarray(x)


def _tile(nchw, ncols=8):
    """N images [N, C, H, W] (C 1, 3 or 4) side by side, ncols per row,
    in one [C, H*rows, W*cols] image (empty places are 0)."""
    import numpy as np
    if nchw.shape[1] == 1:
        nchw = np.repeat(nchw, 3, axis=1)
    n, c, h, w = nchw.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    out = np.zeros((c, h * rows, w * cols), dtype=nchw.dtype)
    for i in range(n):
        r, k = divmod(i, cols)
        out[:, r * h:(r + 1) * h, k * w:(k + 1) * w] = nchw[i]
    return out


def to_hwc_uint8(img, dataformats):
    """img in dataformats as PyTorch's add_image/add_images read it, as a
    C-contiguous uint8 [H, W, C] array with C in (3, 4)."""
    import numpy as np
    a = _numpy(img)
    fmt = str(dataformats).upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW") or \
            len(fmt) < 2:
        raise ValueError("dataformats %r: use letters of NCHW, each once "
                         "(CHW, HWC, HW, NCHW, NHWC)" % (dataformats,))
    if a.ndim != len(fmt):
        raise ValueError("an image of shape %s does not match "
                         "dataformats %r" % (tuple(a.shape), dataformats))
    if a.dtype.kind not in "fiub":
        raise TypeError("image values of dtype %s are not numbers" % a.dtype)
    if len(fmt) == 4:
        a = _tile(a.transpose([fmt.index(ch) for ch in "NCHW"]))
        a = a.transpose(1, 2, 0)
    elif len(fmt) == 3:
        if "N" in fmt:
            raise ValueError("dataformats %r: a single image is CHW, HWC "
                             "or HW" % (dataformats,))
        a = a.transpose([fmt.index(ch) for ch in "HWC"])
        if a.shape[2] == 1:
            a = np.repeat(a, 3, axis=2)
    else:
        if fmt not in ("HW", "WH"):
            raise ValueError("dataformats %r: two letters are HW"
                             % (dataformats,))
        a = a.transpose([fmt.index(ch) for ch in "HW"])
        a = np.stack([a, a, a], axis=2)
    if a.shape[2] not in (3, 4):
        raise ValueError("an image has 1, 3 or 4 channels, not %d"
                         % a.shape[2])
    if a.dtype != np.uint8:
        a = np.clip(a.astype(np.float32) * 255.0, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(a)


def log_image(w, tag_bytes, img, step, dataformats, what, walltime=None):
    """Converts img and hands it to tfb_image (tfb_image_at with a
    walltime, seconds since the epoch)."""
    a = to_hwc_uint8(img, dataformats)
    h, wd, c = a.shape
    if walltime is None:
        rc = lib.tfb_image(w, tag_bytes, a.ctypes.data, h, wd, c, step)
    else:
        rc = lib.tfb_image_at(w, tag_bytes, a.ctypes.data, h, wd, c, step,
                              walltime)
    check(rc, what)


def log_audio(w, tag_bytes, snd, step, sample_rate, what, walltime=None):
    """snd as PyTorch's add_audio takes it (squeezed to 1-D, clipped to
    [-1, 1]) handed to tfb_audio as float32 mono at sample_rate (rounded
    to a whole number, as Python's wave module does)."""
    import numpy as np
    a = np.asarray(_numpy(snd)).squeeze()
    if a.ndim != 1:
        raise ValueError("%s: the clip must be 1-D after squeeze, not %s"
                         % (what, a.shape))
    a = np.ascontiguousarray(a, dtype=np.float32)
    rate = float(int(round(float(sample_rate))))
    if walltime is None:
        rc = lib.tfb_audio(w, tag_bytes, a.ctypes.data, a.shape[0], 1, rate,
                           step)
    else:
        rc = lib.tfb_audio_at(w, tag_bytes, a.ctypes.data, a.shape[0], 1,
                              rate, step, walltime)
    check(rc, what)


def video_frames(vid):
    """vid [N, T, C, H, W] as PyTorch's add_video reads it, as T frames
    uint8 [H', W', 3]: the N videos tiled in a grid of a power-of-two
    number of rows (PyTorch's _prepare_video: N padded with black videos
    to a power of two), uint8 as is, other dtypes times 255, clipped and
    truncated; one channel repeated to three, a fourth (alpha) dropped
    (GIF has none)."""
    import numpy as np
    v = np.asarray(_numpy(vid))
    if v.ndim != 5:
        raise ValueError("a video is [N, T, C, H, W], not %s" % (v.shape,))
    if v.dtype == np.uint8:
        v = v.astype(np.float32) / 255.0
    v = v.astype(np.float32)
    b, t, c, h, w = v.shape
    if c not in (1, 3, 4):
        raise ValueError("a video has 1, 3 or 4 channels, not %d" % c)
    if b == 0 or t == 0 or h == 0 or w == 0:
        raise ValueError("an empty video: %s" % (v.shape,))
    if b & (b - 1):
        extra = (1 << b.bit_length()) - b
        v = np.concatenate([v, np.zeros((extra, t, c, h, w), np.float32)])
    n_rows = 2 ** ((b.bit_length() - 1) // 2)
    n_cols = v.shape[0] // n_rows
    v = v.reshape(n_rows, n_cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    v = v.reshape(t, n_rows * h, n_cols * w, c)
    v = np.clip(v * 255.0, 0, 255).astype(np.uint8)
    if c == 1:
        v = np.repeat(v, 3, axis=3)
    return np.ascontiguousarray(v[..., :3])


def log_video(w, tag_bytes, vid, step, fps, what, walltime=None):
    """The video as an animated GIF (tfboard.gif) through
    tfb_image_encoded: an image value TensorBoard's Images tab shows, and
    browsers animate."""
    from . import gif
    frames = video_frames(vid)
    data = gif.encode(list(frames), fps)
    if walltime is None:
        rc = lib.tfb_image_encoded(w, tag_bytes, data, len(data), step)
    else:
        rc = lib.tfb_image_encoded_at(w, tag_bytes, data, len(data), step,
                                      walltime)
    check(rc, what)


def figure_to_chw(figure, close=True):
    """A matplotlib figure rendered to RGB [3, H, W] uint8, as PyTorch's
    figure_to_image; a list of figures gives [N, 3, H, W]. With close, the
    figures are closed (pyplot.close) once drawn."""
    import numpy as np
    if isinstance(figure, (list, tuple)):
        return np.stack([figure_to_chw(f, close) for f in figure])
    canvas = figure.canvas
    try:
        # Whatever backend the figure has, draw it with Agg (as PyTorch).
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        canvas = FigureCanvasAgg(figure)
    except ImportError:
        pass
    canvas.draw()
    w, h = canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8)
    chw = rgba.reshape(h, w, 4)[:, :, :3].transpose(2, 0, 1).copy()
    if close:
        try:
            import matplotlib.pyplot as plt
            plt.close(figure)
        except ImportError:
            pass
    return chw


# The most thresholds a PR curve has: libtfboard's TFB_PR_MAX_THRESHOLDS,
# which is PyTorch's cap (add_pr_curve takes min(num_thresholds, 127)).
PR_MAX_THRESHOLDS = 127


def pr_thresholds(num_thresholds, what):
    """num_thresholds as the C int tfb_pr_curve takes: a whole number
    (an int, or a float without a fraction) of at least 2, capped at
    PR_MAX_THRESHOLDS as PyTorch caps it. Checked here because ctypes
    wraps a Python int to 32 bits without a word (2**32 + 3 gave 3
    thresholds)."""
    import operator
    try:
        n = operator.index(num_thresholds)
    except TypeError:
        if isinstance(num_thresholds, float) and num_thresholds.is_integer():
            n = int(num_thresholds)
        else:
            raise TypeError("%s: num_thresholds must be a whole number, not "
                            "%r" % (what, num_thresholds)) from None
    if n < 2:
        raise ValueError("%s: num_thresholds must be at least 2, not %d"
                         % (what, n))
    return min(n, PR_MAX_THRESHOLDS)


def log_pr_curve(w, tag_bytes, labels, predictions, step, num_thresholds,
                 what, weights=None, walltime=None):
    """labels and predictions (any shape, same size) to tfb_pr_curve: the
    float32 path for float32 (and narrower) predictions, float64 otherwise,
    so buckets fall as NumPy computes them in PyTorch's writer. weights
    (a number or an array the labels' shape broadcasts to, as NumPy does
    in PyTorch's compute_curve) make each pair count its weight; with
    weights or a walltime the call is tfb_pr_curve_at."""
    import numpy as np
    k = pr_thresholds(num_thresholds, what)
    lab = _numpy(labels)
    pred = _numpy(predictions).reshape(-1)
    wts = None
    if weights is not None:
        wts = _numpy(weights)
        if wts.dtype.kind not in "fiub":
            raise TypeError("%s: weights must be numbers" % what)
        try:
            wts = np.broadcast_to(wts, lab.shape)
        except ValueError:
            raise ValueError("%s: weights of shape %s for labels of shape %s"
                             % (what, tuple(wts.shape), tuple(lab.shape)))
        wts = np.ascontiguousarray(wts.reshape(-1), dtype=np.float64)
    lab = lab.reshape(-1)
    if lab.size != pred.size:
        raise ValueError("%s: %d labels for %d predictions"
                         % (what, lab.size, pred.size))
    if pred.dtype.kind not in "fiub" or lab.dtype.kind not in "fiub":
        raise TypeError("%s: labels and predictions must be numbers" % what)
    f32 = pred.dtype.kind == "f" and pred.dtype.itemsize <= 4
    dt = np.float32 if f32 else np.float64
    pred = np.ascontiguousarray(pred, dtype=dt)
    lab = np.ascontiguousarray(lab != 0, dtype=dt)
    if wts is None and walltime is None:
        fn = lib.tfb_pr_curve if f32 else lib.tfb_pr_curve_f64
        rc = fn(w, tag_bytes, lab.ctypes.data, pred.ctypes.data, pred.size,
                k, step)
    else:
        import time
        fn = lib.tfb_pr_curve_at if f32 else lib.tfb_pr_curve_f64_at
        rc = fn(w, tag_bytes, lab.ctypes.data, pred.ctypes.data,
                None if wts is None else wts.ctypes.data, pred.size,
                k, step,
                time.time() if walltime is None else walltime)
    check(rc, what)


def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _ld(field, payload):
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def layout_pb(layout):
    """PyTorch's add_custom_scalars layout {category: {chart title:
    ["Multiline", [tags]] or ["Margin", [value, lower, upper]]}} as a
    serialized tensorboard.Layout (Category{title=1, chart=2},
    Chart{title=1, multiline=2{tag=1}, margin=3{series=1{value=1,
    lower=2, upper=3}}})."""
    cats = b""
    for cat, charts in layout.items():
        c = _ld(1, str(cat).encode())
        for title, meta in charts.items():
            kind, tags = meta[0], list(meta[1])
            if kind == "Margin":
                if len(tags) != 3:
                    raise ValueError("add_custom_scalars: a Margin chart "
                                     "names 3 tags (value, lower, upper)")
                body = _ld(3, _ld(1, b"".join(
                    _ld(i + 1, str(t).encode()) for i, t in enumerate(tags))))
            elif kind == "Multiline":
                body = _ld(2, b"".join(_ld(1, str(t).encode())
                                       for t in tags))
            else:
                raise ValueError("add_custom_scalars: chart kind %r is not "
                                 "Multiline or Margin" % (kind,))
            c += _ld(2, _ld(1, str(title).encode()) + body)
        cats += _ld(2, c)
    return cats


def log_custom_scalars(w, layout, what):
    b = layout_pb(layout)
    check(lib.tfb_custom_scalars_layout(w, b, len(b)), what)
