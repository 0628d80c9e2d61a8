#!/usr/bin/env bash
# tests/run.sh - installs what the tests need, builds with -Dwerror=true,
# runs every suite (unit, integration, webui, arch: the layer and loop
# check over the objects and the growth check over the sources,
# tests/arch/), again under AddressSanitizer
# and UndefinedBehaviorSanitizer (unit, integration, python), unit and
# integration under ThreadSanitizer and once more built without CUDA (unit
# and the tests of the GPU paths), fuzzes the reader for a
# while, and prints
# "N passed, N failed" last. Exits non-zero on any failure.
#
#   FUZZ_SECONDS=N   how long libFuzzer runs (default 60; 0 skips it)
#   SKIP_ASAN=1      skip the ASan/UBSan pass (local iteration only)
#   SKIP_TSAN=1      skip the ThreadSanitizer pass (local iteration only)
#   TFB_BENCH=1      also run the benchmarks (numbers only, never a failure)
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=$(nproc 2>/dev/null || echo 2)

# Each step says when it began, so that a slow CI run shows where the time went.
log() { printf '\n==> %s %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# ---- 1. packages (Debian 12) -------------------------------------------
PKGS="meson ninja-build gcc binutils clang libclang-rt-14-dev pkg-config libcmocka-dev
      libmicrohttpd-dev libsqlite3-dev zlib1g-dev protobuf-compiler python3
      libcurl4-openssl-dev libssl-dev libzstd-dev
      chromium sqlite3 wrk
      python3-pytest python3-numpy python3-torch python3-protobuf
      libpng-dev libcmark-dev python3-pil python3-matplotlib
      python3-venv python3-setuptools python3-wheel"
# test_auth makes its TLS certificate with openssl; bench_fair's clients are curl
PKGS="$PKGS openssl curl"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
# Node.js may come from elsewhere than Debian (with its own npm, which
# Debian's npm package conflicts with): ask for the commands, not packages.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    log "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing \
      || { echo "apt-get failed"; echo "0 passed, 1 failed"; exit 1; }
  else
    echo "missing packages:$missing (run as root to install them)"
  fi
fi

# ---- 2. browser-test dependencies (npm ci from the lock file) -----------
if [ -f tests/webui/package-lock.json ]; then
  log "npm ci (tests/webui)"
  (cd tests/webui && npm ci --no-audit --no-fund --loglevel=error) \
    || { echo "npm ci failed"; echo "0 passed, 1 failed"; exit 1; }
fi

PASSED=0
FAILED=0
FAILED_NAMES=""

# Adds the counts of one `meson test` run from its testlog.json (one JSON
# object per line, field "result").
count_meson() {
  local build=$1 label=$2
  local f=$build/meson-logs/testlog.json
  if [ ! -f "$f" ]; then
    FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $label:no-testlog"; return
  fi
  local ok fail names
  ok=$(python3 -c 'import json,sys
n=0
for l in open(sys.argv[1]):
    r=json.loads(l)["result"]
    n+= r in ("OK","EXPECTEDFAIL")
print(n)' "$f")
  fail=$(python3 -c 'import json,sys
n=0
for l in open(sys.argv[1]):
    r=json.loads(l)["result"]
    n+= r in ("FAIL","TIMEOUT","UNEXPECTEDPASS","ERROR")
print(n)' "$f")
  names=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l)
    if j["result"] in ("FAIL","TIMEOUT","UNEXPECTEDPASS","ERROR"): print(j["name"])' "$f")
  PASSED=$((PASSED + ok)); FAILED=$((FAILED + fail))
  for n in $names; do FAILED_NAMES="$FAILED_NAMES $label:$n"; done
}

build_and_test() {
  local dir=$1 label=$2; shift 2
  local suites=()
  if [ -n "${SUITES:-}" ]; then
    for su in $SUITES; do suites+=(--suite "$su"); done
  fi
  # NOSUITES: suites left out (the 'slow' suite runs in the normal build
  # only).
  for su in ${NOSUITES:-}; do suites+=(--no-suite "$su"); done
  log "[$label] meson setup $*"
  rm -rf "$dir"
  if ! meson setup "$dir" -Dwerror=true "$@" >"$dir.setup.log" 2>&1; then
    cat "$dir.setup.log"; FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $label:setup"; return
  fi
  log "[$label] build"
  if ! ninja -C "$dir" -j"$JOBS"; then
    FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES $label:build"; return
  fi
  log "[$label] meson test"
  meson test -C "$dir" --print-errorlogs --num-processes "$JOBS" \
    --timeout-multiplier "${TIMEOUT_MULT:-1}" "${suites[@]}"
  count_meson "$dir" "$label"
  # TESTS: named tests run besides the suites (meson intersects names with
  # suites, so they need a run of their own).
  if [ -n "${TESTS:-}" ]; then
    log "[$label] meson test $TESTS"
    # shellcheck disable=SC2086
    meson test -C "$dir" --print-errorlogs --num-processes "$JOBS" \
      --timeout-multiplier "${TIMEOUT_MULT:-1}" $TESTS
    count_meson "$dir" "$label"
  fi
}

# ---- 3. the normal build -------------------------------------------------
build_and_test build-ci release -Dbuildtype=debugoptimized

# ---- 3b. the demo, as a new user runs it (NO_SERVE: training and the
# report), on the normal build: its report's first screen and closing
# summary must be there.
log "[demo] NO_SERVE=1 examples/demo.sh"
demo_dir=$(mktemp -d)
if NO_SERVE=1 LOGDIR="$demo_dir" BUILD=build-ci examples/demo.sh >build-ci.demo.log 2>&1 &&
   grep -q '^top findings:' build-ci.demo.log && grep -q 'what to look at' build-ci.demo.log; then
  PASSED=$((PASSED + 1))
else
  tail -40 build-ci.demo.log; FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES demo"
fi
rm -rf "$demo_dir"

# ---- 4. the sanitizer build ----------------------------------------------
if [ "${SKIP_ASAN:-0}" != 1 ]; then
  # The browser suite drives the page (its JS is what it tests; the server's
  # code under it is the integration suite's, run here) and the arch suite
  # reads sources and symbols: neither changes under a sanitizer, so both
  # run in the normal build only (~4 minutes of CI).
  NOSUITES="slow webui arch" TIMEOUT_MULT=3 build_and_test build-asan asan -Dbuildtype=debug \
    -Db_sanitize=address,undefined -Db_lundef=false
fi

# ---- 4b. ThreadSanitizer over the threaded code (writer, pipeline drainer,
# CUPTI tracer, trace store, server loading while answering) ---------------
if [ "${SKIP_TSAN:-0}" != 1 ]; then
  TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" SUITES="unit integration" \
    TIMEOUT_MULT=3 build_and_test build-tsan tsan -Dbuildtype=debugoptimized \
    -Db_sanitize=thread -Db_lundef=false
fi

# ---- 5. a machine without CUDA: the GPU functions are stubs --------------
# (-Dcupti=disabled stands for a machine without the CUDA headers.) What
# changes without CUPTI is the collector and what runs its GPU paths: the
# unit suite, and the integration tests that write traces through the
# collector or run the examples. The rest (object storage, HTTP, the
# dashboards' routes) reads files the same way in both builds and runs in
# the normal build only.
NOCUPTI_TESTS="test_gpu test_gpu_host test_timeline_sources test_trace_cache
  test_pipeline test_pipeline_example test_ranks_example test_static_link"
SUITES="unit" TESTS="$NOCUPTI_TESTS" build_and_test build-nocupti nocupti \
  -Dbuildtype=debugoptimized -Dcupti=disabled

# ---- 6. fuzzing the reader -----------------------------------------------
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  log "[fuzz] libFuzzer on the reader for ${FUZZ_SECONDS}s"
  rm -rf build-fuzz
  # The library itself is instrumented too, so coverage guides the fuzzer
  # through the reader, not just through the harness.
  if CC=clang meson setup build-fuzz -Dfuzzer=true -Dserver=false \
       -Dexamples=false -Dbuildtype=debugoptimized \
       -Dc_args=-fsanitize=fuzzer-no-link,address,undefined \
       -Dc_link_args=-fsanitize=address,undefined >build-fuzz.setup.log 2>&1 \
     && ninja -C build-fuzz tests/fuzz/fuzz_reader >build-fuzz.build.log 2>&1; then
    corpus=build-fuzz/corpus
    mkdir -p "$corpus"
    if [ -d ../shared/testdata/tfevents ]; then
      find ../shared/testdata/tfevents -type f -name '*tfevents*' -size -200k \
        -exec cp {} "$corpus"/ \;
    fi
    if build-fuzz/tests/fuzz/fuzz_reader -max_total_time="$FUZZ_SECONDS" \
         -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
         -artifact_prefix=build-fuzz/ "$corpus" >build-fuzz/fuzz.log 2>&1; then
      tail -3 build-fuzz/fuzz.log
      PASSED=$((PASSED + 1))
    else
      tail -40 build-fuzz/fuzz.log
      FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES fuzz:fuzz_reader"
    fi
  else
    cat build-fuzz.setup.log build-fuzz.build.log 2>/dev/null | tail -30
    FAILED=$((FAILED + 1)); FAILED_NAMES="$FAILED_NAMES fuzz:build"
  fi
fi

# ---- 7. benchmarks (optional; numbers only) ------------------------------
if [ "${TFB_BENCH:-0}" = 1 ]; then
  log "[bench] benchmarks"
  meson test -C build-ci --benchmark --verbose || true
fi

if [ -n "$FAILED_NAMES" ]; then
  echo
  echo "failed:$FAILED_NAMES"
fi
echo
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
