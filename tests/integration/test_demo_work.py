"""The demo's jobs say their work (issue 29 item 7): mlp_train,
pipeline_train and ddp_train call tfb_step_work each step, so their runs
have perf/tflops and perf/samples_per_s; their ratio is the work per
sample the example declares (6 x the MLP's 1,251 parameters), whatever
the step time. The GPU sample's event file has MFU against the A100's
TF32 peak (its perf/work record names the device) and energy per step.

Arguments: the tfboard binary. The examples are found under
TFB_BUILD_ROOT; without them the test is skipped (exit 77).
"""

import json
import os
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
    assert p.returncode == 0, (name, p.stderr)


def setup(logdir):
    ex("mlp_train", "--logdir", logdir, "--name", "mlp", "--steps", "20",
       "--hist-every", "100", "--batch", "16")
    ex("pipeline_train", "--logdir", logdir, "--run", "pipe", "--steps", "8",
       "--loader-ms", "1", "--step-ms", "2")
    ex("ddp_train", "--logdir", logdir, "--job", "ddp", "--ranks", "2",
       "--steps", "8", "--compute-ms", "2", "--input-ms", "1")
    ex("gpu_sample_trace", "--out", os.path.join(logdir, "gpu_SAMPLE"))
    p = subprocess.run([TFBOARD, "report", "--logdir", logdir, "--format",
                        "json"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    STATE["runs"] = {r["run"]: r for r in json.loads(p.stdout)["runs"]}


def scalars(run):
    return STATE["runs"][run]["scalars"]


def test_every_step_has_its_work():
    for run, steps in (("mlp", 20), ("pipe", 8), ("ddp/rank-00000", 8),
                       ("ddp/rank-00001", 8)):
        s = scalars(run)
        assert s["perf/tflops"]["count"] == steps, (run, s.keys())
        assert s["pipeline/step_ms"]["count"] == steps, run
    assert scalars("mlp")["perf/samples_per_s"]["count"] == 20
    assert scalars("pipe")["perf/samples_per_s"]["count"] == 8


def test_mlp_flops_per_sample():
    # 2x32 + 32 + 32x32 + 32 + 32x3 + 3 = 1,251 parameters.
    s = scalars("mlp")
    per_sample = s["perf/tflops"]["last"] * 1e12 / s["perf/samples_per_s"]["last"]
    assert abs(per_sample - 6 * 1251) < 6 * 1251 * 1e-5, per_sample
    # No peak known on a CPU: never an MFU.
    assert "perf/mfu" not in s


def test_gpu_sample_mfu_and_energy():
    s = scalars("gpu_SAMPLE")
    for tag in ("perf/mfu", "perf/tflops", "perf/energy_j", "gpu/0/energy_j",
                "perf/j_per_sample", "perf/samples_per_s"):
        assert s[tag]["count"] == 6, (tag, s.keys())
    # MFU is achieved TFLOP/s over the A100's dense TF32 peak, 156.
    mfu, tflops = s["perf/mfu"]["last"], s["perf/tflops"]["last"]
    assert abs(mfu - tflops / 156 * 100) < mfu * 1e-5, (mfu, tflops)
    assert 0 < mfu < 100


if __name__ == "__main__":
    if not TFBOARD or not os.path.exists(os.path.join(EX, "gpu_sample_trace")):
        print("SKIP: the examples are not built (TFB_BUILD_ROOT/examples)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        setup(d)
        run_tests([test_every_step_has_its_work, test_mlp_flops_per_sample,
                   test_gpu_sample_mfu_and_energy])
