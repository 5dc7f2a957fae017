#!/usr/bin/env bash
# Installs dflow for projects outside Bazel (docs/INSTALL.md):
#
#   tools/install.sh PREFIX
#
#   PREFIX/lib/libdflow.so                       the whole C++ API, one shared library
#   PREFIX/include/dflow/                        dflow.h and every header it includes
#   PREFIX/lib/pkgconfig/dflow.pc                pkg-config --cflags --libs dflow
#   PREFIX/lib/cmake/dflow/dflowConfig*.cmake    find_package(dflow) -> dflow::dflow
#   PREFIX/bin/dflow                             the command-line tool
#
# Run tools/setup.sh first on a fresh machine (it installs Bazel and the system
# libraries dflow links: Abseil, protobuf, oneDNN, OpenBLAS, RE2, ICU).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -ne 1 || "$1" == -* ]]; then
  echo "usage: tools/install.sh PREFIX   (e.g. /usr/local or \$HOME/.local)" >&2
  exit 2
fi
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
version="$(cat VERSION)"

bazel build //:libdflow.so //tools:dflow
bin="$(bazel info bazel-bin 2>/dev/null)"

install -d "$prefix/lib/pkgconfig" "$prefix/lib/cmake/dflow" "$prefix/include/dflow" \
  "$prefix/bin"
install -m 755 "$bin/libdflow.so" "$prefix/lib/libdflow.so"
install -m 755 "$bin/tools/dflow" "$prefix/bin/dflow"

# The headers are exactly dflow.h's include closure inside dflow: the sources' own
# headers and the generated proto/*.pb.h (system headers are left to the system).
g++ -std=c++17 -MM -I. -I"$bin" dflow.h \
  | tr ' \\' '\n\n' | grep '\.h$' | sort -u \
  | while read -r header; do
      relative="${header#"$bin"/}"
      install -D -m 644 "$header" "$prefix/include/dflow/$relative"
    done

sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" \
  tools/packaging/dflow.pc.in > "$prefix/lib/pkgconfig/dflow.pc"
install -m 644 tools/packaging/dflowConfig.cmake "$prefix/lib/cmake/dflow/"
sed -e "s|@VERSION@|$version|g" tools/packaging/dflowConfigVersion.cmake.in \
  > "$prefix/lib/cmake/dflow/dflowConfigVersion.cmake"

echo "dflow $version installed in $prefix ($(find "$prefix/include/dflow" -name '*.h' \
  | wc -l) headers)"
