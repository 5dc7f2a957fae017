#!/bin/bash
# Fails when a query result ($1) lists any of dflow's own targets (labels starting with
# //); other repositories' targets (@bazel_tools, @dflow_cuda) are not dflow's to fix.
set -u
own=$(grep '^//' "$1" || true)
if [ -n "$own" ]; then
  echo "dflow targets that should not be in $(basename "$1"):"
  echo "$own"
  exit 1
fi
echo "none of dflow's targets in $(basename "$1") ($(grep -c . "$1") other-repository targets)"
