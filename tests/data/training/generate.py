#!/usr/bin/env python3
"""Writes tests/data/training: TF 1 training graphs as TensorFlow 2.21 writes them (issue 13),
each a MetaGraphDef exported by tf.compat.v1.train.Saver and the V2 checkpoint of its
initial variables, with TF's losses over 5 steps in expected.json. Run by hand (CI and
`bazel test` never need TensorFlow):

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0 tf_keras
    /tmp/tfvenv/bin/python tests/data/training/generate.py [--only NAME,...]

Per model NAME: NAME/model.meta, NAME/init.ckpt.{index,data-00000-of-00001} and
NAME/feed.*.npy (the batch every step is fed) and NAME/expected.json: {"note",
"feeds": {tensor: npy file}, "loss", "train", "losses": [loss before step 1, ..., before
step 5, after step 5], "ops"}. Each step runs
the loss alone, then the train op (so the loss never races the updates).
"""
import argparse
import json
import os
import shutil

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.compat.v1 layers and RNN cells need tf_keras

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 2021
v1 = tf.compat.v1
ONLY = None


def dense(x, units, name, resource, activation=None):
  with v1.variable_scope(name):
    w = v1.get_variable("kernel", [x.shape[-1], units], use_resource=resource,
                        initializer=v1.glorot_uniform_initializer(seed=SEED))
    b = v1.get_variable("bias", [units], use_resource=resource,
                        initializer=v1.random_uniform_initializer(-0.1, 0.1, seed=SEED + 1))
    y = tf.nn.bias_add(tf.matmul(x, w), b)
    return activation(y) if activation else y


def conv(x, filters, name, resource, stride=1):
  with v1.variable_scope(name):
    w = v1.get_variable("kernel", [3, 3, x.shape[-1], filters], use_resource=resource,
                        initializer=v1.glorot_uniform_initializer(seed=SEED + 2))
    b = v1.get_variable("bias", [filters], use_resource=resource,
                        initializer=v1.zeros_initializer())
    return tf.nn.bias_add(tf.nn.conv2d(x, w, [1, stride, stride, 1], "SAME"), b)


OPTIMIZERS = {
    "gd": lambda: v1.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: v1.train.MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda: v1.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda: v1.train.AdamOptimizer(0.01),
    "rmsprop": lambda: v1.train.RMSPropOptimizer(0.01, momentum=0.5),
    "rmsprop_centered": lambda: v1.train.RMSPropOptimizer(0.01, centered=True),
    "adagrad": lambda: v1.train.AdagradOptimizer(0.1),
    "adadelta": lambda: v1.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda: v1.train.FtrlOptimizer(0.1, l1_regularization_strength=0.001,
                                           l2_regularization_strength=0.001),
    "ftrl_shrinkage": lambda: v1.train.FtrlOptimizer(
        0.1, l1_regularization_strength=0.001, l2_regularization_strength=0.001,
        l2_shrinkage_regularization_strength=0.01),
}


def mlp(r, resource):
  x = v1.placeholder(tf.float32, [16, 20], name="x")
  y = v1.placeholder(tf.int32, [16], name="labels")
  h = dense(x, 32, "hidden", resource, tf.nn.relu)
  logits = dense(h, 5, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((16, 20)).astype(np.float32),
                y: r.integers(0, 5, 16).astype(np.int32)}


def mlp_any_batch(r, resource):
  """The MLP with placeholders of any batch size, as data-parallel towers need."""
  x = v1.placeholder(tf.float32, [None, 20], name="x")
  y = v1.placeholder(tf.int32, [None], name="labels")
  h = dense(x, 32, "hidden", resource, tf.nn.relu)
  logits = dense(h, 5, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((16, 20)).astype(np.float32),
                y: r.integers(0, 5, 16).astype(np.int32)}


def cnn(r, resource):
  x = v1.placeholder(tf.float32, [4, 8, 8, 3], name="x")
  y = v1.placeholder(tf.float32, [4, 5], name="labels")
  h = tf.nn.relu(conv(x, 8, "conv1", resource))
  h = tf.nn.max_pool2d(h, 2, 2, "VALID")
  h = conv(h, 8, "conv2", resource)
  with v1.variable_scope("bn"):  # batch statistics, as in training (FusedBatchNormV3)
    gamma = v1.get_variable("gamma", [8], use_resource=resource, initializer=v1.ones_initializer())
    beta = v1.get_variable("beta", [8], use_resource=resource, initializer=v1.zeros_initializer())
    h, _, _ = v1.nn.fused_batch_norm(h, gamma, beta, is_training=True)
  h = tf.nn.avg_pool2d(tf.nn.relu(h), 2, 2, "VALID")
  logits = dense(tf.reshape(h, [4, 32]), 5, "logits", resource)
  loss = v1.losses.softmax_cross_entropy(y, logits)
  labels = np.eye(5, dtype=np.float32)[r.integers(0, 5, 4)]
  return loss, {x: r.standard_normal((4, 8, 8, 3)).astype(np.float32), y: labels}


def cnn_bn_any_batch(r, resource):
  """A CNN with batch norm in training and its moving averages updated through UPDATE_OPS
  (AssignSubVariableOp, as tf.layers' AssignMovingAvg), any batch size (towers)."""
  x = v1.placeholder(tf.float32, [None, 8, 8, 3], name="x")
  y = v1.placeholder(tf.int32, [None], name="labels")
  h = conv(x, 8, "conv1", resource, stride=2)
  with v1.variable_scope("bn"):  # as tf.layers' BatchNormalization in training
    gamma = v1.get_variable("gamma", [8], use_resource=resource, initializer=v1.ones_initializer())
    beta = v1.get_variable("beta", [8], use_resource=resource, initializer=v1.zeros_initializer())
    moving_mean = v1.get_variable("moving_mean", [8], use_resource=resource, trainable=False,
                                  initializer=v1.zeros_initializer())
    moving_var = v1.get_variable("moving_variance", [8], use_resource=resource,
                                 trainable=False, initializer=v1.ones_initializer())
    h, mean, var = v1.nn.fused_batch_norm(h, gamma, beta, is_training=True)
    for moving, batch in ((moving_mean, mean), (moving_var, var)):
      v1.add_to_collection(v1.GraphKeys.UPDATE_OPS,
                           v1.assign_sub(moving, (moving - batch) * 0.01))
  h = tf.reshape(tf.nn.relu(h), [-1, 4 * 4 * 8])
  logits = dense(h, 5, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((8, 8, 8, 3)).astype(np.float32),
                y: r.integers(0, 5, 8).astype(np.int32)}


def losses_mlp(r, resource):
  x = v1.placeholder(tf.float32, [16, 6], name="x")
  t = v1.placeholder(tf.float32, [16, 3], name="targets")
  h = dense(x, 12, "hidden", resource, tf.nn.tanh)
  out = dense(h, 3, "out", resource)
  mse = v1.losses.mean_squared_error(t, out)
  sig = v1.losses.sigmoid_cross_entropy(tf.cast(t > 0, tf.float32), out)
  hub = v1.losses.huber_loss(t, out, delta=0.5)
  l2 = 1e-3 * tf.add_n([tf.nn.l2_loss(v) for v in v1.trainable_variables()])
  loss = mse + sig + hub + l2
  return loss, {x: r.standard_normal((16, 6)).astype(np.float32),
                t: r.standard_normal((16, 3)).astype(np.float32)}


def embedding(r, resource, any_batch=False):
  """Bag of embeddings: ids [8, 4] (repeats within and across rows) from a 20 x 6 table, mean
  over each row, Dense(3). The table's gradient is IndexedSlices, so the optimizer takes its
  sparse path: Unique + UnsortedSegmentSum to merge repeated ids, then SparseApply*, or
  Scatter* for Adam's slots. `any_batch`: ids of shape [None, 4], as towers need."""
  rows = None if any_batch else 8
  ids = v1.placeholder(tf.int32, [rows, 4], name="ids")
  y = v1.placeholder(tf.int32, [rows], name="labels")
  table = v1.get_variable("embedding", [20, 6], use_resource=resource,
                          initializer=v1.random_uniform_initializer(-0.5, 0.5, seed=SEED + 3))
  pooled = tf.reduce_mean(v1.nn.embedding_lookup(table, ids), axis=1)
  logits = dense(pooled, 3, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {ids: r.integers(0, 20, (8, 4)).astype(np.int32),
                y: r.integers(0, 3, 8).astype(np.int32)}


def embedding_any_batch(r, resource):
  return embedding(r, resource, any_batch=True)


def lstm(r, resource, any_batch=False):
  """A dynamic_rnn LSTMCell(8) classifier; `any_batch`: inputs [None, 6, 3] (towers)."""
  from tf_keras.src.layers.rnn import legacy_cells
  rows = None if any_batch else 4
  x = v1.placeholder(tf.float32, [rows, 6, 3], name="x")
  y = v1.placeholder(tf.int32, [rows], name="labels")
  cell = legacy_cells.LSTMCell(8, initializer=v1.glorot_uniform_initializer(seed=SEED))
  outputs, state = v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
  logits = dense(state.h, 3, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((4, 6, 3)).astype(np.float32),
                y: r.integers(0, 3, 4).astype(np.int32)}


def lstm_any_batch(r, resource):
  return lstm(r, resource, any_batch=True)


def mobile_cnn(r, resource):
  """A MobileNet-style CNN: a depthwise 3x3 convolution and a pointwise one (a separable
  convolution), batch norm in training, ReLU6, seeded dropout, global average pooling."""
  x = v1.placeholder(tf.float32, [4, 8, 8, 3], name="x")
  y = v1.placeholder(tf.int32, [4], name="labels")
  h = tf.nn.relu6(conv(x, 6, "stem", resource, stride=2))
  with v1.variable_scope("separable"):
    depthwise = v1.get_variable("depthwise", [3, 3, 6, 2], use_resource=resource,
                                initializer=v1.glorot_uniform_initializer(seed=SEED + 4))
    pointwise = v1.get_variable("pointwise", [1, 1, 12, 10], use_resource=resource,
                                initializer=v1.glorot_uniform_initializer(seed=SEED + 5))
    h = tf.nn.depthwise_conv2d(h, depthwise, [1, 1, 1, 1], "SAME")
    h = tf.nn.conv2d(h, pointwise, 1, "VALID")
    gamma = v1.get_variable("gamma", [10], use_resource=resource,
                            initializer=v1.ones_initializer())
    beta = v1.get_variable("beta", [10], use_resource=resource,
                           initializer=v1.zeros_initializer())
    h, _, _ = v1.nn.fused_batch_norm(h, gamma, beta, is_training=True)
  h = tf.nn.relu6(h)
  h = tf.nn.dropout(h, rate=0.25, seed=SEED + 6)
  logits = dense(tf.reduce_mean(h, axis=[1, 2]), 5, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((4, 8, 8, 3)).astype(np.float32),
                y: r.integers(0, 5, 4).astype(np.int32)}


def transformer(r, resource):
  """One transformer encoder block over 6 tokens of width 8: 2-head self-attention written
  with tf.einsum (ellipses as Keras' EinsumDense writes them), layer norms, an exact GELU,
  residual connections; mean over tokens, Dense(3)."""
  x = v1.placeholder(tf.float32, [4, 6, 8], name="x")
  y = v1.placeholder(tf.int32, [4], name="labels")

  def weight(name, shape, seed):
    return v1.get_variable(name, shape, use_resource=resource,
                           initializer=v1.glorot_uniform_initializer(seed=SEED + seed))

  def layer_norm(v, name):
    with v1.variable_scope(name):
      mean, var = tf.nn.moments(v, axes=[-1], keepdims=True)
      scale = v1.get_variable("scale", [8], use_resource=resource,
                              initializer=v1.ones_initializer())
      return (v - mean) * tf.math.rsqrt(var + 1e-6) * scale

  with v1.variable_scope("attention"):
    q = tf.einsum("...d,dhk->...hk", x, weight("query", [8, 2, 4], 7))
    k = tf.einsum("...d,dhk->...hk", x, weight("key", [8, 2, 4], 8))
    v = tf.einsum("...d,dhk->...hk", x, weight("value", [8, 2, 4], 9))
    scores = tf.einsum("bqhk,bthk->bhqt", q, k) * 0.5
    attended = tf.einsum("bhqt,bthk->bqhk", tf.nn.softmax(scores), v)
    h = layer_norm(x + tf.einsum("...hk,hkd->...d", attended, weight("out", [2, 4, 8], 10)),
                   "norm1")
  with v1.variable_scope("mlp"):
    inner = tf.nn.gelu(tf.einsum("...d,de->...e", h, weight("up", [8, 16], 11)),
                       approximate=False)
    h = layer_norm(h + tf.einsum("...e,ed->...d", inner, weight("down", [16, 8], 12)), "norm2")
  logits = dense(tf.reduce_mean(h, axis=1), 3, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((4, 6, 8)).astype(np.float32),
                y: r.integers(0, 3, 4).astype(np.int32)}


def autoencoder(r, resource):
  """A convolutional autoencoder: Conv2D down, Conv2DTranspose up, sigmoid cross-entropy
  against the input; trained by write() with clipped gradients and a decaying rate."""
  x = v1.placeholder(tf.float32, [4, 8, 8, 1], name="x")
  h = tf.nn.relu(conv(x, 6, "encode", resource, stride=2))
  with v1.variable_scope("decode"):
    w = v1.get_variable("kernel", [3, 3, 1, 6], use_resource=resource,
                        initializer=v1.glorot_uniform_initializer(seed=SEED + 13))
    logits = tf.nn.conv2d_transpose(h, w, [4, 8, 8, 1], [1, 2, 2, 1], "SAME")
  loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=logits))
  return loss, {x: (r.random((4, 8, 8, 1)) > 0.5).astype(np.float32)}


def layers_cnn(r, resource):
  """tf.compat.v1.layers as TF 1 scripts wrote them: conv2d with an L2 kernel regularizer,
  batch_normalization(training=True) with its UPDATE_OPS, dropout(training=True),
  flatten, dense; the regularization losses added to the cross-entropy."""
  from tf_keras.src.legacy_tf_layers import core, convolutional, normalization
  x = v1.placeholder(tf.float32, [4, 8, 8, 3], name="x")
  y = v1.placeholder(tf.int32, [4], name="labels")
  l2 = lambda w: 1e-3 * tf.nn.l2_loss(w)
  h = convolutional.conv2d(x, 6, 3, padding="same", activation=tf.nn.relu,
                           kernel_regularizer=l2,
                           kernel_initializer=v1.glorot_uniform_initializer(seed=SEED + 14))
  h = normalization.batch_normalization(h, training=True)
  h = core.dropout(h, rate=0.3, training=True, seed=SEED + 15)
  h = core.flatten(tf.nn.max_pool2d(h, 2, 2, "VALID"))
  logits = core.dense(h, 5, kernel_initializer=v1.glorot_uniform_initializer(seed=SEED + 16))
  loss = (v1.losses.sparse_softmax_cross_entropy(y, logits) +
          v1.losses.get_regularization_loss())
  return loss, {x: r.standard_normal((4, 8, 8, 3)).astype(np.float32),
                y: r.integers(0, 5, 4).astype(np.int32)}


def gru_bidirectional(r, resource):
  """bidirectional_dynamic_rnn of GRUCell(6) forward and backward over sequences of
  lengths [5, 3, 4, 2] (ReverseSequence), the final states concatenated, Dense(3)."""
  from tf_keras.src.layers.rnn import legacy_cells
  x = v1.placeholder(tf.float32, [4, 5, 3], name="x")
  y = v1.placeholder(tf.int32, [4], name="labels")
  init = v1.glorot_uniform_initializer(seed=SEED + 17)
  cells = [legacy_cells.GRUCell(6, kernel_initializer=init) for _ in range(2)]
  _, (forward, backward) = v1.nn.bidirectional_dynamic_rnn(
      cells[0], cells[1], x, sequence_length=[5, 3, 4, 2], dtype=tf.float32)
  logits = dense(tf.concat([forward, backward], 1), 3, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((4, 5, 3)).astype(np.float32),
                y: r.integers(0, 3, 4).astype(np.int32)}


def word2vec(r, resource):
  """Skip-gram word2vec as TF 1's tutorial trained it: an embedding table and both sampled
  losses, tf.nn.nce_loss and tf.nn.sampled_softmax_loss, over log-uniform (Zipfian)
  candidate samplers (seeded from the graph seed), accidental hits removed for the
  softmax; the tables get sparse updates."""
  ids = v1.placeholder(tf.int32, [8], name="ids")
  labels = v1.placeholder(tf.int64, [8, 1], name="labels")
  table = v1.get_variable("embedding", [40, 6], use_resource=resource,
                          initializer=v1.random_uniform_initializer(-1.0, 1.0, seed=SEED + 18))
  weights = v1.get_variable("nce_weights", [40, 6], use_resource=resource,
                            initializer=v1.truncated_normal_initializer(0.0, 0.4,
                                                                        seed=SEED + 19))
  biases = v1.get_variable("nce_biases", [40], use_resource=resource,
                           initializer=v1.zeros_initializer())
  embedded = v1.nn.embedding_lookup(table, ids)
  nce = tf.reduce_mean(v1.nn.nce_loss(weights, biases, labels, embedded, num_sampled=5,
                                      num_classes=40))
  softmax = tf.reduce_mean(v1.nn.sampled_softmax_loss(weights, biases, labels, embedded,
                                                      num_sampled=5, num_classes=40))
  return nce + softmax, {ids: r.integers(0, 40, 8).astype(np.int32),
                         labels: r.integers(0, 40, (8, 1)).astype(np.int64)}


def wide_and_deep(r, resource):
  """A wide-and-deep recommender as TF 1 estimators built it: sparse id features (a
  SparseTensor fed as indices, values and shape) through embedding_lookup_sparse with the
  mean and sqrtn combiners for the deep part, a sparse-dense matmul for the wide part, a
  deep tower of two dense layers; FTRL for the wide weights and Adagrad for the deep
  ones, grouped into one train op."""
  indices = v1.placeholder(tf.int64, [None, 2], name="sp_indices")
  values = v1.placeholder(tf.int64, [None], name="sp_values")
  y = v1.placeholder(tf.float32, [6, 1], name="labels")
  ids = tf.SparseTensor(indices, values, [6, 4])
  with v1.variable_scope("deep"):
    table = v1.get_variable("embedding", [30, 5], use_resource=resource,
                            initializer=v1.random_uniform_initializer(-0.5, 0.5, seed=SEED + 20))
    mean = v1.nn.embedding_lookup_sparse(table, ids, None, combiner="mean")
    sqrtn = v1.nn.embedding_lookup_sparse(table, ids, None, combiner="sqrtn")
    h = dense(tf.concat([mean, sqrtn], 1), 8, "hidden", resource, tf.nn.relu)
    deep = dense(h, 1, "out", resource)
  with v1.variable_scope("wide"):
    w = v1.get_variable("weights", [30, 1], use_resource=resource,
                        initializer=v1.zeros_initializer())
    one_hot = tf.SparseTensor(indices, tf.ones_like(values, tf.float32), [6, 4])
    counts = tf.sparse.sparse_dense_matmul(one_hot, tf.ones([4, 1]))
    wide = v1.nn.embedding_lookup_sparse(w, ids, None, combiner="sum") + 0.1 * counts
  loss = v1.losses.sigmoid_cross_entropy(y, wide + deep)
  feed_indices = np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 3], [3, 2], [4, 0],
                           [5, 1], [5, 2]], np.int64)
  return loss, {indices: feed_indices, values: r.integers(0, 30, 10).astype(np.int64),
                y: (r.random((6, 1)) > 0.5).astype(np.float32)}


def switchable_cnn(r, resource):
  """tf.compat.v1.layers switched by an is_training placeholder_with_default (True when
  unfed): dropout and batch_normalization built with tf.cond (control flow v1) on it, the
  moving averages updated in the training branch; the learning rate fed as a
  placeholder."""
  from tf_keras.src.legacy_tf_layers import core, convolutional, normalization
  x = v1.placeholder(tf.float32, [4, 6, 6, 2], name="x")
  y = v1.placeholder(tf.int32, [4], name="labels")
  v1.placeholder(tf.float32, [], name="learning_rate")
  training = v1.placeholder_with_default(True, [], name="is_training")
  h = convolutional.conv2d(x, 4, 3, padding="same",
                           kernel_initializer=v1.glorot_uniform_initializer(seed=SEED + 21))
  h = tf.nn.relu(normalization.batch_normalization(h, training=training))
  h = core.dropout(core.flatten(h), rate=0.2, training=training, seed=SEED + 22)
  logits = core.dense(h, 3, kernel_initializer=v1.glorot_uniform_initializer(seed=SEED + 23))
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  rate = v1.get_default_graph().get_tensor_by_name("learning_rate:0")
  return loss, {x: r.standard_normal((4, 6, 6, 2)).astype(np.float32),
                y: r.integers(0, 3, 4).astype(np.int32), rate: np.float32(0.01)}


def while_loop_rnn(r, resource):
  """A hand-written Elman RNN: tf.while_loop over the time steps reading inputs from one
  TensorArray and writing states to another, the mean state fed to a Dense layer."""
  x = v1.placeholder(tf.float32, [5, 3, 4], name="x")  # time-major
  y = v1.placeholder(tf.int32, [3], name="labels")
  w = v1.get_variable("w", [4, 6], use_resource=resource,
                      initializer=v1.glorot_uniform_initializer(seed=SEED + 24))
  u = v1.get_variable("u", [6, 6], use_resource=resource,
                      initializer=v1.orthogonal_initializer(seed=SEED + 25))
  inputs = tf.TensorArray(tf.float32, size=5).unstack(x)
  states = tf.TensorArray(tf.float32, size=5)

  def body(t, h, out):
    h = tf.tanh(tf.matmul(inputs.read(t), w) + tf.matmul(h, u))
    return t + 1, h, out.write(t, h)

  _, _, states = v1.while_loop(lambda t, h, out: t < 5, body,
                               [tf.constant(0), tf.zeros([3, 6]), states])
  logits = dense(tf.reduce_mean(states.stack(), axis=0), 3, "logits", resource)
  loss = v1.losses.sparse_softmax_cross_entropy(y, logits)
  return loss, {x: r.standard_normal((5, 3, 4)).astype(np.float32),
                y: r.integers(0, 3, 3).astype(np.int32)}


def gpu_towers(r, resource):
  """TF 1's multi-GPU tower pattern: the batch split in two, each half's loss and
  gradients built under tf.device("/gpu:<i>") with the variables kept on /cpu:0 (a device
  function), the towers' gradients averaged on the CPU by write()'s train op. Run with
  allow_soft_placement (no GPU here: TF puts the towers on the CPU)."""
  x = v1.placeholder(tf.float32, [8, 20], name="x")
  y = v1.placeholder(tf.int32, [8], name="labels")
  losses = []
  for i, (xs, ys) in enumerate(zip(tf.split(x, 2), tf.split(y, 2))):
    def place(op, i=i):
      return "/cpu:0" if op.type in ("VariableV2", "VarHandleOp") else "/gpu:%d" % i
    with v1.device(place), v1.variable_scope("model", reuse=i > 0):
      h = dense(xs, 32, "hidden", resource, tf.nn.relu)
      tower_loss = v1.losses.sparse_softmax_cross_entropy(
          ys, dense(h, 5, "logits", resource), loss_collection=None)
      v1.add_to_collection("tower_losses", tower_loss)
      losses.append(tower_loss)
  with tf.device("/cpu:0"):
    loss = tf.add_n(losses) / 2.0
  return loss, {x: r.standard_normal((8, 20)).astype(np.float32),
                y: r.integers(0, 5, 8).astype(np.int32)}


MODELS = [
    # name, model, optimizer, resource variables, note
    ("mlp_gd", mlp, "gd", False, "MLP 20-32-5, sparse softmax cross-entropy, GradientDescent"),
    ("mlp_momentum", mlp, "momentum", False, "MLP, Momentum 0.9"),
    ("mlp_adam", mlp, "adam", False, "MLP, Adam"),
    ("mlp_any_batch_adam", mlp_any_batch, "adam", True,
     "MLP, Adam, resource variables, placeholders of any batch size (towers)"),
    ("cnn_bn_any_batch_momentum", cnn_bn_any_batch, "momentum", True,
     "CNN with layers.batch_normalization (moving averages via UPDATE_OPS), any batch"),
    ("mlp_rmsprop", mlp, "rmsprop", False, "MLP, RMSProp with momentum"),
    ("cnn_gd", cnn, "gd", False, "CNN: Conv2D, MaxPool, BatchNorm (training), AvgPool, Dense; "
     "softmax cross-entropy; GradientDescent"),
    ("cnn_momentum", cnn, "momentum", False, "CNN, Momentum"),
    ("cnn_adam", cnn, "adam", False, "CNN, Adam"),
    ("cnn_rmsprop", cnn, "rmsprop", False, "CNN, RMSProp with momentum"),
    ("mlp_resource_adam", mlp, "adam", True, "MLP on resource variables, Adam"),
    ("cnn_resource_nesterov", cnn, "nesterov", True,
     "CNN on resource variables, Nesterov momentum"),
    ("mlp_resource_rmsprop_centered", mlp, "rmsprop_centered", True,
     "MLP on resource variables, centered RMSProp"),
    ("mlp_adagrad", mlp, "adagrad", False, "MLP, Adagrad"),
    ("losses_gd", losses_mlp, "gd", False, "tf.compat.v1.losses: mean_squared_error, "
     "sigmoid_cross_entropy, huber_loss, plus L2 regularization (L2Loss, AddN)"),
    ("lstm_adam", lstm, "adam", False, "dynamic_rnn LSTMCell(8) classifier, Adam: gradients "
     "through a v1 while loop (stacks, TensorArray gradients)"),
    ("mlp_ftrl", mlp, "ftrl", False, "MLP, FTRL with l1 and l2 (ApplyFtrl)"),
    ("mlp_resource_ftrl_shrinkage", mlp, "ftrl_shrinkage", True,
     "MLP on resource variables, FTRL with l2 shrinkage (ResourceApplyFtrlV2)"),
    ("mlp_adadelta", mlp, "adadelta", False, "MLP, Adadelta (ApplyAdadelta)"),
    ("embedding_adagrad", embedding, "adagrad", False,
     "embedding_lookup bag of words, Adagrad: SparseApplyAdagrad on the table"),
    ("embedding_ftrl", embedding, "ftrl", False,
     "embedding_lookup bag of words, FTRL: SparseApplyFtrl on the table"),
    ("embedding_adam", embedding, "adam", False,
     "embedding_lookup bag of words, Adam: ScatterAdd into m and v"),
    ("embedding_resource_adam", embedding, "adam", True,
     "embedding_lookup on resource variables, Adam: ResourceScatterAdd into m and v"),
    ("embedding_resource_momentum", embedding, "momentum", True,
     "embedding_lookup on resource variables, Momentum: ResourceSparseApplyMomentum"),
    ("embedding_any_batch_momentum", embedding_any_batch, "momentum", True,
     "embedding_lookup on resource variables, ids of any batch size (towers with sparse "
     "updates), Momentum: ResourceSparseApplyMomentum"),
    ("embedding_any_batch_adam", embedding_any_batch, "adam", True,
     "embedding_lookup on resource variables, ids of any batch size, Adam: its sparse path "
     "(Unique + UnsortedSegmentSum, ResourceScatterAdd into m and v) over towers"),
    ("lstm_any_batch_adam", lstm_any_batch, "adam", False,
     "dynamic_rnn LSTMCell(8), inputs of any batch size (towers through a v1 while loop)"),
    ("mobile_cnn_rmsprop", mobile_cnn, "rmsprop", True,
     "MobileNet-style CNN: depthwise and pointwise convolutions, batch norm (training), "
     "ReLU6, seeded dropout, global average pooling; RMSProp on resource variables"),
    ("autoencoder_clipped_momentum", autoencoder, "clipped_decay_momentum", True,
     "convolutional autoencoder (Conv2D, Conv2DTranspose, sigmoid cross-entropy); Momentum "
     "with tf.clip_by_global_norm and an exponential_decay rate on the global step"),
    ("layers_cnn_gd_ema", layers_cnn, "gd_ema", False,
     "tf.compat.v1.layers CNN: conv2d with an L2 regularizer, batch_normalization and "
     "dropout in training, dense; GradientDescent, then an ExponentialMovingAverage of the "
     "weights"),
    ("gru_bidirectional_adagrad", gru_bidirectional, "adagrad", False,
     "bidirectional_dynamic_rnn of GRUCells with sequence lengths (ReverseSequence); "
     "Adagrad"),
    ("word2vec_gd", word2vec, "gd", False,
     "skip-gram word2vec: nce_loss and sampled_softmax_loss (LogUniformCandidateSampler, "
     "ComputeAccidentalHits, SparseToDense), sparse GradientDescent updates of the tables"),
    ("wide_and_deep_ftrl_adagrad", wide_and_deep, "wide_ftrl_deep_adagrad", False,
     "wide-and-deep: embedding_lookup_sparse (mean, sqrtn, sum combiners) over a fed "
     "SparseTensor, sparse_dense_matmul, dense tower; FTRL on the wide part and Adagrad on "
     "the deep part, one grouped train op"),
    ("switchable_cnn_fed_rate_adam", switchable_cnn, "fed_rate_adam", False,
     "tf.compat.v1.layers dropout and batch_normalization switched by an is_training "
     "placeholder_with_default (tf.cond), Adam at a learning rate fed each step"),
    ("while_loop_rnn_rmsprop", while_loop_rnn, "rmsprop", True,
     "hand-written Elman RNN: tf.while_loop with TensorArray reads and writes; RMSProp on "
     "resource variables"),
    ("gpu_towers_momentum", gpu_towers, "tower_momentum", True,
     "TF 1's multi-GPU towers: tf.device(\"/gpu:i\") per half batch, variables on /cpu:0, "
     "gradients averaged on the CPU and applied once (Momentum); allow_soft_placement"),
    ("transformer_adam", transformer, "adam", True,
     "transformer encoder block: einsum self-attention (ellipses), layer norm, exact GELU, "
     "residuals; Adam on resource variables"),
]


def minimize(optimizer, loss):
  return OPTIMIZERS[optimizer]().minimize(
      loss, global_step=v1.train.get_or_create_global_step(), name="train")


def clipped_decay_momentum(_, loss):
  """Momentum at a rate decaying with the global step, gradients clipped by global norm."""
  step = v1.train.get_or_create_global_step()
  rate = v1.train.exponential_decay(0.1, step, decay_steps=2, decay_rate=0.8)
  variables = v1.trainable_variables()
  grads, _ = tf.clip_by_global_norm(tf.gradients(loss, variables), 0.5)
  return v1.train.MomentumOptimizer(rate, 0.9).apply_gradients(
      zip(grads, variables), global_step=step, name="train")


def gd_ema(_, loss):
  """GradientDescent, then an ExponentialMovingAverage of the trainable variables."""
  step = OPTIMIZERS["gd"]().minimize(loss, global_step=v1.train.get_or_create_global_step())
  ema = v1.train.ExponentialMovingAverage(0.9)
  with tf.control_dependencies([step]):
    return tf.group(ema.apply(v1.trainable_variables()), name="train")


def wide_ftrl_deep_adagrad(_, loss):
  """FTRL for the variables under "wide/", Adagrad for the rest, as DNNLinearCombined."""
  variables = v1.trainable_variables()
  wide = [v for v in variables if v.name.startswith("wide/")]
  deep = [v for v in variables if not v.name.startswith("wide/")]
  step = v1.train.get_or_create_global_step()
  return tf.group(OPTIMIZERS["ftrl"]().minimize(loss, var_list=wide),
                  OPTIMIZERS["adagrad"]().minimize(loss, var_list=deep),
                  v1.assign_add(step, 1), name="train")


def fed_rate_adam(_, loss):
  """Adam at the rate fed to the "learning_rate" placeholder."""
  rate = v1.get_default_graph().get_tensor_by_name("learning_rate:0")
  return v1.train.AdamOptimizer(rate).minimize(
      loss, global_step=v1.train.get_or_create_global_step(), name="train")


def tower_momentum(_, loss):
  """Each tower's gradients, averaged on /cpu:0 (add_n / towers), applied once."""
  opt = OPTIMIZERS["momentum"]()
  tower_grads = []
  for i, tower_loss in enumerate(v1.get_collection("tower_losses")):
    with tf.device("/gpu:%d" % i):
      tower_grads.append(opt.compute_gradients(tower_loss))
  with tf.device("/cpu:0"):
    averaged = [(tf.add_n([g for g, _ in pairs]) / len(pairs), pairs[0][1])
                for pairs in zip(*tower_grads)]
    return opt.apply_gradients(averaged, global_step=v1.train.get_or_create_global_step(),
                               name="train")


TRAIN_OPS = {"tower_momentum": tower_momentum, "fed_rate_adam": fed_rate_adam, "wide_ftrl_deep_adagrad": wide_ftrl_deep_adagrad,"clipped_decay_momentum": clipped_decay_momentum, "gd_ema": gd_ema}


def save_feed(out, tensor, value):
  file = "feed.%s.npy" % tensor.replace(":", "_").replace("/", "_")
  np.save(os.path.join(out, file), value)
  return file


def write(name, build, optimizer, resource, note):
  out = os.path.join(HERE, name)
  shutil.rmtree(out, ignore_errors=True)
  os.makedirs(out)
  r = np.random.default_rng([SEED, sum(map(ord, name))])
  with tf.Graph().as_default() as g:
    v1.set_random_seed(SEED)
    loss, feeds = build(r, resource)
    loss = tf.identity(loss, name="loss")
    update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
      train = TRAIN_OPS.get(optimizer, minimize)(optimizer, loss)
    saver = v1.train.Saver()
    # Soft placement: the towers' /gpu:<i> go to the CPU on a machine without GPUs.
    config = v1.ConfigProto(allow_soft_placement=True)
    with v1.Session(graph=g, config=config) as s:
      s.run(v1.global_variables_initializer())
      saver.save(s, os.path.join(out, "init.ckpt"), write_meta_graph=False,
                 write_state=False)
      saver.export_meta_graph(os.path.join(out, "model.meta"))
      losses = []
      for _ in range(5):
        losses.append(float(s.run(loss, feeds)))
        s.run(train, feeds)
      losses.append(float(s.run(loss, feeds)))
  doc = {
      "note": note,
      "generator": "TensorFlow %s, tf.compat.v1.Session" % tf.__version__,
      "feeds": {t.name: save_feed(out, t.name, v) for t, v in feeds.items()},
      "loss": "loss:0",
      "train": "train",
      "losses": losses,
      "ops": sorted({n.op for n in g.as_graph_def().node}),
  }
  if any(n.device for n in g.as_graph_def().node):
    doc["allow_soft_placement"] = True
  with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
  print("%-30s %s" % (name, " ".join("%.5f" % l for l in losses)))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--only", help="comma-separated model names")
  args = parser.parse_args()
  only = set(args.only.split(",")) if args.only else None
  v1.disable_control_flow_v2()  # TF 1 graphs: v1 loops, as tf.compat.v1 code wrote them
  for name, build, optimizer, resource, note in MODELS:
    if only is None or name in only:
      write(name, build, optimizer, resource, note)


if __name__ == "__main__":
  main()
