#!/usr/bin/env python3
"""The built-in straggler alert (issue 23) names the straggler the Ranks
dashboard and `tfboard report` name, by the same rule (the ranks analysis
in server/analysis/): examples/ddp_train forks 4 ranks, rank 2 computing
30 % slower (as examples/demo.sh makes its straggler), next to a job of 4
even ranks.

- `tfboard watch --once` fires one straggler alert, on ddp/rank-00002,
  whose sentence is the report's ("rank 2 is N % slower than the median
  rank; ...");
- the even job gets none, and no other run does.
Arguments: the tfboard binary. ddp_train is found under TFB_BUILD_ROOT;
without it the test is skipped (exit 77).
"""
import os
import re
import subprocess
import sys
import tempfile

TFBOARD = sys.argv[1]
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
DDP = os.path.join(BUILD, "examples", "ddp_train")
STEPS = "100"
COMPUTE_MS = "20"  # as test_ranks_example: well above wake-up delays


def train(logdir, job, extra):
    p = subprocess.run([DDP, "--logdir", logdir, "--job", job, "--ranks", "4",
                        "--steps", STEPS, "--compute-ms", COMPUTE_MS] + extra,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (job, p.returncode, p.stderr)


def main():
    if not os.access(DDP, os.X_OK):
        print("ddp_train not built: skipped")
        return 77
    with tempfile.TemporaryDirectory() as logdir:
        train(logdir, "ddp", ["--slow-rank", "2", "--slow-factor", "1.3"])
        train(logdir, "even", [])
        # A straggler is printed but is not one of the default --fail_on
        # rules (those of a broken run, server/watch.h); named, it fails.
        w = subprocess.run([TFBOARD, "watch", "--logdir", logdir, "--once"],
                           capture_output=True, text=True, timeout=120)
        assert w.returncode == 0, (w.returncode, w.stdout, w.stderr)
        assert " rule=straggler" in w.stdout, w.stdout
        w = subprocess.run([TFBOARD, "watch", "--logdir", logdir, "--once",
                            "--fail_on", "straggler"],
                           capture_output=True, text=True, timeout=120)
        assert w.returncode == 1, (w.returncode, w.stdout, w.stderr)
        lines = [ln for ln in w.stdout.splitlines()
                 if " rule=straggler" in ln]
        assert len(lines) == 1, w.stdout
        m = re.search(r"FIRED run=(\S+) rule=straggler: straggler: (.*)$",
                      lines[0])
        assert m, lines[0]
        assert m.group(1) == "ddp/rank-00002", lines[0]
        sentence = m.group(2)
        assert re.match(r"rank 2 is \d+ % slower than the median rank",
                        sentence), sentence
        slow = int(re.match(r"rank 2 is (\d+) %", sentence).group(1))
        assert 15 <= slow <= 45, sentence  # 1.3x compute, some noise
        r = subprocess.run([TFBOARD, "report", "--logdir", logdir],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (r.returncode, r.stderr)
        # the Ranks section of the job says the same sentence
        said = re.findall(r"^    straggler: (rank \d+ is .*)$", r.stdout,
                          re.M)
        assert said == [sentence], (said, sentence, r.stdout)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
