#!/usr/bin/env python3
"""A command line that never passes a wrong path (issue 27 item 8).

- `report` and `watch --once` on an empty or event-less directory exit 2
  with "no runs found under DIR" (a typo must not pass a CI check);
- `report --compare --logdir DIR` with the runs left out names what is
  missing, not "--logdir: not a readable directory";
- `tfboard DIR` says to write `tfboard --logdir DIR`;
- `--help` lists `watch`;
- over SSH (SSH_CONNECTION set) a server bound to the loopback prints the
  `ssh -L P:127.0.0.1:P HOST` line on standard error, and only then.

Arguments: the tfboard binary, the logdir generator.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfb_server_util import run_tests  # noqa: E402

TFBOARD = sys.argv[1] if len(sys.argv) > 1 else None
GEN = sys.argv[2] if len(sys.argv) > 2 else None
STATE = {}


def run(*args, env=None):
    return subprocess.run([TFBOARD] + list(args), capture_output=True, text=True,
                          timeout=60, env=env)


def test_no_runs():
    with tempfile.TemporaryDirectory(prefix="tfb_cli_empty_") as d:
        for what in ("empty", "event-less"):
            if what == "event-less":
                os.makedirs(os.path.join(d, "run1"))
                with open(os.path.join(d, "run1", "notes.txt"), "w") as f:
                    f.write("not an event file\n")
            for cmd in (["report", "--logdir", d], ["report", "--logdir", d, "--format", "json"],
                        ["watch", "--logdir", d, "--once"]):
                p = run(*cmd)
                assert p.returncode == 2, (what, cmd, p.returncode, p.stdout, p.stderr)
                assert "no runs found under " + d in p.stderr, (what, cmd, p.stderr)
                assert "no run diverged" not in p.stdout, p.stdout


def test_compare_without_runs():
    logdir = STATE["logdir"]
    p = run("report", "--compare", "--logdir", logdir)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "--compare" in p.stderr and "A B" in p.stderr and "'--logdir'" in p.stderr, p.stderr
    assert "not a readable directory" not in p.stderr, p.stderr
    p = run("report", "--compare", "x", "--logdir", logdir)
    assert p.returncode == 2 and "where B goes" in p.stderr, p.stderr


def test_positional_dir():
    logdir = STATE["logdir"]
    p = run(logdir)
    assert p.returncode == 2, p
    assert "tfboard --logdir " + logdir in p.stderr, p.stderr
    p = run("report", logdir)
    assert p.returncode == 2 and "tfboard report --logdir " + logdir in p.stderr, p.stderr
    p = run("--bogus")
    assert p.returncode == 2 and "unknown option '--bogus'" in p.stderr, p.stderr


def test_help_lists_watch():
    p = run("--help")
    assert p.returncode == 0 and "tfboard watch --logdir DIR" in p.stdout, p.stdout


def banner(extra, ssh):
    """The server's standard error up to its URL line and a moment after,
    with SSH_CONNECTION set to ssh (None: unset)."""
    env = dict(os.environ)
    env.pop("SSH_CONNECTION", None)
    if ssh:
        env["SSH_CONNECTION"] = ssh
    proc = subprocess.Popen([TFBOARD, "--logdir", STATE["logdir"], "--port", "0"] + extra,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    port = None
    try:
        if "--quiet" in extra:  # no URL line: give it time to print a hint
            time.sleep(1.5)
        else:
            url = proc.stdout.readline()
            port = re.search(r":(\d+)/", url)
            assert port, url
            time.sleep(0.5)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    return int(port.group(1)) if port else None, err


def test_ssh_hint():
    ssh = "10.1.2.3 50000 10.9.8.7 22"
    port, err = banner([], ssh)
    assert "ssh -L %d:127.0.0.1:%d 10.9.8.7" % (port, port) in err, err
    _, err = banner([], None)
    assert "ssh -L" not in err, err
    _, err = banner(["--bind_all", "--no_auth"], ssh)
    assert "ssh -L" not in err, err
    _, err = banner(["--quiet"], ssh)
    assert "ssh -L" not in err, err


def main():
    if not TFBOARD or not os.path.exists(TFBOARD):
        print("tfboard binary not given; skipping")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tfb_cli_") as root:
        logdir = os.path.join(root, "logs")
        subprocess.run([GEN, "basic", logdir], check=True, timeout=120, capture_output=True)
        STATE["logdir"] = logdir
        run_tests([test_no_runs, test_compare_without_runs, test_positional_dir,
                   test_help_lists_watch, test_ssh_hint])


if __name__ == "__main__":
    main()
