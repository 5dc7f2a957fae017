#!/usr/bin/env bash
# Builds Debian's own Abseil and Protocol Buffers (the versions libabsl-dev and
# libprotobuf-dev installed, with Debian's patches) under ThreadSanitizer into a cache
# folder, and prints the folder that holds their shared libraries.
#
# Why both:
#  - Abseil: Debian's libabsl_*.so are not instrumented, so TSan cannot see the
#    happens-before edges of absl::Mutex, CondVar and Notification inside them, and every
#    hand-off through them reads as a data race.
#  - Protobuf: its headers add members to MapFieldBase when __SANITIZE_THREAD__ is set,
#    so TSan-built generated code and Debian's uninstrumented libprotobuf.so disagree on
#    the layout, and parsing a NodeDef's attr map crashes.
# Tests built with --config=tsan run with this folder first on LD_LIBRARY_PATH
# (tools/run_tsan.sh): same SONAMEs and ABI as Debian's, instrumented code.
#
# Idempotent: a finished build of the installed versions is reused (~3 min the first time
# on 2 cores).
set -euo pipefail

mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}/pool/main"
absl_version=$(dpkg-query -W -f='${Version}' libabsl-dev)
protobuf_version=$(dpkg-query -W -f='${Version}' libprotobuf-dev)
root="${DFLOW_TSAN_DEPS_CACHE:-$HOME/.cache/dflow-tsan-deps}/absl-$absl_version-pb-$protobuf_version"
lib="$root/lib"
if [[ -f "$lib/.complete" ]]; then
  echo "$lib"
  exit 0
fi
rm -rf "$root"
mkdir -p "$lib"
flags="-fsanitize=thread"

# Unpacks Debian's source of package $1 at version $2 (pool folder $3) into $4, patched.
fetch_source() {
  local package=$1 version=$2 pool=$3 src=$4
  mkdir -p "$src"
  curl -fsS "$mirror/$pool/${package}_${version%-*}.orig.tar.gz" |
    tar xz -C "$src" --strip-components=1
  curl -fsS "$mirror/$pool/${package}_${version}.debian.tar.xz" | tar xJ -C "$src"
  while read -r patch; do
    [[ -z "$patch" || "$patch" == \#* ]] && continue
    patch -d "$src" -p1 -s -f < "$src/debian/patches/$patch" > /dev/null
  done < "$src/debian/patches/series"
}

# Configures $1 into $2 with cmake options $3..., then builds the given targets.
build() {
  local src=$1 out=$2
  shift 2
  local -a options=() targets=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do options+=("$1"); shift; done
  shift
  targets=("$@")
  cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" "${options[@]}" \
    > "$out.cmake.log" 2>&1
  cmake --build "$out" -j"$(nproc)" --target "${targets[@]}" > "$out.build.log" 2>&1
}

fetch_source abseil "$absl_version" a/abseil "$root/absl-src"
# The libraries third_party/system/BUILD links; cmake builds what they need.
build "$root/absl-src" "$root/absl-build" -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -- \
  status statusor synchronization str_format_internal strings strings_internal cord hash \
  city low_level_hash raw_hash_set throw_delegate int128 base raw_logging_internal time

fetch_source protobuf "$protobuf_version" p/protobuf "$root/protobuf-src"
build "$root/protobuf-src" "$root/protobuf-build" -Dprotobuf_BUILD_TESTS=OFF \
  -Dprotobuf_BUILD_SHARED_LIBS=ON -Dprotobuf_BUILD_PROTOC_BINARIES=OFF -- libprotobuf

# Each library under the SONAME Debian's has (what the test binaries ask for).
find "$root/absl-build" "$root/protobuf-build" -name 'lib*.so.*' -type f \
  -exec cp {} "$lib/" \;
for file in "$lib"/lib*.so.*; do
  soname=$(objdump -p "$file" | awk '/SONAME/ {print $2}')
  [[ "$(basename "$file")" == "$soname" ]] || ln -sf "$(basename "$file")" "$lib/$soname"
done
want=$(objdump -p /usr/lib/x86_64-linux-gnu/libprotobuf.so | awk '/SONAME/ {print $2}')
[[ -e "$lib/$want" ]] || { echo "no $want in $lib" >&2; exit 1; }
touch "$lib/.complete"
echo "$lib"
