#!/usr/bin/env python3
"""Writes saved_models/: TF 2 SavedModels (resource variables, signatures that call
tf.functions) with TF 2.21's answers in saved_models/expected.json. Eager mode, so apart
from generate.py (which builds TF 1 graphs). Run by hand, as generate.py:

    cd tests/data/tf2_21 && /tmp/tfvenv/bin/python saved_models.py
"""
import json
import os
import shutil

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 2021


def dump(path, doc):
  with open(path, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")


def tf2_saved_models():
  """TF 2 SavedModels (resource variables, signatures calling tf.functions): a tf.Module
  with two outputs and a Keras model, with TF's answers in saved_models/expected.json."""
  root = os.path.join(HERE, "saved_models")
  shutil.rmtree(root, ignore_errors=True)

  class Affine(tf.Module):
    def __init__(self):
      self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
      self.b = tf.Variable([0.5, -0.5], name="b")
      self.steps = tf.Variable(7, name="steps")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
      return {"y": tf.matmul(x, self.w) + self.b, "n": tf.shape(x)[0] + self.steps}

  module = Affine()
  tf.saved_model.save(module, os.path.join(root, "module"),
                      signatures={"serving_default": module.__call__})
  x = np.array([[1, 2, 3], [-1, 0, 0.5]], np.float32)
  out = module(x)

  tf.keras.utils.set_random_seed(SEED)
  inp = tf.keras.Input((4,), name="inp")
  hidden = tf.keras.layers.Dense(3, activation="relu", name="d1")(inp)
  keras_model = tf.keras.Model(inp, tf.keras.layers.Dense(2, name="d2")(hidden))
  keras_model.export(os.path.join(root, "keras"))
  xk = np.array([[0.1, 0.2, 0.3, 0.4], [1, -1, 2, -2]], np.float32)
  dump(os.path.join(root, "expected.json"), {
      "generator": "TensorFlow %s, the Python objects before saving" % tf.__version__,
      "module": {"feeds": {"x": x.tolist()},
                 "fetches": {"y": out["y"].numpy().tolist(), "n": int(out["n"].numpy())}},
      "keras": {"feeds": {"inp": xk.tolist()},
                "fetches": {"output_0": keras_model(xk).numpy().tolist()}},
  })



if __name__ == "__main__":
  tf2_saved_models()
