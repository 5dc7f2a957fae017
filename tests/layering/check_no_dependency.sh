#!/bin/bash
# Usage: check_no_dependency.sh DEPS_FILE TARGET REGEX...
# Fails when any label in DEPS_FILE (a genquery result) matches one of the regexes.
set -u
deps_file="$1"; target="$2"; shift 2
[ -s "$deps_file" ] || { echo "empty dependency list for $target"; exit 1; }
status=0
for pattern in "$@"; do
  hits=$(grep -E "$pattern" "$deps_file" || true)
  if [ -n "$hits" ]; then
    echo "LAYERING VIOLATION: $target depends on labels matching '$pattern':"
    echo "$hits" | sed 's/^/  /'
    status=1
  fi
done
[ $status -eq 0 ] && echo "$target: $(wc -l < "$deps_file") dependencies, none forbidden"
exit $status
