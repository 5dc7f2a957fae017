#!/usr/bin/env python3
"""Keras LSTM speed, issue 12's target: batch 32, 50 steps, 128 units (64 features),
steady-state latency of TF 2.21 (a tf.function of the frozen graph, and
tf.compat.v1.Session on the same file) against `dflow bench` on the same file, 1 and 2
threads, both the functional While and the lowered form. Run by hand (needs TF):

    /tmp/tfvenv/bin/python bench/rnn/run.py [--runs 50]

Writes bench/rnn/models/ (git-ignored) and prints a markdown table for bench/RESULTS.md.
"""
import argparse
import json
import os
import subprocess
import time

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import convert_to_constants

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(HERE, "models")
DFLOW = os.path.join(ROOT, "bazel-bin", "tools", "dflow")
BATCH, STEPS, FEATURES, UNITS = 32, 50, 64, 128


def freeze(lowered):
  tf.keras.utils.set_random_seed(2021)
  inp = tf.keras.Input((STEPS, FEATURES), name="x")
  model = tf.keras.Model(inp, tf.keras.layers.LSTM(UNITS)(inp))
  fn = tf.function(lambda t: model(t, training=False))
  concrete = fn.get_concrete_function(tf.TensorSpec([BATCH, STEPS, FEATURES], tf.float32, name="x"))
  frozen = convert_to_constants.convert_variables_to_constants_v2(concrete, lower_control_flow=lowered)
  path = os.path.join(MODELS, "lstm_%s.pb" % ("lowered" if lowered else "functional"))
  tf.io.write_graph(frozen.graph.as_graph_def(), MODELS, os.path.basename(path), as_text=False)
  return path, frozen.outputs[0].name


def tf_session_ms(path, fetch, x, threads, runs):
  graph_def = tf.compat.v1.GraphDef()
  with open(path, "rb") as f:
    graph_def.ParseFromString(f.read())
  config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads,
                                    inter_op_parallelism_threads=threads)
  with tf.Graph().as_default() as g:
    tf.compat.v1.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=g, config=config) as s:
      feed = {g.get_tensor_by_name("x:0"): x}
      out = g.get_tensor_by_name(fetch)
      for _ in range(5):
        s.run(out, feed)
      samples = []
      for _ in range(runs):
        t = time.perf_counter()
        s.run(out, feed)
        samples.append((time.perf_counter() - t) * 1e3)
  return float(np.median(samples))


def dflow_ms(path, fetch, threads, runs):
  out = subprocess.run([DFLOW, "bench", "--graph=" + path, "--fetch=" + fetch, "--threads=%d" % threads,
                        "--runs=%d" % runs, "--warmup=5", "--output=json"],
                       capture_output=True, text=True, check=True)
  return json.loads(out.stdout)["latency_ms"]["median"]


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--runs", type=int, default=50)
  args = parser.parse_args()
  os.makedirs(MODELS, exist_ok=True)
  x = np.random.default_rng(1).standard_normal((BATCH, STEPS, FEATURES)).astype(np.float32)
  rows = []
  for lowered in (False, True):
    path, fetch = freeze(lowered)
    for threads in (1, 2):
      t = tf_session_ms(path, fetch, x, threads, args.runs)
      d = dflow_ms(path, fetch, threads, args.runs)
      rows.append((os.path.basename(path), threads, t, d))
  print("| model | threads | TF 2.21 Session ms | dflow ms | TF/dflow |")
  print("| --- | --- | --- | --- | --- |")
  for name, threads, t, d in rows:
    print("| %s | %d | %.2f | %.2f | %.2fx |" % (name, threads, t, d, t / d))


if __name__ == "__main__":
  main()
