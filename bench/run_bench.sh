#!/usr/bin/env bash
# Measures dflow beside its peers (ONNX Runtime, PyTorch, TensorFlow compat.v1 where
# installable) in ONE run, prints the merged table and appends it, with the date, the
# machine and the raw JSON lines, to bench/RESULTS.md.
#
#   bench/run_bench.sh [--quick] [--no-peers]
#
# The peer scripts come from ../shared/peers (copied into bench/.peers, ignored by git,
# because they write next to themselves). Run nothing else heavy meanwhile: every
# 2-thread number uses both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=""; PEERS=1
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK="--quick" ;;
    --no-peers) PEERS=0 ;;
    *) echo "unknown argument $arg"; exit 2 ;;
  esac
done
SHARED_PEERS="${DFLOW_PEERS_DIR:-../shared/peers}"
PEERS_DIR=bench/.peers
if [ ! -d "$PEERS_DIR" ]; then
  [ -d "$SHARED_PEERS" ] || { echo "no peer scripts at $SHARED_PEERS (set DFLOW_PEERS_DIR)"; exit 1; }
  cp -r "$SHARED_PEERS" "$PEERS_DIR" && chmod -R u+w "$PEERS_DIR"
fi

tools/setup.sh
bazel build //bench:dflow_bench
ENGINE=$(mktemp)
trap 'rm -f "$ENGINE"' EXIT

if [ "$PEERS" = 1 ]; then
  "$PEERS_DIR/run_all.sh" $QUICK --only machine,torch,ort,tf,sgemm
fi
THREADS="1"; [ "$(nproc)" -ge 2 ] && THREADS="1 2"
for t in $THREADS; do
  echo "[run] dflow threads=$t"
  bazel-bin/bench/dflow_bench --threads "$t" $QUICK | tee -a "$ENGINE"
done

RESULTS_DIR="$PEERS_DIR/results/latest"
if [ "$PEERS" = 1 ]; then
  /usr/bin/python3 "$PEERS_DIR/summarize.py" "$RESULTS_DIR" "$ENGINE" > /dev/null
  TABLE="$RESULTS_DIR/results.md"
else
  TABLE=""
fi

{
  echo ""
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) — $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores${QUICK:+, quick}"
  echo ""
  if [ -n "$TABLE" ] && [ -f "$TABLE" ]; then cat "$TABLE"; echo ""; fi
  echo "Raw dflow records:"
  echo '```'
  cat "$ENGINE"
  echo '```'
} | tee -a bench/RESULTS.md
