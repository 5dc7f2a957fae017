#!/usr/bin/env bash
# The README's main job: set up, build dflow, and use it on a real TensorFlow graph.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //tools:dflow
DFLOW=bazel-bin/tools/dflow
GRAPH=tests/data/tf_graphs/frozen_pb/mnist_lenet5_cnn.pb
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "== dflow inspect --graph=$GRAPH"
"$DFLOW" inspect --graph="$GRAPH"
echo "== dflow convert: binary -> text -> binary"
"$DFLOW" convert --graph="$GRAPH" --out="$OUT/lenet5.pbtxt"
"$DFLOW" convert --graph="$OUT/lenet5.pbtxt" --out="$OUT/lenet5.pb"
if cmp -s "$GRAPH" "$OUT/lenet5.pb"; then
  echo "round trip: byte-identical ($(stat -c %s "$GRAPH") bytes)"
else
  echo "round trip: bytes differ (field order); content equality is checked by the tests"
fi
