"""A logdir for the Efficiency dashboard's tests (issue 29), encoded by hand
(TFRecord framing and protobuf wire format, as tests/integration/
tfevents_py.py) with figures simple enough to check by hand.

Runs (every step 100 ms, contiguous, 2 s after the run's first event):
  eff_known/          20 steps; perf/tflops 400 and the perf/work record's
                      peak 1000 (opts, bf16): MFU 40 %; 32 samples and
                      65,536 tokens a step: 320 samples/s, 655,360 tokens/s;
                      70 J a step (energy counter): 1,400 J in all; one
                      500 ms checkpoint in a 1 s gap after step 9.
  eff_unknown/        10 steps; perf/tflops 300 on "Some Future GPU", no
                      peak and no dtype: "peak unknown", bf16 assumed;
                      energy from power x time.
  effjob/rank-0000N/  2 ranks of job "effjob" (world size 2), 10 steps each,
                      MFU from perf/mfu (45 and 35 %), and the collector's
                      comm/collectives record: 10 all_reduce of 1 MiB in
                      1 ms each (host time).
  plain/              train/loss only: not on the dashboard.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "integration"))
from tfevents_py import (event, key, ld, record, scalars_summary,  # noqa: E402
                         varint)

T0 = 1700000000.0
STEP_S = 0.1
STARTUP_S = 2.0
MIB = 1 << 20


def string_value(tag, plugin, text):
    """Summary.Value: a rank-0 DT_STRING tensor holding text, with the
    plugin's name in its metadata (the collector's records, text)."""
    tensor = key(1, 0) + varint(7) + ld(8, text.encode())
    meta = ld(1, ld(1, plugin.encode()))
    return ld(1, ld(1, tag.encode()) + ld(8, tensor) + ld(9, meta))


def work_record(**kv):
    lines = ["version=1"] + ["%s=%s" % (k, v) for k, v in kv.items()]
    return string_value("perf/work", "tfboard_perf", "\n".join(lines) + "\n")


def write_run(d, recs):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "events.out.tfevents.1700000000.h.1.0"), "wb") as f:
        f.write(record(event(T0, file_version="brain.Event:2")))
        for wall, step, summary in recs:
            f.write(record(event(wall, step, summary=summary)))


def step_recs(n, per_step, gap_after=None, gap_s=0.0, ckpt_ms=None):
    """Each step's scalars at its end's wall time; a gap of gap_s after
    step gap_after, with a checkpoint of ckpt_ms logged at its end."""
    out = []
    t = T0 + STARTUP_S
    for s in range(n):
        t += STEP_S
        out.append((t, s, scalars_summary([("pipeline/step_ms", 100.0),
                                           ("pipeline/input_ms", 10.0)]
                                          + per_step(s))))
        if s == gap_after:
            t += gap_s
            if ckpt_ms is not None:
                out.append((t, s, scalars_summary(
                    [("goodput/checkpoint_ms", ckpt_ms)])))
    return out


def make_logdir(root):
    def known(s):
        return [("perf/tflops", 400.0), ("perf/samples_per_s", 320.0),
                ("perf/tokens_per_s", 655360.0), ("gpu/0/energy_j", 70.0),
                ("perf/energy_j", 70.0), ("perf/j_per_sample", 70.0 / 32),
                ("perf/j_per_token", 70.0 / 65536)]
    recs = step_recs(20, known, gap_after=9, gap_s=1.0, ckpt_ms=500.0)
    first = recs[0][0]
    recs.insert(0, (first, 0, work_record(
        flops_per_step=str(400e12 * STEP_S), samples_per_step="32",
        tokens_per_step="65536", dtype="bf16", peak_tflops="1000",
        peak_source="opts", device="NVIDIA H100 80GB HBM3")))
    recs.insert(1, (first, 0, string_value("gpu/0/energy_source", "text",
                                           "counter")))
    write_run(os.path.join(root, "eff_known"), recs)

    def unknown(s):
        return [("perf/tflops", 300.0), ("perf/energy_j", 50.0),
                ("gpu/0/energy_j", 50.0)]
    recs = step_recs(10, unknown)
    recs.insert(0, (recs[0][0], 0, work_record(
        flops_per_step=str(300e12 * STEP_S), dtype="unknown",
        peak_tflops="unknown", peak_source="unknown",
        device="Some Future GPU")))
    recs.insert(1, (recs[0][0], 0, string_value("gpu/0/energy_source", "text",
                                                "power_x_time")))
    write_run(os.path.join(root, "eff_unknown"), recs)

    for rank, mfu in ((0, 45.0), (1, 35.0)):
        def ranked(s, mfu=mfu):
            return [("perf/tflops", mfu * 10.0), ("perf/mfu", mfu),
                    ("comm/ms", 10.0)]
        recs = step_recs(10, ranked)
        first = recs[0][0]
        recs.insert(0, (T0, 0, string_value(
            "tfboard/rank", "tfboard_rank",
            "version=1\njob=effjob\nrank=%d\nworld_size=2\nlocal_rank=%d\n"
            "host=h\n" % (rank, rank))))
        recs.insert(1, (first, 0, work_record(
            flops_per_step="varies", dtype="bf16", peak_tflops="1000",
            peak_source="opts", device="NVIDIA H100 80GB HBM3")))
        recs.append((recs[-1][0], 9, string_value(
            "comm/collectives", "tfboard_comm",
            "version=1\nall_reduce\t%d\t10\t%d\t%d\n" % (MIB, 10 * MIB,
                                                        10 * 1000000))))
        write_run(os.path.join(root, "effjob", "rank-%05d" % rank), recs)

    os.makedirs(os.path.join(root, "plain"), exist_ok=True)
    write_run(os.path.join(root, "plain"),
              [(T0 + 1 + s, s, scalars_summary([("train/loss", 1.0 / (s + 1))]))
               for s in range(5)])


if __name__ == "__main__":
    make_logdir(sys.argv[1])
