#!/usr/bin/env bash
# The concurrency tests under ThreadSanitizer (issue 15), in one command:
#   tools/run_tsan.sh                 the default set below
#   tools/run_tsan.sh //tests/...     any targets
# Builds in an output base of its own (~/.cache/dflow-tsan), so the default build is not
# reconfigured, and runs the tests with TSan-instrumented Abseil and protobuf
# (tools/tsan_deps.sh) first on LD_LIBRARY_PATH: with Debian's uninstrumented ones, every
# hand-off through absl::Mutex would be a race and protobuf maps would crash.
set -euo pipefail
cd "$(dirname "$0")/.."

deps_lib=$(tools/tsan_deps.sh)
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(
    //tests/runtime/...                   # executor, frames, thread pool, streams, copier
    //tests/session:session_test          # 16 threads x 200 Runs, concurrent Close
    //tests/session:gpu_copy_test         # simulated-GPU copies under chaos seeds
    //tests/session:sim_gpu_test
    //tests/session:loop_placement_test   # control loops across devices
    //tests/session:session_limits_test   # deadlines cancelling running kernels
    //tests/session:functional_control_flow_test
    //tests/session:gpu_memory_test
  )
fi
# Every report is printed (halt_on_error=0); a test with any report still fails (exit 66).
options="halt_on_error=0 second_deadlock_stack=1 suppressions=$PWD/tools/tsan_suppressions.txt"
# --run_under, not --test_env: Debian's Bazel runs its own helpers (linux-sandbox is linked
# with libprotobuf) in the test environment, and they crash on the instrumented library.
exec bazel --output_base="$HOME/.cache/dflow-tsan" test --config=tsan --symlink_prefix=/ \
  --run_under="env LD_LIBRARY_PATH=$deps_lib" --test_env=TSAN_OPTIONS="$options" \
  -k "${targets[@]}"
