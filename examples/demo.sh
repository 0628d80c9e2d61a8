#!/usr/bin/env bash
# examples/demo.sh - builds tfboard, trains the example programs into runs/,
# and serves runs/ with tfboard. On a fresh Debian 12 machine, run it as
# root once so it can install the build packages.
#
#   PORT=6006      port to serve on (127.0.0.1 only)
#   NO_SERVE=1     stop after writing runs/ (and print the report instead)
set -eu
cd "$(dirname "$0")/.."

PKGS="meson ninja-build gcc pkg-config libmicrohttpd-dev libsqlite3-dev zlib1g-dev libcurl4-openssl-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "==> installing:$missing"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
  else
    echo "missing packages:$missing — run as root, or: sudo apt-get install$missing" >&2
    exit 1
  fi
fi

echo "==> building (build/)"
[ -f build/build.ninja ] || meson setup build -Dtests=false -Dbuildtype=release >/dev/null
ninja -C build >/dev/null

echo "==> training the examples into runs/"
rm -rf runs/demo runs/diverge runs/input_bound runs/balanced runs/ddp runs/spiky
# A small MLP: loss, accuracy, weight/gradient histograms, gradient norms.
build/examples/mlp_train --logdir runs --name demo --steps 600
# The same model with a learning rate that makes it diverge: NaN alerts.
build/examples/mlp_train --logdir runs --name diverge --steps 400 --lr 5 || true
# Loss spikes from three bad batches, with the batch ids logged
# (tfb_step_batch): the Alerts tab and `tfboard report` list them.
build/examples/spiky_train --logdir runs --name spiky --steps 600
# An input pipeline that starves the step, and one that keeps up.
build/examples/pipeline_train --logdir runs --run input_bound --steps 120 \
  --loaders 1 --prefetch 1 --loader-ms 12 --step-ms 4
build/examples/pipeline_train --logdir runs --run balanced --steps 120 \
  --loaders 4 --prefetch 8 --loader-ms 4 --step-ms 6
# A data-parallel job of 4 processes (runs/ddp/rank-0000N) in which rank 2
# computes 30 % slower: the others wait for it in the all-reduce.
build/examples/ddp_train --logdir runs --job ddp --ranks 4 --steps 200 \
  --compute-ms 8 --slow-rank 2 --slow-factor 1.3

# PyTorch through the Python package (Debian's python3-torch), when there.
if /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null; then
  rm -rf runs/python
  PYTHONPATH=python TFBOARD_LIB=build/collector/libtfboard.so \
    /usr/bin/python3 examples/python/train_mnist_like.py --logdir runs/python \
    --steps 200
else
  echo "(python3-torch not installed: skipping the Python example)"
fi

if [ "${NO_SERVE:-0}" = 1 ]; then
  build/server/tfboard report --logdir runs
  exit 0
fi
echo "==> serving runs/ (Ctrl-C to stop; \`tfboard watch --logdir runs\` prints alerts)"
exec build/server/tfboard --logdir runs --port "${PORT:-6006}"
