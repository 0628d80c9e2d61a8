"""An animated GIF encoder (GIF89a, LZW), for add_video: PyTorch writes a
video as an animated GIF image summary (through moviepy); tfboard writes
the same kind of file with no dependency beyond this module.

encode(frames, fps) takes frames as rows of RGB triples (any sequence of
H rows of W (r, g, b) tuples, or NumPy uint8 arrays [H, W, 3]) and returns
the GIF's bytes: every frame with its own colour table, shown 100 / fps
hundredths of a second, the whole looping forever (the NETSCAPE2.0
extension, as moviepy writes it). A frame with at most 256 colours is
exact; one with more is mapped to a fixed 256-colour palette (8 levels of
red and green, 4 of blue), nearest level per channel.

Pure Python (NumPy optional), so the tests' generators can use it too.
"""
import struct

__all__ = ["encode", "MAX_SIDE", "MAX_FRAMES"]

# GIF stores sides as 16-bit numbers.
MAX_SIDE = 65535
# Frames of one video at most: 10 minutes at 30 fps. Each frame is encoded
# whole in memory by a Python loop, so this also bounds a call's time.
MAX_FRAMES = 18000

_LZW_MAX_CODE = 4096  # GIF's codes are at most 12 bits


def _lzw(indices, min_size):
    """The LZW code stream of indices (bytes) with min_size-bit symbols,
    packed LSB first, as GIF's image data (without the sub-blocks)."""
    clear = 1 << min_size
    eoi = clear + 1
    out = bytearray()
    acc = 0
    nbits = 0
    width = min_size + 1

    def emit(code, w):
        nonlocal acc, nbits
        acc |= code << nbits
        nbits += w
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8

    table = {}
    next_code = eoi + 1
    emit(clear, width)
    if not indices:
        emit(eoi, width)
        if nbits:
            out.append(acc & 0xFF)
        return bytes(out)
    prefix = indices[0]
    for b in indices[1:]:
        key = (prefix << 8) | b
        c = table.get(key)
        if c is not None:
            prefix = c
            continue
        emit(prefix, width)
        if next_code < _LZW_MAX_CODE:
            table[key] = next_code
            next_code += 1
            # The decoder adds each entry one code later than this side,
            # so it widens when its table reaches 1 << width; here that is
            # one entry further.
            if next_code > (1 << width) and width < 12:
                width += 1
        else:
            emit(clear, width)
            table.clear()
            next_code = eoi + 1
            width = min_size + 1
        prefix = b
    emit(prefix, width)
    emit(eoi, width)
    if nbits:
        out.append(acc & 0xFF)
    return bytes(out)


def _sub_blocks(data):
    out = bytearray()
    for i in range(0, len(data), 255):
        chunk = data[i:i + 255]
        out.append(len(chunk))
        out += chunk
    out.append(0)
    return bytes(out)


def _levels(v, n):
    """v (0..255) to the nearest of n evenly spaced levels' index."""
    return (v * (n - 1) + 127) // 255


def _palette(pixels):
    """(colour table as a list of (r, g, b), indices as bytes) for one
    frame's pixels (a list of (r, g, b))."""
    colours = {}
    for p in pixels:
        if p not in colours:
            colours[p] = len(colours)
            if len(colours) > 256:
                break
    if len(colours) <= 256:
        table = list(colours)
        return table, bytes(colours[p] for p in pixels)
    # 3-3-2: 8 red, 8 green, 4 blue levels.
    table = [(r * 255 // 7, g * 255 // 7, b * 255 // 3)
             for r in range(8) for g in range(8) for b in range(4)]
    idx = bytes((_levels(r, 8) << 5) | (_levels(g, 8) << 2) | _levels(b, 4)
                for (r, g, b) in pixels)
    return table, idx


def _rows(frame):
    """A frame as (height, width, list of (r, g, b))."""
    try:
        import numpy as np
        if isinstance(frame, np.ndarray):
            a = np.ascontiguousarray(frame, dtype=np.uint8)
            if a.ndim != 3 or a.shape[2] != 3:
                raise ValueError("a frame must be [H, W, 3], not %s"
                                 % (a.shape,))
            h, w = a.shape[:2]
            flat = a.reshape(-1, 3).tolist()
            return h, w, [tuple(p) for p in flat]
    except ImportError:
        pass
    rows = [list(r) for r in frame]
    h = len(rows)
    w = len(rows[0]) if h else 0
    px = []
    for r in rows:
        if len(r) != w:
            raise ValueError("the rows of a frame differ in length")
        px.extend(tuple(int(c) for c in p) for p in r)
    return h, w, px


def encode(frames, fps=4):
    """The animated GIF of frames (see the module's docstring)."""
    frames = list(frames)
    if not frames:
        raise ValueError("a video needs at least one frame")
    if len(frames) > MAX_FRAMES:
        raise ValueError("%d frames: at most %d" % (len(frames), MAX_FRAMES))
    if not fps > 0:
        raise ValueError("fps must be positive, not %r" % (fps,))
    # Hundredths of a second; browsers show 0 or 1 as 10, so 2 at least.
    delay = max(2, min(65535, int(round(100.0 / fps))))
    decoded = [_rows(f) for f in frames]
    h, w = decoded[0][0], decoded[0][1]
    if not (0 < h <= MAX_SIDE and 0 < w <= MAX_SIDE):
        raise ValueError("a frame of %d x %d pixels (1 to %d a side)"
                         % (h, w, MAX_SIDE))
    out = bytearray(b"GIF89a")
    # Logical screen: no global colour table; each frame has its own.
    out += struct.pack("<HHBBB", w, h, 0x70, 0, 0)
    # Loop forever (NETSCAPE2.0 application extension).
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    for fh, fw, px in decoded:
        if (fh, fw) != (h, w):
            raise ValueError("frames differ in size: %dx%d and %dx%d"
                             % (w, h, fw, fh))
        table, idx = _palette(px)
        bits = max(1, (len(table) - 1).bit_length())
        table += [(0, 0, 0)] * ((1 << bits) - len(table))
        # Graphic control: disposal 1 (leave the frame), the delay.
        out += struct.pack("<BBBBHBB", 0x21, 0xF9, 4, 0x04, delay, 0, 0)
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0x80 | (bits - 1))
        out += bytes(c for rgb in table for c in rgb)
        min_size = max(2, bits)
        out.append(min_size)
        out += _sub_blocks(_lzw(idx, min_size))
    out.append(0x3B)
    return bytes(out)
