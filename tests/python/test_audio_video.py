"""Audio and video from Python and C (issue 31): add_audio and tfb_audio
write PyTorch's Summary.Audio (16-bit PCM WAV, its rate, channels, frames,
"audio/wav"), byte for byte what PyTorch wrote for the shared speech_1
clips; add_video writes an animated GIF image whose frames, timing and
loop a GIF decoder (Pillow) reads back."""
import ctypes
import hashlib
import io
import json
import os
import wave

import numpy as np
import pytest

from conftest import event_file, records

import tfboard  # noqa: E402
from tfboard import gif  # noqa: E402
from tfboard._lib import lib  # noqa: E402

SPEECH = os.path.join(os.environ.get("TFB_TESTDATA", ""), "torch_more")


def audio_values(pb, path):
    """[(step, wall, tag, Summary.Audio)] of an event file."""
    out = []
    for payload in records(path):
        e = pb.event.Event()
        e.ParseFromString(payload)
        for v in e.summary.value:
            if v.HasField("audio"):
                out.append((e.step, e.wall_time, v.tag, v.audio))
    return out


def test_add_audio_is_pytorchs_bytes(pb, tmp_path):
    """Each clip PyTorch wrote in speech_1, given back to add_audio as the
    floats it came from, is written as the same Summary.Audio: same WAV
    bytes (TensorBoard's SHA-256), rate, channels, frames, content type."""
    d = os.path.join(SPEECH, "speech_1")
    if not os.path.isdir(d):
        pytest.skip("no torch_more testdata")
    with open(os.path.join(SPEECH, "TENSORBOARD_ANSWERS.json")) as f:
        want = json.load(f)["audio"]["clips"]["speech_1"]
    theirs = audio_values(pb, event_file(d))
    assert len(theirs) == sum(len(v) for v in want.values())
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        for step, wall, tag, a in theirs:
            with wave.open(io.BytesIO(a.encoded_audio_string)) as r:
                pcm = np.frombuffer(r.readframes(r.getnframes()), "<i2")
            w.add_audio(tag, (pcm / 32767.0).astype(np.float32), step,
                        sample_rate=int(a.sample_rate), walltime=wall)
    ours = audio_values(pb, event_file(str(tmp_path)))
    assert len(ours) == len(theirs)
    for (s1, w1, t1, a1), (s2, w2, t2, a2) in zip(theirs, ours):
        assert (s1, w1, t1) == (s2, w2, t2)
        assert a1.SerializeToString() == a2.SerializeToString(), t1
        clip = next(c for c in want[t1] if c["step"] == s1)
        assert hashlib.sha256(a2.encoded_audio_string).hexdigest() == \
            clip["sha256"]


def test_add_audio_clips_and_squeezes(pb, tmp_path):
    """PyTorch's rule: squeezed to 1-D, clipped to [-1, 1], times 32767,
    truncated; 2-D after squeeze is refused."""
    x = np.array([[0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 0.99999]],
                 np.float32)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_audio("a", x, 7, sample_rate=8000)
        with pytest.raises(ValueError):
            w.add_audio("b", np.zeros((2, 3), np.float32), 0)
    (step, _, tag, a), = audio_values(pb, event_file(str(tmp_path)))
    assert (step, tag, a.sample_rate, a.num_channels, a.length_frames,
            a.content_type) == (7, "a", 8000.0, 1, 8, "audio/wav")
    with wave.open(io.BytesIO(a.encoded_audio_string)) as r:
        assert (r.getnchannels(), r.getsampwidth(), r.getframerate()) == \
            (1, 2, 8000)
        pcm = np.frombuffer(r.readframes(8), "<i2")
    want = (np.clip(x[0], -1, 1) * np.float32(32767)).astype("<i2")
    assert pcm.tolist() == want.tolist()


def test_c_tfb_audio_limits(pb, tmp_path):
    """tfb_audio: stereo interleaved; bad channels, rates and sizes get
    their codes and write nothing."""
    w = ctypes.c_void_p()
    assert lib.tfb_writer_open(ctypes.byref(w), str(tmp_path).encode(),
                               None) == 0
    st = np.array([0.25, -0.25, 0.5, -0.5, float("nan"), 1.0], np.float32)
    assert lib.tfb_audio(w, b"stereo", st.ctypes.data, 3, 2, 22050.0, 1) == 0
    einval, etoobig = -1, -16
    assert lib.tfb_audio(w, b"x", st.ctypes.data, 3, 0, 22050.0, 1) == einval
    assert lib.tfb_audio(w, b"x", st.ctypes.data, 3, 9, 22050.0, 1) == einval
    assert lib.tfb_audio(w, b"x", st.ctypes.data, 3, 1, 0.0, 1) == einval
    assert lib.tfb_audio(w, b"x", st.ctypes.data, 3, 1, 1e9, 1) == einval
    assert lib.tfb_audio(w, b"x", st.ctypes.data, 3, 1, 8000.5, 1) == einval
    assert lib.tfb_audio(w, b"x", st.ctypes.data, 3, 1,
                         float("nan"), 1) == einval
    assert lib.tfb_audio(w, b"", st.ctypes.data, 3, 1, 8000.0, 1) == einval
    assert lib.tfb_audio(w, b"x", None, 3, 1, 8000.0, 1) == einval
    # More than TFB_AUDIO_MAX_BYTES of PCM: refused before any read.
    assert lib.tfb_audio(w, b"x", st.ctypes.data, (64 << 20) // 2 + 1, 1,
                         8000.0, 1) == etoobig
    assert lib.tfb_writer_close(w) == 0
    (step, _, tag, a), = audio_values(pb, event_file(str(tmp_path)))
    assert (step, tag, a.num_channels, a.length_frames, a.sample_rate) == \
        (1, "stereo", 2, 3, 22050.0)
    with wave.open(io.BytesIO(a.encoded_audio_string)) as r:
        assert (r.getnchannels(), r.getframerate(), r.getnframes()) == \
            (2, 22050, 3)
        pcm = np.frombuffer(r.readframes(3), "<i2")
    assert pcm.tolist() == [8191, -8191, 16383, -16383, 0, 32767]


def gif_frames(data):
    PIL = pytest.importorskip("PIL.Image")
    im = PIL.open(io.BytesIO(data))
    frames, durations = [], []
    for k in range(im.n_frames):
        im.seek(k)
        frames.append(np.asarray(im.convert("RGB")))
        durations.append(im.info.get("duration"))
    return frames, durations, im.info.get("loop")


def image_values(pb, path):
    out = []
    for payload in records(path):
        e = pb.event.Event()
        e.ParseFromString(payload)
        for v in e.summary.value:
            t = v.tensor
            w, h, data = t.string_val
            out.append((e.step, v.tag, int(w), int(h), data,
                        v.metadata.plugin_data.plugin_name))
    return out


def test_add_video_animated_gif(pb, tmp_path):
    """[N, T, C, H, W] with N = 3: tiled as PyTorch (padded to 4, one row
    of 4), T frames of 1000 / fps ms, looping; few colours are exact."""
    rng = np.random.default_rng(5)
    pal = rng.integers(0, 256, (40, 3), dtype=np.uint8)
    vid = pal[rng.integers(0, 40, (3, 5, 6, 7))]          # N T H W C
    vid = vid.transpose(0, 1, 4, 2, 3).copy()              # N T C H W
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_video("v", vid, 2, fps=5)
    (step, tag, width, height, data, plugin), = \
        image_values(pb, event_file(str(tmp_path)))
    assert (step, tag, width, height, plugin) == (2, "v", 28, 6, "images")
    assert data[:6] == b"GIF89a"
    frames, durations, loop = gif_frames(data)
    assert len(frames) == 5 and durations == [200] * 5 and loop == 0
    for t in range(5):
        grid = np.zeros((6, 28, 3), np.uint8)
        for n in range(3):
            grid[:, n * 7:(n + 1) * 7] = vid[n, t].transpose(1, 2, 0)
        assert np.array_equal(frames[t], grid), t


def test_add_video_float_and_gray(pb, tmp_path):
    """Floats times 255, clipped, truncated; one channel becomes gray;
    16 videos make a 4 x 4 grid."""
    v = np.linspace(-0.5, 1.5, 16 * 2 * 1 * 3 * 2, dtype=np.float32)
    v = v.reshape(16, 2, 1, 3, 2)
    with tfboard.SummaryWriter(str(tmp_path)) as w:
        w.add_video("g", v, 0, fps=4)
    (_, _, width, height, data, _), = image_values(pb, event_file(str(tmp_path)))
    assert (width, height) == (8, 12)
    frames, durations, _ = gif_frames(data)
    assert durations == [250, 250]
    want = (np.clip(v * 255.0, 0, 255)).astype(np.uint8)
    for t in range(2):
        for n in range(16):
            r, c = divmod(n, 4)
            got = frames[t][r * 3:(r + 1) * 3, c * 2:(c + 1) * 2]
            assert np.array_equal(got[..., 0], want[n, t, 0]), (t, n)
            assert np.array_equal(got[..., 0], got[..., 2])


def test_gif_encoder_many_colours_and_long_streams():
    """More than 256 colours: the 3-3-2 palette, each channel within half
    a level; a frame long enough to fill LZW's 4,096 codes several times
    decodes exactly."""
    rng = np.random.default_rng(6)
    f = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
    frames, _, _ = gif_frames(gif.encode([f], 10))
    err = np.abs(frames[0].astype(int) - f)
    assert err[..., 0].max() <= 19 and err[..., 2].max() <= 43
    pal = rng.integers(0, 256, (256, 3), dtype=np.uint8)
    big = pal[rng.integers(0, 256, (200, 300))]
    frames, _, _ = gif_frames(gif.encode([big, big[::-1]], 10))
    assert np.array_equal(frames[0], big)
    assert np.array_equal(frames[1], big[::-1])
    with pytest.raises(ValueError):
        gif.encode([], 4)
    with pytest.raises(ValueError):
        gif.encode([f, f[:10]], 4)
