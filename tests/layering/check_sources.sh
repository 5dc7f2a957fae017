#!/bin/bash
# Source lints that back the layering rules.
#   check_sources.sh no-throw DIR...         no `throw` in library code (absl::Status only)
#   check_sources.sh no-cuda-include DIR...  CUDA headers only under */cuda/
set -u
mode="$1"; shift
status=0
files=$(for dir in "$@"; do [ -d "$dir" ] && find -L "$dir" -name '*.h' -o -name '*.cc' -o -name '*.cu' | grep "^$dir/"; done)
count=$(echo "$files" | grep -c . || true)
case "$mode" in
  no-throw)
    hits=$(echo "$files" | xargs -r grep -nE '(^|[^_[:alnum:]])throw([^_[:alnum:]]|$)' | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
    ;;
  no-cuda-include)
    hits=$(echo "$files" | grep -v '/cuda/' | xargs -r grep -nE '#include\s*[<"](cuda|cublas|cudnn|nccl|curand|cufft)[^>"]*[>"]' || true)
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
if [ -n "$hits" ]; then
  echo "$mode violations:"; echo "$hits"; status=1
fi
[ "$count" -gt 0 ] || { echo "no sources found (runfiles layout changed?)"; exit 1; }
[ $status -eq 0 ] && echo "$mode: $count files clean"
exit $status
