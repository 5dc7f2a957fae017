#!/usr/bin/env python3
"""Writes the model zoo under tests/data/zoo: Keras applications, hand-made CNNs and
everyday-op graphs frozen with TensorFlow 2.21, with fixed random weights and inputs and
TF's answers. Run by hand (CI and `bazel test` never need TensorFlow):

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0 tf_keras
    /tmp/tfvenv/bin/python tests/data/zoo/generate.py           # the committed set
    /tmp/tfvenv/bin/python tests/data/zoo/generate.py --large   # + large/ (git-ignored)
    /tmp/tfvenv/bin/python tests/data/zoo/generate.py --only mobilenet,unet

Freezing is what users do: a tf.function of the model, convert_variables_to_constants_v2
(TF 2 route); two models also go the TF 1 route (tf_keras in a tf.compat.v1 graph and
session, tf.compat.v1.graph_util.convert_variables_to_constants).

What it writes, under tests/data/zoo (committed) or tests/data/zoo/large (regenerated):
  graphs/NAME.pb           the frozen GraphDef (binary, tf.io.write_graph)
  arrays/NAME.FEED.npy     each feed and each of TF's fetched values, as numpy.save writes
  goldens/NAME.json        {"file", "generator", "note", "feeds": {tensor: {"dtype", "shape",
                           "npy"}}, "fetches": {...}}: "file" and "npy" relative to the
                           golden's root (zoo/ or zoo/large/); TF's values come from
                           tf.compat.v1.Session on the file as written.
"""
import argparse
import json
import os
import shutil

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import convert_to_constants

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 2021
keras = tf.keras


class Root:
  def __init__(self, path):
    self.path = path
    for d in ("graphs", "arrays", "goldens"):
      os.makedirs(os.path.join(path, d), exist_ok=True)


def rng(name):
  return np.random.default_rng([SEED, sum(map(ord, name))])


def canonical(name):
  return name if ":" in name else name + ":0"


def safe(name):
  return name.replace(":", "_").replace("/", "_")


def run_file(path, feeds, fetches):
  """Runs the file as written, in a fresh graph, with tf.compat.v1.Session."""
  graph_def = tf.compat.v1.GraphDef()
  with open(path, "rb") as f:
    graph_def.ParseFromString(f.read())
  with tf.Graph().as_default() as g:
    tf.compat.v1.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=g) as s:
      feed_dict = {g.get_tensor_by_name(canonical(k)): v for k, v in feeds.items()}
      return s.run([g.get_tensor_by_name(canonical(f)) for f in fetches], feed_dict)


def write(root, name, graph_def, feeds, fetches, note):
  """Writes graph `name`, runs it with TF and writes its arrays and golden."""
  tf.io.write_graph(graph_def, os.path.join(root.path, "graphs"), name + ".pb", as_text=False)
  file = "graphs/%s.pb" % name
  values = run_file(os.path.join(root.path, file), feeds, fetches)

  def entry(tensor, value):
    value = np.array(value, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
    npy = "arrays/%s.%s.npy" % (name, safe(tensor))
    np.save(os.path.join(root.path, npy), value)
    return {"dtype": value.dtype.name, "shape": list(value.shape), "npy": npy}

  doc = {
      "file": file,
      "generator": "TensorFlow %s, tf.compat.v1.Session on the file as written" % tf.__version__,
      "note": note,
      "feeds": {k: entry(k, v) for k, v in feeds.items()},
      "fetches": {f: entry(f, v) for f, v in zip(fetches, values)},
  }
  for f, v in zip(fetches, values):
    v = np.asarray(v)
    if v.dtype.kind == "f":
      print("  %-28s %-12s max|y| %.3g std %.3g" % (name, f, np.abs(v).max(), v.std()))
  with open(os.path.join(root.path, "goldens", name + ".json"), "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")


# ---- Keras models, TF 2 route ----------------------------------------------------------

def randomize_normalization(model, x, r):
  """Random gamma/beta, and BatchNormalization moving statistics near the real batch
  statistics (so activations stay well-scaled through deep nets) but not equal to them;
  LayerScale (ConvNeXt) gammas at O(1) rather than 1e-6."""
  bns = []
  for layer in model._flatten_layers(include_self=False) if hasattr(model, "_flatten_layers") \
      else model.layers:
    if isinstance(layer, keras.layers.BatchNormalization):
      bns.append(layer)
      n = layer.moving_mean.shape[0]
      if layer.gamma is not None:
        layer.gamma.assign(r.uniform(0.6, 1.4, n).astype(np.float32))
      if layer.beta is not None:
        layer.beta.assign((r.standard_normal(n) * 0.2).astype(np.float32))
    elif isinstance(layer, keras.layers.LayerNormalization):
      n = layer.gamma.shape[0]
      layer.gamma.assign(r.uniform(0.6, 1.4, n).astype(np.float32))
      layer.beta.assign((r.standard_normal(n) * 0.2).astype(np.float32))
    elif type(layer).__name__ == "LayerScale":
      layer.gamma.assign(r.uniform(0.3, 1.0, layer.gamma.shape).astype(np.float32))
  if bns:
    for layer in bns:
      layer.momentum = 0.0
    # moving statistics := the statistics of a calibration batch (16 inputs like x, so that
    # 1x1 feature maps late in a net still have a variance)
    calibration = r.permutation(np.concatenate([x] * (16 // x.shape[0] + 1)).reshape(-1))
    calibration = calibration.reshape((-1,) + x.shape[1:])[:16]
    model(calibration, training=True)
    for layer in bns:
      layer.momentum = 0.99
      n = layer.moving_mean.shape[0]
      var = layer.moving_variance.numpy()
      layer.moving_mean.assign(layer.moving_mean.numpy() +
                               (r.standard_normal(n) * 0.1 * np.sqrt(var)).astype(np.float32))
      var = np.maximum(var, 0.05 * np.median(var) + 1e-3)
      layer.moving_variance.assign((var * r.uniform(0.7, 1.4, n)).astype(np.float32))


def rescale_logits(model, x):
  """Scales the last Dense (or 1x1 Conv2D classifier) so that the logits are O(1)."""
  y = model(x, training=False)
  y = y[0] if isinstance(y, (list, tuple)) else y
  std = float(np.std(np.asarray(y)))
  print("  %-28s logits std before rescaling %.3g" % (model.name, std))
  dense = [l for l in model.layers if isinstance(l, (keras.layers.Dense, keras.layers.Conv2D))]
  if dense and std > 0:
    for w in dense[-1].weights:
      w.assign(w.numpy() / std)


def freeze_v2(model, input_shape):
  fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(
      tf.TensorSpec(input_shape, tf.float32, name="x"))
  frozen = convert_to_constants.convert_variables_to_constants_v2(fn)
  return (frozen.graph.as_graph_def(), [t.name for t in frozen.inputs],
          [t.name for t in frozen.outputs])


def keras_model(root, name, build, input_shape, note, pixels=False, scale_logits=True):
  """`build()` a Keras model with fixed random weights, freeze it and write its golden."""
  keras.utils.set_random_seed(SEED)
  r = rng(name)
  model = build()
  if pixels:  # models with their own preprocessing (Rescaling/Normalization) take 0..255
    x = r.uniform(0, 255, input_shape).astype(np.float32)
  else:
    x = r.standard_normal(input_shape).astype(np.float32)
  randomize_normalization(model, x, r)
  if scale_logits:
    rescale_logits(model, x)
  graph_def, inputs, outputs = freeze_v2(model, input_shape)
  params = model.count_params()
  write(root, name, graph_def, {inputs[0]: x}, outputs,
        "%s (%d parameters), frozen with convert_variables_to_constants_v2" % (note, params))


def applications(root, large):
  A = keras.applications
  small = [
      ("mobilenet", lambda: A.MobileNet((32, 32, 3), alpha=0.25, weights=None, classes=10,
                                        classifier_activation=None), (2, 32, 32, 3),
       "MobileNet alpha 0.25, 32x32", False),
      ("mobilenet_v2", lambda: A.MobileNetV2((32, 32, 3), alpha=0.35, weights=None, classes=10,
                                             classifier_activation=None), (2, 32, 32, 3),
       "MobileNetV2 alpha 0.35, 32x32", False),
      ("mobilenet_v3_small", lambda: A.MobileNetV3Small(
          (32, 32, 3), alpha=0.75, weights=None, classes=10, classifier_activation=None),
       (2, 32, 32, 3), "MobileNetV3Small alpha 0.75, 32x32, with its Rescaling", True),
      ("mobilenet_v3_large", lambda: A.MobileNetV3Large(
          (32, 32, 3), alpha=0.75, weights=None, classes=10, classifier_activation=None),
       (1, 32, 32, 3), "MobileNetV3Large alpha 0.75, 32x32, with its Rescaling", True),
  ]
  big = [
      ("resnet50", lambda: A.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10,
                                      classifier_activation=None), (1, 32, 32, 3),
       "ResNet50, 32x32", False),
      ("resnet50_v2", lambda: A.ResNet50V2(weights=None, input_shape=(32, 32, 3), classes=10,
                                           classifier_activation=None), (1, 32, 32, 3),
       "ResNet50V2, 32x32", False),
      ("densenet121", lambda: A.DenseNet121(weights=None, input_shape=(32, 32, 3), classes=10,
                                            classifier_activation=None), (1, 32, 32, 3),
       "DenseNet121, 32x32", False),
      ("efficientnet_b0", lambda: A.EfficientNetB0(weights=None, input_shape=(32, 32, 3),
                                                   classes=10, classifier_activation=None),
       (1, 32, 32, 3), "EfficientNetB0, 32x32, with its Rescaling/Normalization", True),
      ("efficientnet_v2_b0", lambda: A.EfficientNetV2B0(
          weights=None, input_shape=(32, 32, 3), classes=10, classifier_activation=None),
       (1, 32, 32, 3), "EfficientNetV2B0, 32x32, with its Rescaling", True),
      ("inception_v3", lambda: A.InceptionV3(weights=None, input_shape=(75, 75, 3), classes=10,
                                             classifier_activation=None), (1, 75, 75, 3),
       "InceptionV3, 75x75", False),
      ("xception", lambda: A.Xception(weights=None, input_shape=(71, 71, 3), classes=10,
                                      classifier_activation=None), (1, 71, 71, 3),
       "Xception, 71x71", False),
      ("nasnet_mobile", lambda: A.NASNetMobile(weights=None, input_shape=(32, 32, 3), classes=10),
       (1, 32, 32, 3), "NASNetMobile, 32x32 (softmax output)", False),
      ("convnext_tiny", lambda: A.ConvNeXtTiny(weights=None, input_shape=(32, 32, 3), classes=10,
                                               classifier_activation=None), (1, 32, 32, 3),
       "ConvNeXtTiny, 32x32, with its Normalization, LayerScale gammas O(1)", True),
      ("vgg16", lambda: A.VGG16(weights=None, input_shape=(32, 32, 3), classes=10,
                                classifier_activation=None), (1, 32, 32, 3), "VGG16, 32x32", False),
  ]
  for name, build, shape, note, pixels in (big if large else small):
    if selected(name):
      keras_model(root, name, build, shape, note, pixels)


# ---- hand-made CNNs -------------------------------------------------------------------

def hand_made(root):
  L = keras.layers

  def separable():
    return keras.Sequential([
        keras.Input((16, 16, 3)),
        L.SeparableConv2D(8, 3, padding="same", depth_multiplier=2, activation="relu"),
        L.SeparableConv2D(8, 3, strides=2, padding="valid"),
        L.BatchNormalization(),
        L.SeparableConv2D(12, (3, 5), dilation_rate=2, padding="same", activation="tanh"),
        L.GlobalMaxPooling2D(),
        L.Dense(5),
    ])

  def transpose():
    return keras.Sequential([
        keras.Input((7, 7, 4)),
        L.Conv2DTranspose(6, 3, strides=2, padding="same", activation="relu"),
        L.Conv2DTranspose(5, 4, strides=2, padding="valid"),
        L.BatchNormalization(),
        L.Conv2DTranspose(3, (3, 2), strides=(1, 2), padding="same", use_bias=False),
        L.Conv2DTranspose(2, 3, padding="valid"),
    ])

  def upsampling():
    x = keras.Input((6, 5, 3))
    a = L.UpSampling2D(2, interpolation="nearest")(x)
    b = L.UpSampling2D((2, 3), interpolation="bilinear")(x)
    a = L.Conv2D(4, 3, padding="same")(a)
    b = L.Conv2D(4, 3, padding="same")(b)
    c = L.UpSampling2D(3, interpolation="bilinear")(L.Conv2D(2, 1)(x))
    return keras.Model(x, [a, b, c])

  def unet():
    def block(t, n):
      t = L.Conv2D(n, 3, padding="same", use_bias=False)(t)
      t = L.BatchNormalization()(t)
      t = L.ReLU()(t)
      t = L.Conv2D(n, 3, padding="same")(t)
      return L.ReLU()(t)
    x = keras.Input((32, 32, 3))
    d1 = block(x, 8)
    d2 = block(L.MaxPooling2D()(d1), 16)
    d3 = block(L.MaxPooling2D()(d2), 32)
    b = block(L.MaxPooling2D()(d3), 64)
    u3 = block(L.Concatenate()([L.Conv2DTranspose(32, 2, strides=2)(b), d3]), 32)
    u2 = block(L.Concatenate()([L.UpSampling2D(2, interpolation="bilinear")(u3), d2]), 16)
    u1 = block(L.Concatenate()([L.Conv2DTranspose(8, 3, strides=2, padding="same")(u2), d1]), 8)
    return keras.Model(x, L.Conv2D(3, 1)(u1))

  for name, build, shape, note in [
      ("separable_conv", separable, (2, 16, 16, 3), "SeparableConv2D (strides, dilation, "
       "depth multiplier), BatchNormalization, GlobalMaxPooling2D"),
      ("conv_transpose", transpose, (2, 7, 7, 4), "Conv2DTranspose (same/valid, strides), "
       "BatchNormalization"),
      ("upsampling", upsampling, (2, 6, 5, 3), "UpSampling2D nearest and bilinear"),
      ("unet", unet, (1, 32, 32, 3), "a small U-Net: Conv2D, BN, MaxPooling, "
       "Conv2DTranspose/bilinear UpSampling2D, Concatenate"),
  ]:
    if selected(name):
      keras_model(root, name, build, shape, note, scale_logits=False)

  if selected("activations"):
    names = ["celu", "elu", "exponential", "gelu", "glu", "hard_shrink", "hard_sigmoid",
             "hard_silu", "hard_tanh", "leaky_relu", "linear", "log_sigmoid", "log_softmax",
             "mish", "relu", "relu6", "selu", "sigmoid", "silu", "soft_shrink", "softmax",
             "softplus", "softsign", "sparse_plus", "sparsemax", "squareplus", "tanh",
             "tanh_shrink"]
    names = [n for n in names if hasattr(keras.activations, n)]

    def activations():
      x = keras.Input((3, 3, 4))
      h = L.Conv2D(6, 1)(x)
      outs = [L.Activation(n, name="act_" + n)(h) for n in names]
      outs.append(L.Activation(lambda t: keras.activations.gelu(t, approximate=True),
                               name="act_gelu_tanh")(h))
      if hasattr(keras.activations, "threshold"):
        outs.append(L.Activation(lambda t: keras.activations.threshold(t, 0.3, -1.0),
                                 name="act_threshold")(h))
      outs.append(L.LeakyReLU(0.2)(h))
      outs.append(L.ELU(0.5)(h))
      outs.append(L.ReLU(max_value=2.0, negative_slope=0.1, threshold=0.5)(h))
      outs.append(L.PReLU()(h))
      outs.append(L.Softmax(axis=1)(h))
      return keras.Model(x, outs)
    keras_model(root, "activations", activations, (2, 3, 3, 4),
                "every Keras activation (%s, gelu approximate, LeakyReLU, ELU, ReLU "
                "max/slope/threshold, PReLU, Softmax axis 1) on a 1x1 conv"
                % ", ".join(names), scale_logits=False)


# ---- TF 1 route (tf_keras, tf.compat.v1 session) -------------------------------------

def tf1_route(root):
  import tf_keras
  for name, build, shape, note in [
      ("tf1_mobilenet_v2", lambda: tf_keras.applications.MobileNetV2(
          (32, 32, 3), alpha=0.35, weights=None, classes=10, classifier_activation=None),
       (2, 32, 32, 3), "tf_keras MobileNetV2 alpha 0.35, 32x32"),
      ("tf1_cnn", lambda: tf_keras.Sequential([
          tf_keras.Input((16, 16, 3)),
          tf_keras.layers.Conv2D(8, 3, padding="same"),
          tf_keras.layers.BatchNormalization(),
          tf_keras.layers.LeakyReLU(0.1),
          tf_keras.layers.SeparableConv2D(8, 3, strides=2, padding="same", activation="elu"),
          tf_keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
          tf_keras.layers.UpSampling2D(2, interpolation="bilinear"),
          tf_keras.layers.AveragePooling2D(2),
          tf_keras.layers.Flatten(),
          tf_keras.layers.Dropout(0.5),
          tf_keras.layers.Dense(10, activation="softmax"),
      ]), (2, 16, 16, 3), "tf_keras CNN: Conv2D, BN, LeakyReLU, SeparableConv2D, "
       "Conv2DTranspose, bilinear UpSampling2D, AveragePooling2D, Flatten, Dropout, softmax"),
  ]:
    if not selected(name):
      continue
    r = rng(name)
    x = r.standard_normal(shape).astype(np.float32)
    with tf.Graph().as_default() as g:
      tf.compat.v1.set_random_seed(SEED)
      sess = tf.compat.v1.Session(graph=g)
      tf_keras.src.backend.set_session(sess)
      tf_keras.backend.set_learning_phase(0)
      model = build()
      sess.run(tf.compat.v1.global_variables_initializer())
      for layer in model.layers:
        if isinstance(layer, tf_keras.layers.BatchNormalization):
          n = layer.moving_mean.shape[0]
          for v, val in [(layer.gamma, r.uniform(0.6, 1.4, n)), (layer.beta, r.standard_normal(n) * 0.2),
                         (layer.moving_mean, r.standard_normal(n) * 0.1),
                         (layer.moving_variance, r.uniform(0.3, 1.5, n))]:
            v.load(val.astype(np.float32), sess)
      graph_def = tf.compat.v1.graph_util.convert_variables_to_constants(
          sess, g.as_graph_def(), [model.outputs[0].op.name])
      inputs, outputs = [model.inputs[0].name], [model.outputs[0].name]
      sess.close()
    write(root, name, graph_def, {inputs[0]: x}, outputs,
          "%s, frozen the TF 1 way (tf.compat.v1 session, "
          "tf.compat.v1.graph_util.convert_variables_to_constants)" % note)


# ---- everyday-op graphs (tf.compat.v1 graphs) -----------------------------------------

def op_graphs(root):
  r = rng("ops")
  v1 = tf.compat.v1

  def graph(name, build, feeds, note):
    if not selected(name):
      return
    with tf.Graph().as_default() as g:
      placeholders = {k: v1.placeholder(tf.as_dtype(v.dtype), v.shape, name=k)
                      for k, v in feeds.items()}
      outs = build(**placeholders)
      fetches = [tf.identity(t, name="out_%s" % k).name for k, t in outs.items()]
    write(root, name, g.as_graph_def(), {k + ":0": v for k, v in feeds.items()}, fetches, note)

  f = lambda *s: r.standard_normal(s).astype(np.float32)
  i32 = lambda lo, hi, *s: r.integers(lo, hi, s).astype(np.int32)

  graph("ops_sequence", lambda x, n: {
      "range": tf.range(1, n, 2),
      "range_f": tf.range(0.5, 3.0, 0.25),
      "reverse": tf.reverse(x, [0, 2]),
      "cumsum": tf.cumsum(x, axis=1),
      "cumsum_ex_rev": tf.cumsum(x, axis=2, exclusive=True, reverse=True),
      "cumprod": tf.math.cumprod(x * 0.5 + 1, axis=0),
      "cumprod_ex": tf.math.cumprod(x, axis=2, exclusive=True),
      "roll": tf.roll(x, shift=[1, -2], axis=[1, 2]),
      "topk_values": tf.math.top_k(x, 3).values,
      "topk_indices": tf.math.top_k(x, 3).indices,
      "broadcast": tf.broadcast_to(x[:, :1, :], [2, 4, 5]),
      "band": tf.linalg.band_part(x, 1, 2),
      "band_lower": tf.linalg.band_part(x, -1, 0),
  }, {"x": f(2, 4, 5), "n": np.int32(11)}, "Range, ReverseV2, Cumsum, Cumprod, Roll, TopKV2, "
        "BroadcastTo, MatrixBandPart")

  xv = f(3, 4)
  xv[0, 1], xv[1, 2], xv[2, 3] = np.nan, np.inf, -np.inf
  graph("ops_elementwise", lambda x, y, a, b: {
      "divnonan": tf.math.divide_no_nan(x, y),
      "isfinite": tf.math.is_finite(x),
      "round": tf.round(x * 2.5),
      "truncatediv": tf.truncatediv(a, b),
      "truncatemod": tf.truncatemod(a, b),
      "floordiv": tf.math.floordiv(a, b),
      "bitwise_and": tf.bitwise.bitwise_and(a, b),
      "bitwise_or": tf.bitwise.bitwise_or(a, b),
      "bitwise_xor": tf.bitwise.bitwise_xor(a, b),
      "where_select": tf.where(tf.math.is_finite(x), x, tf.zeros_like(x)),
  }, {"x": xv, "y": np.array([[0, 1, 2, 0]] * 3, np.float32) * f(3, 4),
      "a": i32(-50, 50, 3, 4), "b": np.array([[3, -3, 7, -7]] * 3, np.int32)},
        "DivNoNan, IsFinite, Round (half to even), int32 TruncateDiv/TruncateMod/FloorDiv, "
        "BitwiseAnd/Or/Xor, SelectV2")

  graph("ops_index", lambda x, idx, seg, v: {
      "where": tf.where(x > 0.3),
      "gathernd": tf.gather_nd(x, idx),
      "scatternd": tf.scatter_nd(idx, tf.gather_nd(x, idx), [4, 5]),
      "unique_y": tf.unique(seg).y,
      "unique_idx": tf.unique(seg).idx,
      "segment_sum": tf.math.segment_sum(v, tf.sort(seg)),
      "unsorted_segment_sum": tf.math.unsorted_segment_sum(v, seg, 5),
      "bincount": tf.math.bincount(seg, minlength=6),
      "bincount_w": tf.math.bincount(seg, weights=v[:, 0], minlength=6),
      "dense_bincount_2d": tf.raw_ops.DenseBincount(
          input=tf.reshape(seg, [2, 3]), size=5, weights=tf.zeros([0], tf.float32),
          binary_output=True),
  }, {"x": f(4, 5), "idx": np.array([[0, 1], [3, 4], [2, 2]], np.int32),
      "seg": np.array([3, 1, 3, 0, 4, 1], np.int32), "v": f(6, 2)},
        "Where, GatherNd, ScatterNd, Unique, SegmentSum, UnsortedSegmentSum, DenseBincount")

  graph("ops_resize", lambda x: {
      "bicubic": tf.compat.v1.image.resize_bicubic(x, [7, 9]),
      "bicubic_ac": tf.compat.v1.image.resize_bicubic(x, [9, 5], align_corners=True),
      "bicubic_v2": tf.image.resize(x, [8, 10], method="bicubic"),
      "bilinear_hp": tf.image.resize(x, [7, 3], method="bilinear"),
      "nearest": tf.image.resize(x, [9, 11], method="nearest"),
  }, {"x": f(2, 5, 6, 3)}, "ResizeBicubic (align_corners, half_pixel_centers), "
        "ResizeBilinear, ResizeNearestNeighbor")


# ---- TF 2 functional control flow (issue 12) ----------------------------------------------

def control_flow(root):
  """tf.function graphs as TF 2 writes them: If/StatelessIf, Case, While/StatelessWhile with
  their branches and bodies in the function library (not lowered: as in SavedModels and
  concrete functions' graphs), nested, with constants inside bodies."""
  r = rng("control_flow")

  def graph(name, fn, feeds, note):
    if not selected(name):
      return
    specs = [tf.TensorSpec(v.shape, tf.as_dtype(v.dtype), name=k) for k, v in feeds.items()]
    concrete = tf.function(fn).get_concrete_function(*specs)
    graph_def = concrete.graph.as_graph_def()
    outputs = [t.name for t in concrete.outputs]
    write(root, name, graph_def, {k + ":0": v for k, v in feeds.items()}, outputs, note)

  def cond_fn(x, p, k):
    a = tf.cond(p, lambda: tf.nn.relu(x) * 2.0, lambda: tf.abs(x) - 1.0)
    # Both branches of the same predicate's negation, branches with constants only, and
    # two outputs.
    b, c = tf.cond(tf.logical_not(p), lambda: (x + 10.0, tf.constant(1)),
                   lambda: (x * x, tf.constant(2)))
    # A predicate computed from an int input, and a cond inside a cond.
    d = tf.cond(k > 2, lambda: tf.cond(k > 4, lambda: x * 3.0, lambda: x * 4.0),
                lambda: tf.reduce_sum(x, axis=0, keepdims=True) + x)
    return a, b, c, d

  graph("cf_cond", cond_fn, {"x": r.standard_normal((3, 4)).astype(np.float32),
                              "p": np.bool_(True), "k": np.int32(3)},
        "tf.cond as If/StatelessIf: both branches taken, constant-only branches, two outputs, "
        "nested conds")

  def case_fn(x, i, j):
    branches = [lambda: x + 1.0, lambda: x * 2.0, lambda: tf.nn.softmax(x)]
    return (tf.switch_case(i, branches), tf.switch_case(j, branches),
            tf.switch_case(i + 1, [lambda: tf.constant(7), lambda: tf.constant(8),
                                   lambda: tf.constant(9)]))

  graph("cf_case", case_fn, {"x": r.standard_normal((2, 3)).astype(np.float32),
                              "i": np.int32(1), "j": np.int32(7)},
        "tf.switch_case as Case: a middle branch, an out-of-range index (runs the last "
        "branch), constant branches")

  def while_fn(x, n):
    # A counter, a float accumulator and a tensor updated each step; constants in the body.
    i, acc, y = tf.while_loop(
        lambda i, acc, y: i < n,
        lambda i, acc, y: (i + 1, acc + tf.cast(i, tf.float32) * 0.5, y * 0.9 + tf.sin(y)),
        (tf.constant(0), tf.constant(0.0), x))
    # A loop that runs zero times and one whose condition reads a loop-invariant tensor.
    z = tf.while_loop(lambda v: v > 100.0, lambda v: v - 1.0, [tf.reduce_sum(x)])
    limit = tf.reduce_max(x) + 5.0
    w = tf.while_loop(lambda v: tf.reduce_max(v) < limit, lambda v: v + 0.75, [x])
    return i, acc, y, z, w

  graph("cf_while", while_fn, {"x": r.standard_normal((2, 3)).astype(np.float32),
                                "n": np.int32(6)},
        "tf.while_loop as While/StatelessWhile: counters, accumulators, zero trips, a "
        "loop-invariant captured tensor")

  def nested_fn(x, n):
    # A while inside a while (a multiplication table's sum), a cond inside a while body
    # (Collatz steps), and a while inside a cond branch.
    def outer_body(i, total):
      _, inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + i * j),
                               (tf.constant(0), tf.constant(0)))
      return i + 1, total + inner
    _, table = tf.while_loop(lambda i, t: i < n, outer_body, (tf.constant(0), tf.constant(0)))

    def collatz_body(v, steps):
      v = tf.cond(tf.equal(v % 2, 0), lambda: v // 2, lambda: 3 * v + 1)
      return v, steps + 1
    _, steps = tf.while_loop(lambda v, s: v > 1, collatz_body, (n * 3 + 1, tf.constant(0)))
    halved = tf.cond(n > 3, lambda: tf.while_loop(lambda v: tf.reduce_sum(tf.abs(v)) > 0.5,
                                                  lambda v: v * 0.5, [x])[0],
                     lambda: x)
    return table, steps, halved

  graph("cf_nested", nested_fn, {"x": r.standard_normal((2, 2)).astype(np.float32),
                                  "n": np.int32(5)},
        "a while in a while, a cond in a while body, a while in a cond branch")

  def tensor_array_fn(x, n):
    # tf.TensorArray in a tf.function: TensorList ops (split, concat, unstack, scatter,
    # stack, gather, size), written in a While body and read outside it.
    split = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False)
    split = split.split(tf.reshape(x, [-1]), [3, 5, 4])
    rows = tf.TensorArray(tf.float32, size=4).unstack(x)
    scattered = tf.TensorArray(tf.float32, size=6, element_shape=[3]).scatter([5, 1], x[:2])

    def body(i, t):
      return i + 1, t.write(i, rows.read(i % 4) * tf.cast(i, tf.float32))
    _, written = tf.while_loop(lambda i, t: i < n, body,
                               (tf.constant(0), tf.TensorArray(tf.float32, size=n)))
    return (split.concat(), scattered.stack(), written.stack(), written.gather([1, 0]),
            split.read(1), split.size())

  graph("cf_tensor_array", tensor_array_fn, {"x": r.standard_normal((4, 3)).astype(np.float32),
                                             "n": np.int32(5)},
        "tf.TensorArray in a tf.function: TensorListSplit, TensorListConcatV2, "
        "TensorListFromTensor, TensorListScatterIntoExistingList, writes in a While, gather")


# ---- Keras recurrent layers (issue 12): While + TensorList, functional and lowered ------

def sequence_models(root):
  """Keras RNN layers frozen as users do, twice: with the While loop kept functional
  (lower_control_flow=False, as in a SavedModel's functions) and lowered to v1 frames
  (convert_variables_to_constants_v2's default). Small: batch 2, 6 steps, 5 features."""
  r = rng("sequence")
  x = r.standard_normal((2, 6, 5)).astype(np.float32)

  def rnn(name, layer_fn, note):
    for lowered in (False, True):
      full = name + ("_lowered" if lowered else "")
      if not selected(full) and not selected(name):
        continue
      keras.utils.set_random_seed(SEED)
      inp = keras.Input((6, 5), name="x")
      model = keras.Model(inp, layer_fn()(inp))
      fn = tf.function(lambda t: model(t, training=False))
      concrete = fn.get_concrete_function(tf.TensorSpec([2, 6, 5], tf.float32, name="x"))
      frozen = convert_to_constants.convert_variables_to_constants_v2(
          concrete, lower_control_flow=lowered)
      graph_def = frozen.graph.as_graph_def()
      outputs = [t.name for t in frozen.outputs]
      write(root, full, graph_def, {"x:0": x}, outputs,
            note + (" (lowered to v1 frames)" if lowered else " (functional While)"))

  rnn("rnn_lstm", lambda: keras.layers.LSTM(8, return_sequences=True), "Keras LSTM(8)")
  rnn("rnn_gru", lambda: keras.layers.GRU(7), "Keras GRU(7), last output")
  rnn("rnn_simple", lambda: keras.layers.SimpleRNN(6, return_sequences=True),
      "Keras SimpleRNN(6)")
  rnn("rnn_bidirectional", lambda: keras.layers.Bidirectional(keras.layers.LSTM(4)),
      "Keras Bidirectional(LSTM(4))")

  # A masked LSTM: x's last steps are zeros, Masking skips them (SelectV2 in the body).
  if selected("rnn_masked_lstm"):
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((6, 5), name="x")
    model = keras.Model(inp, keras.layers.LSTM(8)(keras.layers.Masking(0.0)(inp)))
    fn = tf.function(lambda t: model(t, training=False))
    concrete = fn.get_concrete_function(tf.TensorSpec([2, 6, 5], tf.float32, name="x"))
    frozen = convert_to_constants.convert_variables_to_constants_v2(concrete,
                                                                    lower_control_flow=False)
    masked = x.copy()
    masked[0, 4:] = 0
    masked[1, 2:] = 0
    write(root, "rnn_masked_lstm", frozen.graph.as_graph_def(), {"x:0": masked},
          [t.name for t in frozen.outputs], "Keras Masking + LSTM(8), sequences of 4 and 2 steps")

  # A Transformer encoder block: MultiHeadAttention, LayerNormalization, exact GELU.
  if selected("transformer_block"):
    keras.utils.set_random_seed(SEED)
    inp = keras.Input((6, 16), name="x")
    attn = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)(inp, inp)
    h = keras.layers.LayerNormalization()(inp + attn)
    ff = keras.layers.Dense(32, activation=lambda t: tf.nn.gelu(t, approximate=False))(h)
    out = keras.layers.LayerNormalization()(h + keras.layers.Dense(16)(ff))
    model = keras.Model(inp, out)
    fn = tf.function(lambda t: model(t, training=False))
    concrete = fn.get_concrete_function(tf.TensorSpec([2, 6, 16], tf.float32, name="x"))
    frozen = convert_to_constants.convert_variables_to_constants_v2(concrete)
    write(root, "transformer_block", frozen.graph.as_graph_def(),
          {"x:0": r.standard_normal((2, 6, 16)).astype(np.float32)},
          [t.name for t in frozen.outputs],
          "Keras encoder block: MultiHeadAttention(2 heads), LayerNormalization, exact GELU")


ONLY = None


# ---- TF 1 control flow: v1 frames, TensorArrayV3 and stacks (issue 12) ---------------------

def tf1_control_flow(root):
  """TF 1 loops as tf.compat.v1 graphs write them with control flow v2 off (what every TF 1
  file holds): dynamic_rnn with an LSTM cell (TensorArrayV3 in and out of a v1 while loop),
  tf.scan, tf.map_fn, a while loop writing a TensorArray, and the gradient of a dynamic_rnn
  (StackV2/StackPushV2/StackPopV2 carrying forward values to the backward loop,
  TensorArrayGradV3). Variables are frozen with convert_variables_to_constants."""
  from tf_keras.src.layers.rnn import legacy_cells
  v1 = tf.compat.v1
  r = rng("tf1_control_flow")
  f = lambda *s: r.standard_normal(s).astype(np.float32)

  def graph(name, build, feeds, note):
    if not selected(name):
      return
    v1.disable_control_flow_v2()
    try:
      with tf.Graph().as_default() as g:
        v1.set_random_seed(SEED)
        placeholders = {k: v1.placeholder(tf.as_dtype(v.dtype), v.shape, name=k)
                        for k, v in feeds.items()}
        outs = build(**placeholders)
        fetches = [tf.identity(t, name="out_%s" % k) for k, t in outs.items()]
        with v1.Session(graph=g) as sess:
          sess.run(v1.global_variables_initializer())
          graph_def = v1.graph_util.convert_variables_to_constants(
              sess, g.as_graph_def(), [t.op.name for t in fetches])
    finally:
      v1.enable_control_flow_v2()
    write(root, name, graph_def, {k + ":0": v for k, v in feeds.items()},
          [t.name for t in fetches], note)

  def dynamic_rnn(x, lengths):
    cell = legacy_cells.LSTMCell(8, initializer=v1.glorot_uniform_initializer(seed=SEED))
    outputs, state = v1.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    return {"outputs": outputs, "c": state.c, "h": state.h}

  graph("tf1_dynamic_rnn", dynamic_rnn, {"x": f(3, 6, 5), "lengths": np.array([6, 4, 1], np.int32)},
        "TF 1 dynamic_rnn, LSTMCell(8), sequence_length: TensorArrayV3 scatter/read/write/"
        "gather in a v1 while loop")

  graph("tf1_scan_map", lambda x: {
      "scan": tf.scan(lambda a, e: a * 0.5 + tf.tanh(e), x),
      "scan_init_reverse": tf.scan(lambda a, e: a + e * e, x, initializer=tf.ones([4]),
                                   reverse=True),
      "scan_tuple": tf.scan(lambda a, e: (a[0] + e, a[1] * 0.9 + tf.reduce_sum(e)), x,
                            initializer=(tf.zeros([4]), tf.constant(0.0)))[1],
      "map": tf.map_fn(lambda e: tf.reduce_sum(e * e) * e, x),
      "map_tuple": tf.map_fn(lambda e: (e[0] + 1.0, tf.cast(e[1] > 0, tf.int32)), (x, x),
                             fn_output_signature=(tf.float32, tf.int32))[1],
      "foldl": tf.foldl(lambda a, e: a * 0.5 + e, x),
  }, {"x": f(5, 4)}, "TF 1 tf.scan (forward, reverse, tuple state), tf.map_fn (tuple output), "
        "tf.foldl: TensorArrayV3 unstack/stack around v1 while loops")

  def while_array(x, n):
    def body(i, ta, acc):
      row = x[i % tf.shape(x)[0]] * tf.cast(i, tf.float32)
      ta = ta.write(i, row)
      return i + 1, ta, acc + ta.read(i)
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    _, ta, acc = v1.while_loop(lambda i, ta, acc: i < n, body,
                               (tf.constant(0), ta, tf.zeros([3])))
    chunks = tf.TensorArray(tf.float32, size=2, infer_shape=False,
                            clear_after_read=False).split(tf.reshape(x, [-1]), [5, 7])
    return {"stack": ta.stack(), "size": ta.size(), "acc": acc, "read": ta.read(1),
            "concat": ta.concat(), "gather": ta.gather([2, 0]),
            "split_read": chunks.read(1), "split_concat": chunks.concat()}

  graph("tf1_while_tensor_array", while_array, {"x": f(4, 3), "n": np.int32(5)},
        "a TF 1 while_loop writing a dynamic TensorArray; stack, size, read, concat, gather, "
        "split")

  def rnn_grad(x):
    cell = legacy_cells.LSTMCell(6, initializer=v1.glorot_uniform_initializer(seed=SEED))
    outputs, _ = v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    loss = tf.reduce_sum(outputs * outputs)
    grads = tf.gradients(loss, [x] + cell.trainable_variables)
    return {"loss": loss, "dx": grads[0], "dkernel": grads[1], "dbias": grads[2]}

  graph("tf1_rnn_grad", rnn_grad, {"x": f(2, 5, 4)},
        "the gradient of a TF 1 dynamic_rnn LSTM: StackV2/StackPushV2/StackPopV2, "
        "TensorArrayGradV3, SigmoidGrad, TanhGrad, BiasAddGrad in v1 loops")


def selected(name):
  return ONLY is None or name in ONLY


def main():
  global ONLY
  parser = argparse.ArgumentParser()
  parser.add_argument("--large", action="store_true", help="also write large/ (git-ignored)")
  parser.add_argument("--large-only", action="store_true", help="write only large/")
  parser.add_argument("--only", help="comma-separated model names")
  args = parser.parse_args()
  if args.only:
    ONLY = set(args.only.split(","))
  if not args.large_only:
    root = Root(HERE)
    applications(root, large=False)
    hand_made(root)
    op_graphs(root)
    control_flow(root)
    sequence_models(root)
    tf1_route(root)
    tf1_control_flow(root)
  if args.large or args.large_only:
    applications(Root(os.path.join(HERE, "large")), large=True)


if __name__ == "__main__":
  main()
