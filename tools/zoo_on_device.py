#!/usr/bin/env python3
# The zoo on a real GPU, for the device machine (needs python3 + numpy, no TensorFlow):
#   python3 tools/zoo_on_device.py PATH/TO/dflow OUT_DIR      (from the repository root)
# run_gpu_suite.sh (tools/gpu_bundle.sh) calls it with the bundle's dflow.
#
# Runs every committed zoo golden through `dflow run` with the real GPU visible (default
# placement: GPU first, soft placement for ops without a CUDA kernel) and compares with
# TensorFlow's answers as zoo_test does (|err| <= 1e-4 * max(1, max|want|)); counts nodes
# placed on the GPU from log_device_placement; then times a few with `dflow bench` on the
# GPU and with device_count GPU 0 (CPU only), same machine.
import glob, json, os, subprocess, sys, numpy as np
dflow = sys.argv[1]; out = sys.argv[2]
root = "tests/data/zoo/"
rows = []
for g in sorted(glob.glob(root + "goldens/*.json")):
    gold = json.load(open(g)); name = os.path.basename(g)[:-5]
    cmd = [dflow, "run", "--graph=" + root + gold["file"], "--output=json",
           "--config=log_device_placement: true allow_soft_placement: true"]
    for k, v in gold["feeds"].items(): cmd.append("--feed=%s=@%s%s" % (k, root, v["npy"]))
    for k in gold["fetches"]: cmd.append("--fetch=" + k)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    open(os.path.join(out, "zoo_stderr.txt"), "a").write("#### %s rc %d\n%s\n" % (name, p.returncode, p.stderr[-20000:]))
    on_gpu = sum(1 for l in p.stderr.splitlines() if "device:GPU:" in l and ": (" in l)
    on_cpu = sum(1 for l in p.stderr.splitlines() if "device:CPU:" in l and ": (" in l)
    if p.returncode != 0:
        rows.append("%-20s FAILED rc %d: %s" % (name, p.returncode, p.stderr.strip().splitlines()[-1][:300] if p.stderr.strip() else "")); continue
    res = {o["name"]: o for o in json.loads(p.stdout)["outputs"]}
    worst, bad = 0.0, []
    for k, v in gold["fetches"].items():
        want = np.load(root + v["npy"]); got = res[k]
        vals = np.array([float(x) if not isinstance(x, str) else float(x.replace("Infinity", "inf")) for x in np.ravel(got["values"])])
        if list(got["shape"]) != list(want.shape): bad.append("%s shape %s want %s" % (k, got["shape"], list(want.shape))); continue
        w = want.astype(np.float64).ravel()
        scale = max(1.0, float(np.max(np.abs(w[np.isfinite(w)]))) if np.isfinite(w).any() else 1.0)
        tol = 0 if want.dtype.kind in "iub" else 1e-4 * scale
        err = np.where(np.isfinite(w), np.abs(vals - w), np.where((np.isnan(w) & np.isnan(vals)) | (w == vals), 0, np.inf))
        err = np.nan_to_num(err, nan=np.inf); worst = max(worst, float(err.max()) if err.size else 0)
        if (err > tol).any(): bad.append("%s: %d of %d beyond %.2g" % (k, int((err > tol).sum()), err.size, tol))
    rows.append("%-20s %s max abs err %.3g; nodes on GPU %d, on CPU %d %s" % (name, "ok" if not bad else "MISMATCH", worst, on_gpu, on_cpu, "; ".join(bad)))
print("\n".join(rows)); open(os.path.join(out, "zoo_gpu.txt"), "w").write("\n".join(rows) + "\n")
bench = []
for name in ["mobilenet_v2", "unet", "tf1_cnn", "mobilenet_v3_large"]:
    gold = json.load(open(root + "goldens/%s.json" % name))
    for label, cfg in [("GPU", ""), ("CPU only", 'device_count { key: "GPU" value: 0 }')]:
        cmd = [dflow, "bench", "--graph=" + root + gold["file"], "--runs=50", "--warmup=5", "--output=json"]
        if cfg: cmd.append("--config=" + cfg)
        for k, v in gold["feeds"].items(): cmd.append("--feed=%s=@%s%s" % (k, root, v["npy"]))
        for k in gold["fetches"]: cmd.append("--fetch=" + k)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        try:
            j = json.loads(p.stdout); lat = j.get("latency_ms", j)
            bench.append("%-20s %-9s %s" % (name, label, json.dumps({k: lat[k] for k in ("median", "min") if k in lat}) if isinstance(lat, dict) else p.stdout[:200]))
        except Exception as e:
            bench.append("%-20s %-9s FAILED rc %d %s" % (name, label, p.returncode, (p.stderr or p.stdout)[-300:]))
print("\n".join(bench)); open(os.path.join(out, "zoo_bench.txt"), "w").write("\n".join(bench) + "\n")
