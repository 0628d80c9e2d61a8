#!/usr/bin/env python3
"""Distributed jobs end to end (issue 11): examples/ddp_train forks 4
ranks that meet at a shared-memory barrier every step.

With --slow-rank 2 --slow-factor 1.3 the job directory must hold
rank-00000..rank-00003, each event file must start with its rank record
and log comm/ms every step, and the ranks analysis (run on the files by
ranks_driver, which reads them with libtfboard's reader) must name rank 2
the one straggler, slower by a factor within 10 % of 1.3, with the other
ranks waiting in the all-reduce. Without a slow rank no straggler is named.

Arguments: the ranks_driver binary. ddp_train is found under
TFB_BUILD_ROOT; without it the test is skipped (exit 77).
"""

import os
import re
import subprocess
import sys
import tempfile

DRIVER = sys.argv[1] if len(sys.argv) > 1 else None
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
EXAMPLE = os.path.join(BUILD, "examples", "ddp_train")
STEPS = 100
# 20 ms of compute per step (mostly a wait, as for a GPU): the straggler's
# extra 6 ms stands well above a loaded machine's wake-up delays.
COMPUTE_MS = "20"


def run_job(logdir, job, extra):
    p = subprocess.run([EXAMPLE, "--logdir", logdir, "--job", job, "--ranks", "4",
                        "--steps", str(STEPS), "--compute-ms", COMPUTE_MS] + extra,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (job, p.returncode, p.stderr)
    assert f"job={job} ranks=4 steps={STEPS}" in p.stdout, p.stdout
    return os.path.join(logdir, job)


def analyse(job_dir):
    p = subprocess.run([DRIVER, job_dir], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    out = {"ranks": {}, "stragglers": [], "notes": [], "text": p.stdout}
    for line in p.stdout.splitlines():
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if line.startswith("note="):
            out["notes"].append(line[5:])
        elif line.startswith("ranks="):
            out["job"] = kv
        elif line.startswith("rank="):
            out["ranks"][int(kv["rank"])] = kv
        elif line.startswith("straggler="):
            out["stragglers"].append((int(kv["straggler"]), float(kv["slowdown"])))
    return out


def check_files(job_dir, res):
    dirs = sorted(d for d in os.listdir(job_dir))
    assert dirs == [f"rank-{r:05d}" for r in range(4)], dirs
    for d in dirs:
        files = [f for f in os.listdir(os.path.join(job_dir, d)) if "tfevents" in f]
        assert len(files) == 1, (d, files)
    job = res["job"]
    assert job["ranks"] == "4" and job["world_size"] == "4", res["text"]
    assert res["notes"] == [], res["notes"]
    for r in range(4):
        k = res["ranks"][r]
        assert k["dir"].endswith(f"rank-{r:05d}"), k
        assert k["records"] == "1", k  # exactly one rank record
        assert k["step_values"] == str(STEPS), k
        assert k["comm_values"] == str(STEPS), k


def first_record_is_rank(job_dir):
    """The record after file_version is the rank record (raw bytes)."""
    d = os.path.join(job_dir, "rank-00001")
    path = os.path.join(d, os.listdir(d)[0])
    with open(path, "rb") as f:
        data = f.read(4096)
    n0 = int.from_bytes(data[0:8], "little")
    second = data[16 + n0:]
    n1 = int.from_bytes(second[0:8], "little")
    payload = second[12:12 + n1]
    assert b"tfboard_rank" in payload, payload
    assert b"version=1\njob=" in payload and b"\nrank=1\nworld_size=4\n" in payload, payload


def main():
    if not DRIVER or not os.path.exists(EXAMPLE):
        print("ddp_train or ranks_driver not built; skipping")
        return 77
    with tempfile.TemporaryDirectory() as logdir:
        slow_dir = run_job(logdir, "slow", ["--slow-rank", "2", "--slow-factor", "1.3"])
        res = analyse(slow_dir)
        print(res["text"])
        check_files(slow_dir, res)
        first_record_is_rank(slow_dir)
        assert [s[0] for s in res["stragglers"]] == [2], res["text"]
        factor = 1 + res["stragglers"][0][1]
        assert abs(factor / 1.3 - 1) <= 0.10, f"slowdown factor {factor:.3f} vs 1.3"
        for r in (0, 1, 3):
            assert res["ranks"][r]["straggler"] == "0", res["ranks"][r]
            # The others wait for rank 2 inside the all-reduce.
            assert float(res["ranks"][r]["comm_share"]) > \
                float(res["ranks"][2]["comm_share"]), res["text"]
        assert float(res["job"]["others_comm_share"]) > 0.1, res["text"]

        even_dir = run_job(logdir, "even", [])
        res = analyse(even_dir)
        print(res["text"])
        check_files(even_dir, res)
        assert res["stragglers"] == [], res["text"]
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
