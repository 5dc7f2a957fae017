#!/usr/bin/env python3
"""Training-step speed, issue 13's first target: an MLP 784-512-512-10 (Relu), sparse
softmax cross-entropy, GradientDescent, batch 64, as a TF 1 graph TF 2.21 writes
(MetaGraph + checkpoint). Steady-state step time of tf.compat.v1.Session against
`dflow bench --target=train` on the same files, 1 and 2 threads. Run by hand (needs TF):

    /tmp/tfvenv/bin/python bench/training/run.py [--runs 200] [--repeats 3]

Writes bench/training/models/ (git-ignored) and prints a markdown table for
bench/RESULTS.md. Both engines are fed the same batch (models/x.npy, models/labels.npy:
uniform [0,1) images, label 0). PyTorch's eager step of the same MLP runs beside them
(torch_mlp_step.py under --torch_python, default /tmp/torchvenv/bin/python; skipped
when that does not exist). Each engine runs --repeats times, interleaved; the table
gives the median of the repeats' medians and every repeat.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(HERE, "models")
DFLOW = os.path.join(ROOT, "bazel-bin", "tools", "dflow")
BATCH = 64
v1 = tf.compat.v1


def write_model():
  with tf.Graph().as_default() as g:
    v1.set_random_seed(2021)
    x = v1.placeholder(tf.float32, [BATCH, 784], name="x")
    y = v1.placeholder(tf.int32, [BATCH], name="labels")
    h = x
    for i, units in enumerate([512, 512, 10]):
      w = v1.get_variable("w%d" % i, [h.shape[-1], units],
                          initializer=v1.glorot_uniform_initializer(seed=i))
      b = v1.get_variable("b%d" % i, [units], initializer=v1.zeros_initializer())
      h = tf.nn.bias_add(tf.matmul(h, w), b)
      if units != 10:
        h = tf.nn.relu(h)
    loss = tf.identity(v1.losses.sparse_softmax_cross_entropy(y, h), name="loss")
    v1.train.GradientDescentOptimizer(0.01).minimize(loss, name="train")
    saver = v1.train.Saver()
    with v1.Session(graph=g) as s:
      s.run(v1.global_variables_initializer())
      saver.save(s, os.path.join(MODELS, "mlp.ckpt"), write_meta_graph=False, write_state=False)
      saver.export_meta_graph(os.path.join(MODELS, "mlp.meta"))


def tf_step_us(threads, runs):
  config = v1.ConfigProto(intra_op_parallelism_threads=threads,
                          inter_op_parallelism_threads=threads)
  with tf.Graph().as_default() as g:
    saver = v1.train.import_meta_graph(os.path.join(MODELS, "mlp.meta"))
    with v1.Session(graph=g, config=config) as s:
      saver.restore(s, os.path.join(MODELS, "mlp.ckpt"))
      feed = {"x:0": np.load(os.path.join(MODELS, "x.npy")),
              "labels:0": np.load(os.path.join(MODELS, "labels.npy"))}
      train = g.get_operation_by_name("train")
      for _ in range(20):
        s.run(train, feed)
      samples = []
      for _ in range(runs):
        t = time.perf_counter()
        s.run(train, feed)
        samples.append((time.perf_counter() - t) * 1e6)
  return float(np.median(samples))


def dflow_step_us(threads, runs):
  out = subprocess.run([DFLOW, "bench", "--meta_graph=" + os.path.join(MODELS, "mlp.meta"),
                        "--checkpoint=" + os.path.join(MODELS, "mlp.ckpt"), "--target=train",
                        "--feed=x=@" + os.path.join(MODELS, "x.npy"),
                        "--feed=labels=@" + os.path.join(MODELS, "labels.npy"),
                        "--threads=%d" % threads, "--runs=%d" % runs, "--warmup=20",
                        "--output=json"], capture_output=True, text=True, check=True)
  return json.loads(out.stdout)["latency_ms"]["median"] * 1e3


def torch_step_us(python, threads, runs):
  out = subprocess.run([python, os.path.join(HERE, "torch_mlp_step.py"), "--threads=%d" % threads,
                        "--runs=%d" % runs], capture_output=True, text=True, check=True)
  return float(out.stdout.strip())


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--runs", type=int, default=200)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--torch_python", default="/tmp/torchvenv/bin/python")
  args = parser.parse_args()
  os.makedirs(MODELS, exist_ok=True)
  write_model()
  np.save(os.path.join(MODELS, "x.npy"),
          np.random.default_rng(1).uniform(0, 1, (BATCH, 784)).astype(np.float32))
  np.save(os.path.join(MODELS, "labels.npy"), np.zeros(BATCH, np.int32))
  have_torch = os.path.exists(args.torch_python)
  print("| threads | TF 2.21 µs | dflow µs | PyTorch µs | dflow/TF | dflow/PyTorch |")
  print("| --- | --- | --- | --- | --- | --- |")
  for threads in (1, 2):
    tf_us, dflow_us, torch_us = [], [], []
    for _ in range(args.repeats):
      tf_us.append(tf_step_us(threads, args.runs))
      dflow_us.append(dflow_step_us(threads, args.runs))
      if have_torch:
        torch_us.append(torch_step_us(args.torch_python, threads, args.runs))
    t, d = statistics.median(tf_us), statistics.median(dflow_us)
    p = statistics.median(torch_us) if torch_us else float("nan")
    cell = lambda m, all_: "**%.0f** (%s)" % (m, " / ".join("%.0f" % v for v in all_))
    print("| %d | %s | %s | %s | %.2fx | %.2fx |" %
          (threads, cell(t, tf_us), cell(d, dflow_us), cell(p, torch_us) if torch_us else "-",
           d / t, d / p))


if __name__ == "__main__":
  main()
