#!/usr/bin/env bash
# examples/demo.sh - builds tfboard, trains the example programs into runs/,
# and serves runs/ with tfboard. On a fresh Debian 12 machine, run it as
# root once so it can install the build packages.
#
#   PORT=6006      port to serve on (127.0.0.1 only)
#   LOGDIR=runs    where the runs go
#   BUILD=build    the meson build directory (set up here when missing)
#   NO_SERVE=1     stop after writing the runs (and print the report instead)
#
# Every dashboard gets data, without a GPU too: a learning-rate x seed sweep
# (HParams, run groups, bands, images, PR curves, audio, Markdown text, a model
# graph, custom scalars), a diverging run, an input-bound and a balanced pipeline, a
# data-parallel job with a straggler, a torch.profiler trace when
# python3-torch is installed, and a GPU trace (real on a machine with a GPU
# and torch, else a SAMPLE trace, labelled so in its name and on the page).
# It ends with a one-screen summary of what to look at.
set -eu
cd "$(dirname "$0")/.."

PKGS="meson ninja-build gcc pkg-config libmicrohttpd-dev libsqlite3-dev zlib1g-dev
      libpng-dev libcmark-dev libcurl4-openssl-dev libssl-dev libzstd-dev curl"
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

LOGDIR=${LOGDIR:-runs}
B=${BUILD:-build}
echo "==> building ($B/)"
[ -f "$B/build.ninja" ] || meson setup "$B" -Dtests=false -Dbuildtype=release >/dev/null
ninja -C "$B" >/dev/null
EX=$B/examples

echo "==> training the examples into $LOGDIR/ (about a minute)"
rm -rf "$LOGDIR/sweep" "$LOGDIR/diverge" "$LOGDIR/input_bound" "$LOGDIR/balanced" \
  "$LOGDIR/ddp" "$LOGDIR/spiky" "$LOGDIR/gpu_SAMPLE" "$LOGDIR/torch_profile" "$LOGDIR/demo" "$LOGDIR/python"
# A learning-rate x seed sweep of a small MLP: loss, accuracy, histograms,
# gradient norms, decision-region images, PR curves, a loss tone (audio), a
# Markdown note, the model graph, a custom-scalars layout and hparams.
for lr in 0.03 0.1 0.3; do
  for seed in 1 2; do
    $EX/mlp_train --logdir "$LOGDIR" --name "sweep/lr${lr}_seed$seed" --steps 300 \
      --hist-every 50 --lr "$lr" --seed "$seed" >/dev/null
  done
done
# The same model with a learning rate that makes it diverge: NaN alerts.
$EX/mlp_train --logdir "$LOGDIR" --name diverge --steps 300 --hist-every 50 --lr 5 \
  >/dev/null || true
# Loss spikes from three bad batches, with the batch ids logged
# (tfb_step_batch): the Alerts tab and `tfboard report` list them.
$EX/spiky_train --logdir "$LOGDIR" --name spiky --steps 600 >/dev/null
# An input pipeline that starves the step, and one that keeps up.
$EX/pipeline_train --logdir "$LOGDIR" --run input_bound --steps 120 \
  --loaders 1 --prefetch 1 --loader-ms 12 --step-ms 4 >/dev/null
$EX/pipeline_train --logdir "$LOGDIR" --run balanced --steps 120 \
  --loaders 2 --prefetch 16 --loader-ms 1 --step-ms 8 >/dev/null
# A data-parallel job of 4 processes ($LOGDIR/ddp/rank-0000N) in which rank 2
# computes 30 % slower: the others wait for it in the all-reduce.
$EX/ddp_train --logdir "$LOGDIR" --job ddp --ranks 4 --steps 200 \
  --compute-ms 8 --slow-rank 2 --slow-factor 1.3 >/dev/null

# PyTorch through the Python package (Debian's python3-torch), when there:
# training plus a torch.profiler trace (CPU ops; CUDA kernels too on a GPU).
have_torch=0
if /usr/bin/python3 -c 'import torch, numpy' 2>/dev/null; then
  have_torch=1
  PYTHONPATH=python TFBOARD_LIB=$B/collector/libtfboard.so \
    /usr/bin/python3 examples/python/train_mnist_like.py --logdir "$LOGDIR" \
    --name torch_profile --steps 120 --profile 4 >/dev/null 2>&1 \
    || { echo "(the PyTorch example failed: skipped)"; have_torch=0; }
else
  echo "(python3-torch not installed: skipping the PyTorch example)"
fi
# A GPU trace: real when torch sees a GPU, else a labelled SAMPLE.
gpu_run=torch_profile
if [ "$have_torch" = 0 ] ||
   ! /usr/bin/python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  $EX/gpu_sample_trace --out "$LOGDIR/gpu_SAMPLE" >/dev/null
  gpu_run=gpu_SAMPLE
fi

summary() {
  echo
  echo "==> what to look at${1:+ at $1}"
  echo "  Scalars     sweep/* by lr, with bands; diverge blows up (Health: where)"
  echo "  HParams     lr x seed against the final loss"
  echo "  Images, PR  sweep/*: decision regions and a PR curve per class, by step"
  echo "  Audio       sound/loss_tone: a tone whose pitch falls with the loss, by step"
  echo "  Text        text/about: each MLP run's Markdown note"
  echo "  Projector   sweep/*: each sample's hidden layer, by class and prediction"
  echo "  Pipeline    input_bound waits for its loader; balanced keeps up"
  echo "  Ranks       ddp: rank 2 is the straggler (compute time); the others wait"
  if [ "$gpu_run" = gpu_SAMPLE ]; then
    echo "  GPU         gpu_SAMPLE: timeline, kernels, memory (a SAMPLE: no GPU here)"
    [ "$have_torch" = 1 ] &&
      echo "              torch_profile: a CPU-only torch.profiler trace, its CPU ops"
  else
    echo "  GPU         torch_profile: timeline, kernels, memory (measured)"
  fi
  echo "  Report      $B/server/tfboard report --logdir $LOGDIR"
}

if [ "${NO_SERVE:-0}" = 1 ]; then
  "$B/server/tfboard" report --logdir "$LOGDIR"
  summary
  exit 0
fi
PORT=${PORT:-6006}
"$B/server/tfboard" --logdir "$LOGDIR" --port "$PORT" &
srv=$!
trap 'kill $srv 2>/dev/null; exit 0' INT TERM
# Every dashboard should have data: name any that has none.
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$PORT/data/plugins_listing" >/dev/null && break
  sleep 0.2
done
off=$(curl -sf "http://127.0.0.1:$PORT/data/plugins_listing" |
      grep -o '"[a-z_]*":{[^}]*"enabled":false' | cut -d'"' -f2 | tr '\n' ' ' || true)
[ -n "$off" ] && echo "(dashboards without data: $off)"
summary "http://127.0.0.1:$PORT"
echo "(serving $LOGDIR/; Ctrl-C to stop; \`tfboard watch --logdir $LOGDIR\` prints alerts)"
wait $srv
