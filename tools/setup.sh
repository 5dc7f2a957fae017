#!/usr/bin/env bash
# Installs exactly what building and testing dflow needs, from Debian's archive.
# Idempotent: when everything is present it changes nothing and needs no network.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap      # Bazel 4.2.3 (WORKSPACE mode)
  bazel-rules-java     # @rules_java for Bazel's own tooling
  g++                  # C++17 compiler
  libprotobuf-dev      # protobuf runtime 3.21
  protobuf-compiler    # protoc
  libabsl-dev          # Abseil 20220623: Status, StatusOr, strings, containers, Mutex
  catch2               # Catch2 2.13 (tests)
  libdnnl-dev          # oneDNN 2.6: float GEMM of the CPU MatMul (kernels/README.md "BLAS choice")
  libopenblas-dev      # OpenBLAS 0.3.21: double GEMM of the CPU MatMul
  zlib1g-dev           # zlib: MNIST's .gz IDX files read as they are downloaded (tools/idx_file)
  libre2-dev           # RE2: StaticRegexReplace/RegexReplace, TF's regex engine (kernels/cpu/regex_replace_op.cc)
  libicu-dev           # ICU: utf-8 StringLower/StringUpper, TF's case mapping (kernels/cpu/string_ops.cc)
  clang                # clang 14: the libFuzzer targets (fuzz/, .bazelrc --config=fuzz)
  libclang-rt-14-dev   # libFuzzer and clang's sanitizer runtimes
  graphviz             # dot: `dflow graph --format=svg` (tools/graph_command.h)
  cmake                # examples/consumer's CMake build; tools/tsan_deps.sh (Abseil, protobuf under TSan)
  pkg-config           # examples/consumer's Makefile (tools/check_consumers.sh)
  make                 # the same
  curl                 # tools/tsan_deps.sh fetches their Debian sources
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
