#!/usr/bin/env bash
# Builds and runs examples/consumer/hello_dflow.cc as three outside projects would
# (docs/BAZEL.md, docs/INSTALL.md), from this checkout:
#   1. Bazel: a workspace of its own with @dflow as a local_repository and dflow_deps();
#   2. Bazel again, with @dflow as an http_archive of a tarball of this tree;
#   3. CMake: find_package(dflow) against tools/install.sh's prefix;
#   4. make + pkg-config against the same prefix.
# Each run must fit the line and run the frozen graph (exit 0). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
frozen="$root/tests/data/tf_graphs/frozen_pb/rust_addition_int32.pb"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Runs //:hello_dflow of the Bazel workspace in $1 with an output base of its own ($2).
# The disk cache is the same as dflow's own, so a second run compiles nothing; the
# consumer sets no other flag: dflow's targets carry what they need.
run_bazel_consumer() {
  (cd "$1" &&
    bazel --output_base="$2" run \
      --disk_cache="$HOME/.cache/dflow-bazel-disk" --symlink_prefix=/ --nosandbox_debug \
      //:hello_dflow -- "$frozen" &&
    bazel --output_base="$2" shutdown)
}

echo "== Bazel workspace with @dflow (examples/consumer/WORKSPACE)"
run_bazel_consumer examples/consumer "$HOME/.cache/dflow-consumer-bazel"

echo "== Bazel workspace with @dflow as an http_archive (a release tarball of this tree)"
# The tarball holds the tracked files as they are in the tree (a release would be made
# the same way); the repository is named dflow again, so the disk cache serves it.
tar -C "$root" -czf "$work/dflow.tar.gz" --transform 's,^,dflow-release/,' \
  $(git -C "$root" ls-files --cached --others --exclude-standard)
mkdir -p "$work/http_consumer"
cp examples/consumer/BUILD examples/consumer/hello_dflow.cc "$work/http_consumer/"
cat > "$work/http_consumer/WORKSPACE" <<WORKSPACE
workspace(name = "hello_dflow_http")

load("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive")

http_archive(
    name = "dflow",
    sha256 = "$(sha256sum "$work/dflow.tar.gz" | cut -d' ' -f1)",
    strip_prefix = "dflow-release",
    urls = ["file://$work/dflow.tar.gz"],
)

load("@dflow//:deps.bzl", "dflow_deps")

dflow_deps()
WORKSPACE
run_bazel_consumer "$work/http_consumer" "$HOME/.cache/dflow-consumer-http-bazel"

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

echo "consumers: Bazel (local_repository, http_archive), CMake and pkg-config builds all ran"
