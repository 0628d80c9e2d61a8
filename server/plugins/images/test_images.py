"""The images dashboard over HTTP (issue 22): PyTorch's own files give the
tags, steps and bytes TensorBoard serves; TF1 and TF2 image records (several
images per step, metadata on the first value only); hostile images (cut
short, a header claiming 100,000 x 100,000 pixels, HTML) are refused with a
clear error while the server keeps serving; 100,000 images in one run are
all listed and served.

usage: test_images.py TFBOARD GEN_LOGDIR"""
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import zlib

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, key, ld, record, varint  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_images_")
TORCH = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_media")


def png(w, h, seed=0, channels=3):
    """A real PNG (8-bit, gray/RGB/RGBA), pixels from seed."""
    ctype = {1: 0, 3: 2, 4: 6}[channels]
    rows = b"".join(b"\0" + bytes((seed + x * 7 + y * 13 + c) & 255
                                  for x in range(w) for c in range(channels))
                    for y in range(h))

    def chunk(t, d):
        return (struct.pack(">I", len(d)) + t + d +
                struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def tf1_image(tag, data, w, h, channels=3):
    """Summary.Value{tag, image{height, width, colorspace, encoded}}."""
    img = (key(1, 0) + varint(h) + key(2, 0) + varint(w) + key(3, 0) +
           varint(channels) + ld(4, data))
    return ld(1, ld(1, tag.encode()) + ld(4, img))


def tf2_images(tag, w, h, images, meta=True):
    """Summary.Value{tag, metadata{plugin "images"}, tensor: DT_STRING
    [2 + k] = width, height, images...}."""
    shape = ld(2, key(1, 0) + varint(2 + len(images)))
    t = key(1, 0) + varint(7) + ld(2, shape)
    for s in [str(w).encode(), str(h).encode()] + list(images):
        t += ld(8, s)
    v = ld(1, tag.encode())
    if meta:
        v += ld(9, ld(1, ld(1, b"images")))
    return ld(1, v + ld(8, t))


def write(logdir, run, events, name="events.out.tfevents.1.host"):
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for ev in events:
            f.write(record(ev))


def sha(b):
    return hashlib.sha256(b).hexdigest()


def image_at(srv, query):
    return srv.get("/data/plugin/images/individualImage?" + query)


def test_torch_files_match_tensorboard():
    """Every image TensorBoard 2.21 serves for PyTorch's files: same tags,
    steps and bytes (SHA-256)."""
    if not os.path.isdir(TORCH):
        print("skip: no torch_media testdata")
        return
    with open(os.path.join(TORCH, "TENSORBOARD_ANSWERS.json")) as f:
        want = json.load(f)["images"]
    with Server(TFBOARD, TORCH, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        tags = srv.json("/data/plugin/images/tags")
        assert set(tags) == set(want), tags
        for run, by_tag in want.items():
            assert set(tags[run]) == set(by_tag), (run, tags[run])
            for tag, imgs in by_tag.items():
                assert tags[run][tag]["samples"] == 1
                got = srv.json("/data/plugin/images/images", run=run, tag=tag)
                assert [g["step"] for g in got] == [i["step"] for i in imgs]
                for g, i in zip(got, imgs):
                    st, ct, body = image_at(srv, g["query"])
                    assert st == 200 and ct == "image/png", (st, ct)
                    assert len(body) == i["bytes"] and sha(body) == i["sha256"]
                    assert g["bytes"] == i["bytes"]
        listing = srv.json("/data/plugins_listing")
        assert listing["images"]["enabled"] is True
        assert listing["images"]["loading_mechanism"]["module_path"] == \
            "js/pages/images.js"


def test_report_html_last_images():
    """tfboard report --format html embeds the last image of each tag (a
    data: URL, the bytes TensorBoard serves for that step)."""
    if not os.path.isdir(TORCH):
        print("skip: no torch_media testdata")
        return
    import base64
    import re
    import subprocess
    with open(os.path.join(TORCH, "TENSORBOARD_ANSWERS.json")) as f:
        want = json.load(f)["images"]["vision"]
    out = subprocess.run([TFBOARD, "report", "--logdir", TORCH, "--format",
                          "html"], capture_output=True, check=True).stdout
    m = re.search(rb'<script type="application/json" id="tfb-data">(.*?)'
                  rb'</script>', out, re.S)
    data = json.loads(m.group(1))
    runs = [r["run"] for r in data["report"]["runs"]]
    imgs = data["charts"][runs.index("vision")]["images"]
    assert {i["tag"] for i in imgs} == set(want)
    for i in imgs:
        last = want[i["tag"]][-1]
        assert i["step"] == last["step"]
        head, b64 = i["src"].split(",", 1)
        assert head == "data:image/png;base64"
        assert sha(base64.b64decode(b64)) == last["sha256"], i["tag"]


def test_tf1_and_tf2_records():
    logdir = os.path.join(TMP, "formats")
    a, b, c = png(5, 4, 1), png(5, 4, 2), png(5, 4, 3)
    g = png(3, 2, 9, channels=1)
    evs = []
    for step in range(3):
        # TF2: metadata on the first value only, as tf.summary writes it.
        vals = tf2_images("gen/samples", 5, 4,
                          [png(5, 4, step * 10 + k) for k in range(3)],
                          meta=step == 0)
        vals += tf1_image("input", g if step != 1 else png(3, 2, 50, 1), 3, 2,
                          1)
        evs.append(event(10.0 + step, step, summary=vals))
    # A second writer's file of the same run: a later step.
    write(logdir, "run1", evs)
    write(logdir, "run1", [event(20.0, 5, summary=tf2_images(
        "gen/samples", 5, 4, [a, b, c]))], name="events.out.tfevents.2.host")
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        tags = srv.json("/data/plugin/images/tags")["run1"]
        assert tags["gen/samples"]["samples"] == 3, tags
        assert tags["gen/samples"]["count"] == 12
        assert tags["input"]["samples"] == 1 and tags["input"]["count"] == 3
        for s in range(3):
            got = srv.json("/data/plugin/images/images", run="run1",
                           tag="gen/samples", sample=s)
            assert [x["step"] for x in got] == [0, 1, 2, 5]
            assert all(x["width"] == 5 and x["height"] == 4 for x in got)
            for x in got:
                st, ct, body = image_at(srv, x["query"])
                assert st == 200 and ct == "image/png"
                want = (png(5, 4, x["step"] * 10 + s) if x["step"] < 5
                        else [a, b, c][s])
                assert body == want, (s, x["step"])
        got = srv.json("/data/plugin/images/images", run="run1", tag="input")
        st, _, body = image_at(srv, got[1]["query"])
        assert st == 200 and body == png(3, 2, 50, 1)
        # Cache: the URL names the step, so the answer may be kept.
        import urllib.request
        with urllib.request.urlopen(srv.url(
                "/data/plugin/images/individualImage?" + got[0]["query"])) as r:
            assert r.headers["X-Content-Type-Options"] == "nosniff"
            assert "max-age" in r.headers["Cache-Control"]
        # A query whose step no longer matches is 404, never another image.
        q = got[0]["query"].replace("step=0", "step=1")
        assert image_at(srv, q)[0] == 404
        # Unknown run, tag, index; missing parameters.
        assert srv.get("/data/plugin/images/images", run="nope",
                       tag="input")[0] == 404
        assert srv.get("/data/plugin/images/images", run="run1",
                       tag="nope")[0] == 404
        assert srv.get("/data/plugin/images/individualImage", run="run1",
                       tag="input", index=3)[0] == 404
        assert srv.get("/data/plugin/images/individualImage",
                       run="run1")[0] == 400


def test_hostile_images():
    logdir = os.path.join(TMP, "hostile")
    good = png(4, 4, 7)
    huge = bytearray(png(2, 2, 1))
    huge[16:24] = struct.pack(">II", 100000, 100000)  # header lies
    html = b"<html><script>alert(1)</script></html>"
    cases = [("cut", good[:len(good) // 2]), ("huge", bytes(huge)),
             ("html", html), ("empty", b""), ("good", good)]
    evs = [event(1.0 + i, i, summary=tf1_image(t, d, 4, 4))
           for i, (t, d) in enumerate(cases)]
    write(logdir, "bad", evs)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        want = {"cut": (422, "cut short"), "huge": (422, "100000 x 100000"),
                "html": (415, "not a PNG"), "empty": (415, "not a PNG")}
        for tag, (code, text) in want.items():
            x = srv.json("/data/plugin/images/images", run="bad", tag=tag)[0]
            st, ct, body = image_at(srv, x["query"])
            assert st == code, (tag, st, body)
            assert ct.startswith("application/json"), ct
            assert text in json.loads(body)["error"], (tag, body)
            assert b"<script>" not in body
        x = srv.json("/data/plugin/images/images", run="bad", tag="good")[0]
        st, ct, body = image_at(srv, x["query"])
        assert st == 200 and body == good


def test_file_changed_under_the_index():
    """Bytes overwritten after indexing: an error, never other bytes."""
    logdir = os.path.join(TMP, "changed")
    write(logdir, "r", [event(1.0, 0, summary=tf1_image("t", png(4, 4), 4,
                                                          4))])
    path = os.path.join(logdir, "r", "events.out.tfevents.1.host")
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        x = srv.json("/data/plugin/images/images", run="r", tag="t")[0]
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            i = data.index(b"IDAT")
            data[i + 8] ^= 0xFF
            f.seek(0)
            f.write(data)
        st, ct, body = image_at(srv, x["query"])
        assert st == 410, (st, body)
        assert "no longer" in json.loads(body)["error"]


def test_hundred_thousand_images():
    logdir = os.path.join(TMP, "many")
    n = 100000
    d = os.path.join(logdir, "big")
    os.makedirs(d)
    small = [png(2, 2, k) for k in range(16)]
    with open(os.path.join(d, "events.out.tfevents.1.host"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for s in range(n):
            f.write(record(event(1.0 + s, s, summary=tf1_image(
                "frames", small[s % 16], 2, 2))))
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        t = srv.json("/data/plugin/images/tags")["big"]["frames"]
        assert t["count"] == n, t
        got = srv.json("/data/plugin/images/images", run="big", tag="frames")
        assert len(got) == n and got[-1]["step"] == n - 1
        for k in (0, 12345, n - 1):
            st, _, body = image_at(srv, got[k]["query"])
            assert st == 200 and body == small[k % 16]


try:
    run_tests([test_torch_files_match_tensorboard,
               test_report_html_last_images, test_tf1_and_tf2_records,
               test_hostile_images, test_file_changed_under_the_index,
               test_hundred_thousand_images])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
