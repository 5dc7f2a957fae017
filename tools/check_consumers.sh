#!/usr/bin/env bash
# Builds and runs examples/consumer/hello_dflow.cc as three outside projects would
# (docs/BAZEL.md, docs/INSTALL.md), from this checkout:
#   1. Bazel: a workspace of its own with @dflow as a local_repository and dflow_deps();
#   2. CMake: find_package(dflow) against tools/install.sh's prefix;
#   3. make + pkg-config against the same prefix.
# Each run must fit the line and run the frozen graph (exit 0). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
frozen="$root/tests/data/tf_graphs/frozen_pb/rust_addition_int32.pb"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== Bazel workspace with @dflow (examples/consumer/WORKSPACE)"
# The disk cache is the same as dflow's own, so a second run compiles nothing; the
# consumer sets no other flag: dflow's targets carry what they need.
(cd examples/consumer &&
  bazel --output_base="$HOME/.cache/dflow-consumer-bazel" run \
    --disk_cache="$HOME/.cache/dflow-bazel-disk" --symlink_prefix=/ --nosandbox_debug \
    //:hello_dflow -- "$frozen" &&
  bazel --output_base="$HOME/.cache/dflow-consumer-bazel" shutdown)

echo "== tools/install.sh $work/prefix"
tools/install.sh "$work/prefix"

echo "== CMake project: find_package(dflow)"
cmake -S examples/consumer -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake"
"$work/cmake/hello_dflow" "$frozen"

echo "== make + pkg-config"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" make -C examples/consumer \
  OUT="$work/hello_make"
"$work/hello_make" "$frozen"

echo "consumers: Bazel, CMake and pkg-config builds all ran"
