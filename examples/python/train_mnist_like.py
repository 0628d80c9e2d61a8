#!/usr/bin/env python3
"""A small PyTorch classifier on synthetic MNIST-like data (28x28 images of
10 classes, each a noisy copy of its class template), logged with
tfboard.SummaryWriter: loss and accuracy, weight histograms, gradient
norms, NaN/Inf checks, input-pipeline step timing and the run's
hyperparameters. Runs on the CPU in seconds.

With --profile N it also records N steps with torch.profiler (the CPU ops,
and the CUDA kernels when a GPU is there: then the model trains on it) and
writes the Kineto trace into the run directory as <host>.pt.trace.json,
which tfboard's GPU dashboard reads.

    PYTHONPATH=python TFBOARD_LIB=build/collector/libtfboard.so \\
        python3 examples/python/train_mnist_like.py --logdir /tmp/runs
    build/server/tfboard --logdir /tmp/runs
"""
import argparse
import os
import time

import torch

from tfboard import SummaryWriter


class Synthetic(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.templates = torch.rand(10, 1, 28, 28, generator=g)
        self.labels = torch.randint(0, 10, (n,), generator=g)
        self.noise = torch.randn(n, 1, 28, 28, generator=g) * 2.5

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        y = self.labels[i]
        return self.templates[y] + self.noise[i], y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logdir", default="runs")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", type=int, default=0,
                    help="steps to record with torch.profiler (0: none)")
    ap.add_argument("--name", default=None,
                    help="run name (default: mnist_like_<date>)")
    args = ap.parse_args()
    torch.manual_seed(args.seed)

    data = Synthetic(args.steps * args.batch, args.seed)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch,
                                         shuffle=True)
    model = torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(28 * 28, args.hidden),
        torch.nn.ReLU(), torch.nn.Linear(args.hidden, 10))
    dev = torch.device("cuda" if args.profile and torch.cuda.is_available()
                       else "cpu")
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    run = os.path.join(args.logdir, args.name or
                       time.strftime("mnist_like_%Y%m%d-%H%M%S"))
    prof = None
    if args.profile:
        acts = [torch.profiler.ProfilerActivity.CPU]
        if dev.type == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        # Skip the first steps (warm-up), then record args.profile steps.
        prof = torch.profiler.profile(
            activities=acts, profile_memory=True,
            schedule=torch.profiler.schedule(wait=5, warmup=2,
                                             active=args.profile, repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(
                os.path.join(run, "%s.pt.trace.json" % os.uname().nodename)))
        prof.start()
    with SummaryWriter(run) as w:
        w.log_hparams({"lr": args.lr, "batch": args.batch,
                       "hidden": args.hidden, "seed": args.seed,
                       "optimizer": "sgd_momentum"},
                      metric_tags=["hparam/final_loss"])
        loss = torch.tensor(float("nan"))
        # Work per step for perf/tflops and perf/samples_per_s: 6 x the
        # parameters x the samples (forward 2 FLOPs per weight, backward 4).
        n_params = sum(p.numel() for p in model.parameters())
        for step, (x, y) in enumerate(w.timed(loader)):
            w.step_work(flops=6 * n_params * len(x), samples=len(x))
            x, y = x.to(dev), y.to(dev)
            opt.zero_grad()
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits, y)
            loss.backward()
            w.grad_norms(model, step)
            w.check_numerics(loss, step, tag="numerics/loss")
            opt.step()
            acc = (logits.argmax(1) == y).float().mean()
            w.add_scalar("loss", loss, step)
            w.add_scalar("accuracy", acc, step)
            if prof is not None:
                prof.step()
            if step % 50 == 0:
                for name, p in model.named_parameters():
                    w.add_histogram("weights/" + name, p, step)
                print("step %d loss %.4f accuracy %.3f"
                      % (step, loss.item(), acc.item()))
        if prof is not None:
            prof.stop()
        final = loss.item()
        w.add_scalar("hparam/final_loss", final, 0)
        w.end_hparams("success" if torch.isfinite(loss) else "failure")
        print("final loss %.4f; logged to %s" % (final, w.path))


if __name__ == "__main__":
    main()
