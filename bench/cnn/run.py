#!/usr/bin/env python3
"""CNN speed: dflow vs TensorFlow (compat.v1 Session on the same frozen GraphDef) vs ONNX
Runtime (tf2onnx conversion of the same file), for each model x batch x threads.

    /work/tfvenv/bin/python bench/cnn/make_models.py     # once: bench/cnn/models/
    /work/tfvenv/bin/python bench/cnn/run.py --append    # measure, print, append RESULTS.md

Every engine runs in its own process (TF and ORT through `run.py --worker`, dflow through
`bazel-bin/tools/dflow bench`), one at a time, on the same input (.npy, fixed seed).
Protocol, the same for all three: `--warmup` untimed runs (the first one included), then
N timed runs, N = clamp(ceil(--min-seconds / one steady run), --runs, --max-runs); one
steady run is measured by the last warmup run (TF, ORT) or by a probe process
(`dflow bench --warmup=1 --runs=1`). Threads: TF intra_op = inter_op = T; ORT
intra_op_num_threads = T, inter_op_num_threads = 1, ORT_ENABLE_ALL, sequential; dflow
--threads=T (intra = inter = T). Agreement: max |dflow - TF| and max |ORT - TF| on the
logits (`dflow run` once per model and batch).

Writes the raw figures (every sample) to bench/results/<UTC date>/cnn_speed.json (or
--out), prints a markdown table and, with --append, appends it with the date, the machine
and the raw figures to bench/RESULTS.md.
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS_DIR = os.path.join(HERE, "models")
INPUTS_DIR = os.path.join(MODELS_DIR, "inputs")
DFLOW = os.path.join(REPO, "bazel-bin", "tools", "dflow")
MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "inception_v3", "densenet121",
          "vgg16"]
INPUT_SEED = 224


# ---- statistics (as tools/latency_stats.cc: median of the sorted samples, nearest-rank p90)

def stats(samples):
  s = sorted(samples)
  n = len(s)
  if n == 0:
    return None
  median = s[n // 2] if n % 2 == 1 else (s[n // 2 - 1] + s[n // 2]) / 2
  p90 = s[max(1, math.ceil(0.9 * n)) - 1]
  return {"min": s[0], "median": median, "p90": p90, "max": s[-1], "mean": sum(s) / n,
          "n": n}


def timed_runs(estimate_ms, args):
  if args.min_seconds <= 0 or estimate_ms <= 0:
    return args.runs
  return max(args.runs, min(args.max_runs, math.ceil(args.min_seconds * 1000 / estimate_ms)))


# ---- workers: one process per (engine, model, batch, threads) ----------------------------

def worker(args):
  import numpy as np
  x = np.load(args.input)
  with open(args.meta) as f:
    meta = json.load(f)
  if args.worker == "tf":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    version = "TensorFlow " + tf.__version__
    graph_def = tf.compat.v1.GraphDef()
    with open(args.model, "rb") as f:
      graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
      tf.compat.v1.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=args.threads,
                                      inter_op_parallelism_threads=args.threads)
    session = tf.compat.v1.Session(graph=graph, config=config)
    feed = graph.get_tensor_by_name(meta["input"])
    fetch = graph.get_tensor_by_name(meta["output"])

    def run():
      return session.run(fetch, {feed: x})
  else:
    import onnxruntime as ort
    version = "ONNX Runtime " + ort.__version__
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0].name
    fetch = session.get_outputs()[0].name

    def run():
      return session.run([fetch], {feed: x})[0]

  warm = []
  y = None
  for _ in range(args.warmup):
    start = time.perf_counter()
    y = run()
    warm.append((time.perf_counter() - start) * 1000)
  n = timed_runs(warm[-1] if warm else 0, args)
  samples = []
  for _ in range(n):
    start = time.perf_counter()
    y = run()
    samples.append((time.perf_counter() - start) * 1000)
  if args.output:
    np.save(args.output, np.asarray(y))
  print(json.dumps({"engine": version, "warmup_ms": warm, "samples_ms": samples}))


# ---- driver ---------------------------------------------------------------------------------

def log(*a):
  print(*a, file=sys.stderr, flush=True)


def run_json(cmd, timeout):
  """Runs cmd; returns (the last stdout line parsed as JSON, None) or (None, error)."""
  try:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
  except subprocess.TimeoutExpired:
    return None, "timeout after %d s" % timeout
  lines = [l for l in p.stdout.splitlines() if l.strip()]
  if p.returncode != 0 or not lines:
    tail = (p.stderr.strip().splitlines() or ["(no output)"])[-3:]
    return None, "exit %d: %s" % (p.returncode, " | ".join(tail))
  try:
    return json.loads(lines[-1]), None
  except ValueError as e:
    return None, "bad JSON (%s): %s" % (e, lines[-1][:200])


def make_input(model, meta, batch):
  import numpy as np
  os.makedirs(INPUTS_DIR, exist_ok=True)
  path = os.path.join(INPUTS_DIR, "%s.b%d.npy" % (model, batch))
  if not os.path.exists(path):
    r = np.random.default_rng([INPUT_SEED, batch, sum(map(ord, model))])
    shape = (batch, meta["size"], meta["size"], 3)
    x = r.uniform(0, 255, shape) if meta["pixels"] else r.standard_normal(shape)
    np.save(path + ".tmp.npy", x.astype(np.float32))
    os.replace(path + ".tmp.npy", path)
  return path


def bare(name):
  return name[:-2] if name.endswith(":0") else name


def measure_python(engine, model_file, meta_file, x_path, threads, args, out_npy):
  cmd = [args.python, os.path.abspath(__file__), "--worker", engine, "--model", model_file,
         "--meta", meta_file, "--input", x_path, "--threads", str(threads),
         "--runs", str(args.runs), "--warmup", str(args.warmup),
         "--min-seconds", str(args.min_seconds), "--max-runs", str(args.max_runs)]
  if out_npy:
    cmd += ["--output", out_npy]
  doc, err = run_json(cmd, args.timeout)
  if err:
    return {"error": err}
  doc["latency_ms"] = stats(doc["samples_ms"])
  return doc


def measure_dflow(pb, meta, x_path, threads, args):
  base = [DFLOW, "bench", "--graph=" + pb, "--threads=%d" % threads,
          "--feed=%s=@%s" % (bare(meta["input"]), x_path), "--fetch=" + meta["output"],
          "--output=json"]
  runs = args.runs
  probe_ms = None
  if args.min_seconds > 0:
    doc, err = run_json(base + ["--warmup=1", "--runs=1"], args.timeout)
    if err:
      return {"error": "probe: " + err}
    probe_ms = doc["latency_ms"]["median"]
    runs = timed_runs(probe_ms, args)
  doc, err = run_json(base + ["--warmup=%d" % args.warmup, "--runs=%d" % runs], args.timeout)
  if err:
    return {"error": err}
  doc["probe_ms"] = probe_ms
  doc["dflow_latency_ms"] = doc["latency_ms"]
  doc["latency_ms"] = stats(doc["samples_ms"])
  return doc


def dflow_output(pb, meta, x_path, args):
  import numpy as np
  doc, err = run_json([DFLOW, "run", "--graph=" + pb,
                       "--feed=%s=@%s" % (bare(meta["input"]), x_path),
                       "--fetch=" + meta["output"], "--output=json"], args.timeout)
  if err:
    return None, err
  out = doc["outputs"][0]
  return np.array(out["values"], dtype=np.float32).reshape(out["shape"]), None


def max_abs_diff(a, b):
  import numpy as np
  if a is None or b is None:
    return None
  if a.shape != b.shape:
    return "shape %s vs %s" % (list(a.shape), list(b.shape))
  return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def machine():
  cpu = platform.processor()
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          cpu = line.split(":", 1)[1].strip()
          break
  except OSError:
    pass
  return {"cpu": cpu, "cores": os.cpu_count(), "loadavg_at_start": os.getloadavg(),
          "host": platform.node(), "python": sys.executable}


def git_revision():
  try:
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return head + ("+dirty" if dirty else "")
  except OSError:
    return None


def fmt_ms(st):
  if not st:
    return "—"
  def f(v):
    return "%.1f" % v if v >= 100 else "%.2f" % v if v >= 10 else "%.3f" % v
  return "%s (%s – %s)" % (f(st["median"]), f(st["min"]), f(st["max"]))


def fmt_ratio(num, den):
  if not num or not den or not den.get("median"):
    return "—"
  return "%.2f×" % (num["median"] / den["median"])


def fmt_diff(d):
  if d is None:
    return "—"
  return d if isinstance(d, str) else "%.2g" % d


def table(records):
  lines = [
      "| model | batch | threads | dflow ms | TF ms | ORT ms | TF/dflow | ORT/dflow | "
      "max\\|dflow−TF\\| | max\\|ORT−TF\\| |",
      "|---|---|---|---|---|---|---|---|---|---|"]
  notes = []
  for r in records:
    lat = {e: (r[e].get("latency_ms") if r.get(e) else None) for e in ("dflow", "tf", "ort")}
    for e in ("dflow", "tf", "ort"):
      if r.get(e) and r[e].get("error"):
        notes.append("- %s b%d t%d %s: %s" % (r["model"], r["batch"], r["threads"], e,
                                              r[e]["error"]))
    lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
        r["model"], r["batch"], r["threads"], fmt_ms(lat["dflow"]), fmt_ms(lat["tf"]),
        fmt_ms(lat["ort"]), fmt_ratio(lat["tf"], lat["dflow"]),
        fmt_ratio(lat["ort"], lat["dflow"]), fmt_diff(r.get("diff_dflow_tf")),
        fmt_diff(r.get("diff_ort_tf"))))
  return "\n".join(lines + ([""] + notes if notes else []))


def raw_lines(records):
  """One compact JSON line per configuration: every sample of every engine."""
  out = []
  for r in records:
    line = {k: r[k] for k in ("model", "batch", "threads", "diff_dflow_tf", "diff_ort_tf")}
    for e in ("dflow", "tf", "ort"):
      d = r.get(e) or {}
      line[e] = ({"error": d["error"]} if d.get("error") else
                 {"warmup": len(d.get("warmup_ms", [])) or d.get("warmup"),
                  "samples_ms": [round(v, 3) for v in d.get("samples_ms", [])]})
    out.append(json.dumps(line, separators=(",", ":"), ensure_ascii=False))
  return out


def main():
  parser = argparse.ArgumentParser(description="CNN speed: dflow vs TF vs ONNX Runtime")
  parser.add_argument("--models", default=",".join(MODELS))
  parser.add_argument("--batches", default="1,16")
  parser.add_argument("--threads", default="1,2")
  parser.add_argument("--engines", default="dflow,tf,ort")
  parser.add_argument("--runs", type=int, default=5, help="at least this many timed runs")
  parser.add_argument("--warmup", type=int, default=2, help="untimed runs first (>= 1)")
  parser.add_argument("--min-seconds", type=float, default=3.0,
                      help="timed runs fill at least this long (per engine and config)")
  parser.add_argument("--max-runs", type=int, default=200)
  parser.add_argument("--timeout", type=int, default=900, help="per process, seconds")
  parser.add_argument("--quick", action="store_true",
                      help="smoke test: --runs 3 --warmup 1 --min-seconds 0")
  parser.add_argument("--no-check", action="store_true", help="skip the output comparison")
  parser.add_argument("--out", help="raw JSON (default bench/results/<UTC date>/cnn_speed.json)")
  parser.add_argument("--append", action="store_true", help="append to bench/RESULTS.md")
  parser.add_argument("--python", default=sys.executable, help="python with TF and ORT")
  # worker mode (internal)
  parser.add_argument("--worker", choices=["tf", "ort"], help=argparse.SUPPRESS)
  parser.add_argument("--model", help=argparse.SUPPRESS)
  parser.add_argument("--meta", help=argparse.SUPPRESS)
  parser.add_argument("--input", help=argparse.SUPPRESS)
  parser.add_argument("--output", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.quick:
    args.runs, args.warmup, args.min_seconds = 3, 1, 0.0
  args.warmup = max(1, args.warmup)
  if args.worker:
    args.threads = int(args.threads)
    worker(args)
    return

  models = [m for m in args.models.split(",") if m]
  batches = [int(b) for b in args.batches.split(",") if b]
  threads_list = [int(t) for t in args.threads.split(",") if t]
  engines = [e for e in args.engines.split(",") if e]
  for m in models:
    for ext in (".pb", ".onnx", ".json"):
      if not os.path.exists(os.path.join(MODELS_DIR, m + ext)):
        sys.exit("missing %s%s: run bench/cnn/make_models.py first" % (m, ext))
  if "dflow" in engines and not os.path.exists(DFLOW):
    sys.exit("missing %s: run `bazel build //tools:dflow` first" % DFLOW)
  load = os.getloadavg()[0]
  if load > 0.5:
    log("warning: load average %.2f; every 2-thread figure uses both cores" % load)

  now = datetime.datetime.now(datetime.timezone.utc)
  out_path = args.out or os.path.join(REPO, "bench", "results", now.strftime("%Y-%m-%d"),
                                      "cnn_speed.json")
  tmp = os.path.join(MODELS_DIR, "tmp")
  os.makedirs(tmp, exist_ok=True)
  records = []
  for model in models:
    pb = os.path.join(MODELS_DIR, model + ".pb")
    onnx_file = os.path.join(MODELS_DIR, model + ".onnx")
    meta_file = os.path.join(MODELS_DIR, model + ".json")
    with open(meta_file) as f:
      meta = json.load(f)
    for batch in batches:
      x_path = make_input(model, meta, batch)
      outputs = {}
      for threads in threads_list:
        rec = {"model": model, "batch": batch, "threads": threads, "diff_dflow_tf": None,
               "diff_ort_tf": None}
        for engine in engines:
          log("[run] %s batch=%d threads=%d %s" % (model, batch, threads, engine))
          started = time.time()
          if engine == "dflow":
            rec["dflow"] = measure_dflow(pb, meta, x_path, threads, args)
          else:
            y_path = os.path.join(tmp, "%s.b%d.%s.npy" % (model, batch, engine))
            rec[engine] = measure_python(engine, onnx_file if engine == "ort" else pb,
                                         meta_file, x_path, threads, args,
                                         None if engine in outputs else y_path)
            if engine not in outputs and not rec[engine].get("error"):
              import numpy as np
              outputs[engine] = np.load(y_path)
          rec[engine]["wall_s"] = round(time.time() - started, 2)
          st = rec[engine].get("latency_ms")
          log("      %s" % (fmt_ms(st) + " ms" if st else rec[engine]["error"]))
        if not args.no_check and "dflow" in engines and "dflow" not in outputs:
          y, err = dflow_output(pb, meta, x_path, args)
          outputs["dflow"] = y
          if err:
            rec["dflow_run_error"] = err
        rec["diff_dflow_tf"] = max_abs_diff(outputs.get("dflow"), outputs.get("tf"))
        rec["diff_ort_tf"] = max_abs_diff(outputs.get("ort"), outputs.get("tf"))
        records.append(rec)

  versions = {}
  for r in records:
    for e in ("tf", "ort"):
      if r.get(e, {}).get("engine"):
        versions[e] = r[e]["engine"]
  doc = {"date": now.strftime("%Y-%m-%dT%H:%MZ"), "machine": machine(),
         "dflow_revision": git_revision(), "versions": versions,
         "protocol": {"runs": args.runs, "warmup": args.warmup,
                      "min_seconds": args.min_seconds, "max_runs": args.max_runs,
                      "quick": args.quick},
         "records": records}
  os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
  with open(out_path, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
  log("raw figures: %s" % out_path)

  m = doc["machine"]
  shown_path = os.path.abspath(out_path)
  if shown_path.startswith(REPO + os.sep):
    shown_path = os.path.relpath(shown_path, REPO)
  heading = "## %s — %s, %d cores — CNN speed (bench/cnn)%s" % (
      doc["date"], m["cpu"], m["cores"], ", quick" if args.quick else "")
  body = "\n".join([
      heading, "",
      "dflow %s vs %s (compat.v1 Session, frozen GraphDef) vs %s (tf2onnx opset 17). "
      "224×224×3, random weights (bench/cnn/make_models.py); latency per Session.run, ms, "
      "median (min – max) over the timed runs; ratios > 1 mean dflow is faster. "
      "Warm-up %d, timed runs ≥ %d filling ≥ %g s. Load average at start %.2f." % (
          doc["dflow_revision"], versions.get("tf", "TF"), versions.get("ort", "ORT"),
          args.warmup, args.runs, args.min_seconds, m["loadavg_at_start"][0]),
      "", table(records), "",
      "Raw records (ms per run; full JSON in %s):" % shown_path,
      "```"] + raw_lines(records) + ["```"])
  print(body)
  if args.append:
    with open(os.path.join(REPO, "bench", "RESULTS.md"), "a") as f:
      f.write("\n" + body + "\n")
    log("appended to bench/RESULTS.md")


if __name__ == "__main__":
  main()
