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
    """The figures of the trace of n kernels."""
    busy = sum(dur(i) for i in range(n))
    per_name = {}
    for k in range(K):
        idx = range(k, n, K)
        per_name["kernel_%02d<float>(float*, int)" % k] = (
            len(idx), sum(dur(i) for i in idx))
    host_wait = other = 0
    for i in range(1, n):
        gap = 1000 - dur(i - 1)
        if i % 2 == 0:
            host_wait += gap
        else:
            other += gap
    return {
        "kernels": n, "kernel_ns": busy, "busy_ns": busy,
        "start_ns": B, "end_ns": B + 1000 * (n - 1) + dur(n - 1),
        "span_ns": 1000 * (n - 1) + dur(n - 1),
        "host_wait_ns": host_wait, "other_ns": other,
        "per_name": per_name, "copies": len(range(0, n, 100)),
        "calls": n,
    }
