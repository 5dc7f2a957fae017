#!/usr/bin/env bash
# Replays every fuzz target (built without libFuzzer: fuzz/fuzz_main.cc) over its seed
# corpus from tests/data (fuzz/make_corpora.sh), plus the regression inputs under
# tests/fuzz/regressions/<target>/ when there are any: each input must end with a
# Status, never a crash or a hang.
set -uo pipefail
ROOT="$TEST_SRCDIR/$TEST_WORKSPACE"
CORPORA="$TEST_TMPDIR/corpora"
"$ROOT/fuzz/make_corpora.sh" "$CORPORA" "$ROOT" || exit 1
status=0
for target in graph_def_fuzzer text_proto_fuzzer feed_fuzzer checkpoint_fuzzer session_run_fuzzer; do
  inputs=("$CORPORA/$target")
  [ -d "$ROOT/tests/fuzz/regressions/$target" ] && inputs+=("$ROOT/tests/fuzz/regressions/$target")
  if timeout 240 "$ROOT/fuzz/$target" "${inputs[@]}"; then
    echo "$target: ok"
  else
    echo "$target: FAILED (exit $?)"; status=1
  fi
done
exit $status
