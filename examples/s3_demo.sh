#!/bin/sh
# s3_demo.sh - a training run written to a bucket and watched live from it:
# a local S3 server (moto_server), examples/mlp_train --logdir s3://...,
# and tfboard --logdir s3://... printing the requests each reload made.
# Usage: examples/s3_demo.sh [BUILD_DIR] [STEPS]   (then open the URL shown)
set -eu
BUILD=${1:-build}
STEPS=${2:-600000}
command -v moto_server >/dev/null || { echo "needs moto_server (pip install 'moto[server]')"; exit 1; }
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
moto_server -H 127.0.0.1 -p "$PORT" >/dev/null 2>&1 &
MOTO=$!
SRV=
trap 'kill $MOTO ${SRV:-} 2>/dev/null || true' EXIT INT TERM
sleep 3
export AWS_ENDPOINT_URL=http://127.0.0.1:$PORT AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo AWS_REGION=us-east-1
curl -s -X PUT "$AWS_ENDPOINT_URL/demo" >/dev/null   # the bucket
"$BUILD/server/tfboard" --logdir s3://demo/runs --port 6006 --reload_interval 2 &
SRV=$!
"$BUILD/examples/mlp_train" --logdir s3://demo/runs --name mlp_live --steps "$STEPS" &
TRAIN=$!
while kill -0 $TRAIN 2>/dev/null; do
  sleep 10
  curl -s localhost:6006/data/environment | python3 -c 'import json, sys; s = json.load(sys.stdin)["storage"]; print("last reload:", s["last_reload"], "total:", s["total"])'
done
wait $TRAIN || true
echo "training done; tfboard keeps serving at http://127.0.0.1:6006/ (Ctrl+C to stop)"
wait $SRV
