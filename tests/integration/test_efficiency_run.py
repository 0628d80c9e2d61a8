"""test_efficiency_run.py - the efficiency analysis of whole runs (issue 29)
on a logdir written by eff_gen.py and read by the server's own loader and
store (eff_driver): MFU of a known device to 0.1 % of the hand figure from
its datasheet, an unknown device's "peak unknown", bf16 assumed, the
6 N T estimate from hparams, the device named by the GPU trace, the goodput parts (a startup delay, a 5 s gap
holding a 2 s checkpoint, input waits and comm) and the energy totals.

And `tfboard query`'s runs_wide columns mfu, goodput, tokens_per_s and
j_per_token on the same logdir.

usage: test_efficiency_run.py EFF_DRIVER TFBOARD
"""
import csv
import io
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eff_gen  # noqa: E402


def parse(out):
    runs = {}
    for line in out.splitlines():
        head, _, device = line.partition(" device=")
        d = dict(kv.split("=", 1) for kv in head.split())
        d["device"] = device
        runs[d["run"]] = d
    return runs


def num(d, k):
    return float(d[k])


def near(got, want, tol, what):
    if not (abs(got - want) <= tol):
        raise AssertionError("%s: got %r, want %r (+-%g)" % (what, got, want, tol))


def run_driver(driver, logdir, *args):
    p = subprocess.run([driver, logdir] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("driver failed: %s" % p.stderr)
    return parse(p.stdout)


def query_columns(tfboard, logdir):
    p = subprocess.run(
        [tfboard, "query", "--logdir", logdir, "--quiet", "--format", "csv",
         "SELECT run, mfu, goodput, tokens_per_s, j_per_token FROM runs_wide"
         " ORDER BY run"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = list(csv.reader(io.StringIO(p.stdout)))
    assert rows[0] == ["run", "mfu", "goodput", "tokens_per_s",
                       "j_per_token"], rows
    got = {r[0]: r[1:] for r in rows[1:]}
    # h100: MFU 50 %, goodput 7 / 25; no tokens (empty = NULL)
    near(float(got["h100"][0]), 50.0, 0.1, "query mfu")
    near(float(got["h100"][1]), 0.28, 1e-6, "query goodput")
    assert got["h100"][2] == "" and got["h100"][3] == "", got
    # unknown device: MFU NULL, never a figure
    assert got["unknown"][0] == "", got
    near(float(got["est"][2]), 8192, 1e-6, "query tokens/s")


def main(driver, tfboard):
    with tempfile.TemporaryDirectory() as logdir:
        eff_gen.main(logdir)
        runs = run_driver(driver, logdir, 0, 400)

        h = runs["h100"]
        assert h["rc"] == "0", h
        assert h["steps"] == "10", h
        # 494.7 of the datasheet's 989.4 TFLOP/s dense BF16 (H100 SXM5)
        near(num(h, "mfu_pct"), 50.0, 0.1, "h100 mfu")
        assert h["peak_source"] == "table" and h["dtype"] == "bf16", h
        assert h["dtype_assumed"] == "0" and h["flops_estimated"] == "0", h
        assert h["mfu_steps"] == "10", h
        near(num(h, "samples_per_s"), 64, 1e-9, "samples/s")
        # goodput: startup 10, 10 steps of 0.7 + 0.2 + 0.1 s, gap [15, 20]
        # holding the checkpoint [17, 19]
        for k, want in [("wall_s", 25), ("productive_s", 7), ("input_s", 2),
                        ("comm_s", 1), ("startup_s", 10), ("gap_s", 3),
                        ("checkpoint_s", 2), ("goodput", 0.28)]:
            near(num(h, k), want, 1e-5, "h100 " + k)
        parts = sum(num(h, k) for k in ("productive_s", "input_s", "comm_s",
                                         "startup_s", "gap_s", "checkpoint_s"))
        near(parts, num(h, "wall_s"), 1e-6, "parts sum")
        # energy: 10 x 300 J (gpu/0/energy_j; perf/energy_j not twice)
        near(num(h, "energy_j"), 3000, 1e-9, "energy")
        near(num(h, "energy_wh"), 3000 / 3600, 1e-12, "Wh")
        near(num(h, "gco2"), 3000 / 3.6e6 * 400, 1e-12, "gCO2")
        near(num(h, "j_per_sample"), 3000 / 640, 1e-9, "J/sample")
        assert math.isnan(num(h, "j_per_token")), h
        assert h["energy_source"] == "counter", h
        assert h["device"] == "NVIDIA H100 80GB HBM3", h

        u = runs["unknown"]
        assert u["rc"] == "0", u
        assert math.isnan(num(u, "mfu_pct")), u
        assert math.isnan(num(u, "peak_tflops")), u
        assert u["peak_source"] == "unknown" and u["mfu_steps"] == "0", u
        near(num(u, "tflops"), 100, 1e-9, "unknown tflops")

        a = runs["assumed"]
        assert a["dtype"] == "bf16" and a["dtype_assumed"] == "1", a
        # 156 of the A100's 312 dense BF16
        near(num(a, "mfu_pct"), 50.0, 0.1, "a100 mfu")

        t = runs["trace"]
        assert t["device"] == "NVIDIA A100-SXM4-80GB", t
        near(num(t, "mfu_pct"), 50.0, 0.1, "trace device mfu")

        e = runs["est"]
        assert e["flops_estimated"] == "1", e
        assert e["dtype"] == "bf16" and e["dtype_assumed"] == "0", e
        # 6 x 1e9 x (8 x 1024) per 1 s step
        near(num(e, "tflops"), 49.152, 1e-9, "6NT tflops")
        near(num(e, "tokens_per_s"), 8192, 1e-9, "tokens/s")
        near(num(e, "mfu_pct"), 49.152 / 989.4 * 100, 0.1 * 49.152 / 989.4 * 100,
             "est mfu")
        assert e["device"] == "NVIDIA H100 80GB HBM3", e

        # --peak_tflops wins over the table: 494.7 of 1000
        runs = run_driver(driver, logdir, 1000)
        near(num(runs["h100"], "mfu_pct"), 49.47, 1e-3, "flag mfu")
        assert runs["h100"]["peak_source"] == "flag"
        assert math.isnan(num(runs["h100"], "gco2")), runs["h100"]
        near(num(runs["unknown"], "mfu_pct"), 10.0, 1e-9, "flag unknown")
        query_columns(tfboard, logdir)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
