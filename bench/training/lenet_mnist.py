#!/usr/bin/env python3
"""LeNet-5 MNIST training speed (issue 13's speed rows): images/s of dflow (`dflow train`)
against TensorFlow 2.21 (compat.v1 graph + Session) and PyTorch (eager, CPU), 1 and 2
threads; then the seed's device experiment with `examples/mnist_train`.

    bazel build //tools:dflow //examples:mnist_train //examples:write_mnist_graph
    python3 bench/training/lenet_mnist.py [--threads=1,2] [--warmup=5] [--steps=160]
        [--repeats=3] [--engines=dflow,tf,torch] [--no_seed_experiment]
        [--tf_python=/work/tfvenv/bin/python] [--torch_python=/work/torchvenv/bin/python]
        [--results_dir=DIR]
    python3 bench/training/lenet_mnist.py --smoke      # 5 steps, 1 thread, tiny seed runs

The driver needs only the standard library; each engine runs in its own process (TF and
PyTorch through `lenet_mnist.py --worker=tf|torch` under their venvs' python, dflow
through `bazel-bin/tools/dflow train`), one at a time, repeats interleaved (the VM drifts).

The model, the same in all three: [B,784] reshaped to [B,28,28,1] (PyTorch: [B,1,28,28],
its native NCHW); conv 5x5x1x6 SAME + bias + relu; maxpool 2x2/2; conv 5x5x6x16 VALID +
bias + relu; maxpool 2x2/2; flatten 400; dense 120 relu; dense 84 relu; dense 10; sparse
softmax cross-entropy, mean; Adam lr 0.001; batch 100; Glorot-uniform kernels, zero
biases. dflow's graph is `write_mnist_graph --model=lenet5` (examples/mnist_trainer.cc).

Data: tests/data/tf_graphs/mnist (the 10,000 test digits), rows 0..7999, pixels / 255,
labels int64; shuffled each epoch (80 steps), batches gathered before timing.

Protocol: `--warmup` untimed steps (the first included), then `--steps` timed steps; the
time is the sum of the training calls only (TF: `sess.run([train, loss], feed)`; PyTorch:
zero_grad, forward, loss, backward, Adam step, loss.item(); dflow: the same Session::Run
of train + loss that `dflow train` times). `dflow train` reports the time of all its
steps, first one included, so dflow runs twice, with `--steps=W` and `--steps=W+S`, and
the steady time is the difference (its raw W+S figure is kept in the JSON too).
images/s = steps * 100 / time. The table shows the median over repeats.

Seed experiment ("MNIST with the same global batch on 2 devices finishes faster than on
1"): `bazel-bin/examples/mnist_train` (MLP 784-256-10, Adam, batch 100, --seed_epochs)
on 1 device with 1 thread, 1 device with 2 threads (context), /cpu:0,/cpu:1 with 2 CPU
devices and 2 threads, and with DFLOW_SIMULATED_GPUS=2 /gpu:0 against /gpu:0,/gpu:1
(allow_soft_placement, 2 threads); its printed training seconds and test accuracy.

Writes raw JSON to bench/results/<date>-training/{lenet_mnist,seed_devices}.json (or
--results_dir) and prints markdown tables for bench/RESULTS.md.
"""
import argparse
import datetime
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(HERE, "models")
DFLOW = os.path.join(ROOT, "bazel-bin", "tools", "dflow")
WRITE_GRAPH = os.path.join(ROOT, "bazel-bin", "examples", "write_mnist_graph")
MNIST_TRAIN = os.path.join(ROOT, "bazel-bin", "examples", "mnist_train")
MNIST_DIR = os.path.join(ROOT, "tests", "data", "tf_graphs", "mnist")
IMAGES = os.path.join(MNIST_DIR, "t10k-images-idx3-ubyte.gz")
LABELS = os.path.join(MNIST_DIR, "t10k-labels-idx1-ubyte.gz")
TRAIN_ROWS = 8000
BATCH = 100
LR = 0.001
ENGINE_NAMES = {"dflow": "dflow", "tf": "TF", "torch": "PyTorch"}


def log(*a):
  print(*a, file=sys.stderr, flush=True)


# ---- workers (TF, PyTorch): one process per (engine, threads, repeat) --------------------

def read_idx(path):
  import numpy as np
  with gzip.open(path, "rb") as f:
    data = f.read()
  ndim = data[3]
  dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
  assert data[2] == 0x08, "expected uint8 IDX data"
  return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def batches(total_steps, seed):
  """total_steps batches of BATCH rows of digits 0..TRAIN_ROWS-1, reshuffled each epoch."""
  import numpy as np
  images = read_idx(IMAGES)[:TRAIN_ROWS].reshape(TRAIN_ROWS, 784).astype(np.float32) / 255.0
  labels = read_idx(LABELS)[:TRAIN_ROWS].astype(np.int64)
  rng = np.random.default_rng(seed)
  per_epoch = TRAIN_ROWS // BATCH
  out = []
  for step in range(total_steps):
    if step % per_epoch == 0:
      order = rng.permutation(TRAIN_ROWS)
    rows = order[(step % per_epoch) * BATCH:(step % per_epoch + 1) * BATCH]
    out.append((np.ascontiguousarray(images[rows]), np.ascontiguousarray(labels[rows])))
  return out


def tf_worker(args, data):
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  import tensorflow as tf
  v1 = tf.compat.v1
  config = v1.ConfigProto(intra_op_parallelism_threads=args.threads,
                          inter_op_parallelism_threads=args.threads)
  with tf.Graph().as_default() as g:
    v1.set_random_seed(1)
    x = v1.placeholder(tf.float32, [None, 784], name="images")
    y = v1.placeholder(tf.int64, [None], name="labels")
    glorot, zeros = v1.glorot_uniform_initializer(), v1.zeros_initializer()

    def conv(h, name, shape, padding):
      k = v1.get_variable(name + "/kernel", shape, initializer=glorot)
      b = v1.get_variable(name + "/bias", [shape[-1]], initializer=zeros)
      h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, k, [1, 1, 1, 1], padding), b))
      return tf.nn.max_pool2d(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")

    def dense(h, name, units):
      k = v1.get_variable(name + "/kernel", [h.shape[-1], units], initializer=glorot)
      b = v1.get_variable(name + "/bias", [units], initializer=zeros)
      return tf.nn.bias_add(tf.matmul(h, k), b)

    h = conv(tf.reshape(x, [-1, 28, 28, 1]), "conv1", [5, 5, 1, 6], "SAME")
    h = tf.reshape(conv(h, "conv2", [5, 5, 6, 16], "VALID"), [-1, 400])
    h = tf.nn.relu(dense(h, "fc1", 120))
    h = tf.nn.relu(dense(h, "fc2", 84))
    logits = dense(h, "fc3", 10)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    train = v1.train.AdamOptimizer(LR).minimize(loss, name="train")
    init = v1.global_variables_initializer()
    with v1.Session(graph=g, config=config) as s:
      s.run(init)
      losses, seconds = [], 0.0
      for i, (bx, by) in enumerate(data):
        feed = {x: bx, y: by}
        t = time.perf_counter()
        _, l = s.run([train, loss], feed)
        dt = time.perf_counter() - t
        if i >= args.warmup:
          seconds += dt
        losses.append(float(l))
  return "TensorFlow " + tf.__version__, seconds, losses


def torch_worker(args, data):
  import torch
  from torch import nn
  torch.set_num_threads(args.threads)
  torch.set_num_interop_threads(args.threads)
  torch.manual_seed(1)
  device = torch.device(args.torch_device)
  if args.torch_model == "mlp":  # examples/mnist_trainer.cc's MLP: 784-256-10
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
  else:
    model = nn.Sequential(
      nn.Unflatten(1, (1, 28, 28)),
      nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
      nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
      nn.Flatten(),
      nn.Linear(400, 120), nn.ReLU(),
      nn.Linear(120, 84), nn.ReLU(),
      nn.Linear(84, 10))
  model.to(device)
  for m in model.modules():
    if isinstance(m, (nn.Conv2d, nn.Linear)):
      nn.init.xavier_uniform_(m.weight)
      nn.init.zeros_(m.bias)
  model.train()
  opt = torch.optim.Adam(model.parameters(), lr=LR)
  loss_fn = nn.CrossEntropyLoss()
  tensors = [(torch.from_numpy(bx).to(device), torch.from_numpy(by).to(device))
             for bx, by in data]
  losses, seconds = [], 0.0
  for i, (bx, by) in enumerate(tensors):
    t = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(bx), by)
    loss.backward()
    opt.step()
    l = loss.item()
    dt = time.perf_counter() - t
    if i >= args.warmup:
      seconds += dt
    losses.append(l)
  name = "PyTorch " + torch.__version__
  if device.type == "cuda":
    name += " on " + torch.cuda.get_device_name(device)
  return name, seconds, losses


def worker(args):
  data = batches(args.warmup + args.steps, args.data_seed)
  version, seconds, losses = (tf_worker if args.worker == "tf" else torch_worker)(args, data)
  print(json.dumps({"engine": args.worker, "version": version, "threads": args.threads,
                    "warmup": args.warmup, "steps": args.steps, "seconds": seconds,
                    "images_per_second": args.steps * BATCH / seconds,
                    "first_loss": losses[0], "final_loss": losses[-1]}))


# ---- driver ------------------------------------------------------------------------------

def run(cmd, env=None, timeout=3600):
  p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
  if p.returncode != 0:
    raise RuntimeError("%s failed (exit %d):\n%s\n%s" % (" ".join(cmd), p.returncode,
                                                         p.stdout[-2000:], p.stderr[-4000:]))
  return p


def clean_env(**extra):
  env = dict(os.environ)
  env.pop("DFLOW_SIMULATED_GPUS", None)
  env.pop("DFLOW_SIMULATED_GPU_OPTIONS", None)
  env.update(extra)
  return env


def thread_config(threads):
  return "intra_op_parallelism_threads: %d inter_op_parallelism_threads: %d" % (threads, threads)


def measure_python(engine, python, threads, args):
  cmd = [python, os.path.abspath(__file__), "--worker=" + engine, "--threads=%d" % threads,
         "--warmup=%d" % args.warmup, "--steps=%d" % args.steps,
         "--data_seed=%d" % args.data_seed]
  p = run(cmd, env=clean_env(TF_CPP_MIN_LOG_LEVEL="2", OMP_NUM_THREADS=str(threads)))
  return json.loads(p.stdout.strip().splitlines()[-1])


def dflow_train(graph, threads, steps):
  p = run([DFLOW, "train", "--graph=" + graph, "--init=init", "--train_op=train", "--loss=loss",
           "--data=images=" + IMAGES, "--data=labels=" + LABELS, "--rows=0:%d" % TRAIN_ROWS,
           "--batch=%d" % BATCH, "--steps=%d" % steps, "--output=json", "--progress=none",
           "--config=" + thread_config(threads)], env=clean_env())
  return json.loads(p.stdout)


def measure_dflow(graph, threads, args):
  warm = dflow_train(graph, threads, args.warmup)
  full = dflow_train(graph, threads, args.warmup + args.steps)
  seconds = full["seconds"] - warm["seconds"]
  if seconds <= 0:
    raise RuntimeError("dflow: steady time %.4f s <= 0 (warm-up %.4f s, all %.4f s)"
                       % (seconds, warm["seconds"], full["seconds"]))
  return {"engine": "dflow", "version": "dflow " + git_revision(), "threads": threads,
          "warmup": args.warmup, "steps": args.steps, "seconds": seconds,
          "images_per_second": args.steps * BATCH / seconds,
          "first_loss": full["first_loss"], "final_loss": full["final_loss"],
          "warmup_run_seconds": warm["seconds"], "full_run_seconds": full["seconds"],
          "full_run_examples_per_second": full["examples_per_second"]}


SEED_RE = re.compile(r"model (\S+), (\d+) device\(s\): test accuracy ([0-9.]+) after (\d+) "
                     r"steps \(training ([0-9.]+) s, ([0-9.]+) images/s\)")


SIM_ENV = {"DFLOW_SIMULATED_GPUS": "2", "DFLOW_SIMULATED_GPU_OPTIONS": "compute_threads=1"}


def seed_configs():
  t1, t2 = thread_config(1), thread_config(2)
  return [
      ("1 device, 1 thread", {}, [], t1),
      ("1 device, 2 threads", {}, [], t2),
      ("/cpu:0,/cpu:1, 2 threads", {}, ["--devices=/cpu:0,/cpu:1"],
       'device_count { key: "CPU" value: 2 } ' + t2),
      # Each simulated card computes on its compute stream's thread alone, as a real card
      # computes beside the host (DFLOW_SIMULATED_GPU_OPTIONS compute_threads=1); the
      # host's 2 threads run the CPU's part (variables, the averaging, the optimizer).
      ("sim /gpu:0, 2 threads", SIM_ENV, ["--devices=/gpu:0"],
       "allow_soft_placement: true " + t2),
      ("sim /gpu:0,/gpu:1, 2 threads", SIM_ENV,
       ["--devices=/gpu:0,/gpu:1"], "allow_soft_placement: true " + t2),
  ]


def measure_seed(name, env, flags, config, args):
  cmd = [MNIST_TRAIN, "--model=" + args.seed_model, "--epochs=%d" % args.seed_epochs,
         "--batch=%d" % BATCH] + flags + ["--config=" + config]
  if args.seed_train_count:
    cmd.append("--train_count=%d" % args.seed_train_count)
  p = run(cmd, env=clean_env(**env))
  m = SEED_RE.search(p.stdout)
  if not m:
    raise RuntimeError("mnist_train: no result line in %r" % p.stdout)
  # It prints the seconds with 2 decimals; images/s (steps * batch / seconds) has more.
  steps, images_per_second = int(m.group(4)), float(m.group(6))
  return {"config": name, "command": cmd, "env": env, "devices": int(m.group(2)),
          "accuracy": float(m.group(3)), "steps": steps,
          "train_seconds": steps * BATCH / images_per_second,
          "printed_train_seconds": float(m.group(5)), "images_per_second": images_per_second,
          "epochs_log": p.stderr.strip().splitlines()}


def machine():
  model, cores = "unknown CPU", os.cpu_count()
  try:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    for line in out.splitlines():
      if line.startswith("Model name:"):
        model = line.split(":", 1)[1].strip()
  except OSError:
    pass
  flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
  isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
  return {"cpu": model, "isa": isa, "cores": cores}


def git_revision():
  try:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=ROOT).stdout.strip() or "?"
  except OSError:
    return "?"


def find_python(given, candidates):
  for p in ([given] if given else []) + candidates:
    if p and os.path.exists(p):
      return p
  return None


def lenet_table(records, engines, threads_list, versions):
  def med(engine, threads):  # (median, all runs) of images/s
    v = [r["images_per_second"] for r in records
         if r["engine"] == engine and r["threads"] == threads]
    return (statistics.median(v), v) if v else (None, [])

  cols = [ENGINE_NAMES[e] + (" " + versions[e].split()[-1] if e != "dflow" and e in versions
                             else "") + " img/s" for e in engines]
  ratios = [e for e in ("tf", "torch") if e in engines and "dflow" in engines]
  head = ["threads"] + cols + ["dflow/%s" % ENGINE_NAMES[e] for e in ratios]
  lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
  for t in threads_list:
    row, m = [str(t)], {}
    for e in engines:
      m[e], v = med(e, t)
      row.append("**%.0f**" % m[e] + (" (%s)" % " / ".join("%.0f" % x for x in v)
                                       if len(v) > 1 else ""))
    for e in ratios:
      row.append("%.2fx" % (m["dflow"] / m[e]))
    lines.append("| " + " | ".join(row) + " |")
  return "\n".join(lines)


def seed_table(records):
  lines = ["| configuration | devices | training s | images/s | test accuracy |",
           "| --- | --- | --- | --- | --- |"]
  names = []
  for r in records:
    if r["config"] not in names:
      names.append(r["config"])
  for name in names:
    rs = [r for r in records if r["config"] == name]
    secs = [r["train_seconds"] for r in rs]
    lines.append("| %s | %d | **%.3f**%s | %.0f | %s |" % (
        name, rs[0]["devices"], statistics.median(secs),
        " (%s)" % " / ".join("%.3f" % s for s in secs) if len(secs) > 1 else "",
        statistics.median(r["images_per_second"] for r in rs),
        " / ".join("%.4f" % r["accuracy"] for r in rs)))
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--worker", choices=["tf", "torch"], help=argparse.SUPPRESS)
  parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
  parser.add_argument("--torch_device", default="cpu", help=argparse.SUPPRESS)  # or cuda
  parser.add_argument("--torch_model", default="lenet5", choices=["lenet5", "mlp"],
                      help=argparse.SUPPRESS)
  parser.add_argument("--warmup", type=int, default=5, help="untimed steps, first included")
  parser.add_argument("--steps", type=int, default=160, help="timed steps (80 per epoch)")
  parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per cell")
  parser.add_argument("--data_seed", type=int, default=1, help="TF/PyTorch shuffling")
  parser.add_argument("--engines", default="dflow,tf,torch")
  parser.add_argument("--tf_python", help="default /work/tfvenv or /tmp/tfvenv")
  parser.add_argument("--torch_python", help="default /work/torchvenv")
  parser.add_argument("--no_seed_experiment", action="store_true")
  parser.add_argument("--seed_epochs", type=int, default=5)
  parser.add_argument("--seed_model", default="mlp", choices=["mlp", "lenet5"])
  parser.add_argument("--seed_train_count", type=int, default=0,
                      help="mnist_train --train_count (0: its default, 8000)")
  parser.add_argument("--results_dir", help="default bench/results/<date>-training")
  parser.add_argument("--smoke", action="store_true",
                      help="prove the script works: 5 steps, 1 thread, 1 repeat, seed "
                           "experiment 1 epoch of 1000 digits")
  args = parser.parse_args()

  if args.worker:
    args.threads = int(args.threads)
    worker(args)
    return
  if args.smoke:
    args.threads, args.warmup, args.steps, args.repeats = "1", 2, 5, 1
    args.seed_epochs, args.seed_train_count = 1, 1000
  threads_list = [int(t) for t in args.threads.split(",")]
  engines = [e for e in args.engines.split(",") if e]
  for e in engines:
    if e not in ENGINE_NAMES:
      parser.error("unknown engine " + e)
  pythons = {
      "tf": find_python(args.tf_python, ["/work/tfvenv/bin/python", "/tmp/tfvenv/bin/python"]),
      "torch": find_python(args.torch_python, ["/work/torchvenv/bin/python"]),
  }
  for e in ("tf", "torch"):
    if e in engines and not pythons[e]:
      parser.error("no python for %s: pass --%s_python" % (e, e))
  needed = [DFLOW, WRITE_GRAPH] if "dflow" in engines else []
  if not args.no_seed_experiment:
    needed.append(MNIST_TRAIN)
  missing = [p for p in needed if not os.path.exists(p)]
  if missing:
    sys.exit("missing %s: bazel build //tools:dflow //examples:mnist_train "
             "//examples:write_mnist_graph" % ", ".join(missing))

  now = datetime.datetime.now()
  date = now.strftime("%Y-%m-%d")
  results_dir = args.results_dir or os.path.join(ROOT, "bench", "results", date + "-training")
  mach = machine()
  os.makedirs(MODELS, exist_ok=True)
  graph = os.path.join(MODELS, "lenet5_adam.pbtxt")
  if "dflow" in engines:
    run([WRITE_GRAPH, "--model=lenet5", "--optimizer=adam", "--lr=%g" % LR, "--out=" + graph])

  records, versions = [], {}
  for rep in range(args.repeats):
    for threads in threads_list:
      for e in engines:
        log("lenet5 %s, %d thread(s), repeat %d/%d ..." % (e, threads, rep + 1, args.repeats))
        r = (measure_dflow(graph, threads, args) if e == "dflow"
             else measure_python(e, pythons[e], threads, args))
        r["repeat"] = rep
        versions[e] = r["version"]
        log("  %.0f images/s (%.3f s for %d steps), loss %.4f -> %.4f" % (
            r["images_per_second"], r["seconds"], r["steps"], r["first_loss"],
            r["final_loss"]))
        records.append(r)

  seed_records = []
  if not args.no_seed_experiment:
    for rep in range(args.repeats):
      for name, env, flags, config in seed_configs():
        log("mnist_train %s, repeat %d/%d ..." % (name, rep + 1, args.repeats))
        r = measure_seed(name, env, flags, config, args)
        r["repeat"] = rep
        log("  training %.2f s, accuracy %.4f" % (r["train_seconds"], r["accuracy"]))
        seed_records.append(r)

  os.makedirs(results_dir, exist_ok=True)
  common = {"date": now.strftime("%Y-%m-%dT%H:%M"), "machine": mach, "git": git_revision(),
            "smoke": args.smoke}
  with open(os.path.join(results_dir, "lenet_mnist.json"), "w") as f:
    json.dump(dict(common, protocol={"batch": BATCH, "train_rows": TRAIN_ROWS, "lr": LR,
                                     "warmup": args.warmup, "steps": args.steps,
                                     "repeats": args.repeats, "threads": threads_list},
                   versions=versions, results=records), f, indent=1)
  if seed_records:
    with open(os.path.join(results_dir, "seed_devices_%s.json" % args.seed_model), "w") as f:
      json.dump(dict(common, protocol={"model": args.seed_model, "batch": BATCH,
                                       "epochs": args.seed_epochs,
                                       "train_count": args.seed_train_count or 8000},
                     results=seed_records), f, indent=1)

  machine_line = "%s (%s), %s cores" % (mach["cpu"], mach["isa"], mach["cores"])
  print("## LeNet-5 MNIST training, batch 100, Adam — %s — %s (issue 13)%s\n" % (
      date, machine_line, " — SMOKE RUN, not a measurement" if args.smoke else ""))
  print("`bench/training/lenet_mnist.py` (git %s): images/s over %d steps after %d warm-up "
        "steps, median of %d interleaved run(s) (all runs in parentheses); NHWC for dflow "
        "and TF, NCHW for PyTorch. Target: dflow >= 1.5x TF and PyTorch.\n"
        % (git_revision(), args.steps, args.warmup, args.repeats))
  print(lenet_table(records, engines, threads_list, versions))
  if "dflow" in engines:
    d = [r for r in records if r["engine"] == "dflow"]
    print("\ndflow, first step included (`dflow train`'s own examples_per_second over %d "
          "steps): %s" % (args.warmup + args.steps, ", ".join(
              "%d thr %.0f" % (r["threads"], r["full_run_examples_per_second"]) for r in d)))
  print("\nLoss after %d steps, first repeat (sanity): %s" % (args.warmup + args.steps, ", ".join(
      "%s %d thr %.3f" % (ENGINE_NAMES[r["engine"]], r["threads"], r["final_loss"])
      for r in records if r["repeat"] == 0)))
  if seed_records:
    print("\n### Seed experiment: MNIST %s, global batch 100, %d epoch(s), "
          "`examples/mnist_train`\n" % (args.seed_model, args.seed_epochs))
    print(seed_table(seed_records))
    med = lambda n: statistics.median(r["train_seconds"] for r in seed_records
                                      if r["config"] == n)
    for one, two in (("1 device, 1 thread", "/cpu:0,/cpu:1, 2 threads"),
                     ("1 device, 2 threads", "/cpu:0,/cpu:1, 2 threads"),
                     ("sim /gpu:0, 2 threads", "sim /gpu:0,/gpu:1, 2 threads")):
      a, b = med(one), med(two)
      print("%s- %s vs %s: %.3f s vs %.3f s, 2 devices %s (%.2fx)" % (
          "\n" if one.startswith("1 device, 1") else "", two, one, b, a,
          "faster" if b < a else "NOT faster", a / b))
  shown = os.path.relpath(results_dir, ROOT)
  print("\nRaw JSON: %s" % (shown if not shown.startswith("..") else results_dir))


if __name__ == "__main__":
  main()
