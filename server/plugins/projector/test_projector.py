"""The projector's routes over HTTP (issue 31): PyTorch's own add_embedding
files give the runs, info, tensor bytes, metadata and sprite TensorBoard
2.21 serves (torch_more/TENSORBOARD_ANSWERS.json); hostile embeddings
(metadata with more or fewer rows than the tensor, a sprite that is not a
multiple of its images, NaN in the tensor, rows of different lengths, a
line past the dimension bound, paths outside the logdir, a FIFO, a config
that does not parse) each get a clear error or note, and every other
embedding and run is still served.

usage: test_projector.py TFBOARD"""
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, record  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_projector_")
TORCH = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_more")
P = "/data/plugin/projector/"


def sha(b):
    return hashlib.sha256(b).hexdigest()


def png(w, h):
    """A real 8-bit gray PNG of w x h."""
    rows = b"".join(b"\0" + bytes((x * 7 + y * 13) & 255 for x in range(w))
                    for y in range(h))

    def chunk(t, d):
        return (struct.pack(">I", len(d)) + t + d +
                struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_torch_files_match_tensorboard():
    """runs, info, tensor (all rows and 50), metadata (all and 20 rows) and
    sprite_image as TensorBoard 2.21 answers them for PyTorch's files,
    the tag with a slash (folder features%2fhidden_1) included."""
    if not os.path.isdir(TORCH):
        print("skip: no torch_more testdata")
        return
    with open(os.path.join(TORCH, "TENSORBOARD_ANSWERS.json")) as f:
        want = json.load(f)["projector"]
    with Server(TFBOARD, TORCH, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        assert srv.json(P + "runs") == want["runs"]
        for run, info in want["info"].items():
            assert srv.json(P + "info", run=run) == info
        for run, by_name in want["tensor"].items():
            for name, answers in by_name.items():
                for kind, a in answers.items():
                    q = {"run": run, "name": name}
                    if kind == "rows50":
                        q["num_rows"] = 50
                    st, ct, body = srv.get(P + "tensor", **q)
                    assert st == a["status"], (name, kind, st, body[:200])
                    assert ct == a["content_type"], ct
                    assert len(body) == a["bytes"], (name, kind, len(body))
                    assert sha(body) == a["sha256"], (name, kind)
        for run, by_name in want["metadata"].items():
            for name, answers in by_name.items():
                for kind, a in answers.items():
                    q = {"run": run, "name": name}
                    if kind == "rows20":
                        q["num_rows"] = 20
                    st, ct, body = srv.get(P + "metadata", **q)
                    assert st == a["status"], (name, kind, st)
                    assert ct.startswith("text/plain"), ct
                    assert body.decode() == a["text"], (name, kind)
        for run, by_name in want["sprite"].items():
            for name, a in by_name.items():
                st, ct, body = srv.get(P + "sprite_image", run=run,
                                       name=name)
                assert st == a["status"], (name, st, body[:200])
                if st == 200:
                    assert ct == a["content_type"], ct
                    assert len(body) == a["bytes"] and sha(body) == a["sha256"]
                else:
                    assert b"No sprite image file found" in body, body
        # The listing enables the tab for the embedding's run.
        listing = srv.json("/data/plugins_listing")
        assert listing["projector"]["enabled"] is True
        # TensorBoard's errors: unknown run, missing name, bad num_rows.
        st, _, body = srv.get(P + "info", run="nope")
        assert st == 400 and b'Unknown run: \\"nope\\"' in body, body
        st, _, body = srv.get(P + "tensor", run="embed_1")
        assert st == 400 and b"name" in body, body
        st, _, body = srv.get(P + "tensor", run="embed_1",
                              name="features:00000", num_rows=0)
        assert st == 400 and b"num_rows" in body, body
        # ":0" is dropped from names, as TensorBoard does.
        st, _, body = srv.get(P + "tensor", run="embed_1",
                              name="features:00000", num_rows=1)
        assert st == 200 and len(body) == 16 * 4


def write_run(logdir, run, config, files):
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "events.out.tfevents.1.host"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
    with open(os.path.join(d, "projector_config.pbtxt"), "w") as f:
        f.write(config)
    for rel, data in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())


def tsv(rows):
    return "".join("\t".join(str(v) for v in r) + "\n" for r in rows)


def emb(name, tensor, meta=None, sprite=None, dim=None):
    s = 'embeddings {\n  tensor_name: "%s"\n  tensor_path: "%s"\n' % (
        name, tensor)
    if meta:
        s += '  metadata_path: "%s"\n' % meta
    if sprite:
        s += ('  sprite {\n    image_path: "%s"\n    single_image_dim: %d\n'
              '    single_image_dim: %d\n  }\n' % (sprite, dim, dim))
    return s + "}\n"


def test_hostile_embeddings():
    """Each hostile embedding gets its error or note; the good one beside
    it, and the other runs, are served whole."""
    logdir = os.path.join(TMP, "hostile")
    good = [[float(i), float(i % 3), 0.5] for i in range(10)]
    nan = [[1.0, 2.0], [float("nan"), 1.0], [3.0, float("inf")]]
    write_run(logdir, "mixed", "".join([
        emb("good", "g/tensors.tsv", "g/metadata.tsv", "g/sprite.png", 4),
        emb("more_meta", "g/tensors.tsv", "m/more.tsv"),
        emb("fewer_meta", "g/tensors.tsv", "m/fewer.tsv"),
        emb("odd_sprite", "g/tensors.tsv", None, "s/odd.png", 4),
        emb("small_sprite", "g/tensors.tsv", None, "s/small.png", 4),
        emb("not_png", "g/tensors.tsv", None, "s/not.png", 4),
        emb("nan", "n/tensors.tsv"),
        emb("ragged", "r/tensors.tsv"),
        emb("words", "w/tensors.tsv"),
        emb("wide", "x/tensors.tsv"),
        emb("outside", "../../../../../../etc/passwd", "/etc/passwd"),
        emb("fifo", "f/fifo"),
        emb("missing", "nothing/here.tsv"),
    ]), {
        "g/tensors.tsv": tsv(good),
        # header + 10 rows: TensorBoard's count
        "g/metadata.tsv": "label\tsplit\n" + "".join(
            "c%d\tt\n" % i for i in range(10)),
        "g/sprite.png": png(16, 12),  # 4x3 images of 4x4 for 10 points
        "m/more.tsv": "".join("r%d\n" % i for i in range(14)),
        "m/fewer.tsv": "a\tb\n" + "".join("r%d\tx\n" % i for i in range(7)),
        "s/odd.png": png(18, 13),  # not a multiple of 4
        "s/small.png": png(8, 4),  # 2 images for 10 points
        "s/not.png": b"GIF89a not a png",
        "n/tensors.tsv": tsv(nan),
        "r/tensors.tsv": "1\t2\t3\n4\t5\n",
        "w/tensors.tsv": "1\t2\nhello\t3\n",
        "x/tensors.tsv": "\t".join(["1"] * 100001) + "\n",
    })
    os.makedirs(os.path.join(logdir, "mixed", "f"))
    os.mkfifo(os.path.join(logdir, "mixed", "f", "fifo"))
    # A run whose config does not parse, and a good run beside it.
    write_run(logdir, "broken", 'embeddings { tensor_name: "x\n', {})
    write_run(logdir, "fine", emb("e", "t.tsv"),
              {"t.tsv": tsv([[1, 2], [3, 4]])})
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        runs = srv.json(P + "runs")
        assert sorted(runs) == ["broken", "fine", "mixed"], runs
        st, _, body = srv.get(P + "info", run="broken")
        assert st == 400 and b"line 1" in body and b"not closed" in body, \
            body
        assert srv.json(P + "info", run="fine")["embeddings"][0][
            "tensorShape"] == [2, 2]
        info = srv.json(P + "info", run="mixed")
        notes = info["tfboardNotes"]
        shapes = {e["tensorName"]: e.get("tensorShape")
                  for e in info["embeddings"]}
        assert len(info["embeddings"]) == 13  # none lost
        assert shapes["good"] == [10, 3] and "good" not in notes, notes
        assert any("14 rows for 10 points (more)" in n
                   for n in notes["more_meta"]), notes["more_meta"]
        assert any("7 rows for 10 points (fewer)" in n
                   for n in notes["fewer_meta"]), notes["fewer_meta"]
        assert any("18 x 13 pixels is not a multiple of its 4 x 4" in n
                   for n in notes["odd_sprite"]), notes["odd_sprite"]
        assert any("holds 2 images for 10 points" in n
                   for n in notes["small_sprite"]), notes["small_sprite"]
        assert any("not a PNG or JPEG" in n for n in notes["not_png"])
        assert shapes["nan"] == [3, 2]
        assert any("2 values are NaN or infinite" in n
                   for n in notes["nan"]), notes["nan"]
        assert shapes["ragged"] is None
        assert any("line 2 has 2 values; the rows before it have 3" in n
                   for n in notes["ragged"]), notes["ragged"]
        assert any('"hello" is not a number' in n for n in notes["words"])
        assert any("more than 100000 values" in n for n in notes["wide"])
        assert any("outside the logdir" in n for n in notes["outside"])
        assert any("not found, or is not a file" in n or "not a file" in n
                   for n in notes["fifo"]), notes["fifo"]
        assert any("not found" in n for n in notes["missing"])

        def tensor(name, **q):
            return srv.get(P + "tensor", run="mixed", name=name, **q)
        st, ct, body = tensor("good")
        assert st == 200 and body == struct.pack("<30f",
                                                 *sum(good, [])), st
        st, _, body = tensor("nan")
        vals = struct.unpack("<6f", body)
        assert vals[0] == 1.0 and vals[2] != vals[2] and vals[5] == \
            float("inf")
        for name, frag in [("ragged", b"line 2 has 2 values"),
                           ("words", b"not a number"),
                           ("wide", b"more than 100000 values"),
                           ("outside", b"outside the logdir"),
                           ("fifo", b"not a file"),
                           ("missing", b"not found")]:
            st, ct, body = tensor(name)
            assert st == 400 and frag in body, (name, st, body[:300])
        # Metadata is served as it is, whatever its row count.
        st, _, body = srv.get(P + "metadata", run="mixed", name="more_meta")
        assert st == 200 and body.count(b"\n") == 14
        st, _, body = srv.get(P + "metadata", run="mixed", name="fewer_meta",
                              num_rows=3)
        assert st == 200 and body == b"a\tb\nr0\tx\nr1\tx\nr2\tx\n", body
        st, _, body = srv.get(P + "metadata", run="mixed", name="outside")
        assert st == 400 and b"outside the logdir" in body, body
        # Sprites: the odd one is served (the page uses its whole images);
        # bytes that are not an image are refused.
        st, ct, body = srv.get(P + "sprite_image", run="mixed",
                               name="odd_sprite")
        assert st == 200 and ct == "image/png" and body == png(18, 13)
        st, _, body = srv.get(P + "sprite_image", run="mixed", name="not_png")
        assert st == 400 and b"not a PNG or JPEG" in body
        # PCA: NaN rows left out and counted; past the bound, 400.
        p = srv.json(P + "pca", run="mixed", name="nan", components=2)
        assert p["rows_skipped"] == 2 and p["rows_used"] == 1, p
        st, _, body = srv.get(P + "pca", run="mixed", name="ragged")
        assert st == 400
        # The server still answers everything else.
        assert srv.json(P + "runs") == runs


def test_tensorflow_assets_dir_and_logdir_run():
    """TensorFlow's <run>/plugins/projector/ config wins over the run's
    own; a logdir without runs is run "."; a binary tensor file is read
    with the config's tensor_shape, as TensorBoard does."""
    logdir = os.path.join(TMP, "tf")
    write_run(logdir, "r", emb("own", "t.tsv"), {"t.tsv": "1\t2\n"})
    assets = os.path.join(logdir, "r", "plugins", "projector")
    os.makedirs(assets)
    raw = struct.pack("<4f", 1.5, -2.0, 3.25, 0.0)
    with open(os.path.join(assets, "projector_config.pbtxt"), "w") as f:
        f.write('embeddings {\n  tensor_name: "emb:0"\n'
                '  tensor_shape: 2\n  tensor_shape: 2\n'
                '  tensor_path: "raw.bin"\n}\n')
    with open(os.path.join(assets, "raw.bin"), "wb") as f:
        f.write(raw)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        info = srv.json(P + "info", run="r")
        assert info == {"embeddings": [{"tensorName": "emb",
                                        "tensorShape": [2, 2],
                                        "tensorPath": "raw.bin"}]}, info
        st, ct, body = srv.get(P + "tensor", run="r", name="emb:0")
        assert st == 200 and body == raw
    only = os.path.join(TMP, "only_config")
    os.makedirs(only)
    with open(os.path.join(only, "projector_config.pbtxt"), "w") as f:
        f.write(emb("e", "t.tsv"))
    with open(os.path.join(only, "t.tsv"), "w") as f:
        f.write("1\t2\t3\n")
    with Server(TFBOARD, only, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        assert srv.json(P + "runs") == ["."]
        st, _, body = srv.get(P + "tensor", run=".", name="e")
        assert st == 200 and body == struct.pack("<3f", 1, 2, 3)


if __name__ == "__main__":
    try:
        run_tests([test_torch_files_match_tensorboard,
                   test_hostile_embeddings,
                   test_tensorflow_assets_dir_and_logdir_run])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
