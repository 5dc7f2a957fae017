#!/usr/bin/env bash
# Builds everything dflow runs on a real GPU and packs it for a machine that has an
# NVIDIA GPU, the driver and CUDA 13, but no Bazel and no Debian packages
# (it carries the CUDA runtime, cuBLAS and the other libraries the binaries link).
#
#   tools/gpu_bundle.sh [DIR]      # here: build, then pack into DIR (default gpu_bundle/)
#   DIR/run_gpu_suite.sh [OUT]     # there, from the repository root: every [cuda] test, the
#                                  # GPU benchmarks and the zoo on the GPU; raw output under
#                                  # OUT (default $OUT or ./gpu_results). The device tool
#                                  # returns 8 files at most: tar OUT into one.
# Carry gpu_bundle.tar.xz (ignored by git) and unpack it there: tar -xJf gpu_bundle.tar.xz.
#
# Binaries are the Bazel-built test and benchmark programs. DIR/lib carries every shared
# library they load except glibc's own (libc, libm, libpthread, libdl, librt, ld-linux),
# the driver's libcuda.so.1 (it must match the kernel module) and cuBLAS (libcublas +
# libcublasLt are ~600 MB, past the 64 MiB a carried tar.gz may weigh): so libstdc++,
# libgcc_s, libgomp, Abseil, protobuf, oneDNN, OpenBLAS and libcudart (13.x, <1 MB) come
# along, and a machine with an older libstdc++ or no CUDA toolkit still runs them.
# run_gpu_suite.sh finds cuBLAS in a CUDA toolkit (/usr/local/cuda*), the system library
# dirs or a pip-installed nvidia-cublas wheel, checks with ldd that every binary resolves
# all its libraries, and fails loudly (naming what is missing, or "no GPU") otherwise.
# The one thing the bundle cannot carry is glibc: the target needs glibc >= this machine's.
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
# The CLI, for the zoo on the real GPU (tools/zoo_on_device.py, run from the repository),
# and the MNIST trainer, for training on the GPU beside PyTorch on the same GPU.
TOOLS=(//tools:dflow //examples:mnist_train)
bazel build "${GPU_TESTS[@]}" "${BENCHES[@]}" "${TOOLS[@]}"

rm -rf "$DEST" && mkdir -p "$DEST/bin" "$DEST/lib"
for label in "${GPU_TESTS[@]}" "${BENCHES[@]}" "${TOOLS[@]}"; do
  path="bazel-bin/$(echo "${label#//}" | tr ':' '/')"
  cp "$path" "$DEST/bin/"
  strip --strip-unneeded "$DEST/bin/$(basename "$path")" 2>/dev/null || true
done

# Shared libraries to carry: everything ldd resolves except glibc's own, the driver's
# libcuda and cuBLAS (see the top).
SKIP='^(linux-vdso|libc\.so|libm\.so|libmvec\.so|ld-linux|libpthread\.so|libdl\.so|librt\.so|libutil\.so|libresolv\.so|libcuda\.so|libnvidia-|libcublas\.so|libcublasLt\.so)'
for bin in "$DEST"/bin/*; do
  if ldd "$bin" | grep -q 'not found'; then
    echo "gpu_bundle: $bin has unresolved libraries here:" >&2
    ldd "$bin" | grep 'not found' >&2
    exit 1
  fi
  ldd "$bin" | awk '/=> \//{print $1, $3}' | while read -r name lib; do
    [[ "$name" =~ $SKIP ]] && continue
    # Under the name the binaries ask for (the soname), dereferencing symlinks.
    [ -e "$DEST/lib/$name" ] || cp -L "$lib" "$DEST/lib/$name"
  done
done
# ICU's data library (30 MB, 7 MB compressed) is replaced by a stub: dflow's one ICU use
# (StringLower/StringUpper over UTF-8) needs no data file, and the bundle must stay well
# under the device tool's 64 MiB together with the tracked tree (DFLOW_BUNDLE_ICU_DATA=1
# keeps the real one).
if [ -e "$DEST/lib/libicudata.so.72" ] && [ "${DFLOW_BUNDLE_ICU_DATA:-0}" != 1 ]; then
  printf 'const double icudt72_dat[4] = {0};\n' > "$DEST/icu_stub.c"
  gcc -shared -fPIC -o "$DEST/lib/libicudata.so.72" -Wl,-soname,libicudata.so.72 "$DEST/icu_stub.c"
  rm "$DEST/icu_stub.c"
fi
GLIBC_HERE="$(ldd --version | head -1 | grep -oE '[0-9]+\.[0-9]+$' || true)"
echo "$GLIBC_HERE" > "$DEST/GLIBC_VERSION"

cat > "$DEST/run_gpu_suite.sh" <<'RUN'
#!/usr/bin/env bash
# Runs every dflow GPU test ([cuda]) and benchmark in this bundle; raw output in OUT.
# Fails loudly (exit 2) before running anything when a binary cannot load a library or
# the machine has no NVIDIA driver or no GPU; exit 1 when a test or benchmark fails.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-${OUT:-$PWD/gpu_results}}"
mkdir -p "$OUT"

die() {
  echo "run_gpu_suite: FAILED: $*" | tee -a "$OUT/preflight.txt" >&2
  exit 2
}

# cuBLAS (and anything else not in lib/): directories holding libcublasLt.so.13, first
# match wins, from a CUDA toolkit, the system library dirs, then pip's nvidia wheels.
cuda_dirs=()
if command -v nvcc >/dev/null 2>&1; then cuda_dirs+=("$(dirname "$(command -v nvcc)")/../lib64"); fi
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib \
         /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib/wsl/lib; do
  [ -d "$d" ] && cuda_dirs+=("$d")
done
site_dirs=()
for py in python3 python; do
  command -v "$py" >/dev/null 2>&1 || continue
  while IFS= read -r d; do site_dirs+=("$d"); done < <("$py" -c \
    'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null)
done
for d in /usr/local/lib/python3*/dist-packages /usr/lib/python3*/dist-packages \
         /usr/local/lib/python3*/site-packages "$HOME"/.local/lib/python3*/site-packages \
         /opt/conda/lib/python3*/site-packages; do
  [ -d "$d" ] && site_dirs+=("$d")
done
for d in "${site_dirs[@]}"; do
  [ -d "$d/nvidia" ] || continue
  while IFS= read -r lib; do cuda_dirs+=("$(dirname "$lib")"); done < <(
    find "$d/nvidia" -maxdepth 4 -name 'libcublas*.so*' 2>/dev/null)
done
lib_path="$HERE/lib"
for d in "${cuda_dirs[@]}"; do
  if compgen -G "$d/libcublasLt.so.13*" >/dev/null || compgen -G "$d/libcublas.so.13*" >/dev/null; then
    d="$(cd "$d" && pwd -P)"
    case ":$lib_path:" in *":$d:"*) ;; *) lib_path="$lib_path:$d" ;; esac
  fi
done
export LD_LIBRARY_PATH="$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The machine, into the results.
{
  date -u +%Y-%m-%dT%H:%MZ
  uname -a
  ldd --version 2>&1 | head -1
  echo "bundle built with glibc $(cat "$HERE/GLIBC_VERSION" 2>/dev/null)"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi 2>&1
    nvidia-smi --query-gpu=name,memory.total,driver_version,pci.bus_id --format=csv 2>&1
    nvidia-smi topo -m 2>&1
  else
    echo "no nvidia-smi"
  fi
} > "$OUT/machine.txt"

# Every binary must resolve every library; name the missing ones.
missing=""
for bin in "$HERE"/bin/*; do
  ldd "$bin" > "$OUT/ldd_$(basename "$bin").txt" 2>&1 || true
  while read -r name _; do
    missing="$missing  $name (needed by bin/$(basename "$bin"))"$'\n'
  done < <(grep 'not found' "$OUT/ldd_$(basename "$bin").txt")
done
if [ -n "$missing" ]; then
  hint=""
  if [[ "$missing" == *libcublas* ]]; then
    hint="cuBLAS 13 (libcublas.so.13, libcublasLt.so.13) does not travel in the bundle: install
the CUDA 13 toolkit (/usr/local/cuda/lib64) or 'pip install nvidia-cublas' (the CUDA 13
wheel), or put its directory on LD_LIBRARY_PATH. Searched: ${cuda_dirs[*]:-nothing}"
  fi
  die "shared libraries not found:
$missing$hint"
fi

# The driver (libcuda.so.1) and at least one GPU, or nothing can pass.
have_libcuda=0
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then have_libcuda=1; fi
IFS=: read -ra path_dirs <<< "$LD_LIBRARY_PATH"
for d in "${path_dirs[@]}" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib/wsl/lib; do
  [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && have_libcuda=1
done
[ "$have_libcuda" = 1 ] || die "no GPU: the NVIDIA driver's libcuda.so.1 is not installed"
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus="$(nvidia-smi -L 2>&1)" || die "no GPU: nvidia-smi -L failed: $gpus"
  echo "$gpus" | grep -q '^GPU ' || die "no GPU: nvidia-smi -L lists none: $gpus"
  echo "$gpus"
  driver_cuda="$(nvidia-smi 2>/dev/null | grep -oE 'CUDA Version: [0-9]+' | grep -oE '[0-9]+$' || true)"
  if [ -n "$driver_cuda" ] && [ "$driver_cuda" -lt 13 ]; then
    die "the driver supports CUDA $driver_cuda only; this bundle's runtime is CUDA 13"
  fi
fi

failed=0
for test in "$HERE"/bin/*_test; do
  name=$(basename "$test")
  echo "== $name"
  # A hung test must not eat the device lease: TEST_TIMEOUT seconds each (default 240).
  if timeout "${TEST_TIMEOUT:-240}" "$test" "[cuda]" > "$OUT/$name.log" 2>&1; then
    echo "   passed"
  else
    echo "   FAILED (exit $?; 124 = timed out)"; failed=1
  fi
  tail -3 "$OUT/$name.log"
done
# GPU benchmarks first: they are what the lease is for; the CPU suite is for the record
# (DFLOW_CPU_BENCH=0 leaves it out when the lease is short).
benches=("$HERE"/bin/gpu_bench)
[ "${DFLOW_CPU_BENCH:-1}" = 0 ] || benches+=("$HERE"/bin/dflow_bench)
for bench in "${benches[@]}"; do
  [ -x "$bench" ] || continue
  name=$(basename "$bench")
  echo "== $name"
  for t in 1 2; do
    # JSON lines to OUT/NAME.jsonl; the human table (stderr) to OUT/NAME.err and here.
    if ! timeout "${BENCH_TIMEOUT:-300}" "$bench" --threads "$t" >> "$OUT/$name.jsonl" 2> >(tee -a "$OUT/$name.err" >&2); then
      echo "   FAILED (threads $t)"; failed=1
    fi
  done
done
# Every committed zoo model through the CLI on the GPU, against TensorFlow's answers, when
# run from a dflow checkout on a machine with numpy (the device machine's python3 has it).
if [ -d tests/data/zoo/goldens ] && python3 -c 'import numpy' 2>/dev/null; then
  echo "== zoo on the GPU (tools/zoo_on_device.py)"
  if ! timeout "${ZOO_TIMEOUT:-300}" python3 tools/zoo_on_device.py "$HERE/bin/dflow" "$OUT"; then
    echo "   FAILED"; failed=1
  fi
  grep -q "MISMATCH\|FAILED" "$OUT/zoo_gpu.txt" 2>/dev/null && failed=1
fi
# Every training graph TF 2.21 wrote (tests/data/training) through `dflow train
# --devices=/gpu:0`, against TF's losses (tools/train_zoo_on_device.py).
if [ -d tests/data/training ] && python3 -c 'import numpy' 2>/dev/null; then
  echo "== training zoo on the GPU (tools/train_zoo_on_device.py)"
  if ! timeout "${ZOO_TIMEOUT:-300}" python3 tools/train_zoo_on_device.py "$HERE/bin/dflow" "$OUT"; then
    echo "   FAILED"; failed=1
  fi
fi
# MNIST training with everything on GPU:0 (examples/mnist_train: variables, forward,
# backward and Adam on the GPU), 1 and 5 epochs of 80 steps (the steady time is the
# difference), and PyTorch on the same GPU with the same model, batch and optimizer
# (bench/training/lenet_mnist.py's worker, 80 warm-up steps, 320 timed): OUT/mnist_gpu.txt.
if [ -x "$HERE/bin/mnist_train" ] && [ -d tests/data/tf_graphs/mnist ]; then
  echo "== MNIST training on the GPU (mnist_train) and PyTorch on the same GPU"
  for model in mlp lenet5; do
    for epochs in 1 5; do
      line="$(timeout 300 "$HERE/bin/mnist_train" --model=$model --devices=/gpu:0 \
        --param_device=/gpu:0 --epochs=$epochs --config='allow_soft_placement: true' 2>&1 |
        tail -1)" || { echo "   FAILED (mnist_train $model)"; failed=1; }
      echo "dflow GPU:0 epochs=$epochs: $line" | tee -a "$OUT/mnist_gpu.txt"
    done
    line="$(timeout 300 "$HERE/bin/mnist_train" --model=$model --devices=/cpu:0 --epochs=5 2>&1 |
      tail -1)"
    echo "dflow CPU epochs=5: $line" | tee -a "$OUT/mnist_gpu.txt"
    if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
      timeout 300 python3 bench/training/lenet_mnist.py --worker=torch --torch_device=cuda \
        --torch_model=$model --threads=1 --warmup=80 --steps=320 2>&1 | tail -1 |
        tee -a "$OUT/mnist_gpu.txt"
    fi
  done
fi
echo "raw output: $OUT"
[ "$failed" = 0 ] && echo "run_gpu_suite: all passed" || echo "run_gpu_suite: FAILED (see above)"
exit $failed
RUN
chmod +x "$DEST/run_gpu_suite.sh"
# One file to carry: the directory compressed with xz (the shared libraries dominate:
# oneDNN, OpenBLAS and ICU's data; gzip left 53 MB, xz about half, and the device tool
# carries at most 64 MiB together with the repository's ~32 MB of tracked files).
tar -C "$(dirname "$DEST")" -cf - "$(basename "$DEST")" | xz -9 -T2 > "$DEST.tar.xz"
if [ "$(stat -c %s "$DEST.tar.xz")" -gt $((32 << 20)) ]; then
  echo "gpu_bundle: WARNING: $DEST.tar.xz is over 32 MiB; with the tracked tree it may pass the device tool's 64 MiB" >&2
fi
echo "gpu_bundle: $(ls "$DEST/bin" | wc -l) programs, $(du -sh "$DEST" | cut -f1) in $DEST, $(du -sh "$DEST.tar.xz" | cut -f1) as $DEST.tar.xz"
echo "run it on a GPU machine: $DEST/run_gpu_suite.sh \$OUT"
