"""add_embedding for tfboard.SummaryWriter: the files PyTorch's
torch.utils.tensorboard writes for TensorBoard's projector (torch 1.13+,
torch/utils/tensorboard/_embedding.py and writer.py), with the same
names, layout and text:

  <log_dir>/<step, 5 digits>/<tag, '/' '\\' '%' as %2f %5c %25>/
      tensors.tsv    one row a line, str(float) values joined by tabs
      metadata.tsv   one label a line; with metadata_header, a header
                     line and the columns joined by tabs
      sprite.png     label_img tiled into a square, ceil(sqrt(N)) a row
  <log_dir>/projector_config.pbtxt
                     every embedding this writer added, rewritten whole
                     after each call (protobuf text format)

The checks are PyTorch's (one label and one image a point, a 2-D mat, a
header as wide as the rows), raised as ValueError rather than assert.
Two differences, both in what a label reads: metadata given as a tensor
or array is written from its .tolist() values ("3", where PyTorch writes
"tensor(3)"), and a label holding a tab or newline is refused (it would
shift every row after it). The PNG is written with zlib (no Pillow
needed); its pixels are PyTorch's.
"""
import math
import os
import struct
import zlib

__all__ = ["EmbeddingLog"]


def _numpy(x):
    import numpy as np
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(x, torch.Tensor):
        t = x.detach().cpu()
        if t.dtype == torch.bfloat16:
            t = t.to(torch.float32)
        return t.numpy()
    return np.asarray(x)


def encode_tag(tag):
    """PyTorch's SummaryWriter._encode: the tag as one folder name."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _pbtxt_str(s):
    """A string as protobuf's text_format writes it (C escapes, bytes
    past ASCII as octal: MessageToString's default as_utf8=False)."""
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == '"':
            out.append('\\"')
        elif c == "'":
            out.append("\\'")
        elif c == "\\":
            out.append("\\\\")
        elif b < 0x20 or b >= 0x7F:
            out.append("\\%03o" % b)
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _png_rgb(hwc):
    """An 8-bit RGB PNG of an [H, W, 3] uint8 array."""
    h, w, _ = hwc.shape
    raw = b"".join(b"\0" + hwc[y].tobytes() for y in range(h))

    def chunk(t, d):
        return (struct.pack(">I", len(d)) + t + d +
                struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def sprite_png(label_img):
    """PyTorch's make_sprite: N images [N, C, H, W] (C 1 or 3, values in
    [0, 1]) tiled ceil(sqrt(N)) a row into a square canvas of that width
    (rows past the images black), times 255, clipped, as uint8 PNG."""
    import numpy as np
    imgs = _numpy(label_img)
    if imgs.ndim != 4 or imgs.shape[1] not in (1, 3):
        raise ValueError("label_img must be [N, C, H, W] with C 1 or 3, "
                         "not %s" % (imgs.shape,))
    if imgs.shape[1] == 1:
        imgs = np.concatenate([imgs, imgs, imgs], 1)
    n, _, h, w = imgs.shape
    cols = min(n, int(math.ceil(n ** 0.5)))
    rows = int(math.ceil(n / cols))
    canvas = np.zeros((3, h * rows, w * cols), dtype=np.float64)
    for i in range(n):
        r, k = divmod(i, cols)
        canvas[:, r * h:(r + 1) * h, k * w:(k + 1) * w] = imgs[i]
    side = canvas.shape[2]
    square = np.zeros((side, side, 3))
    hwc = canvas.transpose(1, 2, 0)
    square[:hwc.shape[0], :, :] = hwc[:side]
    return _png_rgb(np.uint8((square * 255).clip(0, 255)))


def _label(v):
    s = str(v)
    if "\t" in s or "\n" in s or "\r" in s:
        raise ValueError("metadata label %r holds a tab or line break: it "
                         "would shift every row after it" % s)
    return s


def _rows(metadata):
    if hasattr(metadata, "tolist"):
        metadata = metadata.tolist()
    return list(metadata)


class EmbeddingLog:
    """The embeddings one writer added (its projector_config.pbtxt)."""

    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.entries = []  # pbtxt text of each embedding, in call order

    def add(self, mat, metadata=None, label_img=None, global_step=None,
            tag="default", metadata_header=None):
        m = _numpy(mat)
        if m.ndim != 2:
            raise ValueError("mat should be 2D, where mat.size(0) is the "
                             "number of data points (got shape %s)"
                             % (m.shape,))
        step = 0 if global_step is None else int(global_step)
        if step < 0:
            raise ValueError("global_step must be >= 0 (it names a folder)")
        tag = str(tag)
        if not tag:
            raise ValueError("tag must not be empty")
        if tag in (".", ".."):
            # One folder name ('/' is encoded); these two would name the
            # step's folder or the run's own (PyTorch writes there).
            raise ValueError("tag %r would name the step's folder or the "
                             "run's" % tag)
        subdir = "%s/%s" % (str(step).zfill(5), encode_tag(tag))
        save = os.path.join(self.log_dir, subdir)
        if os.path.exists(save) and not os.path.isdir(save):
            raise ValueError("Path: `%s` exists, but is a file. Cannot "
                             "proceed." % save)
        lines = None
        if metadata is not None:
            rows = _rows(metadata)
            if len(rows) != m.shape[0]:
                raise ValueError("#labels should equal with #data points "
                                 "(%d labels, %d points)"
                                 % (len(rows), m.shape[0]))
            if not metadata_header:
                lines = [_label(x) for x in rows]
            else:
                header = [_label(h) for h in metadata_header]
                table = [header] + [[_label(e) for e in _rows(r)]
                                    for r in rows]
                if any(len(r) != len(header) for r in table):
                    raise ValueError("len of header must be equal to the "
                                     "number of columns in metadata")
                lines = ["\t".join(r) for r in table]
        sprite = None
        if label_img is not None:
            imgs = _numpy(label_img)
            if imgs.ndim != 4 or imgs.shape[0] != m.shape[0]:
                raise ValueError("#images should equal with #data points "
                                 "(label_img [N, C, H, W]; got %s for %d "
                                 "points)" % (imgs.shape, m.shape[0]))
            sprite = (sprite_png(imgs), imgs.shape[3], imgs.shape[2])
        os.makedirs(save, exist_ok=True)
        if lines is not None:
            with open(os.path.join(save, "metadata.tsv"), "wb") as f:
                f.write(("\n".join(lines) + "\n").encode("utf-8"))
        if sprite is not None:
            with open(os.path.join(save, "sprite.png"), "wb") as f:
                f.write(sprite[0])
        # str() of each value as a Python number, as PyTorch's make_mat
        # (tolist gives the same floats as .item(), without a loop per
        # value in Python's interpreter).
        with open(os.path.join(save, "tensors.tsv"), "wb") as f:
            for row in m.tolist():
                f.write(("\t".join(map(str, row)) + "\n").encode())
        e = "embeddings {\n  tensor_name: %s\n" % _pbtxt_str(
            "%s:%s" % (tag, str(step).zfill(5)))
        if lines is not None:
            e += "  metadata_path: %s\n" % _pbtxt_str(subdir + "/metadata.tsv")
        if sprite is not None:
            e += ("  sprite {\n    image_path: %s\n    single_image_dim: %d\n"
                  "    single_image_dim: %d\n  }\n"
                  % (_pbtxt_str(subdir + "/sprite.png"), sprite[1],
                     sprite[2]))
        e += "  tensor_path: %s\n}\n" % _pbtxt_str(subdir + "/tensors.tsv")
        self.entries.append(e)
        # Rewritten whole, as PyTorch does (not every file system appends);
        # written to a temporary name first so a reader never sees half.
        path = os.path.join(self.log_dir, "projector_config.pbtxt")
        tmp = path + ".tmp%d" % os.getpid()
        with open(tmp, "w") as f:
            f.write("".join(self.entries))
        os.replace(tmp, path)
