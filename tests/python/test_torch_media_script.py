"""Issue 22's "done when": a PyTorch script that logs images, a batch, a
matplotlib figure and a list of them, PR curves, Markdown text and a
custom scalars layout (torch_media_script.py, written for
torch.utils.tensorboard) runs on tfboard's SummaryWriter with only its
import line changed, and its run comes out of tfboard's Images, PR Curves,
Text and Custom Scalars routes: the tags and steps logged, PNGs that
decode to the sizes of the images and figures, the weighted PR counts,
the Markdown as HTML, the layout's charts."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "torch_media_script.py")
TORCH_IMPORT = "from torch.utils.tensorboard import SummaryWriter\n"
OUR_IMPORT = "from tfboard import SummaryWriter\n"

PIL = pytest.importorskip("PIL.Image")
pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def run_script(tmp_path):
    """Writes the script with tfboard's import and runs it (its own
    interpreter, as a user would) into tmp_path/vision."""
    lines = open(SCRIPT).readlines()
    ours = [OUR_IMPORT if ln == TORCH_IMPORT else ln for ln in lines]
    assert sum(a != b for a, b in zip(lines, ours)) == 1  # the one change
    path = tmp_path / "script_on_tfboard.py"
    path.write_text("".join(ours))
    logdir = tmp_path / "logs"
    r = subprocess.run([sys.executable, str(path), str(logdir / "vision")],
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    return logdir


def png_size(body):
    img = PIL.open(io.BytesIO(body))
    img.load()
    return img.size


def test_torch_media_script_on_tfboard(tmp_path):
    server = os.environ.get("TFB_SERVER")
    if not server or not os.path.exists(server):
        pytest.skip("tfboard server not built")
    from tfb_server_util import Server
    logdir = run_script(tmp_path)
    with Server(server, str(logdir)) as srv:
        srv.wait_loaded()
        tags = srv.json("/data/plugin/images/tags")["vision"]
        assert sorted(tags) == ["batch/inputs", "figures/confusion",
                                "figures/loss_heads", "samples/gradient",
                                "samples/mask"]
        # (width, height): images as logged, a batch of 12 tiled 8 per row,
        # a 4 x 3.2 in figure at 80 dpi, two 2.5 x 2 in figures at 64 dpi
        # side by side.
        sizes = {"samples/gradient": (64, 48), "samples/mask": (32, 32),
                 "batch/inputs": (8 * 24, 2 * 24),
                 "figures/confusion": (320, 256),
                 "figures/loss_heads": (2 * 160, 128)}
        for t in tags:
            got = srv.json("/data/plugin/images/images", run="vision", tag=t)
            assert [g["step"] for g in got] == [0, 10, 20], t
            for g in got:
                st, ct, body = srv.get("/data/plugin/images/individualImage?"
                                       + g["query"])
                assert st == 200 and ct == "image/png", t
                assert png_size(body) == sizes[t], t
        # A drawn figure is not blank: matplotlib's white and the plot.
        got = srv.json("/data/plugin/images/images", run="vision",
                       tag="figures/confusion")
        _, _, body = srv.get("/data/plugin/images/individualImage?" +
                             got[0]["query"])
        px = np.asarray(PIL.open(io.BytesIO(body)).convert("RGB"))
        assert (px == 255).all(axis=2).mean() > 0.2
        assert len(np.unique(px.reshape(-1, 3), axis=0)) > 20

        pr = srv.json("/data/plugin/pr_curves/pr_curves", run="vision",
                      tag="pr/cat")["vision"]
        assert [c["step"] for c in pr] == [0, 10, 20]
        assert pr[0]["true_positives"][0] == 100
        assert len(pr[0]["precision"]) == 127
        # Weighted counts: at threshold 0 every pair counts its weight,
        # linspace(0.5, 2, 200) over alternating labels. The route gives
        # counts as integers (as TensorBoard's); precision shows the
        # weights whole.
        wpr = srv.json("/data/plugin/pr_curves/pr_curves", run="vision",
                       tag="pr/dog_weighted")["vision"]
        w = np.linspace(0.5, 2, 200)
        tp, fp = w[1::2].sum(), w[::2].sum()
        assert len(wpr[0]["precision"]) == 31
        assert wpr[0]["true_positives"][0] == int(tp) == 125
        assert wpr[0]["false_positives"][0] == int(fp) == 124
        assert wpr[0]["precision"][0] == pytest.approx(tp / (tp + fp),
                                                       rel=1e-5)
        assert wpr[0]["precision"][0] != pytest.approx(0.5, rel=1e-5)

        (tx,) = srv.json("/data/plugin/text/text", run="vision",
                         tag="notes/text_summary")
        assert tx["step"] == 20
        assert "<h2>Run notes</h2>" in tx["html"]
        assert "<strong>baseline</strong>" in tx["html"]
        assert "<td>0.90</td>" in tx["html"]

        lay = srv.json("/data/plugin/custom_scalars/layout")
        charts = {c["title"]: c["chart"] for c in lay["category"]}
        assert charts["Losses"][0]["multiline"]["tag"] == ["loss/train",
                                                           "loss/val"]
        margin = charts["Accuracy"][0]["margin"]["series"][0]
        assert (margin["value"], margin["lower"], margin["upper"]) == (
            "acc/mean", "acc/low", "acc/high")
