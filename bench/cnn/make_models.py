#!/usr/bin/env python3
"""Writes the CNN speed benchmark's models into bench/cnn/models (git-ignored):

  NAME.pb     Keras application at 224x224x3, include_top with 1000 classes, weights=None,
              fixed random weights (seeded as tests/data/zoo/generate.py does, with its
              BatchNormalization statistics and logit rescaling), frozen with
              convert_variables_to_constants_v2; input placeholder "x" of shape
              [None, 224, 224, 3] (the batch is left open).
  NAME.onnx   tf2onnx conversion of NAME.pb (opset 17).
  NAME.json   {"input": "x:0", "output": "Identity:0", "pixels": bool, ...}: the tensor
              names, and whether the model takes 0..255 pixels (EfficientNet carries its
              own Rescaling/Normalization) rather than standard-normal inputs.

Idempotent: files that exist are skipped. Run with the TensorFlow venv:

    /work/tfvenv/bin/python bench/cnn/make_models.py [--models resnet50,vgg16]
"""
import argparse
import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS_DIR = os.path.join(HERE, "models")
SIZE = 224
OPSET = 17

# name -> (keras.applications constructor, takes 0..255 pixels)
MODELS = {
    "resnet50": ("ResNet50", False),
    "mobilenet_v2": ("MobileNetV2", False),
    "efficientnet_b0": ("EfficientNetB0", True),
    "inception_v3": ("InceptionV3", False),
    "densenet121": ("DenseNet121", False),
    "vgg16": ("VGG16", False),
}


def paths(name):
  base = os.path.join(MODELS_DIR, name)
  return base + ".pb", base + ".onnx", base + ".json"


def make_frozen(name, pb_path, meta_path):
  import numpy as np
  import tensorflow as tf
  sys.path.insert(0, os.path.join(REPO, "tests", "data", "zoo"))
  import generate as zoo  # shares the zoo's seeding, normalisation and freezing

  ctor, pixels = MODELS[name]
  zoo.keras.utils.set_random_seed(zoo.SEED)
  r = zoo.rng("bench_cnn_" + name)
  model = getattr(zoo.keras.applications, ctor)(
      weights=None, input_shape=(SIZE, SIZE, 3), include_top=True, classes=1000,
      classifier_activation=None)
  shape = (1, SIZE, SIZE, 3)
  x = (r.uniform(0, 255, shape) if pixels else r.standard_normal(shape)).astype(np.float32)
  zoo.randomize_normalization(model, x, r)
  zoo.rescale_logits(model, x)
  graph_def, inputs, outputs = zoo.freeze_v2(model, (None, SIZE, SIZE, 3))
  tf.io.write_graph(graph_def, MODELS_DIR, os.path.basename(pb_path), as_text=False)
  meta = {"model": ctor, "input": inputs[0], "output": outputs[0], "pixels": pixels,
          "size": SIZE, "classes": 1000, "parameters": int(model.count_params()),
          "generator": "TensorFlow %s, keras %s, convert_variables_to_constants_v2"
                       % (tf.__version__, zoo.keras.__version__)}
  with open(meta_path, "w") as f:
    json.dump(meta, f, indent=1)
    f.write("\n")
  print("  %-16s %s (%d parameters) -> %s" % (name, ctor, meta["parameters"], pb_path))


def make_onnx(name, pb_path, onnx_path, meta_path):
  import tensorflow as tf
  import tf2onnx
  from tf2onnx import optimizer as tf2onnx_optimizer
  with open(meta_path) as f:
    meta = json.load(f)
  graph_def = tf.compat.v1.GraphDef()
  with open(pb_path, "rb") as f:
    graph_def.ParseFromString(f.read())
  # tf2onnx's optimizer loop deep-copies the whole graph (weights included) before each
  # of its ~12 passes, per iteration; the dropped copies are reference cycles, so they pile
  # up until the cyclic GC runs (VGG16: over 24 GB, OOM-killed). Collecting before each
  # pass keeps about two copies alive; the conversion itself is unchanged.
  passes = tf2onnx_optimizer._optimizers
  saved = dict(passes)

  def collecting(factory):
    def make():
      gc.collect()
      return factory()
    return make

  for key in passes:
    passes[key] = collecting(saved[key])
  try:
    tf2onnx.convert.from_graph_def(graph_def, input_names=[meta["input"]],
                                   output_names=[meta["output"]], opset=OPSET,
                                   output_path=onnx_path)
  finally:
    passes.update(saved)
  print("  %-16s tf2onnx %s opset %d -> %s" % (name, tf2onnx.__version__, OPSET, onnx_path))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--models", default=",".join(MODELS),
                      help="comma-separated subset of " + ",".join(MODELS))
  args = parser.parse_args()
  names = [n for n in args.models.split(",") if n]
  for n in names:
    if n not in MODELS:
      parser.error("unknown model %s (expected one of %s)" % (n, ", ".join(MODELS)))
  os.makedirs(MODELS_DIR, exist_ok=True)
  for name in names:
    pb, onnx_path, meta = paths(name)
    if os.path.exists(pb) and os.path.exists(meta):
      print("  %-16s %s exists, skipped" % (name, pb))
    else:
      make_frozen(name, pb, meta)
    if os.path.exists(onnx_path):
      print("  %-16s %s exists, skipped" % (name, onnx_path))
    else:
      make_onnx(name, pb, onnx_path + ".tmp", meta)
      os.replace(onnx_path + ".tmp", onnx_path)


if __name__ == "__main__":
  main()
