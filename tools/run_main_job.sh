#!/usr/bin/env bash
# The README's main job: set up, build dflow, run the seed examples, and use dflow on a
# real TensorFlow graph.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //tools:dflow //examples:mnist_eval
DFLOW=bazel-bin/tools/dflow

echo "== the seed MatMul, with TF's placement log (stderr)"
"$DFLOW" run --graph=examples/seed_matmul.pbtxt --fetch=c --output=json \
  --config='log_device_placement: true'

echo "== towers on /cpu:2 and /cpu:3 summed by AddN on /cpu:0"
"$DFLOW" run --graph=examples/multi_tower.pbtxt --fetch=sum \
  --config='device_count { key: "CPU" value: 4 } log_device_placement: true'

echo "== the seed's own spellings, /gpu:2 and /gpu:3, on 4 simulated GPUs"
DFLOW_SIMULATED_GPUS=4:1024 "$DFLOW" run --graph=examples/multi_tower_gpu.pbtxt --fetch=sum \
  --config='log_device_placement: true'

echo "== why every node went where it went, and what crosses devices"
"$DFLOW" place --graph=examples/manual_placement.pbtxt --explain \
  --config='device_count { key: "CPU" value: 2 }'

GRAPH=tests/data/tf_graphs/frozen_pb/mnist_lenet5_cnn.pb
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "== dflow inspect on a real TensorFlow graph ($GRAPH)"
"$DFLOW" inspect --graph="$GRAPH"
echo "== dflow convert: binary -> text -> binary"
"$DFLOW" convert --graph="$GRAPH" --out="$OUT/lenet5.pbtxt"
"$DFLOW" convert --graph="$OUT/lenet5.pbtxt" --out="$OUT/lenet5.pb"
echo "round trip: $(stat -c %s "$GRAPH") bytes in, $(stat -c %s "$OUT/lenet5.pb") bytes out"
echo "== LeNet-5, as TensorFlow froze it, on the 10,000 MNIST test digits"
bazel-bin/examples/mnist_eval --graph="$GRAPH" \
  --images=tests/data/tf_graphs/mnist/t10k-images-idx3-ubyte.gz \
  --labels=tests/data/tf_graphs/mnist/t10k-labels-idx1-ubyte.gz --feed=keep_prob=1.0
echo "== a SavedModel (TF 1.1's half_plus_two) by its serving signature: y = 0.5x + 2"
"$DFLOW" run --saved_model=tests/data/tf_graphs/saved_model/tf_half_plus_two \
  --feed='x=[[1],[2],[3]]' --output=json
