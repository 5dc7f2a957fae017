#!/usr/bin/env bash
# LeNet-5 over the 10,000 MNIST test digits, batch 500, images/s on 1 and 2 threads:
# dflow running the frozen TensorFlow graph, beside ONNX Runtime and PyTorch running the
# same network with the same weights (extracted from that graph), in ONE run. Prints the
# table and appends it, with the raw JSON lines, to bench/RESULTS.md.
#
#   bench/lenet/run.sh [--repeats N]
# Needs: python3 with tensorflow + onnxruntime (PyPI), /usr/bin/python3 with torch + onnx
# (Debian: python3-torch, python3-onnx). Run nothing else heavy meanwhile.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPEATS=5
[ "${1:-}" = "--repeats" ] && REPEATS="$2"
GRAPH=tests/data/tf_graphs/frozen_pb/mnist_lenet5_cnn.pb
IMAGES=tests/data/tf_graphs/mnist/t10k-images-idx3-ubyte.gz
LABELS=tests/data/tf_graphs/mnist/t10k-labels-idx1-ubyte.gz
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

bazel build //bench:lenet_bench
python3 bench/lenet/export_weights.py "$GRAPH" "$WORK/weights.npz" 2>/dev/null
/usr/bin/python3 bench/lenet/make_onnx.py "$WORK/weights.npz" "$WORK/lenet5.onnx"

THREADS="1"; [ "$(nproc)" -ge 2 ] && THREADS="1 2"
for t in $THREADS; do
  bazel-bin/bench/lenet_bench --graph="$GRAPH" --images="$IMAGES" --labels="$LABELS" \
    --threads="$t" --repeats="$REPEATS" | tee -a "$WORK/raw.jsonl"
  (cd bench/lenet && python3 ort_lenet.py "$WORK/lenet5.onnx" "../../$IMAGES" "../../$LABELS" \
    --threads "$t" --repeats "$REPEATS") | tee -a "$WORK/raw.jsonl"
  (cd bench/lenet && /usr/bin/python3 torch_lenet.py "$WORK/weights.npz" "../../$IMAGES" \
    "../../$LABELS" --threads "$t" --repeats "$REPEATS") | tee -a "$WORK/raw.jsonl"
done

TABLE=$(python3 - "$WORK/raw.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("| threads | engine | variant | images/s median (min – max) | accuracy | dflow ÷ this |")
print("| --- | --- | --- | --- | --- | --- |")
for t in sorted({r["threads"] for r in rows}):
    mine = [r for r in rows if r["threads"] == t and r["peer"] == "dflow"]
    base = mine[0]["median"] if mine else None
    for r in (r for r in rows if r["threads"] == t):
        ratio = "—" if r["peer"] == "dflow" or not base else "%.2f×" % (base / r["median"])
        print("| %d | %s | %s | %.0f (%.0f – %.0f) | %.4f | %s |" % (
            t, r["peer"], r["variant"], r["median"], r["min"], r["max"], r["accuracy"], ratio))
PY
)
echo "$TABLE"
{
  echo ""
  echo "## LeNet-5 MNIST, batch 500 — $(date -u +%Y-%m-%dT%H:%MZ) — $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
  echo ""
  echo "Targets (issue 5): dflow ≥ 1.2× ONNX Runtime and ≥ 1.5× PyTorch on 1 and 2 threads."
  echo ""
  echo "$TABLE"
  echo ""
  echo "Raw records:"
  echo '```'
  cat "$WORK/raw.jsonl"
  echo '```'
} >> bench/RESULTS.md
