#!/usr/bin/env bash
# JSON feed speed (issue 15: >= 50 MB/s): `dflow run` with one float32 feed of N
# elements read from a JSON file, the graph summing it (so printing costs nothing).
# Prints one line per size: the file's MB, wall seconds, MB/s and peak RSS (GNU time).
#   bench/json_feed/run.sh [DFLOW=bazel-bin/tools/dflow] [N...]   (default 1e6 1e7)
set -euo pipefail
DFLOW="${1:-bazel-bin/tools/dflow}"
shift || true
SIZES=("${@:-1000000 10000000}")
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/sum.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
  int_val: 0 } } } }
node { name: "s" op: "Sum" input: "x" input: "axes" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
PB
for n in ${SIZES[*]}; do
  # Values as Python's json module writes random float32s (17 significant digits).
  python3 - "$n" "$TMP/x.json" <<'PY'
import json, random, struct, sys
n = int(sys.argv[1]); random.seed(1)
vals = [struct.unpack('f', struct.pack('f', random.uniform(-1, 1)))[0] for _ in range(n)]
open(sys.argv[2], "w").write(json.dumps(vals))
PY
  mb=$(python3 -c "import os; print(os.path.getsize('$TMP/x.json') / 1e6)")
  /usr/bin/time -f "%e %M" -o "$TMP/time" "$DFLOW" run --graph="$TMP/sum.pbtxt" \
    --feed=x=@"$TMP/x.json" --fetch=s > /dev/null
  read -r secs rss_kb < "$TMP/time"
  python3 -c "print(f'n={$n} file={$mb:.1f} MB wall={$secs} s  {$mb/$secs:.1f} MB/s  peak RSS={$rss_kb/1024:.0f} MB')"
done
