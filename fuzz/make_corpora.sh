#!/usr/bin/env bash
# Seed corpora for the fuzz targets, from the repository's test data (tests/data):
#   fuzz/make_corpora.sh OUT_DIR [REPO_ROOT]
# writes OUT_DIR/<target>/ for every target of fuzz/BUILD. Small files only: fuzzers
# mutate small inputs faster.
set -euo pipefail
OUT="$1"
ROOT="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
DATA="$ROOT/tests/data"
mkdir -p "$OUT"/{graph_def_fuzzer,text_proto_fuzzer,feed_fuzzer,checkpoint_fuzzer,session_run_fuzzer}
n=0
while IFS= read -r f; do
  n=$((n + 1)); cp "$f" "$OUT/graph_def_fuzzer/$n.pb"
  [ "$(stat -c %s "$f")" -lt 20000 ] && cp "$f" "$OUT/session_run_fuzzer/$n.pb"
done < <(find -L "$DATA" -name '*.pb' -size -64k | sort | head -40)
while IFS= read -r f; do
  n=$((n + 1)); cp "$f" "$OUT/text_proto_fuzzer/$n.pbtxt"
  [ "$(stat -c %s "$f")" -lt 20000 ] && cp "$f" "$OUT/session_run_fuzzer/$n.pbtxt"
done < <(find -L "$DATA" -name '*.pbtxt' -size -64k | sort | head -40)
printf 'gpu_options { allow_growth: true per_process_gpu_memory_fraction: 0.5 }\ndevice_count { key: "GPU" value: 2 }\n' \
  > "$OUT/text_proto_fuzzer/config.pbtxt"
# Feeds: a dtype byte, then a .npy file or a JSON value.
i=0
while IFS= read -r f; do
  i=$((i + 1)); { printf "\\x$(printf %02x $((i % 12)))"; cat "$f"; } > "$OUT/feed_fuzzer/npy_$i"
done < <(find -L "$DATA" -name '*.npy' -size -8k | sort | head -30)
for json in '[[1,2,3],[4,5,6]]' '[1.5e3, -0, NaN, "Infinity"]' '[[[]],[[]]]' '["a","\u00e9\ud83d\ude00"]' \
            '[true,false,1,0]' '18446744073709551615' '[1e400]'; do
  i=$((i + 1)); { printf "\\x$(printf %02x $((i % 12)))"; printf '%s' "$json"; } > "$OUT/feed_fuzzer/json_$i"
done
# Checkpoints: [4-byte little-endian index size][.index][.data-00000-of-00001].
i=0
while IFS= read -r index; do
  prefix="${index%.index}"
  data="$prefix.data-00000-of-00001"
  [ -f "$data" ] && [ "$(stat -c %s "$data")" -lt 65536 ] || continue
  i=$((i + 1))
  python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<I", int(sys.argv[1])))' \
    "$(stat -c %s "$index")" > "$OUT/checkpoint_fuzzer/ckpt_$i"
  cat "$index" "$data" >> "$OUT/checkpoint_fuzzer/ckpt_$i"
done < <(find -L "$DATA" -name '*.index' | sort | head -20)
for d in "$OUT"/*/; do echo "$(basename "$d"): $(ls "$d" | wc -l) seeds"; done
