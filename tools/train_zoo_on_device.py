#!/usr/bin/env python3
"""Every training graph of tests/data/training (written by TF 2.21) through `dflow train`
with the whole graph on one device, against TF's losses (expected.json).

    python3 tools/train_zoo_on_device.py DFLOW_BINARY OUT_DIR [--device=/gpu:0]

Run from the repository root; needs numpy (for the feeds' row counts). For each graph:
the full feed as one batch, no shuffling, one step per expected loss, `--devices=DEVICE`
(the graph placed there, soft placement for ops without a kernel on it). Prints one line
per graph ("ok", "MISMATCH" or "FAILED") and writes them to OUT_DIR/train_zoo.txt;
exits 1 when any graph fails. Used by tools/gpu_bundle.sh's suite on a real GPU; with
DFLOW_SIMULATED_GPUS=1 it checks the same on a simulated GPU.
"""
import glob
import json
import math
import os
import subprocess
import sys

import numpy as np


def main():
  binary, out_dir = sys.argv[1], sys.argv[2]
  device = "/gpu:0"
  for arg in sys.argv[3:]:
    if arg.startswith("--device="):
      device = arg.split("=", 1)[1]
  lines, failed = [], False
  for expected_path in sorted(glob.glob("tests/data/training/*/expected.json")):
    d = os.path.dirname(expected_path)
    name = os.path.basename(d)
    expected = json.load(open(expected_path))
    want = expected["losses"]
    feeds = expected["feeds"]
    rows = np.load(os.path.join(d, next(iter(feeds.values())))).shape[0]
    args = [binary, "train", "--meta_graph=" + os.path.join(d, "model.meta"),
            "--checkpoint=" + os.path.join(d, "init.ckpt"), "--train_op=" + expected["train"],
            "--loss=" + expected["loss"], "--batch=%d" % rows, "--steps=%d" % len(want),
            "--shuffle=false", "--output=json", "--progress=none", "--devices=" + device]
    args += ["--data=%s=%s" % (t, os.path.join(d, f)) for t, f in feeds.items()]
    try:
      p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
      lines.append("%-32s FAILED timed out after 300 s" % name)
      failed = True
      continue
    if p.returncode != 0:
      lines.append("%-32s FAILED %s" % (name, (p.stderr or p.stdout).strip()[-300:]))
      failed = True
      continue
    got = json.loads(p.stdout.strip().splitlines()[-1])["losses"]
    # A NaN must fail, not vanish in max(): non-finite losses count as infinite error.
    errs = [abs(g - w) / max(abs(w), 1e-6) if math.isfinite(g) else math.inf
            for g, w in zip(got, want)]
    err = max(errs) if errs else math.inf
    ok = len(got) == len(want) and err <= 1e-4
    failed |= not ok
    lines.append("%-32s %s max rel err %.2g over %d steps" %
                 (name, "ok" if ok else "MISMATCH", err, len(got)))
  print("\n".join(lines))
  with open(os.path.join(out_dir, "train_zoo.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
  sys.exit(1 if failed else 0)


if __name__ == "__main__":
  main()
