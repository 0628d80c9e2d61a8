#!/usr/bin/env python3
"""The report's first screen on a demo-like logdir (issue 20).

Trains the examples the way examples/demo.sh does (the same flags; fewer
steps): two healthy
MLP runs and one that diverges (mlp_train --lr 5), an input-bound and a
balanced input pipeline (pipeline_train), and a 4-rank data-parallel job
whose rank 2 computes 30 % slower (ddp_train). Then `tfboard report`:

- its first 40 lines hold the summary: a line per run, then the findings
  ranked: the diverged run first, then the straggler, then the input-bound
  run;
- no finding calls the balanced run or a rank that waits for the
  straggler input-bound (the 5 % rule of server/API.md), and no rank is told
  to "raise loader throughput";
- the Markdown report has the same summary.

Arguments: the tfboard binary. The examples are found under
TFB_BUILD_ROOT; without them the test is skipped (exit 77).
"""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import run_tests  # noqa: E402

TFBOARD = sys.argv[1] if len(sys.argv) > 1 else None
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
EX = os.path.join(BUILD, "examples")
STATE = {}


def ex(name, *args):
    p = subprocess.run([os.path.join(EX, name)] + list(args),
                       capture_output=True, text=True, timeout=120)
    return p


def setup(logdir):
    for name, seed in (("lr0.1_seed1", "1"), ("lr0.1_seed2", "2")):
        p = ex("mlp_train", "--logdir", logdir, "--name", name, "--steps", "120",
               "--hist-every", "60", "--seed", seed)
        assert p.returncode == 0, p.stderr
    ex("mlp_train", "--logdir", logdir, "--name", "diverge", "--steps", "200",
       "--lr", "5", "--hist-every", "100")
    p = ex("pipeline_train", "--logdir", logdir, "--run", "input_bound", "--steps", "40",
           "--loaders", "1", "--prefetch", "1", "--loader-ms", "12", "--step-ms", "4")
    assert p.returncode == 0, p.stderr
    p = ex("pipeline_train", "--logdir", logdir, "--run", "balanced", "--steps", "60",
           "--loaders", "2", "--prefetch", "16", "--loader-ms", "1", "--step-ms", "8")
    assert p.returncode == 0, p.stderr
    p = ex("ddp_train", "--logdir", logdir, "--job", "ddp", "--ranks", "4", "--steps", "100",
           "--compute-ms", "8", "--slow-rank", "2", "--slow-factor", "1.3")
    assert p.returncode == 0, p.stderr
    p = subprocess.run([TFBOARD, "report", "--logdir", logdir], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    STATE["text"] = p.stdout
    p = subprocess.run([TFBOARD, "report", "--logdir", logdir, "--format", "markdown"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    STATE["md"] = p.stdout
    print("\n".join(STATE["text"].splitlines()[:40]))


def findings(lines):
    """The numbered finding lines: (run names, text)."""
    out = []
    for ln in lines:
        m = re.match(r"\s*\d+\. (.*?) - (.*)$", ln)
        if m:
            out.append(([r.strip() for r in m.group(1).split(",")], m.group(2)))
    return out


def test_first_screen_names_the_problems():
    first = STATE["text"].splitlines()[:40]
    assert any(ln.startswith("summary") for ln in first), first
    f = findings(first)
    kinds = [t.split(":")[0] for _, t in f]
    assert kinds[:2] == ["diverged", "straggler"], f
    assert f[0][0] == ["diverge"], f
    assert "NaN" in f[0][1] or "infinite" in f[0][1], f
    assert f[1][0] == ["ddp/rank-00002"], f
    assert "rank 2" in f[1][1], f
    ib = [runs for runs, t in f if t.startswith("input-bound")]
    assert ["input_bound"] in ib, f
    # A line per run, with its findings' labels.
    per_run = {ln.split()[0]: ln for ln in first if ln.startswith("  ") and " steps " in ln}
    for run in ("lr0.1_seed1", "lr0.1_seed2", "diverge", "input_bound", "balanced",
                "ddp/rank-00000", "ddp/rank-00001", "ddp/rank-00002", "ddp/rank-00003"):
        assert run in per_run, (run, first)
    assert "diverged" in per_run["diverge"] and "input-bound" in per_run["input_bound"]
    assert per_run["lr0.1_seed1"].rstrip().endswith("ok"), per_run


def test_no_false_input_bound():
    f = findings(STATE["text"].splitlines()[:40])
    flagged = {r for runs, t in f if t.startswith("input-bound") for r in runs}
    # The balanced pipeline keeps up; ranks 0, 1, 3 wait for the straggler
    # in the all-reduce, so faster input would not shorten their steps.
    # (The straggler's own waits are on the job's critical path: the rule
    # may flag it on a loaded machine.)
    assert not flagged & {"balanced", "ddp/rank-00000", "ddp/rank-00001",
                          "ddp/rank-00003", "lr0.1_seed1"}, f
    text = STATE["text"]
    for run in ("balanced", "ddp/rank-00000", "ddp/rank-00001", "ddp/rank-00003"):
        sec = text.split("\nrun " + run + "\n", 1)[1].split("\nrun ", 1)[0]
        assert "Raise loader throughput" not in sec, (run, sec)
        assert "NOT input-bound" in sec, (run, sec)


def test_markdown_summary():
    md = STATE["md"]
    assert md.index("## Summary") < md.index("## Details") < md.index("## Run "), md[:400]
    assert "**Top findings**" in md
    top = md.split("**Top findings**", 1)[1].split("## Details", 1)[0]
    assert re.search(r"^1\. diverge - diverged:", top, re.M), top


if __name__ == "__main__":
    if not TFBOARD or not os.path.exists(os.path.join(EX, "ddp_train")):
        print("SKIP: the examples are not built (TFB_BUILD_ROOT/examples)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        setup(d)
        run_tests([test_first_screen_names_the_problems, test_no_false_input_bound,
                   test_markdown_summary])
