#!/usr/bin/env bash
# Builds the libFuzzer targets (clang + ASan + UBSan, .bazelrc --config=fuzz) and runs
# each for SECONDS over its seed corpus (fuzz/make_corpora.sh), one after another, or
# until it has run RUNS inputs when RUNS is given.
#   fuzz/run_fuzzers.sh SECONDS [OUT_DIR] [RUNS]
# OUT_DIR (default /tmp/dflow_fuzz) keeps the grown corpora, each target's log and any
# crash/timeout/oom reproducers (OUT_DIR/<target>/artifacts). Exit 1 when a target
# found something: replay it with the default build's `bazel-bin/fuzz/<target> FILE`,
# fix it, and add the file to tests/fuzz/regressions/<target>/.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:?usage: fuzz/run_fuzzers.sh SECONDS [OUT_DIR]}"
OUT="${2:-/tmp/dflow_fuzz}"
RUNS="${3:--1}"
# A fixed seed by default, so that a run is repeatable (CI's included); FUZZ_SEED=0 lets
# libFuzzer pick one.
SEED="${FUZZ_SEED:-1}"
TARGETS=(graph_def_fuzzer text_proto_fuzzer feed_fuzzer checkpoint_fuzzer session_run_fuzzer)
# A separate output base: switching the C compiler would otherwise reconfigure (and
# rebuild) the default gcc build.
# One per checkout (a Bazel server serves one workspace); actions come from the shared
# disk cache, so a fresh clone rebuilds little.
BASE_ID="$(pwd -P | md5sum | cut -c1-12)"
BAZEL=(bazel --output_base="${DFLOW_FUZZ_OUTPUT_BASE:-$HOME/.cache/dflow-fuzz/$BASE_ID}")
# No convenience symlinks: bazel-bin and friends stay those of the default build.
"${BAZEL[@]}" build --config=fuzz --symlink_prefix=/ //fuzz:all || exit 2
BIN="$("${BAZEL[@]}" info --config=fuzz bazel-bin 2>/dev/null)/fuzz"
mkdir -p "$OUT"
fuzz/make_corpora.sh "$OUT/seeds" . > /dev/null
found=0
for target in "${TARGETS[@]}"; do
  mkdir -p "$OUT/$target/corpus" "$OUT/$target/artifacts"
  # -rss_limit_mb and -timeout: runaway memory and hangs are findings too; leaks are
  # not checked (process-lifetime registries).
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
    "$BIN/$target" "$OUT/$target/corpus" "$OUT/seeds/$target" \
    -max_total_time="$SECONDS_EACH" -runs="$RUNS" -seed="$SEED" -rss_limit_mb=2048 -timeout=20 -max_len=65536 \
    -artifact_prefix="$OUT/$target/artifacts/" -print_final_stats=1 \
    > "$OUT/$target/log.txt" 2>&1
  rc=$?
  execs=$(grep -aoE 'stat::number_of_executed_units: *[0-9]+' "$OUT/$target/log.txt" |
    grep -oE '[0-9]+$')
  secs=$(grep -aoE '^Done [0-9]+ runs in [0-9]+ second' "$OUT/$target/log.txt" | grep -oE '[0-9]+ second' |
    grep -oE '[0-9]+')
  if [ $rc -eq 0 ]; then
    echo "$target: ok, ${execs:-?} runs in ${secs:-?} s"
  else
    echo "$target: FOUND something (exit $rc), see $OUT/$target/log.txt and $OUT/$target/artifacts/"
    found=1
  fi
done
exit $found
