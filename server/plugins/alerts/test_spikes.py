#!/usr/bin/env python3
"""Loss spikes and their precursors over HTTP and in the report (issue 23,
part 2), from the real example programs:
  spiky     examples/spiky_train: bad batches at steps 150, 307 and 434,
            each after fc2's gradient norm jumped two steps before; the lr
            decays 10x at step 360 (no spike there)
  blowup    the same with --diverge-at 400: the spike at 400 diverges at
            the NaN of step 405
  diverge   examples/mlp_train --lr 5: the Health alert says the gradient
            norms grew from step 56 (fc3 first) before the NaN at 61
Arguments: the tfboard binary.
"""
import json
import os
import subprocess
import sys
import tempfile

# The integration tests' helpers (tests/integration/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests", "integration"))
from tfb_server_util import Server  # noqa: E402

TFBOARD = sys.argv[1]
BUILD = os.environ.get("TFB_BUILD_ROOT", "")
SPIKY = os.path.join(BUILD, "examples", "spiky_train")
MLP = os.path.join(BUILD, "examples", "mlp_train")


def main():
    tmp = tempfile.mkdtemp(prefix="tfb_spikes_")
    try:
        subprocess.run([SPIKY, "--logdir", tmp, "--bad-batch", "b/0;rm -rf",
                        "--bad-batch", "$(id)", "--bad-batch", "`x`"],
                       check=True, timeout=60)
        subprocess.run([SPIKY, "--logdir", tmp, "--name", "blowup",
                        "--diverge-at", "400"], timeout=60)
        subprocess.run([MLP, "--logdir", tmp, "--name", "diverge", "--steps",
                        "100", "--lr", "5"], capture_output=True, timeout=60)
        with Server(TFBOARD, tmp, "--reload_interval", "0") as srv:
            srv.wait_loaded()
            sp = srv.json("/data/plugin/alerts/spikes", run="spiky")["spikes"]
            assert [s["step"] for s in sp] == [150, 307, 434], sp
            for s, bad in zip(sp, ["b/0;rm -rf", "$(id)", "`x`"]):
                assert s["tag"] == "loss" and s["state"] == "recovered", s
                assert s["batch_ids"] == [bad], s
                assert s["precursors"]["grad_from"] == s["step"] - 2, s
                assert s["precursors"]["grad_first"] == "fc2", s
                assert s["precursors"]["lr_step"] is None, s
                assert s["explain"].startswith(
                    "gradient norms grew"), s["explain"]
            bl = srv.json("/data/plugin/alerts/spikes", run="blowup")["spikes"]
            assert [(s["step"], s["state"]) for s in bl] == \
                [(150, "recovered"), (307, "recovered"), (400, "diverged")], bl
            assert bl[2]["end_step"] == 405
            assert bl[2]["precursors"]["nonfinite_step"] == 405
            # every run at once
            allsp = srv.json("/data/plugin/alerts/spikes")["spikes"]
            assert {s["run"] for s in allsp} >= {"spiky", "blowup"}
            h = srv.json("/data/plugin/health/alerts", run="diverge")["alerts"]
            assert h[0]["explain"] == ("gradient norms grew 10^20x from step "
                                       "56 (fc3/weight first); NaN at 61"), h[0]
            assert all(a["explain"] is None for a in h[1:])
            st, _, _ = srv.get("/data/plugin/alerts/spikes", run="nope")
            assert st == 404
        rep = subprocess.run([TFBOARD, "report", "--logdir", tmp, "--run",
                              "^spiky$", "--quiet"], capture_output=True,
                             text=True, timeout=60)
        assert rep.returncode == 0, rep.stderr
        out = rep.stdout
        assert "loss spikes: 3" in out, out
        skip = out.split("skip list (batch ids around the spikes):\n")[1]
        assert skip.splitlines()[:3] == ["    b/0;rm -rf", "    $(id)",
                                         "    `x`"], skip
        rep = subprocess.run([TFBOARD, "report", "--logdir", tmp, "--run",
                              "^diverge$", "--quiet"], capture_output=True,
                             text=True, timeout=60)
        assert ("before the first NaN/Inf: gradient norms grew 10^20x from "
                "step 56 (fc3/weight first); NaN at 61") in rep.stdout, \
            rep.stdout
        js = json.loads(subprocess.run(
            [TFBOARD, "report", "--logdir", tmp, "--run", "^blowup$",
             "--format", "json", "--quiet"], capture_output=True, text=True,
            timeout=60).stdout)
        assert [s["state"] for s in js["runs"][0]["spikes"]] == \
            ["recovered", "recovered", "diverged"]
    finally:
        subprocess.run(["rm", "-rf", tmp])
    print("ok")


if __name__ == "__main__":
    main()
