"""What tests/integration/gen_gpu_trace.c writes (its comment says how
the trace of n kernels is made), as the figures the GPU routes must answer.
Used by server/plugins/gpu/test_gpu_big.py and tests/bench/bench_gpu_trace.py.
"""
import subprocess

B = 1700000000000000000
K = 50
STREAMS = (7, 8, 13, 21)


def dur(i):
    return 200 + 50 * (i % 7)


def write(gen, path, n):
    """Runs the generator: the trace of n kernels at path."""
    subprocess.run([gen, path, str(n)], check=True, timeout=1800)


def expected(n):
    """The figures of the trace of n kernels.

    Busy time is the union of kernels and copies on the device (no copy
    overlaps a kernel: kernel i ends by +500 ns, its copy runs at +600 ns).
    The idle breakdown is HTA's, per stream, summed over the device's
    streams (server/trace/trace.h): on a kernel stream (every 4th kernel)
    the next kernel's launch call starts 300 or 900 ns before it, long
    after the previous kernel there ended (4000 - dur ns before), so every
    gap is host wait; the copies (stream 99) have no launch call and are
    100,000 ns apart, so each gap is "other" (not under 30 us).
    """
    kernel_ns = sum(dur(i) for i in range(n))
    per_name = {}
    for k in range(K):
        idx = range(k, n, K)
        per_name["kernel_%02d<float>(float*, int)" % k] = (
            len(idx), sum(dur(i) for i in idx))
    copies = len(range(0, n, 100))
    host_wait = sum(4000 - dur(i - 4) for i in range(4, n))
    other = (copies - 1) * (100000 - 10) if copies > 1 else 0
    end = max(B + 1000 * (n - 1) + dur(n - 1),
              B + 100000 * (copies - 1) + 610)
    return {
        "kernels": n, "kernel_ns": kernel_ns,
        "busy_ns": kernel_ns + 10 * copies,
        "start_ns": B, "end_ns": end, "span_ns": end - B,
        "host_wait_ns": host_wait, "other_ns": other,
        "per_name": per_name, "copies": copies,
        "calls": n,
    }
