"""tfb_embedding's files (issue 31) read back through the projector's
routes: gen_embedding (tests/integration/gen_embedding.c) writes three
embeddings with the C writer; the server lists the run, gives each
embedding's config as PyTorch's would be (tensor name "tag:00003", the
tag's "/" as %2f in the folder, sprite dims [w, h]), sends the tensor's
exact float32 values (NaN, -0, FLT_MAX, a denormal, 0.1f included), the
metadata with its header, and a sprite whose pixels are the images tiled
as PyTorch's make_sprite tiles them. The calls it must refuse wrote
nothing (gen_embedding checks that and exits 1 otherwise).

usage: test_projector_writer.py TFBOARD GEN_EMBEDDING"""
import math
import os
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402

TFBOARD, GEN = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="tfb_projector_writer_")
P = "/data/plugin/projector/"


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def val(r, c):
    """gen_embedding.c's val."""
    special = {(2, 1): float("nan"), (3, 0): -0.0,
               (4, 2): 3.4028234663852886e38, (5, 3): 1e-40, (6, 1): 0.1}
    if (r, c) in special:
        return f32(special[(r, c)])
    return ((r * 7 + c * 3) % 11 - 5) / 8.0


def png_pixels(data):
    """(width, height, channels, rows of bytes) of an 8-bit gray or RGB
    PNG, non-interlaced (what libpng writes here), filters undone."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, t = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if t == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif t == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and interlace == 0 and ctype in (0, 2), ihdr
    ch = 1 if ctype == 0 else 3
    raw = zlib.decompress(idat)
    stride = w * ch
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b = prev[i]
            c = prev[i - ch] if i >= ch else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, ch, rows


def test_c_writer_read_back():
    run = os.path.join(TMP, "logs", "run_c")
    r = subprocess.run([GEN, run], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(run, "projector_config.pbtxt")) as f:
        config = f.read()
    # The second call for the same tag and step added no entry.
    assert config.count('tensor_name: "features/hidden:00003"') == 1, config
    with Server(TFBOARD, os.path.join(TMP, "logs"),
                "--reload_interval", "0") as srv:
        srv.wait_loaded()
        assert srv.json(P + "runs") == ["run_c"]
        info = srv.json(P + "info", run="run_c")
        assert "tfboardNotes" not in info or not any(
            k != "features/hidden:00003" for k in info["tfboardNotes"]), info
        by = {e["tensorName"]: e for e in info["embeddings"]}
        assert sorted(by) == ["features/hidden:00003", "plain:00000",
                              "rgb:00001"], by
        assert by["features/hidden:00003"] == {
            "tensorName": "features/hidden:00003",
            "metadataPath": "00003/features%2fhidden/metadata.tsv",
            "sprite": {"imagePath": "00003/features%2fhidden/sprite.png",
                       "singleImageDim": [4, 5]},
            "tensorPath": "00003/features%2fhidden/tensors.tsv",
            "tensorShape": [10, 4]}, by["features/hidden:00003"]
        assert by["plain:00000"] == {
            "tensorName": "plain:00000",
            "tensorPath": "00000/plain/tensors.tsv",
            "tensorShape": [3, 2]}, by["plain:00000"]
        # The NaN is noted (as for PyTorch's files), nothing else is.
        notes = info.get("tfboardNotes", {}).get("features/hidden:00003", [])
        assert len(notes) == 1 and "NaN" in notes[0], notes

        st, ct, body = srv.get(P + "tensor", run="run_c",
                               name="features/hidden:00003")
        assert st == 200 and ct == "application/octet-stream", (st, ct)
        got = struct.unpack("<40f", body)
        for i, g in enumerate(got):
            want = val(i // 4, i % 4)
            if math.isnan(want):
                assert math.isnan(g), (i, g)
            else:
                assert g == want and math.copysign(1, g) == math.copysign(
                    1, want), (i, g, want)
        st, _, body = srv.get(P + "tensor", run="run_c", name="plain:00000")
        assert struct.unpack("<6f", body) == tuple(i / 4 for i in range(6))

        st, _, body = srv.get(P + "metadata", run="run_c",
                              name="features/hidden:00003")
        names = ["zero", "one", "two", "three", "four", "five", "six",
                 "seven", "eight", "nine"]
        assert st == 200 and body.decode() == "digit\tname\n" + "".join(
            "%d\t%s\n" % (i, n) for i, n in enumerate(names)), body
        st, _, body = srv.get(P + "metadata", run="run_c", name="rgb:00001")
        assert body.decode() == "a\nb\nc\nd\ne\n", body

        # The sprite: 10 images of 5 x 4 (h x w), 4 a row (ceil(sqrt(10))),
        # on a black 16 x 16 RGB square, gray as R = G = B.
        st, ct, body = srv.get(P + "sprite_image", run="run_c",
                               name="features/hidden:00003")
        assert st == 200 and ct == "image/png", (st, ct)
        w, h, ch, rows = png_pixels(body)
        assert (w, h, ch) == (16, 16, 3), (w, h, ch)
        for y in range(16):
            for x in range(16):
                i = (y // 5) * 4 + x // 4
                want = 0
                if y < 15 and i < 10:
                    want = i * 25 + (y % 5) * 4 + x % 4 + 1
                px = rows[y][x * 3:x * 3 + 3]
                assert px == bytes([want] * 3), (x, y, px, want)
        # RGB images: 5 of 3 x 2, 3 a row, on a 6 x 6 square.
        st, _, body = srv.get(P + "sprite_image", run="run_c",
                              name="rgb:00001")
        w, h, ch, rows = png_pixels(body)
        assert (w, h, ch) == (6, 6, 3), (w, h, ch)
        for y in range(6):
            for x in range(6):
                i = (y // 3) * 3 + x // 2
                px = rows[y][x * 3:x * 3 + 3]
                if i < 5:
                    base = ((i * 3 + y % 3) * 2 + x % 2) * 3
                    want = bytes((k * 3 + 7) & 255
                                 for k in range(base, base + 3))
                else:
                    want = b"\0\0\0"
                assert px == want, (x, y, px, want)


if __name__ == "__main__":
    run_tests([test_c_writer_read_back])
