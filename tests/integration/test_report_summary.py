#!/usr/bin/env python3
"""The report's first screen on a demo-like logdir (issue 20).

Trains the examples the way examples/demo.sh does (the same flags; fewer
steps): two healthy
MLP runs and one that diverges (mlp_train --lr 5), a run with three loss
spikes that recover (spiky_train), an input-bound and a
balanced input pipeline (pipeline_train), and a 4-rank data-parallel job
whose rank 2 computes 30 % slower (ddp_train). Then `tfboard report`:

- its first 40 lines hold the summary: a line per run, then the findings
  ranked: the diverged run first, then the straggler, then the input-bound
  run;
- no finding calls the balanced run or any rank of the job input-bound (the
  5 % rule of server/API.md): not the ranks that wait for the straggler,
  and not the straggler, whose loader keeps up (it is slow because of its
  own compute: it appears only as the straggler); no rank is told to
  "raise loader throughput";
- advice is grouped: each piece of advice is written once, naming the
  runs it applies to, in the text, Markdown, JSON and html reports; each
  run's section keeps only its own figures;
- the Markdown, JSON and html reports start with the same summary.

Arguments: the tfboard binary. The examples are found under
TFB_BUILD_ROOT; without them the test is skipped (exit 77).
"""

import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import run_tests  # noqa: E402
from tfevents_py import event, record, scalars_summary  # noqa: E402

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
    # three planted bad batches (steps 75, 157 and 224 at --steps 300)
    p = ex("spiky_train", "--logdir", logdir, "--name", "spiky", "--steps", "300")
    assert p.returncode == 0, p.stderr
    p = subprocess.run([TFBOARD, "report", "--logdir", logdir], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    STATE["text"] = p.stdout
    p = subprocess.run([TFBOARD, "report", "--logdir", logdir, "--format", "markdown"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    STATE["md"] = p.stdout
    p = subprocess.run([TFBOARD, "report", "--logdir", logdir, "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    STATE["json"] = json.loads(p.stdout)
    p = subprocess.run([TFBOARD, "report", "--logdir", logdir, "--format", "html"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    STATE["html"] = p.stdout
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
    # Spikes that came back are a finding of their own, after the ones
    # above; the diverged run's spike is its divergence, not listed twice.
    assert (["spiky"], "loss spikes: 3 on loss (steps 75, 157, 224), all "
            "recovered") in f, f
    assert "loss spikes" in per_run["spiky"], per_run["spiky"]
    assert not any("diverge" in runs and t.startswith("loss spikes")
                   for runs, t in f), f
    # Status, then the headline scalar.
    assert re.search(r" ok +loss [\d.e+-]+$", per_run["lr0.1_seed1"]), per_run
    assert re.search(r" diverged +loss NaN$", per_run["diverge"]), per_run


def test_no_false_input_bound():
    f = findings(STATE["text"].splitlines()[:40])
    flagged = {r for runs, t in f if t.startswith("input-bound") for r in runs}
    # The balanced pipeline keeps up; ranks 0, 1, 3 wait for the straggler
    # in the all-reduce, so faster input would not shorten their steps.
    # (The straggler's own waits are on the job's critical path: the rule
    # may flag it on a loaded machine.)
    # The straggler is slow because of its own compute; its loader keeps up
    # (it waits for input no longer than the other ranks do).
    assert flagged == {"input_bound"}, f
    first = STATE["text"].splitlines()[:40]
    per_run = {ln.split()[0]: ln for ln in first if ln.startswith("  ") and " steps " in ln}
    assert [r for r, ln in per_run.items() if "input-bound" in ln] == ["input_bound"], per_run
    assert "straggler" in per_run["ddp/rank-00002"], per_run
    text = STATE["text"]
    for run in ("balanced", "ddp/rank-00000", "ddp/rank-00001", "ddp/rank-00002",
                "ddp/rank-00003"):
        sec = text.split("\nrun " + run + "\n", 1)[1].split("\nrun ", 1)[0]
        assert "Raise loader throughput" not in sec, (run, sec)
        assert "NOT input-bound" in sec, (run, sec)
    # The straggler's job section names it; its pipeline section does not
    # call it input-bound.
    sec0 = text.split("\nrun ddp/rank-00000\n", 1)[1].split("\nrun ", 1)[0]
    assert re.search(r"straggler: rank 2 is \d+ % slower", sec0), sec0
    # The finding says why: its compute, not its input.
    strag = [t for runs, t in f if runs == ["ddp/rank-00002"]]
    assert len(strag) == 1 and "slow in its compute" in strag[0], f


def test_input_straggler_is_both():
    """A rank slow because of its own loader is the straggler and
    input-bound: its input wait is on the job's critical path."""
    with tempfile.TemporaryDirectory() as d:
        for rank in range(4):
            run = os.path.join(d, "ldr", "rank-%05d" % rank)
            os.makedirs(run)
            with open(os.path.join(run, "events.out.tfevents.1.test"), "wb") as fh:
                fh.write(record(event(1.7e9, file_version="brain.Event:2")))
                for step in range(60):
                    # Rank 1 waits 6 ms for its batch; the others 0.2 ms,
                    # then 5.8 ms in the all-reduce for rank 1.
                    inp, comm = (6.0, 0.2) if rank == 1 else (0.2, 6.0)
                    fh.write(record(event(1.7e9 + step * 0.0162, step,
                                          summary=scalars_summary(
                        [("pipeline/step_ms", 16.2), ("pipeline/input_ms", inp),
                         ("comm/ms", comm)]))))
        p = subprocess.run([TFBOARD, "report", "--logdir", d, "--format", "json", "--quiet"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        sm = json.loads(p.stdout)["summary"]
        st = {r["run"]: r for r in sm["runs"]}
        assert st["ldr/rank-00001"]["labels"] == ["straggler", "input-bound"], st
        assert "slow in its input" in st["ldr/rank-00001"]["finding"], st
        for r in ("ldr/rank-00000", "ldr/rank-00002", "ldr/rank-00003"):
            assert st[r]["labels"] == [], st[r]


def advice_block(text):
    """The grouped advice of the text report: [(advice, [runs])]."""
    blk = text.split("\nadvice (each once", 1)[1].split("\nrun ", 1)[0]
    out = []
    for ln in blk.splitlines()[1:]:
        if ln.startswith("  - "):
            out.append([ln[4:], None])
        elif ln.startswith("    runs: "):
            out[-1][1] = [r.strip() for r in ln[10:].split(",")]
    return out


def test_advice_grouped():
    text = STATE["text"]
    adv = advice_block(text)
    texts = [a for a, _ in adv]
    assert len(texts) == len(set(texts)), texts
    by = dict((a.split(":")[0].split(" (")[0], runs) for a, runs in adv)
    # Every run whose input is not the bottleneck, on one line.
    nb = by["Input is not the bottleneck"]
    assert {"balanced", "ddp/rank-00000", "ddp/rank-00001", "ddp/rank-00002",
            "ddp/rank-00003"} <= set(nb), adv
    assert "input_bound" not in nb, adv
    assert by["Raise loader throughput"] == ["input_bound"], adv
    # Each advice sentence is written once in the whole report; the runs'
    # sections list its title with their own figures.
    for a in texts:
        assert text.count(a) == 1, a
    for run in nb:
        sec = text.split("\nrun " + run + "\n", 1)[1].split("\nrun ", 1)[0]
        assert re.search(r"- Input is not the bottleneck: faster input would save "
                         r"about [\d.]+% of step time", sec), (run, sec)
        assert "speed up the step's own compute" not in sec, (run, sec)
    md = STATE["md"]
    assert md.index("## Details") < md.index("### Advice") < md.index("## Run "), md[:400]
    plain = re.sub(r"\\(.)", r"\1", md)  # Markdown escapes undone
    for a in texts:
        assert plain.count(a) == 1, a
    assert re.search(r"^- Raise loader throughput: .* — runs input_bound$", plain, re.M), md


def check_summary_json(sm, runs):
    assert [r["run"] for r in sm["runs"]] == runs, sm["runs"]
    st = {r["run"]: r for r in sm["runs"]}
    # The judgement is "verdict"; "status" is only the run's own (finished,
    # crashed, ...), in the run's object.
    assert all("status" not in r for r in sm["runs"]), sm["runs"]
    assert st["diverge"]["verdict"] == "diverged" and st["diverge"]["headline"]["tag"] == "loss"
    assert st["diverge"]["headline"]["last"] == "NaN", st["diverge"]
    assert st["ddp/rank-00002"]["labels"] == ["straggler"], st["ddp/rank-00002"]
    assert st["input_bound"]["labels"] == ["input-bound"], st["input_bound"]
    assert st["balanced"]["verdict"] == "ok" and st["balanced"]["labels"] == []
    assert st["lr0.1_seed1"]["headline"]["tag"] == "loss", st["lr0.1_seed1"]
    f = sm["findings"]
    assert [x["label"] for x in f[:2]] == ["diverged", "straggler"], f
    assert f[0]["runs"] == ["diverge"] and f[1]["runs"] == ["ddp/rank-00002"], f
    assert [x["runs"] for x in f if x["label"] == "input-bound"] == [["input_bound"]], f
    assert all(f[i]["weight"] >= f[i + 1]["weight"] for i in range(len(f) - 1)), f
    adv = [a["advice"] for a in sm["advice"]]
    assert len(adv) == len(set(adv)), adv
    nb = [a for a in sm["advice"] if a["advice"].startswith("Input is not the bottleneck")]
    assert len(nb) == 1 and "ddp/rank-00002" in nb[0]["runs"], sm["advice"]


def test_json_summary():
    j = STATE["json"]
    assert list(j)[:2] == ["logdir", "summary"], list(j)
    check_summary_json(j["summary"], [r["run"] for r in j["runs"]])
    # Each run's pipeline figures keep the same advice by title.
    runs = {r["run"]: r for r in j["runs"]}
    titles = [a["title"] for a in runs["input_bound"]["pipeline"]["advice"]]
    assert titles[0] == "Raise loader throughput", titles


def test_html_summary():
    h = STATE["html"]
    m = re.search(r'<script type="application/json" id="tfb-data">(.*?)</script>', h, re.S)
    assert m, h[:300]
    data = json.loads(m.group(1))
    rep = data["report"]
    check_summary_json(rep["summary"], [r["run"] for r in rep["runs"]])
    assert "summarySection" in h  # the page draws it ahead of the runs


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
                   test_markdown_summary, test_advice_grouped, test_json_summary,
                   test_html_summary, test_input_straggler_is_both])
