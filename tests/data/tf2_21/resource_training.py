#!/usr/bin/env python3
"""Writes resource_training/: a TF 1 training graph on resource variables (use_resource=True,
as every TF 2-era TF 1 graph), its MetaGraphDef and a V2 checkpoint written by
tf.compat.v1.train.Saver after two GradientDescent steps, and TF 2.21's answers for what
follows (expected.json): the loss on restore, after each of three more steps, and the final
variables. Run by hand, as generate.py:

    cd tests/data/tf2_21 && /tmp/tfvenv/bin/python resource_training.py
"""
import json
import os
import shutil

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "resource_training")
v1 = tf.compat.v1


def main():
  shutil.rmtree(OUT, ignore_errors=True)
  os.makedirs(OUT)
  r = np.random.default_rng(2021)
  x = r.standard_normal((8, 4)).astype(np.float32)
  labels = np.array([0, 2, 1, 1, 0, 2, 2, 1], np.int32)
  with tf.Graph().as_default() as g:
    xs = v1.placeholder(tf.float32, [None, 4], name="x")
    ys = v1.placeholder(tf.int32, [None], name="labels")
    with v1.variable_scope("model"):
      w = v1.get_variable("w", initializer=(r.standard_normal((4, 3)) * 0.5).astype(np.float32),
                          use_resource=True)
      b = v1.get_variable("b", initializer=np.zeros(3, np.float32), use_resource=True)
    step = v1.train.get_or_create_global_step()
    logits = tf.matmul(xs, w) + b
    loss = tf.identity(v1.losses.sparse_softmax_cross_entropy(ys, logits), name="loss")
    train = v1.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step, name="train")
    saver = v1.train.Saver()
    feeds = {xs: x, ys: labels}
    with v1.Session(graph=g) as s:
      s.run(v1.global_variables_initializer())
      for _ in range(2):
        s.run(train, feeds)
      prefix = saver.save(s, os.path.join(OUT, "model.ckpt"), global_step=step)
      saver.export_meta_graph(os.path.join(OUT, "model.meta"))
      expected = {"loss_on_restore": float(s.run(loss, feeds)), "losses_after_steps": []}
      for _ in range(3):
        s.run(train, feeds)
        expected["losses_after_steps"].append(float(s.run(loss, feeds)))
      wv, bv, sv = s.run([w, b, step])
  expected.update({
      "generator": "TensorFlow %s" % tf.__version__,
      "checkpoint": os.path.basename(prefix),
      "feeds": {"x:0": x.tolist(), "labels:0": labels.tolist()},
      "loss": "loss:0", "train": "train",
      "variables": {"model/w": wv.tolist(), "model/b": bv.tolist(), "global_step": int(sv)},
      "saver": {"filename": saver.saver_def.filename_tensor_name,
                "save": saver.saver_def.save_tensor_name,
                "restore": saver.saver_def.restore_op_name},
  })
  with open(os.path.join(OUT, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")
  os.remove(os.path.join(OUT, "checkpoint"))  # the state file names an absolute path
  os.remove(prefix + ".meta")  # the same graph as model.meta
  print(sorted(os.listdir(OUT)))
  print(sorted({n.op for n in g.as_graph_def().node}))


if __name__ == "__main__":
  main()
