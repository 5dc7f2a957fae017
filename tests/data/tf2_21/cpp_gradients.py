"""TF 1 graphs (control flow v1) that C++ code differentiates after importing them:
tests/graph/gradients/imported_graph_grads_test.cc. Run by hand with tensorflow-cpu==2.21.0
and tf_keras:

  /tmp/tfvenv/bin/python tests/data/tf2_21/cpp_gradients.py

Per graph: cpp_gradients/NAME.pbtxt, the GraphDef as TF built it before any gradient
(tf.compat.v1.while_loop / tf.cond with control flow v1: TF's pivots, switches and frame
names), and NAME.json with the feeds, the loss and TF's tf.gradients of it.
"""
import json
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # tf.compat.v1.nn.rnn_cell needs tf_keras

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
v1.disable_eager_execution()
v1.disable_control_flow_v2()
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpp_gradients")
WEIGHTS = np.array([1.0, 1.1, 1.2])


def loop_cond():
  """x <- i < 2 ? tanh(x * w) : x * x * w, 4 iterations: a tf.cond in a loop body."""
  x = v1.placeholder(tf.float64, [3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")

  def body(i, v):
    v = tf.cond(i < 2, lambda: tf.tanh(v * w), lambda: v * v * w)
    return i + 1, v

  _, y = v1.while_loop(lambda i, v: i < 4, body, [tf.constant(0), x])
  return [x, w], tf.reduce_sum(y * WEIGHTS, name="loss"), None


def nested_loops():
  """Outer i < 3: x <- inner(x), the inner loop running i + 1 times u <- tanh(u * w) + u."""
  x = v1.placeholder(tf.float64, [3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")

  def outer(i, v):
    def inner(j, u):
      return j + 1, tf.tanh(u * w) + u
    _, u = v1.while_loop(lambda j, u: j < i + 1, inner, [tf.constant(0), v])
    return i + 1, u

  _, y = v1.while_loop(lambda i, v: i < 3, outer, [tf.constant(0), x])
  return [x, w], tf.reduce_sum(y * WEIGHTS, name="loss"), None


def tensor_array_rnn():
  """h <- tanh(h * w + x[t]) over 4 steps with TF 1 TensorArrays: x unstacked into one
  (TensorArrayScatterV3), read in the loop (ReadV3), each h written to another (WriteV3)
  and stacked after it (GatherV3)."""
  x = v1.placeholder(tf.float64, [4, 3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")
  steps = tf.TensorArray(tf.float64, size=4).unstack(x)
  outputs = tf.TensorArray(tf.float64, size=4)

  def body(i, h, out):
    h = tf.tanh(h * w + steps.read(i))
    return i + 1, h, out.write(i, h)

  _, _, outputs = v1.while_loop(lambda i, h, out: i < 4, body,
                                [tf.constant(0), tf.zeros([3], tf.float64), outputs])
  y = outputs.stack()
  loss = tf.reduce_sum(y * np.linspace(1.0, 2.1, 12).reshape(4, 3), name="loss")
  return [x, w], loss, None


def scan_map_fn():
  """tf.scan (a <- a * w + tanh(x_t)) and tf.map_fn (sum(x_t * w) per row) over x's 4
  rows: TF 1's functional ops as TensorArray loops."""
  x = v1.placeholder(tf.float64, [4, 3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")
  scanned = tf.scan(lambda a, row: a * w + tf.tanh(row), x,
                    initializer=tf.zeros([3], tf.float64))
  mapped = tf.map_fn(lambda row: tf.reduce_sum(row * w * row), x)
  loss = tf.add(tf.reduce_sum(scanned * np.linspace(1.0, 2.1, 12).reshape(4, 3)),
                tf.reduce_sum(mapped * np.array([1.0, -1.0, 0.5, 2.0])), name="loss")
  return [x, w], loss, None


def lstm_dynamic_rnn():
  """tf.compat.v1.nn.dynamic_rnn of an LSTMCell(4) on resource variables (constant
  initial values), batch 2 x 5 steps x 3 features, sequence lengths [5, 3]: TF's own RNN
  loop (TensorArrays, the cell's variables read in the loop, Select for finished rows).
  Gradients for the inputs and both variables."""
  v1.get_variable_scope().set_use_resource(True)
  x = v1.placeholder(tf.float64, [2, 5, 3], name="x")
  kernel = np.sin(np.arange(7 * 16)).reshape(7, 16) * 0.3
  cell = v1.nn.rnn_cell.LSTMCell(4, initializer=v1.constant_initializer(kernel))
  outputs, _ = v1.nn.dynamic_rnn(cell, x, sequence_length=[5, 3], dtype=tf.float64)
  loss = tf.reduce_sum(outputs * np.linspace(0.5, 1.5, 4), name="loss")
  variables = v1.trainable_variables()
  init = tf.group([v.initializer for v in variables], name="init")
  return [x] + variables, loss, init


RNN_X = [0.3, -0.7, 0.9, 0.1, 0.2, -0.4, -0.6, 0.5, 0.05, 0.8, -0.1, 0.35]


def feeds_for(name):
  if name in ("lstm_dynamic_rnn", "gru_bidirectional"):
    return {"x:0": (np.cos(np.arange(30)) * 0.8).reshape(2, 5, 3)}
  if name == "transformer_block":
    return {"x:0": (np.sin(np.arange(48) * 0.9)).reshape(2, 4, 6),
            "w:0": (np.cos(np.arange(48) * 0.4)).reshape(6, 8) * 0.5}
  if name == "unet_ops":
    return {"x:0": np.sin(np.arange(128) * 0.37).reshape(1, 8, 8, 2).astype(np.float32),
            "w:0": np.cos(np.arange(18) * 0.9).reshape(3, 3, 2, 1).astype(np.float32)}
  if name == "volumes_and_dilations":
    return {"x:0": np.sin(np.arange(288) * 0.31).reshape(1, 4, 6, 6, 2).astype(np.float32),
            "w:0": np.cos(np.arange(108) * 0.77).reshape(2, 3, 3, 2, 3).astype(np.float32) * 0.4}
  if name in ("linalg_ctc", "cholesky"):
    return {"x:0": np.sin(np.arange(18) * 0.83).reshape(2, 3, 3),
            "w:0": np.array([1.1, -0.7, 0.9])}
  if name == "einsum_forms":
    return {"x:0": np.sin(np.arange(24) * 0.61).reshape(2, 3, 4),
            "w:0": np.cos(np.arange(16) * 1.3).reshape(4, 4)}
  if name == "decompositions":
    return {"x:0": np.sin(np.arange(24) * 0.83 + 0.2).reshape(2, 4, 3) + np.arange(24).reshape(
        2, 4, 3) * 0.05, "w:0": np.array([1.1, -0.7, 0.9])}
  if name == "losses_mix":
    return {"x:0": np.sin(np.arange(12) * 1.7).reshape(4, 3),
            "w:0": np.array([1.3, -0.8, 0.6])}
  if name == "array_ops_mix":
    return {"x:0": np.sin(np.arange(20) * 1.1).reshape(4, 5),
            "w:0": np.cos(np.arange(5) * 0.7)}
  if name == "embedding_classifier":
    return {"x:0": (np.cos(np.arange(12) * 1.3)).reshape(4, 3)}
  if name == "cnn_batch_norm":
    return {"x:0": (np.sin(np.arange(144) * 0.7)).reshape(2, 6, 6, 2)}
  rows = name in ("tensor_array_rnn", "scan_map_fn", "cond_in_rnn")
  x = RNN_X if rows else [0.3, -0.7, 0.9]
  return {"x:0": np.reshape(x, (4, 3) if rows else (3,)),
          "w:0": np.array([1.2, 0.8, -0.5])}


def gru_bidirectional():
  """tf.compat.v1.nn.bidirectional_dynamic_rnn of GRUCell(3) each way (ReverseSequence
  for the backward pass), resource variables with constant initial values."""
  v1.get_variable_scope().set_use_resource(True)
  x = v1.placeholder(tf.float64, [2, 5, 3], name="x")
  fw = v1.nn.rnn_cell.GRUCell(3, kernel_initializer=fixed(np.sin))
  bw = v1.nn.rnn_cell.GRUCell(3, kernel_initializer=fixed(np.cos))
  (out_fw, out_bw), _ = v1.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=[5, 3],
                                                         dtype=tf.float64)
  loss = tf.reduce_sum(tf.concat([out_fw, out_bw], 2) * np.linspace(0.5, 1.5, 6), name="loss")
  variables = v1.trainable_variables()
  return [x] + variables, loss, tf.group([v.initializer for v in variables], name="init")


def cond_in_rnn():
  """A loop whose body picks, by a data-dependent tf.cond, one of two updates that read a
  resource variable: cond branches reading variables inside a loop."""
  v1.get_variable_scope().set_use_resource(True)
  x = v1.placeholder(tf.float64, [4, 3], name="x")
  a = v1.get_variable("a", initializer=np.array([0.9, -0.4, 0.6]))
  b = v1.get_variable("b", initializer=np.array([0.2, 0.7, -1.1]))

  def body(i, h):
    row = x[i]
    h = tf.cond(tf.reduce_sum(row) > 0, lambda: tf.tanh(h * a + row),
                lambda: h * b - row * row)
    return i + 1, h

  _, h = v1.while_loop(lambda i, h: i < 4, body, [tf.constant(0), tf.zeros([3], tf.float64)])
  loss = tf.reduce_sum(h * WEIGHTS, name="loss")
  return [x, a, b], loss, tf.group([a.initializer, b.initializer], name="init")


def fixed(wave, scale=0.4):
  """An initializer of any shape: a fixed wave, so TF and dflow start from the same values."""
  return lambda shape, dtype=tf.float64, partition_info=None: tf.constant(
      wave(np.arange(np.prod(shape))).reshape(shape) * scale, dtype or tf.float64)


def cnn_batch_norm():
  """Conv2D + bias, batch norm in training (FusedBatchNormV3), Relu, MaxPool, Dense and a
  softmax cross-entropy, through tf.compat.v1.layers on resource variables."""
  v1.get_variable_scope().set_use_resource(True)
  x = v1.placeholder(tf.float32, [2, 6, 6, 2], name="x")  # TF's Conv2D is float here
  labels = tf.constant([[0.0, 1.0, 0.0], [0.2, 0.3, 0.5]], tf.float32)
  h = v1.layers.conv2d(x, 4, 3, padding="same", kernel_initializer=fixed(np.sin),
                       bias_initializer=fixed(np.cos, 0.1))
  h = v1.layers.batch_normalization(h, training=True, gamma_initializer=fixed(np.cos, 1.0),
                                    beta_initializer=fixed(np.sin, 0.2))
  h = v1.layers.max_pooling2d(tf.nn.relu(h), 2, 2)
  logits = v1.layers.dense(tf.reshape(h, [2, 36]), 3, kernel_initializer=fixed(np.cos, 0.2))
  loss = tf.identity(tf.reduce_mean(
      tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)), name="loss")
  variables = v1.trainable_variables()
  init = tf.group([v.initializer for v in v1.global_variables()], name="init")
  return [x] + variables, loss, init


def loop_case_max_iterations():
  """A loop stopped by maximum_iterations=3 before its own condition, whose body picks one
  of three updates with tf.case (conditionals nested in conditionals)."""
  x = v1.placeholder(tf.float64, [3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")

  def body(i, v):
    v = tf.case([(tf.equal(i, 0), lambda: tf.tanh(v * w)), (tf.equal(i, 1), lambda: v * w)],
                default=lambda: v * v + w, exclusive=True)
    return [i + 1, v]

  _, y = v1.while_loop(lambda i, v: i < 10, body, [tf.constant(0), x], maximum_iterations=3)
  return [x, w], tf.reduce_sum(y * WEIGHTS, name="loss"), None


def transformer_block():
  """Self-attention (BatchMatMulV2, Softmax, Einsum), layer norm (moments, Rsqrt), an exact
  GELU (Erf) MLP and a residual, float64."""
  x = v1.placeholder(tf.float64, [2, 4, 6], name="x")
  wq = tf.constant(np.sin(np.arange(36)).reshape(6, 6) * 0.3)
  wk = tf.constant(np.cos(np.arange(36)).reshape(6, 6) * 0.3)
  w1 = v1.placeholder(tf.float64, [6, 8], name="w")
  q = tf.einsum("btd,de->bte", x, wq)
  k = tf.einsum("btd,de->bte", x, wk)
  att = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / np.sqrt(6.0))
  h = x + tf.matmul(att, x)
  mean, var = tf.nn.moments(h, axes=[-1], keepdims=True)
  h = (h - mean) * tf.math.rsqrt(var + 1e-5)
  y = tf.nn.gelu(tf.tensordot(h, w1, 1), approximate=False)
  return [x, w1], tf.reduce_sum(y * np.linspace(-1.0, 1.0, 8), name="loss"), None


def embedding_classifier():
  """tf.nn.embedding_lookup on a resource table, mean over the bag, a Dense layer with
  LeakyRelu, sparse softmax cross-entropy and an L2 penalty (tf.compat.v1.losses)."""
  v1.get_variable_scope().set_use_resource(True)
  ids = tf.constant([[1, 3, 3, 0], [2, 2, 4, 1]])
  table = v1.get_variable("table", initializer=np.sin(np.arange(20)).reshape(5, 4) * 0.5)
  x = v1.placeholder(tf.float64, [4, 3], name="x")
  pooled = tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
  logits = tf.nn.leaky_relu(tf.matmul(pooled, x), alpha=0.1)
  loss = v1.losses.sparse_softmax_cross_entropy(labels=[2, 0], logits=logits)
  loss = tf.add(loss, 0.01 * tf.nn.l2_loss(table), name="loss")
  return [x, table], loss, tf.group([table.initializer], name="init")


def unet_ops():
  """float32 image ops: a separable convolution (DepthwiseConv2dNative + 1x1 Conv2D), Elu,
  AvgPool, a transposed convolution back up (Conv2DBackpropInput), bilinear and nearest
  resizing, Selu, a skip concatenation."""
  x = v1.placeholder(tf.float32, [1, 8, 8, 2], name="x")
  w = v1.placeholder(tf.float32, [3, 3, 2, 1], name="w")
  pointwise = tf.constant(np.cos(np.arange(8)).reshape(1, 1, 2, 4) * 0.5, tf.float32)
  h = tf.nn.elu(tf.nn.separable_conv2d(x, w, pointwise, [1, 1, 1, 1], "SAME"))
  down = tf.nn.avg_pool2d(h, 2, 2, "VALID")
  up_w = tf.constant(np.sin(np.arange(48)).reshape(2, 2, 3, 4) * 0.4, tf.float32)
  up = tf.nn.conv2d_transpose(down, up_w, [1, 8, 8, 3], [1, 2, 2, 1], "SAME")
  resized = tf.compat.v1.image.resize_bilinear(down, [8, 8]) + \
      tf.compat.v1.image.resize_nearest_neighbor(down, [8, 8])
  y = tf.nn.selu(tf.concat([up, resized, x], axis=3))
  weights = np.linspace(-1.0, 1.0, 8 * 8 * 9).reshape(1, 8, 8, 9).astype(np.float32)
  return [x, w], tf.reduce_sum(y * weights, name="loss"), None


def array_ops_mix():
  """Array ops from everyday graphs: StridedSlice with masks, GatherNd, ScatterNd,
  tf.where (SelectV2), Tile, Pad, Cumsum, TopKV2, UnsortedSegmentSum, ReverseV2, Maximum."""
  x = v1.placeholder(tf.float64, [4, 5], name="x")
  w = v1.placeholder(tf.float64, [5], name="w")
  a = x[1:, ::2][:, :2] * 2.0 + x[:-1, 1::2]
  g = tf.gather_nd(x * w, [[0, 1], [2, 3], [3, 0]])
  sc = tf.scatter_nd([[1], [3]], tf.stack([w, w * w]), [4, 5])
  sel = tf.where(x > 0.0, x * w, -x)
  tiled = tf.tile(tf.pad(w[None, :], [[1, 0], [2, 1]]), [2, 1])
  cs = tf.cumsum(x, axis=1, exclusive=True, reverse=True)
  top, _ = tf.nn.top_k(x * w, k=2)
  seg = tf.math.unsorted_segment_sum(x, [0, 2, 0, 1], 3)
  rev = tf.reverse(tf.maximum(x, w), [0])
  loss = (tf.reduce_sum(a * a) + tf.reduce_sum(g) + tf.reduce_sum(sc * x) +
          tf.reduce_sum(sel) + tf.reduce_sum(tiled * np.linspace(0.1, 1.0, 32).reshape(4, 8)) +
          tf.reduce_sum(cs * x) + tf.reduce_sum(top) + tf.reduce_sum(seg * seg) +
          tf.reduce_sum(rev * np.linspace(1.0, 2.0, 20).reshape(4, 5)))
  return [x, w], tf.identity(loss, name="loss"), None


def losses_mix():
  """tf.compat.v1.losses and math from training scripts: sigmoid and softmax (label
  smoothing) cross-entropies, Huber, log loss, hinge, mean squared error, l2_normalize,
  reduce_logsumexp, clip_by_value, softplus, Pow, Abs."""
  x = v1.placeholder(tf.float64, [4, 3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")
  logits = x * w + tf.abs(x) * 0.1
  onehot = tf.constant(np.eye(3)[[0, 2, 1, 2]])
  probs = tf.sigmoid(logits)
  loss = (v1.losses.sigmoid_cross_entropy(onehot, logits) +
          v1.losses.softmax_cross_entropy(onehot, logits, label_smoothing=0.1) +
          # These four return float32 (their loss-weight arithmetic), as TF writes them.
          tf.cast(v1.losses.huber_loss(onehot, logits, delta=0.5) +
                  v1.losses.log_loss(onehot, probs) +
                  v1.losses.hinge_loss(onehot, logits) +
                  v1.losses.mean_squared_error(onehot, tf.nn.l2_normalize(logits, axis=1)),
                  tf.float64) +
          tf.reduce_sum(tf.reduce_logsumexp(logits, axis=1)) +
          tf.reduce_sum(tf.clip_by_value(logits, -0.3, 0.4) * tf.nn.softplus(x)) +
          tf.reduce_sum(tf.pow(tf.abs(x) + 0.5, w)))
  return [x, w], tf.identity(loss, name="loss"), None


def volumes_and_dilations():
  """float32: Conv3D, MaxPool3D, AvgPool3D, local response normalization, an atrous
  convolution (SpaceToBatchND / BatchToSpaceND) and a dilated Conv2D."""
  x = v1.placeholder(tf.float32, [1, 4, 6, 6, 2], name="x")
  w = v1.placeholder(tf.float32, [2, 3, 3, 2, 3], name="w")
  h = tf.nn.conv3d(x, w, [1, 1, 1, 1, 1], "SAME")
  p = tf.nn.max_pool3d(h, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID") + \
      tf.nn.avg_pool3d(h, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID")
  flat = tf.reshape(h, [4, 6, 6, 3])
  lrn = tf.nn.local_response_normalization(flat, depth_radius=1, bias=1.0, alpha=0.5, beta=0.75)
  k = tf.constant(np.sin(np.arange(27)).reshape(3, 3, 3, 1) * 0.5, tf.float32)
  atrous = tf.nn.atrous_conv2d(lrn, k, rate=2, padding="SAME")
  dilated = tf.nn.conv2d(lrn, k, [1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 1])
  loss = (tf.reduce_sum(p * 0.7) + tf.reduce_sum(tf.square(atrous)) * 0.1 +
          tf.reduce_sum(dilated * np.linspace(-1.0, 1.0, 8).reshape(1, 2, 2, 2)[:, :, :, :1]
                        .repeat(1, 0)))
  return [x, w], tf.identity(loss, name="loss"), None


def linalg_ctc():
  """tf.linalg: inverse, determinant and a triangular solve of matrices built from x; and
  tf.compat.v1.nn.ctc_loss (CTCLoss) on logits from x."""
  x = v1.placeholder(tf.float64, [2, 3, 3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")
  a = x + tf.eye(3, dtype=tf.float64) * 3.0
  lower = tf.linalg.band_part(a, -1, 0)
  solved = tf.linalg.triangular_solve(lower, a * w, lower=True)
  upper_solved = tf.linalg.triangular_solve(tf.linalg.band_part(a, 0, -1), a, lower=False,
                                            adjoint=True)
  linalg = (tf.reduce_sum(tf.linalg.inv(a) * np.linspace(0.5, 1.5, 18).reshape(2, 3, 3)) +
            tf.reduce_sum(tf.linalg.det(a) * [0.3, -0.2]) + tf.reduce_sum(solved) +
            tf.reduce_sum(upper_solved * upper_solved))
  logits = tf.transpose(x, [1, 0, 2]) * w  # [time 3, batch 2, classes 3]
  labels = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([1, 0, 1], tf.int32), [2, 2])
  ctc = v1.nn.ctc_loss(labels, tf.cast(logits, tf.float32), [3, 3])
  loss = tf.add(linalg, tf.cast(tf.reduce_sum(ctc * [1.0, 0.5]), tf.float64), name="loss")
  return [x, w], loss, None


def cholesky():
  """tf.linalg.cholesky of symmetric positive definite matrices built from x and w."""
  x = v1.placeholder(tf.float64, [2, 3, 3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")
  a = tf.matmul(x * w, x * w, transpose_b=True) + tf.eye(3, dtype=tf.float64) * 2.0
  weights = np.linspace(-1.0, 1.5, 18).reshape(2, 3, 3)
  return [x, w], tf.reduce_sum(tf.linalg.cholesky(a) * weights, name="loss"), None


def wsum(t, lo=0.5, hi=1.5):
  """sum(t * a fixed ramp in t's static shape)."""
  shape = t.shape.as_list()
  return tf.reduce_sum(t * np.linspace(lo, hi, int(np.prod(shape))).reshape(shape))


def einsum_forms():
  """tf.einsum with ellipses (Keras' EinsumDense form, and batch dims broadcast),
  repeated labels (a trace, a diagonal, one inside a contraction) and a label summed out
  of one operand alone."""
  x = v1.placeholder(tf.float64, [2, 3, 4], name="x")
  w = v1.placeholder(tf.float64, [4, 4], name="w")
  dense = tf.einsum("...d,de->...e", x, w)
  broadcast = tf.einsum("...ij,...jk->...ik", x, tf.reshape(w, [1, 4, 4]))
  trace = tf.einsum("ii->", w)
  diagonal = tf.einsum("ii->i", w * w)
  summed_alone = tf.einsum("bij,jk->bk", x, w)
  repeated = tf.einsum("bii,bi->b", x[:, :, :3], tf.reduce_sum(x, -1))
  loss = tf.add_n([wsum(dense), wsum(broadcast, -1.0, 1.0), trace * 0.7, wsum(diagonal),
                   wsum(summed_alone, 1.0, 2.0), wsum(repeated)], name="loss")
  return [x, w], loss, None


def decompositions():
  """tf.linalg.qr (tall, wide, and full on square matrices), tf.linalg.svd (tall, wide,
  values only) and tf.linalg.eigh / eigvalsh of matrices built from x and w. The losses
  read singular vectors and eigenvectors squared: their signs are not unique, and
  LAPACK's may differ from TF's Eigen's."""
  x = v1.placeholder(tf.float64, [2, 4, 3], name="x")
  w = v1.placeholder(tf.float64, [3], name="w")
  a = x * w
  wide = tf.linalg.matrix_transpose(a)
  q, r = tf.linalg.qr(a)
  q_wide, r_wide = tf.linalg.qr(wide)
  q_full, r_full = tf.linalg.qr(a[:, :3, :], full_matrices=True)
  s, u, v = tf.linalg.svd(a)
  s_wide, u_wide, v_wide = tf.linalg.svd(wide)
  s_only = tf.linalg.svd(a, compute_uv=False)
  symmetric = tf.matmul(a, a, transpose_a=True) + tf.linalg.diag(np.array([[0.3, 1.7, 4.1]] * 2))
  e, vectors = tf.linalg.eigh(symmetric)
  e_only = tf.linalg.eigvalsh(symmetric * 0.5)
  parts = [wsum(q), wsum(r), wsum(q_wide, -1.0, 1.0), wsum(r_wide), wsum(q_full),
           wsum(r_full, 1.0, 2.0), wsum(s), wsum(u * u), wsum(v * v, -1.0, 0.5),
           wsum(s_wide, 2.0, 3.0), wsum(u_wide * u_wide), wsum(v_wide * v_wide),
           wsum(s_only), wsum(e), wsum(vectors * vectors), wsum(e_only, -1.0, 1.0)]
  return [x, w], tf.add_n(parts, name="loss"), None


def main():
  os.makedirs(HERE, exist_ok=True)
  for name, build in [("loop_cond", loop_cond), ("nested_loops", nested_loops),
                      ("tensor_array_rnn", tensor_array_rnn), ("scan_map_fn", scan_map_fn),
                      ("lstm_dynamic_rnn", lstm_dynamic_rnn),
                      ("gru_bidirectional", gru_bidirectional), ("cond_in_rnn", cond_in_rnn),
                      ("cnn_batch_norm", cnn_batch_norm),
                      ("loop_case_max_iterations", loop_case_max_iterations),
                      ("transformer_block", transformer_block),
                      ("embedding_classifier", embedding_classifier),
                      ("unet_ops", unet_ops), ("array_ops_mix", array_ops_mix),
                      ("losses_mix", losses_mix),
                      ("volumes_and_dilations", volumes_and_dilations),
                      ("linalg_ctc", linalg_ctc), ("cholesky", cholesky),
                      ("einsum_forms", einsum_forms), ("decompositions", decompositions)]:
    feeds = feeds_for(name)
    if name in ("cond_in_rnn", "cnn_batch_norm"):
      feeds = {"x:0": feeds["x:0"]}
    with tf.Graph().as_default() as g:
      inputs, loss, init = build()
      text = str(g.as_graph_def())
      grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, inputs)]  # dense
      with v1.Session() as s:
        if init is not None:
          s.run(init)
        values = s.run([loss] + grads, feeds)
    with open(os.path.join(HERE, name + ".pbtxt"), "w") as f:
      f.write(text)
    names = [t.handle.name if hasattr(t, "handle") else t.name for t in inputs]
    golden = {"generator": "TensorFlow %s, tf.compat.v1 (control flow v1)" % tf.__version__,
              "feeds": {k: v.ravel().tolist() for k, v in feeds.items()},
              "feed_dtype": ("float32" if name in ("cnn_batch_norm", "unet_ops",
                                                   "volumes_and_dilations") else "float64"),
              # Parts in float32 (the four losses above) round as float32 does.
              "tolerance": 1e-6 if name in ("losses_mix", "linalg_ctc") else 0,
              "feed_shapes": {k: list(v.shape) for k, v in feeds.items()},
              "init": init.name if init is not None else "",
              "loss": "loss:0", "inputs": names, "loss_value": float(values[0]),
              "gradients": [np.asarray(v).ravel().tolist() for v in values[1:]]}
    with open(os.path.join(HERE, name + ".json"), "w") as f:
      json.dump(golden, f, indent=1)
    print(name, values[0], [np.asarray(v).shape for v in values[1:]])


if __name__ == "__main__":
  main()
