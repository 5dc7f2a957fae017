#!/bin/bash
# The `dflow` command-line contract (../shared/DESIGN.md): inspect and convert.
set -u
DFLOW=tools/dflow
CORPUS=tests/data/tf_graphs
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# convert: every corpus graph goes binary/text -> text -> binary -> text with equal text.
for graph in "$CORPUS"/frozen_pb/*.pb "$CORPUS"/pbtxt/*.pbtxt; do
  base=$(basename "$graph")
  "$DFLOW" convert --graph="$graph" --out="$TMP/$base.1.pbtxt" >/dev/null || fail "convert $base to text"
  "$DFLOW" convert --graph="$TMP/$base.1.pbtxt" --out="$TMP/$base.2.pb" >/dev/null || fail "convert $base to binary"
  "$DFLOW" convert --graph="$TMP/$base.2.pb" --out="$TMP/$base.3.pbtxt" >/dev/null || fail "convert $base back to text"
  cmp -s "$TMP/$base.1.pbtxt" "$TMP/$base.3.pbtxt" || fail "text of $base changed across a round trip"
  case "$graph" in *.pb) [ "$(stat -L -c %s "$graph")" -eq "$(stat -c %s "$TMP/$base.2.pb")" ] || fail "size of $base changed";; esac
done

# inspect on a real graph: exit 0 and the report's facts.
out=$("$DFLOW" inspect --graph="$CORPUS/frozen_pb/mnist_lenet5_cnn.pb" 2>&1) || fail "inspect lenet5 exited $?"
echo "$out" | grep -q "^nodes: 54$" || fail "inspect lenet5: node count"
echo "$out" | grep -qE "^  Conv2D +3$" || fail "inspect lenet5: op histogram"
echo "$out" | grep -q "input:0  float \[?,784\]" || fail "inspect lenet5: placeholder"
echo "$out" | grep -q "^problems: 0$" || fail "inspect lenet5: problems"

# inspect on a broken graph: every problem listed, exit 1, CODE: message on stderr.
"$DFLOW" inspect --graph=tests/data/broken/many_problems.pbtxt >"$TMP/out" 2>"$TMP/err"
[ $? -eq 1 ] || fail "inspect broken: exit status"
grep -q "^INVALID_ARGUMENT: GraphDef has 7 problems:" "$TMP/err" || fail "inspect broken: stderr $(head -1 "$TMP/err")"
for node in x p n y c s; do
  grep -q "Node '$node'" "$TMP/out" || fail "inspect broken: no problem named node $node"
done

# errors: exit 1 and CODE: message, never a crash.
"$DFLOW" inspect --graph=/nonexistent.pb 2>"$TMP/err"; [ $? -eq 1 ] || fail "missing file exit"
grep -q "^NOT_FOUND: File not found: /nonexistent.pb" "$TMP/err" || fail "missing file message"
head -c 3000 /dev/urandom > "$TMP/garbage.pb"
"$DFLOW" inspect --graph="$TMP/garbage.pb" 2>"$TMP/err"; [ $? -eq 1 ] || fail "garbage exit"
grep -q "^INVALID_ARGUMENT: " "$TMP/err" || fail "garbage message: $(cat "$TMP/err")"
"$DFLOW" convert --graph="$CORPUS/frozen_pb/linear_regression.pb" --out="$TMP/x.json" 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "^INVALID_ARGUMENT: .*\.pb or \.pbtxt" "$TMP/err" || fail "bad extension"
"$DFLOW" frobnicate 2>"$TMP/err"; [ $? -eq 1 ] || fail "unknown command exit"
grep -q "^INVALID_ARGUMENT: unknown command 'frobnicate'" "$TMP/err" || fail "unknown command message"
"$DFLOW" inspect --graph="$CORPUS/frozen_pb/linear_regression.pb" --bogus=1 2>"$TMP/err"
[ $? -eq 1 ] && grep -q "^INVALID_ARGUMENT: unknown flag --bogus" "$TMP/err" || fail "unknown flag"

[ $failures -eq 0 ] && echo "all dflow CLI checks passed"
exit $failures
