#!/bin/sh
# run_mfu_check.sh - MFU on a real GPU (issue 29; not part of `meson test`:
# CI has no GPU). Builds libtfboard (with NVML), the server and
# tests/gpu/mfu_gemm.cu (nvcc, cuBLAS), runs a BF16 GEMM loop of known FLOPs
# that logs tfb_step_work, and checks that the MFU the server shows
# (/data/plugin/efficiency: the collector's perf/mfu, or perf/tflops over
# the peak table's entry) agrees with the MFU from cuBLAS's own timing (CUDA
# events around the same GEMMs, over the same peak) within MFU_TOL_PCT.
# Without a GPU (or nvcc) it says "skip" and exits 0.
#
# usage: tests/gpu/run_mfu_check.sh [BUILD_DIR]  (default build-gpu-device)
# env:   CUDA_ROOT (default /usr/local/cuda), STEPS (default 21), GEMMS
#        (per step, default 20), N (matrix size, default 8192),
#        PEAK_TFLOPS (for a device the peak table lacks; default none)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build-gpu-device}
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
STEPS=${STEPS:-21}
GEMMS=${GEMMS:-20}
N=${N:-8192}
PEAK_TFLOPS=${PEAK_TFLOPS:-0}
# The step's host span (what perf/tflops divides by) holds the GEMMs' GPU
# time plus the first launch and the final synchronize: tens of µs against
# a step of 20 GEMMs of 8192^3 (about 30 ms on an H100), so 3 % leaves room
# for a busy host without hiding a wrong FLOP count or peak (a factor 2).
MFU_TOL_PCT=3

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "skip: no GPU (nvidia-smi -L failed)"
    exit 0
fi
if [ ! -x "$CUDA_ROOT/bin/nvcc" ]; then
    echo "skip: no nvcc in $CUDA_ROOT/bin"
    exit 0
fi
WORK=$(mktemp -d /tmp/tfb_mfu_check.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s)
left() { echo $((540 - ($(date +%s) - T0))); }

echo "== build libtfboard and the server"
[ -f "$BUILD/build.ninja" ] || timeout "$(left)" meson setup "$BUILD" "$ROOT" \
    -Dcupti=enabled -Dcudadir="$CUDA_ROOT" -Dtests=false -Dexamples=false \
    -Dbuildtype=release >/dev/null
timeout "$(left)" ninja -C "$BUILD" collector/libtfboard.a server/tfboard >/dev/null

echo "== build mfu_gemm (nvcc, cuBLAS)"
timeout "$(left)" "$CUDA_ROOT/bin/nvcc" -O2 -std=c++17 -I"$ROOT/include" \
    "$ROOT/tests/gpu/mfu_gemm.cu" "$BUILD/collector/libtfboard.a" -lcublas \
    -lsqlite3 -ldl -lpthread -lm -o "$WORK/mfu_gemm"

echo "== GEMM loop: $STEPS steps of $GEMMS GEMMs of ${N}^3 (bf16)"
mkdir -p "$WORK/logs/gemm"
OUT=$(timeout "$(left)" "$WORK/mfu_gemm" "$WORK/logs/gemm" "$STEPS" "$GEMMS" "$N")
echo "$OUT"

echo "== the server's MFU against cuBLAS's timing"
timeout "$(left)" python3 - "$BUILD/server/tfboard" "$WORK/logs" "$OUT" \
    "$MFU_TOL_PCT" "$PEAK_TFLOPS" <<'PY'
import json, subprocess, sys, time, urllib.request
tfboard, logdir, line, tol, peak_flag = sys.argv[1:6]
tol, peak_flag = float(tol), float(peak_flag)
head, device = line.split(" device=", 1)
kv = dict(p.split("=", 1) for p in head.split())
flops, event_s = float(kv["flops_per_step"]), float(kv["event_ms"]) / 1e3
steps = int(kv["steps"])
fails = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)
args = [tfboard, "--logdir", logdir, "--host", "127.0.0.1", "--port", "0"]
if peak_flag > 0:
    args += ["--peak_tflops", str(peak_flag)]
p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                     text=True)
try:
    url = None
    end = time.time() + 30
    while url is None and time.time() < end:
        l = p.stdout.readline()
        if "http://" in l:
            url = l[l.index("http://"):].split()[0].rstrip("/")
    check(url is not None, "tfboard started")
    get = lambda path: json.loads(urllib.request.urlopen(url + path, timeout=30).read())
    row = None
    end = time.time() + 60
    while row is None and time.time() < end:
        rows = [r for r in get("/data/plugin/efficiency/runs")["runs"]
                if r["run"] == "gemm" and r["steps"] >= steps + 1]
        row = rows[0] if rows else None
        time.sleep(0.3)
    check(row is not None, "the run's efficiency row")
    print("row:", json.dumps(row))
    peak = row and row["peak_tflops"]
    check(peak is not None, "peak known for %r (%s); PEAK_TFLOPS=X for a "
          "device the table lacks" % (device, row and row["peak_source"]))
    st = get("/data/plugin/efficiency/steps?run=gemm")
    cols = st["columns"]
    mfu = [r[cols.index("mfu_pct")] for r in st["steps"] if r[0] >= 1]
    tfl = [r[cols.index("tflops")] for r in st["steps"] if r[0] >= 1]
    check(len(tfl) == steps and None not in tfl, "perf/tflops for steps 1..%d"
          % steps)
    if peak and None not in mfu and mfu:
        server = sum(mfu) / len(mfu)
        cublas = flops * steps / event_s / 1e12 / peak * 100
        print("device %s, peak %.1f TFLOP/s (%s): MFU server %.2f %%, "
              "cuBLAS events %.2f %% (%.1f vs %.1f TFLOP/s)"
              % (device, peak, row["peak_source"], server, cublas,
                 sum(tfl) / len(tfl), flops * steps / event_s / 1e12))
        check(0 < server <= 100, "MFU in (0, 100]")
        check(abs(server - cublas) <= tol / 100 * cublas,
              "server MFU within %g %% of cuBLAS's" % tol)
        check(server <= cublas * 1.001, "the host span is never shorter "
              "than the GPU time (server MFU <= cuBLAS's)")
finally:
    p.terminate()
    p.wait(timeout=30)
sys.exit(1 if fails else 0)
PY
echo "== MFU check passed in $(($(date +%s) - T0)) s"
