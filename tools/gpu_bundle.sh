#!/usr/bin/env bash
# Builds everything dflow runs on a real GPU and packs it for a machine that has an
# NVIDIA GPU, the driver and CUDA 13, but no Bazel and no Debian packages
# (../shared/BUILD_NOTES.md, last section).
#
#   tools/gpu_bundle.sh [DIR]      # here: build, then pack into DIR (default gpu_bundle/)
#   DIR/run_gpu_suite.sh [OUT]     # there: run every [cuda] test and the GPU benchmarks,
#                                  # raw output under OUT (default $OUT or ./gpu_results)
#
# Binaries are the Bazel-built test and benchmark programs; their shared libraries that a
# bare machine lacks (Abseil, protobuf, oneDNN, OpenBLAS, cuBLAS, ...) travel in DIR/lib.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-gpu_bundle}"
tools/setup.sh >/dev/null

# Every test tagged requires-gpu, plus the benchmarks.
mapfile -t GPU_TESTS < <(bazel query 'attr(tags, "requires-gpu", kind(cc_test, //tests/...))' 2>/dev/null)
if [ ${#GPU_TESTS[@]} -eq 0 ]; then
  echo "gpu_bundle: no requires-gpu tests: is CUDA installed here (nvcc at /usr/local/cuda)?" >&2
  exit 1
fi
# gpu_bench: issue 4's GPU targets (MatMul 4096^3 vs bare cuBLAS, 256 MiB copies vs pinned
# cudaMemcpyAsync, a 1000-node chain); dflow_bench: the CPU suite, for the machine's record.
BENCHES=(//bench/gpu:gpu_bench //bench:dflow_bench)
bazel build "${GPU_TESTS[@]}" "${BENCHES[@]}"

rm -rf "$DEST" && mkdir -p "$DEST/bin" "$DEST/lib"
for label in "${GPU_TESTS[@]}" "${BENCHES[@]}"; do
  path="bazel-bin/$(echo "${label#//}" | tr ':' '/')"
  cp "$path" "$DEST/bin/"
  strip --strip-unneeded "$DEST/bin/$(basename "$path")" 2>/dev/null || true
done

# Shared libraries not part of a bare glibc/libstdc++ system. CUDA's own libraries stay
# behind: the GPU machine has CUDA 13 (cuBLAS alone is ~600 MB).
BASE='^(linux-vdso|libc\.so|libm\.so|libstdc\+\+|libgcc_s|ld-linux|libpthread|libdl\.so|librt\.so|libcuda|libcudart|libcublas|libnvrtc)'
for bin in "$DEST"/bin/*; do
  ldd "$bin" | awk '/=> \//{print $1, $3}' | while read -r name lib; do
    [[ "$name" =~ $BASE ]] && continue
    cp -nL "$lib" "$DEST/lib/" 2>/dev/null || true
  done
done

cat > "$DEST/run_gpu_suite.sh" <<'RUN'
#!/usr/bin/env bash
# Runs every dflow GPU test ([cuda]) and benchmark in this bundle; raw output in OUT.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-${OUT:-$PWD/gpu_results}}"
mkdir -p "$OUT"
CUDA_LIB="/usr/local/cuda/lib64"
if command -v nvcc >/dev/null 2>&1; then CUDA_LIB="$(dirname "$(command -v nvcc)")/../lib64"; fi
export LD_LIBRARY_PATH="$HERE/lib:$CUDA_LIB:${LD_LIBRARY_PATH:-}"
{
  date -u +%Y-%m-%dT%H:%MZ
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "no nvidia-smi"
} > "$OUT/machine.txt"
failed=0
for test in "$HERE"/bin/*_test; do
  name=$(basename "$test")
  echo "== $name"
  if "$test" "[cuda]" > "$OUT/$name.log" 2>&1; then echo "   passed"; else echo "   FAILED"; failed=1; fi
  tail -3 "$OUT/$name.log"
done
for bench in "$HERE"/bin/*bench*; do
  name=$(basename "$bench")
  echo "== $name"
  for t in 1 2; do
    # JSON lines to OUT/NAME.jsonl; the human table (stderr) to OUT/NAME.err and here.
    if ! "$bench" --threads "$t" >> "$OUT/$name.jsonl" 2> >(tee -a "$OUT/$name.err" >&2); then
      echo "   FAILED (threads $t)"; failed=1
    fi
  done
done
echo "raw output: $OUT"
exit $failed
RUN
chmod +x "$DEST/run_gpu_suite.sh"
# One file to carry: the directory compressed (the shared libraries dominate: oneDNN and
# OpenBLAS are the CPU reference kernels the conformance tests compare against).
tar -C "$(dirname "$DEST")" -czf "$DEST.tar.gz" "$(basename "$DEST")"
echo "gpu_bundle: $(ls "$DEST/bin" | wc -l) programs, $(du -sh "$DEST" | cut -f1) in $DEST, $(du -sh "$DEST.tar.gz" | cut -f1) as $DEST.tar.gz"
echo "run it on a GPU machine: $DEST/run_gpu_suite.sh \$OUT"
