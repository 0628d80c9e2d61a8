"""Writes the logdir of the Audio tab's browser test (test_page.js) into
argv[1]: run "speech" with two audio tags over 5 steps (TF1 Summary.Audio
as PyTorch writes it; one TF2 tensor tag with a label per clip), a clip
whose WAV header lies at step 2 of tag sound/liar, and run "video" with an
animated GIF (tfboard's own encoder, python/tfboard/gif.py) whose four
frames are red, green, blue and white, as add_video writes it.

Pure Python: no NumPy, no libtfboard.

usage: gen_av_logdir.py LOGDIR"""
import importlib.util
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from tfevents_py import event, f_float, key, ld, record, varint  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "tfb_gif", os.path.join(ROOT, "python", "tfboard", "gif.py"))
gif = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gif)


def wav(samples, rate):
    data = struct.pack("<%dh" % len(samples), *samples)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " +
            struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16) +
            b"data" + struct.pack("<I", len(data)) + data)


def tone(freq, rate=8000, seconds=0.5):
    n = int(rate * seconds)
    return wav([int(math.sin(2 * math.pi * freq * i / rate) * 0.5 * 32767)
                for i in range(n)], rate)


def tf1_audio(tag, clip, rate=8000.0):
    a = (f_float(1, rate) + key(2, 0) + varint(1) + key(3, 0) +
         varint((len(clip) - 44) // 2) + ld(4, clip) + ld(5, b"audio/wav"))
    return ld(1, ld(1, tag.encode()) + ld(6, a))


def tf2_audio(tag, clip, label):
    shape = ld(2, key(1, 0) + varint(1)) + ld(2, key(1, 0) + varint(2))
    t = key(1, 0) + varint(7) + ld(2, shape) + ld(8, clip) + \
        ld(8, label.encode())
    v = ld(1, tag.encode()) + ld(9, ld(1, ld(1, b"audio")))
    return ld(1, v + ld(8, t))


def image(tag, data, w, h):
    shape = ld(2, key(1, 0) + varint(3))
    t = key(1, 0) + varint(7) + ld(2, shape)
    for s in (str(w).encode(), str(h).encode(), data):
        t += ld(8, s)
    v = ld(1, tag.encode()) + ld(9, ld(1, ld(1, b"images")))
    return ld(1, v + ld(8, t))


def write(logdir, run, events):
    d = os.path.join(logdir, run)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "events.out.tfevents.1.host"), "wb") as f:
        f.write(record(event(1.0, file_version="brain.Event:2")))
        for ev in events:
            f.write(record(ev))


def main(logdir):
    evs = []
    for step in range(5):
        wall = 1700000000.0 + step
        evs.append(event(wall, step * 10, summary=tf1_audio(
            "sound/tone", tone(220 * (step + 1)))))
        evs.append(event(wall, step * 10, summary=tf2_audio(
            "sound/labelled", tone(330), "clip <%d> of the labelled tag"
            % step)))
        clip = tone(440)
        if step == 2:
            b = bytearray(clip)
            struct.pack_into("<H", b, 22, 200)  # claims 200 channels
            clip = bytes(b)
        evs.append(event(wall, step * 10, summary=tf1_audio("sound/liar",
                                                           clip)))
    write(logdir, "speech", evs)
    w, h = 48, 32
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]
    frames = [[[c] * w for _ in range(h)] for c in colours]
    write(logdir, "video", [event(1700000000.0, 0, summary=image(
        "clip/video", gif.encode(frames, fps=4), w, h))])


if __name__ == "__main__":
    main(sys.argv[1])
