#!/usr/bin/env python3
"""Integration test of the Efficiency dashboard's routes (issue 29), through
the real tfboard on the logdir of eff_page_gen.py, whose figures are checked by
hand here: MFU 400 / 1000 TFLOP/s = 40 %, 70 J x 20 steps = 1,400 J,
0.3889 Wh, x 400 gCO2/kWh = 0.1556 g; an unknown device is "peak unknown"
(null), never a guess; --peak_tflops overrides (source "flag"); 10
all-reduces of 1 MiB in 10 ms over 2 ranks: algbw = busbw (2(n-1)/n = 1)
= 1.048576 GB/s, 1.05 % of a --link_gbps 100 link, so "below"; the Ranks
job's per-rank MFU, energy and bus bandwidth; the `report` section and
the compare gates regress:mfu<2%, regress:tokens_per_s<5%,
regress:j_per_token>5%.

Arguments: the tfboard binary. Bounded in time; servers always stopped.
"""

import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "integration"))
sys.path.insert(0, HERE)
from tfb_server_util import Server, run_tests  # noqa: E402
from eff_page_gen import make_logdir, write_run, step_recs, work_record  # noqa: E402
import comm_traces  # noqa: E402  (tests/integration: eff-comm's Kineto traces)

TFBOARD = sys.argv[1] if len(sys.argv) > 1 else None
STATE = {}
GBPS = 10 * (1 << 20) / 0.01 / 1e9  # 10 x 1 MiB in 10 x 1 ms


def close(a, b, rel=1e-6):
    return a is not None and abs(a - b) <= rel * max(abs(b), 1e-12)


def runs_of(srv):
    j = srv.json("/data/plugin/efficiency/runs")
    return j, {r["run"]: r for r in j["runs"]}


def test_runs_table():
    j, runs = runs_of(STATE["srv"])
    assert "plain" not in runs, runs.keys()
    assert set(runs) >= {"eff_known", "eff_unknown", "effjob/rank-00000"}
    assert j["grid_gco2_per_kwh"] == 400 and j["left_out"] == 0
    k = runs["eff_known"]
    assert k["steps"] == 20, k
    assert close(k["samples_per_s"], 320) and close(k["tokens_per_s"], 655360)
    assert close(k["tflops"], 400), k
    assert close(k["mfu_pct"], 40.0), k
    assert close(k["peak_tflops"], 1000) and k["peak_source"] == "opts", k
    assert k["dtype"] == "bf16" and k["dtype_assumed"] is False, k
    assert close(k["energy_j"], 1400), k
    assert close(k["energy_wh"], 1400 / 3600), k
    assert close(k["gco2"], 1400 / 3.6e6 * 400), k
    assert close(k["j_per_token"], 70 / 65536), k
    assert k["energy_source"] == "counter", k
    g = k["goodput"]
    parts = sum(g[p] for p in ("productive_s", "input_s", "comm_s",
                               "startup_s", "gap_s", "checkpoint_s"))
    assert close(parts, g["wall_s"], 1e-6), g
    assert close(g["checkpoint_s"], 0.5, 1e-3), g
    assert 0 < g["goodput"] < 1, g


def test_peak_unknown():
    _, runs = runs_of(STATE["srv"])
    u = runs["eff_unknown"]
    assert u["mfu_pct"] is None and u["peak_tflops"] is None, u
    assert u["peak_source"] == "unknown", u
    assert u["dtype_assumed"] is True, u
    assert u["energy_source"] == "power_x_time", u
    st = STATE["srv"].json("/data/plugin/efficiency/steps", run="eff_unknown")
    assert st["peak_known"] is False, st
    assert all(r[1] is None for r in st["steps"]), st["steps"][:3]


def test_steps_series():
    st = STATE["srv"].json("/data/plugin/efficiency/steps", run="eff_known")
    assert st["columns"] == ["step", "mfu_pct", "samples_per_s", "tokens_per_s",
                             "tflops", "energy_j", "j_per_token"], st
    assert st["peak_known"] is True and st["stride"] == 1, st
    assert [r[0] for r in st["steps"]] == list(range(20)), st["steps"]
    for r in st["steps"]:
        assert close(r[1], 40) and close(r[4], 400) and close(r[5], 70), r


def test_steps_thinned():
    # 5,000 steps: thinned to every 3rd (EFF_STEP_POINTS_MAX = 2,000).
    st = STATE["srv"].json("/data/plugin/efficiency/steps", run="eff_long")
    assert st["total_steps"] == 5000 and st["stride"] == 3, \
        (st["total_steps"], st["stride"])
    assert len(st["steps"]) == 1667 and st["steps"][1][0] == 3, st["steps"][:2]


def test_collectives():
    c = STATE["srv"].json("/data/plugin/efficiency/collectives",
                          run="effjob/rank-00000")
    rows = [r for r in c["rows"] if r["kind"] == "all_reduce"]
    assert len(rows) == 1, c
    r = rows[0]
    assert r["bucket_lo"] == 1 << 20 and r["count"] == 10, r
    assert r["bytes"] == 10 << 20 and r["source"] == "host", r
    assert close(r["algbw_gbps"], GBPS, 1e-3), r
    assert close(r["busbw_gbps"], GBPS, 1e-3), r   # 2(n-1)/n = 1 at n = 2
    j = STATE["srv"].json("/data/plugin/efficiency/job_collectives", job="effjob")
    assert sorted({r["run"] for r in j["rows"]}) == \
        ["effjob/rank-00000", "effjob/rank-00001"], j


def test_trace_collectives():
    # Ranks with Kineto traces only: the route answers 202 "loading" while
    # a trace loads (Server.json asks again), then the trace's rows.
    want = comm_traces.expected()
    c = STATE["srv"].json("/data/plugin/efficiency/collectives",
                          run="traced/job/rank-00001")
    assert c["rows"] and all(r["source"] == "trace" for r in c["rows"]), c
    for r in c["rows"]:
        e = want[(1, r["kind"], r["bucket_lo"])]
        assert r["count"] == e["count"] and r["bytes"] == e["bytes"], (r, e)
        assert close(r["busbw_gbps"], e["busbw"], 0.01), (r, e)


def test_link_flag():
    r = STATE["flag"].json("/data/plugin/efficiency/collectives",
                           run="effjob/rank-00000")["rows"][0]
    assert close(r["link_gbps"], 100), r
    assert close(r["link_pct"], 100 * GBPS / 100, 1e-3), r
    assert r["below"] is True, r


def test_peak_flag():
    _, runs = runs_of(STATE["flag"])
    assert close(runs["eff_known"]["mfu_pct"], 20.0), runs["eff_known"]
    assert runs["eff_known"]["peak_source"] == "flag"
    # The flag gives the unknown device a peak: 300 / 2000.
    assert close(runs["eff_unknown"]["mfu_pct"], 15.0), runs["eff_unknown"]


def test_ranks_columns():
    job = STATE["srv"].json("/data/plugin/ranks/job", job="effjob")
    eff = {e["run"]: e for e in job["efficiency"]}
    assert close(eff["effjob/rank-00000"]["mfu_pct"], 45), eff
    assert close(eff["effjob/rank-00001"]["mfu_pct"], 35), eff
    assert close(eff["effjob/rank-00000"]["busbw_gbps"], GBPS, 1e-3), eff
    assert eff["effjob/rank-00000"]["energy_j"] is None, eff


def test_bad_requests():
    s = STATE["srv"]
    assert s.get("/data/plugin/efficiency/steps")[0] == 400
    assert s.get("/data/plugin/efficiency/steps", run="nope")[0] == 404
    assert s.get("/data/plugin/efficiency/collectives", run="nope")[0] == 404
    assert s.get("/data/plugin/efficiency/job_collectives", job="nope")[0] == 404


def report(*args):
    p = subprocess.run([TFBOARD, "report", *args], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_report_section():
    rc, out, err = report("--logdir", STATE["root"], "--format", "json",
                          "--run", "^eff_")
    assert rc == 0, err
    runs = {r["run"]: r for r in json.loads(out)["runs"]}
    assert close(runs["eff_known"]["efficiency"]["mfu_pct"], 40), runs
    assert runs["eff_unknown"]["efficiency"]["mfu_pct"] is None
    rc, out, err = report("--logdir", STATE["root"], "--run", "^eff_")
    assert rc == 0, err
    assert "efficiency:" in out and "MFU: 40.0% of 1000 TFLOP/s" in out, out
    assert "MFU: peak unknown" in out, out
    # Numbers as every report writes them (server/API.md "Numbers").
    assert "6.554e5 tokens/s" in out and "1400 J (0.3889 Wh" in out, out
    assert "power x time" in out, out
    # Step timing without any work: not "peak unknown" but what is missing.
    rc, out, err = report("--logdir", STATE["root"], "--run", "^nowork$")
    assert rc == 0, err
    assert "MFU: no FLOPs per step logged" in out and "peak unknown" not in out, out
    assert "goodput:" in out, out


def compare(b, gate):
    return report("--logdir", STATE["root"], "--compare", "eff_known", b,
                  "--fail_on", "regress:" + gate)


def test_compare_gates():
    # eff_slower: the same run at 95 % of the throughput and MFU, 10 % more
    # joules a token.
    rc, out, err = compare("eff_known", "mfu<2%")
    assert rc == 0, (out, err)
    rc, out, err = compare("eff_slower", "mfu<2%")
    assert rc != 0 and "regress:mfu<2% FAILED: 40 -> 38" in out + err, (out, err)
    rc, out, err = compare("eff_slower", "mfu<6%")
    assert rc == 0, (out, err)
    rc, out, err = compare("eff_slower", "tokens_per_s<5%")
    assert rc == 0, (out, err)         # exactly 5 % lower: not more than 5 %
    rc, out, err = compare("eff_slower", "tokens_per_s<4%")
    assert rc != 0 and "tokens_per_s<4% FAILED" in out + err, (out, err)
    rc, out, err = compare("eff_slower", "j_per_token>5%")
    assert rc != 0 and "j_per_token>5% FAILED" in out + err, (out, err)
    rc, out, err = compare("eff_unknown", "mfu<2%")
    assert rc != 0 and "peak is unknown" in out + err, (out, err)
    rc, out, err = report("--logdir", STATE["root"], "--compare", "eff_known",
                          "eff_slower")
    assert rc == 0 and "Efficiency" in out and "J/token" in out, (out, err)


def extra_runs(root):
    def slower(s):
        return [("perf/tflops", 380.0), ("perf/samples_per_s", 304.0),
                ("perf/tokens_per_s", 655360.0 * 0.95),
                ("perf/energy_j", 77.0), ("perf/j_per_token", 77.0 / 65536)]
    recs = step_recs(20, slower)
    recs.insert(0, (recs[0][0], 0, work_record(
        flops_per_step="38000000000000", dtype="bf16", peak_tflops="1000",
        peak_source="opts", device="NVIDIA H100 80GB HBM3")))
    write_run(os.path.join(root, "eff_slower"), recs)
    write_run(os.path.join(root, "nowork"), step_recs(5, lambda s: []))
    comm_traces.write_job(os.path.join(root, "traced"))
    write_run(os.path.join(root, "eff_long"),
              step_recs(5000, lambda s: [("perf/tflops", 100.0)]))


def main():
    if not TFBOARD:
        print("usage: test_efficiency.py TFBOARD")
        return 2
    root = tempfile.mkdtemp(prefix="tfb_eff_")
    make_logdir(root)
    extra_runs(root)
    STATE["root"] = root
    with Server(TFBOARD, root, "--reload_interval", "0",
                "--grid_gco2_per_kwh", "400") as srv, \
         Server(TFBOARD, root, "--reload_interval", "0", "--peak_tflops",
                "2000", "--link_gbps", "100") as flag:
        srv.wait_loaded()
        flag.wait_loaded()
        STATE["srv"], STATE["flag"] = srv, flag
        return run_tests([test_runs_table, test_peak_unknown, test_steps_series,
                          test_steps_thinned, test_collectives,
                          test_trace_collectives, test_link_flag,
                          test_peak_flag, test_ranks_columns, test_bad_requests,
                          test_report_section, test_compare_gates])


if __name__ == "__main__":
    sys.exit(main())
