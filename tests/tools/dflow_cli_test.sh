#!/bin/bash
# The `dflow` command-line contract (docs/CLI.md): inspect, convert, run, devices,
# place, bench, trace, graph, and the examples/ programs.
set -u
DFLOW=tools/dflow
CORPUS=tests/data/tf_graphs
EX=examples
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
# The first problem in file order sets the code, as TF stops there: an unknown op is NOT_FOUND.
grep -q "^NOT_FOUND: GraphDef has 7 problems:" "$TMP/err" || fail "inspect broken: stderr $(head -1 "$TMP/err")"
# Problems come in the file's node order.
order=$(grep -o "^  Node '[a-z]*'" "$TMP/out" | tr -d "' " | sed 's/Node//' | uniq | tr '\n' ' ')
[ "$order" = "x p n y c s " ] || fail "inspect broken: problem order '$order'"
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

# inspect lists every op without a kernel here, with its nodes; run refuses a step
# needing them with the same lines and runs a step that does not.
cat > "$TMP/nokernel.pbtxt" <<'PB'
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "g1" op: "Igamma" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "g2" op: "Igamma" input: "g1" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "z" op: "Zeta" input: "g2" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "fine" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
PB
out=$("$DFLOW" inspect --graph="$TMP/nokernel.pbtxt" 2>&1) || fail "inspect nokernel exited $?"
echo "$out" | grep -q "^ops without a kernel here: 2$" || fail "inspect nokernel count: $out"
echo "$out" | grep -qx "  Igamma \[T=DT_FLOAT\]: 2 nodes: g1, g2" || fail "inspect nokernel Igamma: $out"
echo "$out" | grep -qx "  Zeta \[T=DT_FLOAT\]: 1 node: z" || fail "inspect nokernel Zeta: $out"
echo "$out" | grep -q "^ops without a C++ gradient: 2$" || fail "inspect nokernel gradients: $out"
echo "$out" | grep -qx "  Igamma  (2 nodes)" || fail "inspect nokernel Igamma gradient: $out"
# A while loop's ops are differentiated as a whole (graph/gradients/while_grad.h).
loop_out=$("$DFLOW" inspect --graph="$CORPUS/pbtxt/tf_grappler_while_loop_const.pbtxt" 2>&1) || fail "inspect while exited $?"
echo "$loop_out" | grep -q "^ops without a C++ gradient: 0$" || fail "inspect while: loop ops without gradients: $loop_out"
"$DFLOW" run --graph="$TMP/nokernel.pbtxt" --feed=a=2 --fetch=z >"$TMP/out" 2>"$TMP/err"
[ $? -eq 1 ] || fail "run nokernel exit"
grep -q "^INVALID_ARGUMENT: No OpKernel was registered to support 2 ops this step needs" "$TMP/err" || fail "run nokernel message: $(cat "$TMP/err")"
grep -qx "  Igamma \[T=DT_FLOAT\]: 2 nodes: g1, g2" "$TMP/err" || fail "run nokernel list: $(cat "$TMP/err")"
"$DFLOW" run --graph="$TMP/nokernel.pbtxt" --feed=a=2 --fetch=fine --output=json >"$TMP/out" 2>"$TMP/err" || fail "run nokernel fine: $(cat "$TMP/err")"
grep -q '"values": \[-2\]' "$TMP/out" || fail "run nokernel fine value: $(cat "$TMP/out")"
echo "$out" | grep -q "^ops without a kernel here: 0$" && fail "inspect said 0"
out=$("$DFLOW" inspect --graph="$CORPUS/frozen_pb/linear_regression.pb" 2>&1)
echo "$out" | grep -q "^ops without a kernel here: 0$" || fail "inspect linear_regression: missing kernels listed: $out"
# A library function call runs as its inlined body, so inspect checks the body's ops.
out=$("$DFLOW" inspect --graph="$CORPUS/pbtxt/tf_mlir_graph_function_call.pbtxt" 2>&1)
echo "$out" | grep -q "^ops without a kernel here: 0$" || fail "inspect function call: $out"
out=$("$DFLOW" run --graph="$CORPUS/pbtxt/tf_mlir_graph_function_call.pbtxt" --fetch=func_call --output=json 2>&1)
echo "$out" | grep -q '"values": \[1\]' || fail "run function call: $out"

# ---- run -----------------------------------------------------------------------------
SEED_JSON='{"outputs": [{"name": "c:0", "dtype": "float32", "shape": [2, 2], "values": [22, 28, 49, 64]}]}'
CPU2='device_count { key: "CPU" value: 2 }'
CPU4='device_count { key: "CPU" value: 4 }'

# The seed graph: stdout is exactly the contract's one JSON document.
"$DFLOW" run --graph="$EX/seed_matmul.pbtxt" --fetch=c --output=json >"$TMP/out" 2>"$TMP/err" || fail "run seed exited $?: $(cat "$TMP/err")"
[ "$(cat "$TMP/out")" = "$SEED_JSON" ] || fail "run seed json: $(cat "$TMP/out")"
[ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "run seed json: not one line"
# The same fetched as c:0 prints the same canonical name; text is the default.
out=$("$DFLOW" run --graph="$EX/seed_matmul.pbtxt" --fetch=c:0 --output=json 2>/dev/null)
[ "$out" = "$SEED_JSON" ] || fail "run seed fetch c:0: $out"
"$DFLOW" run --graph="$EX/seed_matmul.pbtxt" --fetch=c >"$TMP/out" 2>/dev/null || fail "run seed text exited $?"
grep -qx 'c:0: float32 \[2,2\]' "$TMP/out" || fail "run text header: $(cat "$TMP/out")"
grep -qx '\[\[22 28\]' "$TMP/out" && grep -qx ' \[49 64\]\]' "$TMP/out" || fail "run text values: $(cat "$TMP/out")"

# log_device_placement goes to stderr only; stdout stays one JSON document.
"$DFLOW" run --graph="$EX/seed_matmul.pbtxt" --fetch=c --output=json \
  --config='log_device_placement: true' >"$TMP/out" 2>"$TMP/err" || fail "run log placement exited $?"
grep -qx 'c: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0' "$TMP/err" || fail "placement log line: $(cat "$TMP/err")"
grep -qx 'a: (Const): /job:localhost/replica:0/task:0/device:CPU:0' "$TMP/err" || fail "placement log line a"
grep -q '^Device mapping' "$TMP/err" || fail "no Device mapping block on stderr"
[ "$(cat "$TMP/out")" = "$SEED_JSON" ] || fail "log placement leaked to stdout: $(cat "$TMP/out")"

# Towers on CPU:2 and CPU:3 summed on CPU:0.
out=$("$DFLOW" run --graph="$EX/multi_tower.pbtxt" --fetch=sum --output=json --config="$CPU4" 2>"$TMP/err") || fail "multi_tower exited: $(cat "$TMP/err")"
[ "$out" = '{"outputs": [{"name": "sum:0", "dtype": "float32", "shape": [2, 2], "values": [44, 56, 98, 128]}]}' ] || fail "multi_tower: $out"
"$DFLOW" run --graph="$EX/multi_tower.pbtxt" --fetch=sum --output=json --config="$CPU4 log_device_placement: true" >/dev/null 2>"$TMP/err"
grep -qx 'tower_1/c: (MatMul): /job:localhost/replica:0/task:0/device:CPU:3' "$TMP/err" || fail "multi_tower placement: $(cat "$TMP/err")"
grep -qx 'sum: (AddN): /job:localhost/replica:0/task:0/device:CPU:0' "$TMP/err" || fail "multi_tower AddN placement"
# Without the extra CPUs the towers' devices do not exist.
"$DFLOW" run --graph="$EX/multi_tower.pbtxt" --fetch=sum >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] && grep -q "^INVALID_ARGUMENT: Cannot assign a device for operation" "$TMP/err" || fail "multi_tower on 1 CPU: rc=$rc $(cat "$TMP/err")"
[ -s "$TMP/out" ] && fail "error run wrote to stdout"
# ... and with soft placement they fall back.
out=$("$DFLOW" run --graph="$EX/multi_tower.pbtxt" --fetch=sum --output=json --config='allow_soft_placement: true' 2>/dev/null)
echo "$out" | grep -q '"values": \[44, 56, 98, 128\]' || fail "multi_tower soft placement: $out"
out=$("$DFLOW" run --graph="$EX/manual_placement.pbtxt" --fetch=c --output=json --config="$CPU2" 2>/dev/null)
[ "$out" = "$SEED_JSON" ] || fail "manual_placement: $out"

# The seed's own spellings (/gpu:2, /gpu:3) on simulated GPUs, with TF's placement log.
out=$(DFLOW_SIMULATED_GPUS=4:1024 "$DFLOW" run --graph="$EX/multi_tower_gpu.pbtxt" --fetch=sum \
      --output=json --config='log_device_placement: true' 2>"$TMP/gpu_err") || fail "multi_tower_gpu exited: $(cat "$TMP/gpu_err")"
[ "$out" = '{"outputs": [{"name": "sum:0", "dtype": "float32", "shape": [2, 2], "values": [44, 56, 98, 128]}]}' ] || fail "multi_tower_gpu: $out"
grep -q "^/job:localhost/replica:0/task:0/device:GPU:3 -> device: 3, name: dflow simulated GPU" "$TMP/gpu_err" || fail "no GPU:3 in the Device mapping"
grep -q "^tower_1/c: (MatMul): /job:localhost/replica:0/task:0/device:GPU:3$" "$TMP/gpu_err" || fail "tower_1/c not on GPU:3"
grep -q "^sum: (AddN): /job:localhost/replica:0/task:0/device:CPU:0$" "$TMP/gpu_err" || fail "sum not on CPU:0"
DFLOW_SIMULATED_GPUS=2 "$DFLOW" run --graph="$EX/multi_tower_gpu.pbtxt" --fetch=sum 2>"$TMP/gpu_err" >/dev/null
[ $? -eq 1 ] && grep -q "^INVALID_ARGUMENT: Cannot assign a device for operation" "$TMP/gpu_err" || fail "missing /gpu:3 with 2 GPUs"

# A missing GPU: exit 1 and the placer's words.
sed 's|^  name: "c"$|  name: "c"\n  device: "/gpu:2"|' "$EX/seed_matmul.pbtxt" > "$TMP/gpu2.pbtxt"
grep -q '/gpu:2' "$TMP/gpu2.pbtxt" || fail "could not write the /gpu:2 graph"
"$DFLOW" run --graph="$TMP/gpu2.pbtxt" --fetch=c --output=json >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 1 ] || fail "missing /gpu:2 exit $rc"
grep -q "^INVALID_ARGUMENT: Cannot assign a device for operation c" "$TMP/err" || fail "missing /gpu:2 message: $(cat "$TMP/err")"
[ -s "$TMP/out" ] && fail "missing /gpu:2 wrote to stdout"

# Feeds: JSON scalars into int32 placeholders (a producer-1882 graph with AddV2).
out=$("$DFLOW" run --graph="$CORPUS/frozen_pb/rust_addition_int32.pb" --feed=x=2 --feed=y=3 --fetch=z --output=json 2>"$TMP/err") || fail "rust_addition exited: $(cat "$TMP/err")"
[ "$out" = '{"outputs": [{"name": "z:0", "dtype": "int32", "shape": [], "values": [5]}]}' ] || fail "rust_addition: $out"
# A fed tensor whose node the GraphDef lacks (tfcompile's y_shape).
out=$("$DFLOW" run --graph="$CORPUS/pbtxt/tf_aot_test_graph_tfadd.pbtxt" --feed='y_shape=[1]' --fetch=x_y_sum --output=json 2>"$TMP/err") || fail "tfadd exited: $(cat "$TMP/err")"
[ "$out" = '{"outputs": [{"name": "x_y_sum:0", "dtype": "int32", "shape": [1], "values": [3]}]}' ] || fail "tfadd: $out"
# A nested list into a float placeholder; values within 1e-6 of the golden.
out=$("$DFLOW" run --graph="$CORPUS/frozen_pb/linear_regression.pb" --feed='X=[1,2,3]' --fetch=pred --output=json 2>"$TMP/err") || fail "linear_regression exited: $(cat "$TMP/err")"
echo "$out" | sed 's/.*"values": \[\(.*\)\]}\]}/\1/' | awk -F', ' '{
  split("1.2634871 1.4774489 1.6914108", want, " ");
  ok = NF == 3; for (i = 1; i <= NF; i++) { d = $i - want[i]; if (d < 0) d = -d; if (d > 1e-6) ok = 0 }
  exit ok ? 0 : 1 }' || fail "linear_regression values: $out"
# A .npy feed (a float32 scalar 2.5, bytes written here) beside a JSON feed: 2.5 * 4 = 10.
{ printf '\x93NUMPY\x01\x00\x76\x00'; printf '%-117s\n' "{'descr': '<f4', 'fortran_order': False, 'shape': (), }"; printf '\x00\x00\x20\x40'; } > "$TMP/a.npy"
[ "$(stat -c %s "$TMP/a.npy")" -eq 132 ] || fail "npy test file size"
out=$("$DFLOW" run --graph="$CORPUS/frozen_pb/rust_multiplication_float.pb" --feed=a=@"$TMP/a.npy" --feed=b=4 --fetch=c --output=json 2>"$TMP/err") || fail "npy feed exited: $(cat "$TMP/err")"
[ "$out" = '{"outputs": [{"name": "c:0", "dtype": "float32", "shape": [], "values": [10]}]}' ] || fail "npy feed: $out"
# A float64 .npy of shape (3,) converts to the float32 placeholder.
{ printf '\x93NUMPY\x01\x00\x76\x00'; printf '%-117s\n' "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  printf '\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40\x00\x00\x00\x00\x00\x00\x08\x40'; } > "$TMP/x.npy"
out=$("$DFLOW" run --graph="$CORPUS/frozen_pb/linear_regression.pb" --feed=X=@"$TMP/x.npy" --fetch=pred --output=json 2>"$TMP/err") || fail "npy f8 feed exited: $(cat "$TMP/err")"
echo "$out" | grep -q '"shape": \[3\], "values": \[1.263487' || fail "npy f8 feed: $out"
# Any tensor may be fed, not only placeholders: replace the MatMul's input a:0.
out=$("$DFLOW" run --graph="$EX/seed_matmul.pbtxt" --feed='a:0=[[1,0,0],[0,1,0]]' --fetch=c --output=json 2>"$TMP/err") || fail "feed a:0 exited: $(cat "$TMP/err")"
echo "$out" | grep -q '"values": \[1, 2, 3, 4\]' || fail "feed a:0: $out"

# RunOptions and RunMetadata: partition graphs with their _Send/_Recv, step stats.
"$DFLOW" run --graph="$EX/manual_placement.pbtxt" --fetch=c --output=json --config="$CPU2" \
  --run_options='trace_level: FULL_TRACE output_partition_graphs: true' --run_metadata="$TMP/meta.pbtxt" >"$TMP/out" 2>"$TMP/err" || fail "run_metadata exited: $(cat "$TMP/err")"
[ "$(cat "$TMP/out")" = "$SEED_JSON" ] || fail "run_metadata stdout"
grep -q '^partition_graphs {' "$TMP/meta.pbtxt" || fail "run_metadata: no partition graphs"
grep -q 'op: "_Send"' "$TMP/meta.pbtxt" && grep -q 'op: "_Recv"' "$TMP/meta.pbtxt" || fail "run_metadata: no _Send/_Recv"
grep -q '^step_stats {' "$TMP/meta.pbtxt" || fail "run_metadata: no step stats"

# Errors: exit status exactly 1 (never a crash), CODE: message on stderr, nothing on stdout.
expect_error() {  # expect_error CODE_AND_MESSAGE_PREFIX dflow-args...
  local want="$1"; shift
  "$DFLOW" "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
  [ $rc -eq 1 ] || fail "exit $rc (want 1) for: $*"
  grep -q "^$want" "$TMP/err" || fail "want '$want' for: $* ; got: $(head -c 300 "$TMP/err")"
  [ -s "$TMP/out" ] && fail "stdout not empty for: $*"
  return 0
}
G="--graph=$CORPUS/frozen_pb/rust_addition_int32.pb"
expect_error "INVALID_ARGUMENT: --feed x: malformed JSON" run "$G" --feed='x=[1,' --feed=y=1 --fetch=z
expect_error "INVALID_ARGUMENT: --feed x: .*ragged" run "$G" --feed='x=[[1,2],[3]]' --feed=y=1 --fetch=z
expect_error "INVALID_ARGUMENT: --feed x: .*deeper than 254" run "$G" --feed="x=$(printf '[%.0s' $(seq 100000))" --feed=y=1 --fetch=z
expect_error "INVALID_ARGUMENT: --feed x: .*too large" run "$G" --feed='x=1e999999' --feed=y=1 --fetch=z
expect_error "INVALID_ARGUMENT: --feed x: .*out of range" run "$G" --feed='x=99999999999999999999' --feed=y=1 --fetch=z
expect_error "INVALID_ARGUMENT: --feed x: .*not an integer" run "$G" --feed='x=2.5' --feed=y=1 --fetch=z
expect_error "NOT_FOUND: --feed x: File not found" run "$G" --feed=x=@/nonexistent.npy --feed=y=1 --fetch=z
printf '\x93NUMPY\x01\x00\xff\xff{' > "$TMP/bad.npy"
expect_error "INVALID_ARGUMENT: --feed x: .*malformed .npy header" run "$G" --feed=x=@"$TMP/bad.npy" --feed=y=1 --fetch=z
{ printf '\x93NUMPY\x01\x00\x76\x00'; printf '%-117s\n' "{'descr': '<f4', 'fortran_order': True, 'shape': (), }"; printf '\x00\x00\x20\x40'; } > "$TMP/f.npy"
expect_error "INVALID_ARGUMENT: --feed a: .*Fortran" run --graph="$CORPUS/frozen_pb/rust_multiplication_float.pb" --feed=a=@"$TMP/f.npy" --feed=b=1 --fetch=c
expect_error "INVALID_ARGUMENT: --feed=x: expected NAME=VALUE" run "$G" --feed=x --fetch=z
# TF 2.21's codes and texts (its C++ session, checked through the C API).
expect_error "INVALID_ARGUMENT: Tensor nope:0, specified in either feed_devices or fetch_devices was not found in the Graph" run "$G" --feed=nope=1 --fetch=z
expect_error "OUT_OF_RANGE: Node 'x' (type: 'Placeholder', num of outputs: 1) does not have output 3" run "$G" --feed=x:3=1 --fetch=z
expect_error "INVALID_ARGUMENT: Tensor nope:0, specified in either feed_devices or fetch_devices was not found in the Graph" run "$G" --feed=x=1 --feed=y=1 --fetch=nope
# A fetched feed gives the fed value, as tf.compat.v1.Session does.
out=$("$DFLOW" run "$G" --feed=x=4 --feed=y=1 --fetch=x --fetch=z --output=json 2>&1) || fail "fetch fed: $out"
[ "$out" = '{"outputs": [{"name": "x:0", "dtype": "int32", "shape": [], "values": [4]}, {"name": "z:0", "dtype": "int32", "shape": [], "values": [5]}]}' ] || fail "fetch fed: $out"
expect_error "INVALID_ARGUMENT: You must feed a value for placeholder tensor 'y'" run "$G" --feed=x=1 --fetch=z
expect_error "INVALID_ARGUMENT: " run "$G" --feed='x=[1,2]' --feed='y=[1,2,3]' --fetch=z
expect_error "INVALID_ARGUMENT: --output=xml" run "$G" --output=xml --fetch=z
expect_error "INVALID_ARGUMENT: Cannot parse --config" run "$G" --config='bogus: 1' --fetch=z
expect_error "INVALID_ARGUMENT: Cannot parse --run_options" run "$G" --run_options='trace_level: SOMETIMES' --fetch=z
expect_error "INVALID_ARGUMENT: missing required flag --graph" run --fetch=z
expect_error "NOT_FOUND: File not found: /nonexistent.pb" run --graph=/nonexistent.pb --fetch=z
expect_error "INVALID_ARGUMENT: " run --graph="$TMP/garbage.pb" --fetch=z
expect_error "INVALID_ARGUMENT: unknown flag --bogus" run "$G" --bogus=1
expect_error "INVALID_ARGUMENT: ConfigProto.device_count" devices --config='device_count { key: "CPU" value: -1 }'

# ---- devices -------------------------------------------------------------------------
"$DFLOW" devices >"$TMP/out" 2>"$TMP/err" || fail "devices exited $?"
[ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "devices default count: $(cat "$TMP/out")"
grep -q '^/job:localhost/replica:0/task:0/device:CPU:0  type: CPU  memory limit: [0-9]* bytes' "$TMP/out" || fail "devices line: $(cat "$TMP/out")"
"$DFLOW" devices --config="$CPU4" >"$TMP/out" 2>/dev/null || fail "devices CPU:4 exited $?"
[ "$(wc -l <"$TMP/out")" -eq 4 ] || fail "devices count with 4 CPUs"
for i in 0 1 2 3; do
  sed -n "$((i + 1))p" "$TMP/out" | grep -q "^/job:localhost/replica:0/task:0/device:CPU:$i " || fail "devices line $i: $(cat "$TMP/out")"
done
# Simulated GPUs follow the CPU, listed as simulated with their limits: a 1024 MiB card
# keeps 225 MiB back (below 2 GiB), so 799 MiB = 837812224 bytes each.
DFLOW_SIMULATED_GPUS=2:1024 "$DFLOW" devices >"$TMP/out" 2>"$TMP/err" || fail "devices with simulated GPUs exited $?: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/out")" -eq 3 ] || fail "devices with 2 simulated GPUs: $(cat "$TMP/out")"
sed -n 1p "$TMP/out" | grep -q '^/job:localhost/replica:0/task:0/device:CPU:0  type: CPU ' || fail "devices CPU first: $(cat "$TMP/out")"
for i in 0 1; do
  sed -n "$((i + 2))p" "$TMP/out" | grep -qx "/job:localhost/replica:0/task:0/device:GPU:$i  type: GPU  memory limit: 837812224 bytes (799 MiB)  physical: device: $i, name: dflow simulated GPU, pci bus id: sim:$i, compute capability: 9.0 (simulated)  (simulated, 799 MiB)" || fail "devices GPU:$i line: $(cat "$TMP/out")"
done
# gpu_options in --config shape them: a quarter of 1024 MiB each.
DFLOW_SIMULATED_GPUS=2:1024 "$DFLOW" devices --config='gpu_options { per_process_gpu_memory_fraction: 0.25 }' >"$TMP/out" 2>/dev/null || fail "devices with a fraction exited $?"
[ "$(grep -c 'device:GPU:[01]  type: GPU  memory limit: 268435456 bytes (256 MiB) .*(simulated, 256 MiB)$' "$TMP/out")" -eq 2 ] || fail "devices with a fraction: $(cat "$TMP/out")"
# CUDA_VISIBLE_DEVICES picks the cards, as for real GPUs.
DFLOW_SIMULATED_GPUS=2:1024 CUDA_VISIBLE_DEVICES=1 "$DFLOW" devices >"$TMP/out" 2>/dev/null || fail "devices with CUDA_VISIBLE_DEVICES exited $?"
[ "$(wc -l <"$TMP/out")" -eq 2 ] || fail "devices with CUDA_VISIBLE_DEVICES=1: $(cat "$TMP/out")"
sed -n 2p "$TMP/out" | grep -q "device:GPU:0  type: GPU .*pci bus id: sim:1," || fail "devices with CUDA_VISIBLE_DEVICES=1 GPU:0: $(cat "$TMP/out")"
DFLOW_SIMULATED_GPUS=2:1024 CUDA_VISIBLE_DEVICES= "$DFLOW" devices >"$TMP/out" 2>/dev/null || fail "devices with CUDA_VISIBLE_DEVICES= exited $?"
[ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "devices with CUDA_VISIBLE_DEVICES=: $(cat "$TMP/out")"

# ---- place ---------------------------------------------------------------------------
"$DFLOW" place --graph="$EX/manual_placement.pbtxt" --config="$CPU2" >"$TMP/out" 2>"$TMP/err" || fail "place exited: $(cat "$TMP/err")"
[ "$(cat "$TMP/out")" = "a: (Const): /job:localhost/replica:0/task:0/device:CPU:0
b: (Const): /job:localhost/replica:0/task:0/device:CPU:0
c: (MatMul): /job:localhost/replica:0/task:0/device:CPU:1" ] || fail "place: $(cat "$TMP/out")"
"$DFLOW" place --graph="$EX/manual_placement.pbtxt" --config="$CPU2" --explain >"$TMP/out" 2>"$TMP/err" || fail "place --explain exited: $(cat "$TMP/err")"
grep -q "^    reason: .*/cpu:1" "$TMP/out" || fail "place --explain: no reason naming /cpu:1: $(cat "$TMP/out")"
[ "$(grep -c '^    reason: ' "$TMP/out")" -eq 3 ] || fail "place --explain: one reason per node"
grep -qx "cross-device copies: 2" "$TMP/out" || fail "place --explain: copy count: $(cat "$TMP/out")"
grep -qx "  a:0 float32 \[2,3\] 24 bytes: /job:localhost/replica:0/task:0/device:CPU:0 -> /job:localhost/replica:0/task:0/device:CPU:1 (read by c)" "$TMP/out" || fail "place --explain: copy of a: $(cat "$TMP/out")"
grep -qx "total: 48 bytes per step" "$TMP/out" || fail "place --explain: total"
"$DFLOW" place --graph="$EX/multi_tower.pbtxt" --config="$CPU4" --explain >"$TMP/out" 2>/dev/null || fail "place multi_tower"
grep -qx "cross-device copies: 2" "$TMP/out" || fail "place multi_tower copies: $(cat "$TMP/out")"
grep -q "  tower_0/c:0 float32 \[2,2\] 16 bytes: .*device:CPU:2 -> .*device:CPU:0 (read by sum)" "$TMP/out" || fail "place multi_tower copy line"
# An unknown shape: the copy is listed with "unknown size".
"$DFLOW" place --graph="$CORPUS/frozen_pb/linear_regression.pb" --explain >"$TMP/out" 2>/dev/null || fail "place linear_regression"
grep -qx "cross-device copies: 0" "$TMP/out" || fail "place linear_regression copies"
cat > "$TMP/unknown.pbtxt" <<'PBTXT'
node { name: "x" op: "Placeholder" device: "/cpu:0" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "Neg" input: "x" device: "/cpu:1" attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
"$DFLOW" place --graph="$TMP/unknown.pbtxt" --config="$CPU2" --explain >"$TMP/out" 2>"$TMP/err" || fail "place unknown: $(cat "$TMP/err")"
grep -q "  x:0 float32 <unknown> unknown size: .*CPU:0 -> .*CPU:1 (read by y)" "$TMP/out" || fail "place unknown size: $(cat "$TMP/out")"
expect_error "INVALID_ARGUMENT: Cannot assign a device for operation c" place --graph="$TMP/gpu2.pbtxt"
expect_error "INVALID_ARGUMENT: --explain=maybe" place --graph="$EX/seed_matmul.pbtxt" --explain=maybe

# ---- SavedModels and MetaGraphDef + checkpoint -----------------------------------------
HPT="$CORPUS/saved_model/tf_half_plus_two"
HPT_JSON='{"outputs": [{"name": "y", "dtype": "float32", "shape": [3, 1], "values": [2.5, 3, 3.5]}]}'
out=$("$DFLOW" run --saved_model="$HPT" --feed='x=[[1],[2],[3]]' --output=json 2>"$TMP/err") || fail "saved_model run: $(cat "$TMP/err")"
[ "$out" = "$HPT_JSON" ] || fail "saved_model half_plus_two: $out"
# A regress signature fed serialized tf.Examples from a NumPy bytes array (|S17, one
# Example {x: [2.0]}; x=2.0 is 00 00 00 40 little-endian) -> y = 0.5*2 + 2 = 3.
dict="{'descr': '|S17', 'fortran_order': False, 'shape': (1,), }"
pad=$(( 64 - (10 + ${#dict} + 1) % 64 )); [ $pad -eq 64 ] && pad=0
{ printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#dict} + pad + 1) % 256 )))\\x$(printf %02x $(( (${#dict} + pad + 1) / 256 )))"
  printf '%s' "$dict"; printf '%*s' "$pad" ''; printf '\n'
  printf '\x0a\x0f\x0a\x0d\x0a\x01x\x12\x08\x12\x06\x0a\x04\x00\x00\x00\x40'; } > "$TMP/examples.npy"
out=$("$DFLOW" run --saved_model="$HPT" --signature=regress_x_to_y --feed=inputs=@"$TMP/examples.npy" \
      --output=json 2>"$TMP/err") || fail "saved_model regress with tf.Examples: $(cat "$TMP/err")"
echo "$out" | grep -q '"values": \[3\]' || fail "saved_model regress with tf.Examples: $out"
out=$("$DFLOW" run --saved_model="$CORPUS/saved_model/serving_half_plus_two_gpu" --tag=serve \
      --signature=regress_x2_to_y3 --feed='inputs=[[1],[4]]' --fetch=outputs --output=json 2>"$TMP/err") \
  || fail "saved_model gpu run: $(cat "$TMP/err")"
echo "$out" | grep -q '"name": "outputs", "dtype": "float32", "shape": \[2, 1\], "values": \[3.5, 5\]' || fail "saved_model y3: $out"
# 100 images with pixels in [0, 1], as a JSON file.
{ printf '['; for i in $(seq 100); do [ "$i" -gt 1 ] && printf ','; printf '['
  for j in $(seq 0 111); do [ "$j" -gt 0 ] && printf ','; printf '%s' "$(( (i + j) % 7 )).0,0.25,0.5,1,0,0.125,0.75"; done
  printf ']'; done; printf ']'; } | sed 's/\([0-9]\)\.0,/0.\1,/g' > "$TMP/images.json"
out=$("$DFLOW" run --meta_graph="$CORPUS/meta/mnist_fc_feed_train.meta" --checkpoint="$CORPUS/checkpoints/mnist_fc_feed" \
      --feed=Placeholder=@"$TMP/images.json" --fetch=softmax_linear/add --output=json 2>"$TMP/err")
want=$("$DFLOW" run --graph="$CORPUS/frozen_pb/mnist_mlp_fc_feed_b100.pb" \
      --feed=Placeholder=@"$TMP/images.json" --fetch=softmax_linear/add --output=json 2>&1)
[ -n "$out" ] && [ "$out" = "$want" ] || fail "meta_graph+checkpoint logits differ from the frozen graph's: $(head -c 300 "$TMP/err")"
expect_error "NOT_FOUND: Could not find meta graph def matching supplied tags: { gpu }" run --saved_model="$HPT" --tag=gpu --feed='x=[[1]]'
expect_error "NOT_FOUND: No signature 'nope'" run --saved_model="$HPT" --signature=nope --feed='x=[[1]]'
expect_error "INVALID_ARGUMENT: --feed z: signature 'serving_default' has no input named z; it has: x" run --saved_model="$HPT" --feed='z=[[1]]'
expect_error "INVALID_ARGUMENT: --meta_graph needs --checkpoint" run --meta_graph="$CORPUS/meta/mnist_fc_feed_train.meta"
expect_error "NOT_FOUND: .*nowhere.index" run --meta_graph="$CORPUS/meta/mnist_fc_feed_train.meta" --checkpoint="$TMP/nowhere"

# ---- examples/ programs print the same results as the .pbtxt twins --------------------
for ex in seed_matmul manual_placement multi_tower; do
  [ -x "$EX/$ex" ] || { fail "example $ex not built"; continue; }
  "$EX/$ex" >"$TMP/out" 2>"$TMP/err" || fail "example $ex exited $?: $(cat "$TMP/err")"
  grep -q ': (MatMul): /job:localhost/replica:0/task:0/device:CPU:' "$TMP/err" || fail "example $ex: no placement log"
done
"$EX/seed_matmul" 2>/dev/null | grep -qx ' \[49 64\]\]' || fail "seed_matmul output"
"$EX/manual_placement" 2>&1 >/dev/null | grep -qx 'c: (MatMul): /job:localhost/replica:0/task:0/device:CPU:1' || fail "manual_placement placement"
"$EX/multi_tower" 2>/dev/null | grep -qx ' \[ 98 128\]\]' || fail "multi_tower output: $("$EX/multi_tower" 2>/dev/null)"

# ---- TensorFlow 2.x files -----------------------------------------------------------------
T2=tests/data/tf2_21/graphs
# An attr a newer TensorFlow adds: run warns once on stderr and gives TF's answer.
"$DFLOW" run --graph="$T2/unknown_attr.pbtxt" --feed='x=[[1,0],[0,1]]' --fetch=y --output=json >"$TMP/out" 2>"$TMP/err" || fail "unknown attr run: $(cat "$TMP/err")"
grep -q '"values": \[1, 2, 3, 4\]' "$TMP/out" || fail "unknown attr values: $(cat "$TMP/out")"
[ "$(grep -c "attr_from_the_future" "$TMP/err")" -eq 1 ] || fail "unknown attr: warned $(grep -c attr_from_the_future "$TMP/err") times: $(cat "$TMP/err")"
grep -q "^dflow: warning: 1 attr is not in dflow's op definitions (TensorFlow 2.21's)" "$TMP/err" || fail "unknown attr warning text: $(cat "$TMP/err")"
out=$("$DFLOW" inspect --graph="$T2/unknown_attr.pbtxt" 2>&1) || fail "inspect unknown attr exited $?: $out"
echo "$out" | grep -q "^warnings: 1$" || fail "inspect unknown attr: $out"
echo "$out" | grep -q "^  Node 'y' (MatMul): attr 'attr_from_the_future' is not in the op's definition; ignored" || fail "inspect warning line: $out"
echo "$out" | grep -q "^problems: 0$" || fail "inspect unknown attr problems: $out"
# inspect lists ops without a kernel even when the graph has import problems.
cat > "$TMP/nokernel_broken.pbtxt" <<'PB'
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "g1" op: "Igamma" input: "a" input: "ghost" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "bad" op: "NoSuchOp" }
PB
"$DFLOW" inspect --graph="$TMP/nokernel_broken.pbtxt" >"$TMP/out" 2>"$TMP/err"; [ $? -eq 1 ] || fail "inspect nokernel_broken exit"
grep -q "^ops without a kernel here: 1 (of the nodes valid on their own; the graph has problems, below)$" "$TMP/out" || fail "inspect nokernel_broken: $(cat "$TMP/out")"
grep -q "^  Igamma \[T=DT_FLOAT\]: 1 node: g1$" "$TMP/out" || fail "inspect nokernel_broken list: $(cat "$TMP/out")"
# JSON parses with a strict RFC 8259 parser: NaN and infinities are strings.
cat > "$TMP/nonfinite.pbtxt" <<'PB'
node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: -1 float_val: 0 float_val: 1 } } } }
node { name: "log" op: "Log" input: "v" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "neg" op: "Neg" input: "log" attr { key: "T" value { type: DT_FLOAT } } }
PB
"$DFLOW" run --graph="$TMP/nonfinite.pbtxt" --fetch=log --fetch=neg --output=json >"$TMP/out" 2>"$TMP/err" || fail "nonfinite run: $(cat "$TMP/err")"
python3 -c '
import json, sys
def refuse(c): raise ValueError("not strict JSON: " + c)
doc = json.loads(open(sys.argv[1]).read(), parse_constant=refuse)
assert doc["outputs"][0]["values"] == ["NaN", "-Infinity", 0], doc
assert doc["outputs"][1]["values"] == ["NaN", "Infinity", -0.0], doc
' "$TMP/out" || fail "nonfinite JSON: $(cat "$TMP/out")"
out=$("$DFLOW" run --graph="$TMP/nonfinite.pbtxt" --fetch=log 2>&1) || fail "nonfinite text: $out"
echo "$out" | grep -q '^\[ nan -inf    0\]$' || fail "nonfinite text: $out"

# bench: repeated runs of a graph, synthetic feeds of the placeholder's shape (the unknown
# batch dim from --batch), default fetches = the outputs nothing consumes, strict JSON.
LENET="$CORPUS/frozen_pb/mnist_lenet5_cnn.pb"
"$DFLOW" bench --graph="$LENET" --feed=keep_prob=1 --runs=7 --warmup=2 --threads=1 --batch=4 --output=json >"$TMP/out" 2>"$TMP/err" || fail "bench lenet: $(cat "$TMP/err")"
python3 -c '
import json, sys
doc = json.loads(open(sys.argv[1]).read(), parse_constant=lambda c: 1/0)
assert doc["runs"] == 7 and doc["warmup"] == 2 and doc["threads"] == 1 and doc["batch"] == 4, doc
assert doc["inputs"] == [{"name": "keep_prob", "dtype": "float32", "shape": [], "source": "feed"}, {"name": "input", "dtype": "float32", "shape": [4, 784], "source": "synthetic"}], doc["inputs"]
assert len(doc["samples_ms"]) == 7, doc
lat = doc["latency_ms"]
assert 0 < lat["min"] <= lat["median"] <= lat["p90"] <= lat["max"], lat
assert abs(doc["throughput"]["items_per_s"] - 4 * doc["throughput"]["runs_per_s"]) < 1e-6 * doc["throughput"]["items_per_s"], doc
assert doc["fetches"], doc
proc = doc["process_per_run"]
assert proc["context_switches"] >= 0 and proc["cpu_ms"] >= 0, proc
' "$TMP/out" || fail "bench lenet JSON: $(cat "$TMP/out")"
out=$("$DFLOW" bench --graph="$LENET" --feed=keep_prob=1 --runs=3 --warmup=0 --shape=input=2,784 --fetch=output 2>&1) || fail "bench text: $out"
echo "$out" | grep -q "^input: input float32 \[2,784\] (synthetic)$" || fail "bench text input: $out"
echo "$out" | grep -q "^latency ms: min [0-9.]*  median [0-9.]*  p90 [0-9.]*  max [0-9.]*  mean [0-9.]*$" || fail "bench text latency: $out"
echo "$out" | grep -q "items/s (batch 2)$" || fail "bench text throughput: $out"
echo "$out" | grep -q "^process per run: [0-9.]* context switches, [0-9.]* ms CPU$" || fail "bench text process: $out"
"$DFLOW" bench --graph="$LENET" --runs=0 2>"$TMP/err"; [ $? -eq 1 ] || fail "bench runs=0 exit"
grep -q "^INVALID_ARGUMENT: --runs=0: expected an integer >= 1" "$TMP/err" || fail "bench runs=0: $(cat "$TMP/err")"
"$DFLOW" bench --graph="$LENET" --shape=input=2,x 2>"$TMP/err"; [ $? -eq 1 ] || fail "bench bad shape exit"
grep -q "^INVALID_ARGUMENT: --shape input=2,x: 'x' is not a non-negative integer dimension" "$TMP/err" || fail "bench bad shape: $(cat "$TMP/err")"
cat > "$TMP/unknown_dims.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } } } } }
node { name: "y" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
PB
"$DFLOW" bench --graph="$TMP/unknown_dims.pbtxt" 2>"$TMP/err"; [ $? -eq 1 ] || fail "bench unknown dim exit"
grep -q "^INVALID_ARGUMENT: input x has an unknown dimension 1: give its shape with --shape=x=d0,d1,..." "$TMP/err" || fail "bench unknown dim: $(cat "$TMP/err")"
"$DFLOW" bench --graph="$TMP/unknown_dims.pbtxt" --feed='x=[[1,-2]]' --runs=2 --output=json >"$TMP/out" 2>"$TMP/err" || fail "bench fed: $(cat "$TMP/err")"
grep -q '"inputs": \[{"name": "x", "dtype": "float32", "shape": \[1, 2\], "source": "feed"}\], "fetches": \["y:0"\]' "$TMP/out" || fail "bench fed JSON: $(cat "$TMP/out")"
"$DFLOW" bench --help | grep -q "^usage: dflow bench" || fail "bench --help"
# bench --init: a training graph's initializer runs once before the timed runs.
cat > "$TMP/var_init.pbtxt" <<'PB'
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } attr { key: "shared_name" value { s: "v" } } }
node { name: "three" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }
node { name: "init" op: "AssignVariableOp" input: "v" input: "three" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "read" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
PB
"$DFLOW" bench --graph="$TMP/var_init.pbtxt" --init=init --fetch=read --runs=2 --output=json >"$TMP/out" 2>"$TMP/err" || fail "bench --init: $(cat "$TMP/err")"
grep -q '"fetches": \["read:0"\]' "$TMP/out" || fail "bench --init JSON: $(cat "$TMP/out")"
"$DFLOW" bench --graph="$TMP/var_init.pbtxt" --fetch=read --runs=2 2>"$TMP/err"; [ $? -eq 1 ] || fail "bench without --init exit"
"$DFLOW" bench --graph="$TMP/var_init.pbtxt" --init=nosuch --fetch=read --runs=2 2>"$TMP/err"; [ $? -eq 1 ] || fail "bench --init=nosuch exit"
grep -q "^[A-Z_]*: --init=nosuch: " "$TMP/err" || fail "bench --init=nosuch: $(cat "$TMP/err")"
# bench on a SavedModel signature: unfed inputs synthesized, named by key.
"$DFLOW" bench --saved_model="$CORPUS/saved_model/tf_half_plus_two" --runs=3 --batch=5 --output=json >"$TMP/out" 2>"$TMP/err" || fail "bench saved_model: $(cat "$TMP/err")"
grep -q '"inputs": \[{"name": "x", "dtype": "float32", "shape": \[5, 1\], "source": "synthetic"}\]' "$TMP/out" || fail "bench saved_model JSON: $(cat "$TMP/out")"

# bench --profile: traced runs after the timed ones, time per op type and slowest nodes.
cat > "$TMP/matmul_add.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
node { name: "z" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } dim { size: 2 } } } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 2 } } float_val: 1 } } } }
node { name: "mm" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "Add" input: "mm" input: "z" attr { key: "T" value { type: DT_FLOAT } } }
PB
out=$("$DFLOW" bench --graph="$TMP/matmul_add.pbtxt" --runs=2 --warmup=0 --profile 2>&1) || fail "bench profile text: $out"
echo "$out" | grep -q "^op profile (2 traced runs, summed node time per run [0-9.]* ms; nodes on parallel threads overlap)$" || fail "bench profile header: $out"
for op in MatMul Add Const _Arg _Retval; do
  echo "$out" | grep -qE "^  $op +[0-9]" || fail "bench profile op $op: $out"
done
echo "$out" | grep -qE "^ +[0-9.]+  MatMul +mm  \(/job:localhost/replica:0/task:0/device:CPU:0\)$" || fail "bench profile node mm: $out"
"$DFLOW" bench --graph="$TMP/matmul_add.pbtxt" --runs=3 --warmup=0 --profile=2 --output=json >"$TMP/out" 2>"$TMP/err" || fail "bench profile json: $(cat "$TMP/err")"
python3 -c '
import json, sys
doc = json.loads(open(sys.argv[1]).read(), parse_constant=lambda c: 1/0)
prof = doc["profile"]
assert prof["traced_runs"] == 3, prof
assert {o["op"]: o["count"] for o in prof["ops"]} == {"MatMul": 1, "Add": 1, "Const": 1, "_Arg": 2, "_Retval": 1}, prof
times = [o["avg_us"] for o in prof["ops"]]
assert times == sorted(times, reverse=True) and abs(sum(o["percent"] for o in prof["ops"]) - 100) < 1e-6, prof
assert len(prof["nodes"]) == 2 and prof["nodes"][0]["avg_us"] >= prof["nodes"][1]["avg_us"], prof
assert set(prof["nodes"][0]) == {"name", "op", "device", "avg_us"}, prof
' "$TMP/out" || fail "bench profile JSON: $(cat "$TMP/out")"
"$DFLOW" bench --graph="$TMP/matmul_add.pbtxt" --runs=2 --output=json | grep -q '"profile"' && fail "bench without --profile has a profile"
for bad in 0 abc; do
  "$DFLOW" bench --graph="$TMP/matmul_add.pbtxt" --profile=$bad 2>"$TMP/err"; [ $? -eq 1 ] || fail "bench profile=$bad exit"
  grep -q "^INVALID_ARGUMENT: --profile=$bad: expected an integer >= 1" "$TMP/err" || fail "bench profile=$bad: $(cat "$TMP/err")"
done

# The C++ path of docs/API.md: a frozen graph from disk, fed and read through std::vector.
out=$("$EX/run_frozen_graph" "$CORPUS/frozen_pb/rust_addition_int32.pb" 2>&1) || fail "run_frozen_graph: $out"
[ "$out" = "z = x + y: [5]" ] || fail "run_frozen_graph printed: $out"

# inspect counts what stops the functions from inlining (here recursion) as a problem.
cat > "$TMP/recursive.pbtxt" <<'PB'
node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "c" op: "A" input: "p" }
library {
  function { signature { name: "A" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } } node_def { name: "n" op: "B" input: "x" } ret { key: "y" value: "n:y:0" } }
  function { signature { name: "B" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } } node_def { name: "m" op: "A" input: "x" } ret { key: "y" value: "m:y:0" } }
}
PB
"$DFLOW" inspect --graph="$TMP/recursive.pbtxt" >"$TMP/out" 2>"$TMP/err"; [ $? -eq 1 ] || fail "inspect recursive: exit"
grep -q "^problems: 1$" "$TMP/out" || fail "inspect recursive: $(cat "$TMP/out")"
grep -q "function 'A' is recursive (A -> B -> A)" "$TMP/err" || fail "inspect recursive: $(cat "$TMP/err")"

# trace: a Chrome trace of one step on two CPU devices, the copy between them included.
cat > "$TMP/two_cpus.pbtxt" <<'PB'
node { name: "a" op: "Const" device: "/cpu:0" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1 } } } }
node { name: "c" op: "MatMul" input: "a" input: "a" device: "/cpu:1" attr { key: "T" value { type: DT_FLOAT } } }
PB
two_cpus='device_count { key: "CPU" value: 2 }'
out=$("$DFLOW" trace --graph="$TMP/two_cpus.pbtxt" --fetch=c --config="$two_cpus" --out="$TMP/trace.json" 2>&1) || fail "trace: $out"
echo "$out" | grep -qE "^wrote $TMP/trace.json: [0-9]+ node runs on 2 devices, step [0-9.]+ ms" || fail "trace summary: $out"
python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"] for e in events if e["ph"] == "X"}
assert {"a", "c"} <= names, names
assert any(e["ph"] == "X" and e["cat"] == "copy" for e in events), events
assert {e["ph"] for e in events} >= {"M", "X", "C", "s", "f"}, events
' "$TMP/trace.json" || fail "trace JSON"
"$DFLOW" trace --graph="$TMP/two_cpus.pbtxt" --fetch=c 2>"$TMP/err"; [ $? -eq 1 ] || fail "trace without --out exit"
grep -q "^INVALID_ARGUMENT: missing required flag --out" "$TMP/err" || fail "trace without --out: $(cat "$TMP/err")"
"$DFLOW" trace --graph="$TMP/two_cpus.pbtxt" --fetch=c --out="$TMP/t.json" --warmup=-1 2>"$TMP/err"
grep -q "^INVALID_ARGUMENT: --warmup=-1: expected a count >= 0" "$TMP/err" || fail "trace warmup: $(cat "$TMP/err")"

# graph: DOT of the placed graph, a cluster per device, the copy in red; svg through dot.
out=$("$DFLOW" graph --graph="$TMP/two_cpus.pbtxt" --config="$two_cpus") || fail "graph dot"
echo "$out" | grep -q "^digraph dflow {" || fail "graph: not DOT: $out"
[ "$(echo "$out" | grep -c "subgraph cluster_")" -eq 2 ] || fail "graph: clusters: $out"
echo "$out" | grep -q 'label="copy float32\[2,2\] 16 B"' || fail "graph: copy edge: $out"
if command -v dot >/dev/null; then
  "$DFLOW" graph --graph="$TMP/two_cpus.pbtxt" --config="$two_cpus" --format=svg --out="$TMP/g.svg" || fail "graph svg"
  grep -q "<svg" "$TMP/g.svg" || fail "graph svg: no <svg"
fi
"$DFLOW" graph --graph="$TMP/two_cpus.pbtxt" --format=png 2>"$TMP/err"; [ $? -eq 1 ] || fail "graph png exit"
grep -q "^INVALID_ARGUMENT: --format=png: expected dot or svg" "$TMP/err" || fail "graph png: $(cat "$TMP/err")"

[ $failures -eq 0 ] && echo "all dflow CLI checks passed"
exit $failures
