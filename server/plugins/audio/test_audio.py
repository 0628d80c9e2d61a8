"""The audio dashboard over HTTP (issue 31): PyTorch's own speech_1 clips
give the tags, steps, content types and bytes TensorBoard 2.21 serves; TF2
audio tensors (several clips per step, labels, metadata on the first value
only); WAV headers that lie about their sizes, rate or channels are refused
with a clear error while their good neighbours are served.

usage: test_audio.py TFBOARD"""
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import urllib.parse

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server, run_tests  # noqa: E402
from tfevents_py import event, f_float, key, ld, record, varint  # noqa: E402

TFBOARD = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="tfb_audio_")
MORE = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_more")


def wav(samples, rate=16000, channels=1):
    """A true 16-bit PCM WAV."""
    data = struct.pack("<%dh" % len(samples), *samples)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " +
            struct.pack("<IHHIIHH", 16, 1, channels, rate,
                        rate * channels * 2, channels * 2, 16) +
            b"data" + struct.pack("<I", len(data)) + data)


def tf1_audio(tag, clip, rate=16000.0, frames=0):
    """Summary.Value{tag, audio{sample_rate, num_channels, length_frames,
    encoded_audio_string, content_type}} (PyTorch's add_audio)."""
    a = (f_float(1, rate) + key(2, 0) + varint(1) + key(3, 0) +
         varint(frames) + ld(4, clip) + ld(5, b"audio/wav"))
    return ld(1, ld(1, tag.encode()) + ld(6, a))


def tf2_audio(tag, pairs, meta=True):
    """Summary.Value{tag, metadata{plugin "audio"}, tensor: DT_STRING
    [k, 2] = clip, label, ...}."""
    shape = ld(2, key(1, 0) + varint(len(pairs))) + ld(2, key(1, 0) +
                                                        varint(2))
    t = key(1, 0) + varint(7) + ld(2, shape)
    for clip, label in pairs:
        t += ld(8, clip) + ld(8, label.encode())
    v = ld(1, tag.encode())
    if meta:
        v += ld(9, ld(1, ld(1, b"audio")))
    return ld(1, v + ld(8, t))


def write(logdir, run, events):
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "events.out.tfevents.1.host"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for ev in events:
            f.write(record(ev))


def sha(b):
    return hashlib.sha256(b).hexdigest()


def test_torch_files_match_tensorboard():
    """Every clip TensorBoard 2.21 serves for PyTorch's speech_1: same tags
    and samples, same steps, wall times, labels and content types in the
    same order, and the same bytes (SHA-256) as audio/wav."""
    if not os.path.isdir(MORE):
        print("skip: no torch_more testdata")
        return
    with open(os.path.join(MORE, "TENSORBOARD_ANSWERS.json")) as f:
        want = json.load(f)["audio"]
    with Server(TFBOARD, MORE, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        tags = srv.json("/data/plugin/audio/tags")
        assert set(tags) == set(want["tags"]), tags
        for run, by_tag in want["tags"].items():
            assert set(tags[run]) == set(by_tag)
            for tag, info in by_tag.items():
                for k in ("displayName", "description", "samples"):
                    assert tags[run][tag][k] == info[k], (tag, k)
        for run, by_tag in want["clips"].items():
            for tag, clips in by_tag.items():
                got = srv.json("/data/plugin/audio/audio", run=run, tag=tag)
                assert [(g["step"], g["wall_time"], g["label"],
                         g["contentType"]) for g in got] == \
                    [(c["step"], c["wall_time"], c["label"], c["contentType"])
                     for c in clips], tag
                for g, c in zip(got, clips):
                    st, ct, body = srv.get(
                        "/data/plugin/audio/individualAudio?" + g["query"])
                    assert (st, ct) == (c["status"], c["content_type"])
                    assert len(body) == c["bytes"] == g["bytes"]
                    assert sha(body) == c["sha256"]
                    assert body[:4] == b"RIFF"
        listing = srv.json("/data/plugins_listing")
        assert listing["audio"]["enabled"] is True
        assert listing["audio"]["loading_mechanism"]["module_path"] == \
            "js/pages/audio.js"


def test_tf2_tensors_with_labels():
    """TF2 audio: [k, 2] tensors give k samples per step, each with its
    label (escaped as HTML in `label`, as written in `label_text`); the
    plugin name on the first value only still applies to the next."""
    logdir = os.path.join(TMP, "tf2")
    c = [wav([i * 100 + j for j in range(50)]) for i in range(4)]
    write(logdir, "r", [
        event(10.0, 0, summary=tf2_audio("speech", [(c[0], "a <b>"),
                                                    (c[1], "")])),
        event(11.0, 1, summary=tf2_audio("speech", [(c[2], "x" * 200),
                                                    (c[3], "second")],
                                         meta=False)),
    ])
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        tags = srv.json("/data/plugin/audio/tags")
        assert tags["r"]["speech"]["samples"] == 2, tags
        s0 = srv.json("/data/plugin/audio/audio", run="r", tag="speech")
        s1 = srv.json("/data/plugin/audio/audio", run="r", tag="speech",
                      sample=1)
        assert [(g["step"], g["label"], g["label_text"]) for g in s0] == \
            [(0, "a &lt;b&gt;", "a <b>"), (1, "x" * 200, "x" * 200)]
        assert [(g["step"], g["label_text"]) for g in s1] == \
            [(0, ""), (1, "second")]
        for g, body in zip(s0 + s1, [c[0], c[2], c[1], c[3]]):
            st, ct, got = srv.get("/data/plugin/audio/individualAudio?" +
                                  g["query"])
            assert (st, ct, got) == (200, "audio/wav", body)
        # A step that is not the clip's: 404, never another clip.
        q = urllib.parse.parse_qs(s0[0]["query"])
        q["step"] = ["5"]
        st, _, _ = srv.get("/data/plugin/audio/individualAudio?" +
                           urllib.parse.urlencode(q, doseq=True))
        assert st == 404


def test_tf2_label_apart_from_its_clip():
    """A hostile tensor with another field between a clip and its label:
    the clip is served, its label is not shown ("") rather than misread
    from the bytes that follow the clip."""
    logdir = os.path.join(TMP, "apart")
    c = wav(list(range(0, 400, 8)))
    shape = ld(2, key(1, 0) + varint(1)) + ld(2, key(1, 0) + varint(2))
    t = (key(1, 0) + varint(7) + ld(2, shape) + ld(8, c) +
         key(3, 0) + varint(1) + ld(8, b"hello"))
    v = ld(1, b"speech") + ld(9, ld(1, ld(1, b"audio"))) + ld(8, t)
    write(logdir, "r", [event(10.0, 3, summary=ld(1, v))])
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        got = srv.json("/data/plugin/audio/audio", run="r", tag="speech")
        assert [(g["step"], g["label_text"]) for g in got] == [(3, "")], got
        st, ct, body = srv.get("/data/plugin/audio/individualAudio?" +
                               got[0]["query"])
        assert (st, ct, body) == (200, "audio/wav", c)


def test_lying_wav_headers():
    """Headers that lie: each clip gets a 422 naming the lie; the good
    clips of the same tag and run are served, and the server lives on."""
    good = wav(list(range(-200, 200, 4)))
    data_len = len(good) - 44

    def patch(off, fmt, v, base=good):
        b = bytearray(base)
        struct.pack_into(fmt, b, off, v)
        return bytes(b)
    lies = {
        "riff size": (patch(4, "<I", 1000000), "RIFF header claims"),
        "data size": (patch(40, "<I", data_len + 1000), "chunk 'data' claims"),
        "channels": (patch(22, "<H", 200), "claims 200 channels"),
        "zero channels": (patch(22, "<H", 0), "claims 0 channels"),
        "rate": (patch(24, "<I", 4000000000), "rate of 4000000000 Hz"),
        "byte rate": (patch(28, "<I", 12345), "do not match"),
        "bits": (patch(34, "<H", 12), "12 bits per sample"),
        "odd data": (patch(40, "<I", data_len - 1), "whole number"),
        "fmt size": (patch(16, "<I", 0xFFFFFFF0), "chunk 'fmt ' claims"),
        "not wav": (b"<html><script>alert(1)</script></html>",
                    "not a WAV file"),
        "cut": (good[:30], "RIFF header claims"),
        "format": (patch(20, "<H", 85), "format 85"),
    }
    logdir = os.path.join(TMP, "lies")
    evs = [event(1.0, 0, summary=tf1_audio("clip", good))]
    for i, (name, (clip, _)) in enumerate(lies.items()):
        evs.append(event(2.0 + i, 1 + i, summary=tf1_audio("clip", clip)))
    evs.append(event(99.0, 99, summary=tf1_audio("clip", good)))
    write(logdir, "r", evs)
    with Server(TFBOARD, logdir, "--reload_interval", "0") as srv:
        srv.wait_loaded()
        got = srv.json("/data/plugin/audio/audio", run="r", tag="clip")
        assert [g["step"] for g in got] == [0] + \
            list(range(1, 1 + len(lies))) + [99]
        for g, (name, (clip, why)) in zip(got[1:-1], lies.items()):
            st, ct, body = srv.get("/data/plugin/audio/individualAudio?" +
                                   g["query"])
            assert st == 422, (name, st)
            err = json.loads(body)["error"]
            assert why in err, (name, err)
        for g in (got[0], got[-1]):
            st, ct, body = srv.get("/data/plugin/audio/individualAudio?" +
                                   g["query"])
            assert (st, ct, body) == (200, "audio/wav", good)


try:
    run_tests([test_torch_files_match_tensorboard, test_tf2_tensors_with_labels,
               test_tf2_label_apart_from_its_clip, test_lying_wav_headers])
finally:
    shutil.rmtree(TMP, ignore_errors=True)
