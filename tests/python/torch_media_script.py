"""A PyTorch training script's media logging, written for
torch.utils.tensorboard: images, a batch grid, matplotlib figures, PR
curves (one weighted), Markdown text and a custom scalars layout.

test_torch_media_script.py runs it on tfboard's SummaryWriter with only
the import line below changed, and reads its run back from tfboard's
routes. Usage: torch_media_script.py LOGDIR
"""
import sys

import matplotlib
import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def confusion_figure(step):
    """A confusion matrix drawn with matplotlib, as tutorials log it."""
    rng = np.random.default_rng(step)
    cm = rng.integers(0, 50, (4, 4)) + np.eye(4, dtype=np.int64) * (10 * step)
    fig, ax = plt.subplots(figsize=(4, 3.2), dpi=80)
    ax.imshow(cm, cmap="Blues")
    for i in range(4):
        for j in range(4):
            ax.text(j, i, str(cm[i, j]), ha="center", va="center")
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title("confusion, step %d" % step)
    fig.tight_layout()
    return fig


def loss_figures(step):
    """Two small line plots, logged as one list of figures."""
    figs = []
    for k in range(2):
        fig = plt.figure(figsize=(2.5, 2), dpi=64)
        x = np.linspace(0, 1, 50)
        plt.plot(x, np.exp(-(step + 1) * x * (k + 1)))
        plt.title("head %d" % k)
        figs.append(fig)
    return figs


def main(logdir):
    torch.manual_seed(0)
    writer = SummaryWriter(logdir)
    for step in (0, 10, 20):
        img = torch.linspace(0, 1, 3 * 48 * 64).reshape(3, 48, 64)
        writer.add_image("samples/gradient", img.roll(step, 2), step)
        writer.add_image("samples/mask", (torch.rand(32, 32) > 0.5), step,
                         dataformats="HW")
        writer.add_images("batch/inputs", torch.rand(12, 3, 24, 24), step)
        writer.add_figure("figures/confusion", confusion_figure(step), step)
        writer.add_figure("figures/loss_heads", loss_figures(step), step)
        labels = torch.arange(200) % 2
        scores = torch.rand(200) * 0.6 + labels * 0.3 * (1 + step / 20)
        writer.add_pr_curve("pr/cat", labels, scores.clamp(0, 1), step)
        writer.add_pr_curve("pr/dog_weighted", labels, torch.rand(200), step,
                            num_thresholds=31,
                            weights=torch.linspace(0.5, 2, 200))
        writer.add_scalar("loss/train", 1.0 / (step + 1), step)
        writer.add_scalar("loss/val", 1.3 / (step + 1), step)
        writer.add_scalar("acc/mean", 0.5 + step / 50, step)
        writer.add_scalar("acc/low", 0.45 + step / 50, step)
        writer.add_scalar("acc/high", 0.55 + step / 50, step)
    writer.add_text("notes", "## Run notes\n\nA **baseline** run.\n\n"
                    "| metric | value |\n| --- | --- |\n| loss | 0.05 |\n"
                    "| acc | 0.90 |", 20)
    writer.add_custom_scalars({
        "Losses": {"train vs val": ["Multiline", ["loss/train", "loss/val"]]},
        "Accuracy": {"with band": ["Margin",
                                   ["acc/mean", "acc/low", "acc/high"]]}})
    writer.close()
    # add_figure closed every figure (close=True by default).
    assert not plt.get_fignums(), plt.get_fignums()


if __name__ == "__main__":
    main(sys.argv[1])
