"""eff_gen.py - a logdir for the efficiency analysis (issue 29), written as
the collector's data contract says (include/tfboard.h, "Work per step"),
with wall times chosen by hand so that every figure has a hand value:

  h100     NVIDIA H100 SXM (gpu/0/name), perf/work dtype=bf16, perf/tflops
           494.7 each step (50.0 % of the datasheet's 989.4 dense BF16),
           energy 300 J a step from the counter, 64 samples/s;
           goodput: run start T, a 10 s startup, steps of 1 s (input 0.2 s,
           comm 0.1 s) ending T+11..T+15, a 5 s gap holding a 2 s
           checkpoint, steps ending T+21..T+25.
  unknown  a device no table has: MFU unknown, never a figure.
  assumed  an A100 SXM by name, no dtype anywhere: bf16 assumed, perf/tflops
           156 = 50.0 % of 312.
  trace    the device named only by its Kineto trace's deviceProperties
           (an A100 SXM), perf/tflops 156: 50.0 %.
  est      no FLOPs logged: hparams n_params 1e9, batch_size 8, seq_len
           1024, dtype bf16-mixed, gpu "NVIDIA H100 80GB HBM3"; steps of
           1000 ms: 6 x 1e9 x 8192 / 1 s = 49.152 TFLOP/s, 8192 tokens/s.

usage: eff_gen.py LOGDIR
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tfevents_py import event, key, ld, record, scalars_summary, varint  # noqa: E402
from hparams_gen import hp_value, session_start  # noqa: E402

T = 1_700_000_000.0


def string_tensor(s):
    """TensorProto{dtype: DT_STRING, tensor_shape{}, string_val: s}."""
    return key(1, 0) + varint(7) + ld(2, b"") + ld(8, s.encode())


def plugin_value(tag, plugin, s):
    meta = ld(1, ld(1, plugin.encode()))
    return ld(1, ld(1, tag.encode()) + ld(9, meta) + ld(8, string_tensor(s)))


class Run:
    def __init__(self, logdir, name):
        d = os.path.join(logdir, name)
        os.makedirs(d, exist_ok=True)
        self.f = open(os.path.join(d, "events.out.tfevents.1.h.1.0"), "wb")
        self.f.write(record(event(T, file_version="brain.Event:2")))

    def put(self, wall, step, summary):
        self.f.write(record(event(wall, step, summary=summary)))

    def scalars(self, wall, step, pairs):
        self.put(wall, step, scalars_summary(pairs))

    def text(self, tag, s):
        self.put(T + 0.5, 0, plugin_value(tag, "text", s))

    def work(self, lines):
        self.put(T + 0.5, 0, plugin_value("perf/work", "tfboard_perf",
                                          "".join(x + "\n" for x in lines)))

    def close(self):
        self.f.close()


def steps(run, ends, step_ms, extra=()):
    for i, end in enumerate(ends):
        run.scalars(end, i + 1, [("pipeline/step_ms", step_ms)] + list(extra))


def main(logdir):
    r = Run(logdir, "h100")
    r.text("gpu/0/name", "NVIDIA H100 80GB HBM3")
    r.text("gpu/0/energy_source", "counter")
    r.work(["version=1", "flops_per_step=4.947e14", "samples_per_step=64",
            "tokens_per_step=0", "dtype=bf16", "peak_tflops=unknown",
            "peak_source=unknown", "device=NVIDIA H100 80GB HBM3"])
    ends = [T + 11 + k for k in range(5)] + [T + 21 + k for k in range(5)]
    steps(r, ends, 1000.0, [("pipeline/input_ms", 200.0),
                            ("comm/ms", 100.0),
                            ("perf/tflops", 494.7),
                            ("perf/samples_per_s", 64.0),
                            ("gpu/0/energy_j", 300.0),
                            ("perf/energy_j", 300.0)])
    # the checkpoint [T+17, T+19], inside the gap [T+15, T+20]
    r.scalars(T + 19, 5, [("goodput/checkpoint_ms", 2000.0)])
    r.close()

    r = Run(logdir, "unknown")
    r.text("gpu/0/name", "Imaginary Accelerator 9000")
    r.work(["version=1", "flops_per_step=1e14", "dtype=bf16",
            "peak_tflops=unknown", "peak_source=unknown",
            "device=Imaginary Accelerator 9000"])
    steps(r, [T + 1 + k for k in range(4)], 1000.0, [("perf/tflops", 100.0)])
    r.close()

    r = Run(logdir, "assumed")
    r.text("gpu/0/name", "NVIDIA A100-SXM4-80GB")
    steps(r, [T + 1 + k for k in range(4)], 1000.0, [("perf/tflops", 156.0)])
    r.close()

    r = Run(logdir, "trace")
    steps(r, [T + 1 + k for k in range(4)], 1000.0, [("perf/tflops", 156.0)])
    r.close()
    base = int(T * 1e6)  # µs
    kernel = ('{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, '
              '"tid": 7, "ts": %d, "dur": 100, "args": {"device": 0, '
              '"stream": 7, "correlation": 1}}' % (base + 2_000_000))
    with open(os.path.join(logdir, "trace", "host_1.1.pt.trace.json"),
              "w") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, '
                '"name": "NVIDIA A100-SXM4-80GB"}], "traceEvents": [' +
                kernel + ']}')

    r = Run(logdir, "est")
    r.put(T + 0.5, 0, hp_value("_hparams_/session_start_info", session_start(
        [("n_params", 1e9), ("batch_size", 8), ("seq_len", 1024),
         ("dtype", "bf16-mixed"), ("gpu", "NVIDIA H100 80GB HBM3")])))
    steps(r, [T + 1 + k for k in range(4)], 1000.0)
    r.close()


if __name__ == "__main__":
    main(sys.argv[1])
