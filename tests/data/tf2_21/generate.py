#!/usr/bin/env python3
"""Writes the TensorFlow 2.21 test files under tests/data/tf2_21 and TF's answers for them.

Run by hand on a developer machine (CI and `bazel test` never need TensorFlow):

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tests/data/tf2_21/generate.py

What it writes (all small, committed):
  graphs/*.pb, graphs/*.pbtxt   GraphDefs written by TF 2.21 itself (tf.io.write_graph), so
                                every node carries the attrs TF 2.21 adds (MatMul.grad_a, ...).
  goldens/*.json                for each runnable graph, feeds and TF's fetched values
                                (tf.compat.v1.Session on the file as written), in the format of
                                tests/data/tf_graphs/goldens; "config" when the graph needs one.
                                Kind "import_only": graphs whose ops dflow cannot run yet
                                (the golden says which issue brings the kernels); dflow must
                                import them without a problem.
  errors/*.json                 error cases: the code and message TF 2.21's C++ session gives
                                (through its C API, tf_c_session.py) and what tf.compat.v1.Session
                                does, for dflow to match.
"""
import json
import os
import shutil

import numpy as np
import tensorflow as tf
from google.protobuf import text_format

import tf_c_session

tf.compat.v1.disable_eager_execution()
HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS, GOLDENS, ERRORS = (os.path.join(HERE, d) for d in ("graphs", "goldens", "errors"))
RNG = np.random.default_rng(2021)


def numpy_dtype_name(dtype):
  return {tf.bfloat16: "bfloat16"}.get(tf.as_dtype(dtype), tf.as_dtype(dtype).name)


def as_list(value):
  value = np.asarray(value)
  if value.dtype == tf.bfloat16.as_numpy_dtype or value.dtype == np.float16:
    value = value.astype(np.float32)
  if value.dtype.kind == "b":
    return [bool(v) for v in value.reshape(-1)]
  if value.dtype.kind in "iu":
    return [int(v) for v in value.reshape(-1)]
  out = []
  for v in value.reshape(-1):
    v = float(v)
    out.append("NaN" if np.isnan(v) else ("Infinity" if v == np.inf else
                                          ("-Infinity" if v == -np.inf else v)))
  return out


def tensor_json(value, dtype):
  value = np.asarray(value)
  return {"dtype": numpy_dtype_name(dtype), "shape": list(value.shape), "value": as_list(value)}


def write_graph(graph_def, name, as_text):
  path = tf.io.write_graph(graph_def, GRAPHS, name, as_text=as_text)
  return os.path.relpath(path, HERE)


def session_config(text):
  config = tf.compat.v1.ConfigProto()
  if text:
    text_format.Parse(text, config)
  return config


def run_file(path, feeds, fetches, config_text=""):
  """Runs the file as written, in a fresh graph, with tf.compat.v1.Session."""
  graph_def = tf.compat.v1.GraphDef()
  with open(os.path.join(HERE, path), "rb") as f:
    data = f.read()
  if path.endswith(".pbtxt"):
    text_format.Parse(data.decode(), graph_def)
  else:
    graph_def.ParseFromString(data)
  with tf.Graph().as_default() as g:
    tf.compat.v1.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=g, config=session_config(config_text)) as s:
      feed_dict = {g.get_tensor_by_name(canonical(k)): v for k, v in feeds.items()}
      values = s.run([g.get_tensor_by_name(canonical(f)) for f in fetches], feed_dict)
      dtypes = [g.get_tensor_by_name(canonical(f)).dtype for f in fetches]
  return values, dtypes


def canonical(name):
  return name if ":" in name else name + ":0"


def golden(name, graph, feeds, fetches, note, config_text="", as_text=False, dtypes=None):
  """Writes graph `name`, runs it with TF and writes its golden."""
  ext = ".pbtxt" if as_text else ".pb"
  path = write_graph(graph.as_graph_def(), name + ext, as_text)
  values, fetch_dtypes = run_file(path, feeds, fetches, config_text)
  feed_dtypes = dtypes or {}
  doc = {
      "file": path,
      "generator": "TensorFlow %s, tf.compat.v1.Session on the file as written" % tf.__version__,
      "note": note,
      "feeds": {k: tensor_json(v, feed_dtypes.get(k, np.asarray(v).dtype)) for k, v in feeds.items()},
      "fetches": {f: tensor_json(v, d) for f, v, d in zip(fetches, values, fetch_dtypes)},
  }
  if config_text:
    doc["config"] = config_text
  dump(os.path.join(GOLDENS, name + ".json"), doc)


def import_only(name, graph, why):
  path = write_graph(graph.as_graph_def(), name + ".pb", False)
  dump(os.path.join(GOLDENS, name + ".json"),
       {"file": path, "generator": "TensorFlow %s" % tf.__version__, "import_only": why})


def dump(path, doc):
  with open(path, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")


# ---- the seed graphs (examples/*.pbtxt), as TF 2.21 writes them ------------------------

def seed_graphs():
  with tf.Graph().as_default() as g:
    a = tf.constant([[1., 2., 3.], [4., 5., 6.]], name="a")
    b = tf.constant([[1., 2.], [3., 4.], [5., 6.]], name="b")
    tf.matmul(a, b, name="c")
  golden("seed_matmul", g, {}, ["c"], "examples/seed_matmul: c = a x b", as_text=True)
  golden("seed_matmul_binary", g, {}, ["c"], "the same, binary (tf.io.write_graph as_text=False)")

  with tf.Graph().as_default() as g:
    towers = []
    for i, device in enumerate(["/cpu:2", "/cpu:3"]):
      with tf.device(device), tf.name_scope("tower_%d" % i):
        a = tf.constant([[1., 2., 3.], [4., 5., 6.]], name="a")
        b = tf.constant([[1., 2.], [3., 4.], [5., 6.]], name="b")
        towers.append(tf.matmul(a, b, name="c"))
    with tf.device("/cpu:0"):
      tf.math.add_n(towers, name="sum")
  golden("multi_tower", g, {}, ["sum"], "examples/multi_tower: two towers summed by AddN",
         config_text='device_count { key: "CPU" value: 4 }', as_text=True)

  with tf.Graph().as_default() as g:
    with tf.device("/cpu:0"):
      a = tf.constant([[1., 2., 3.], [4., 5., 6.]], name="a")
      b = tf.constant([[1., 2.], [3., 4.], [5., 6.]], name="b")
    with tf.device("/cpu:1"):
      tf.matmul(a, b, name="c")
  golden("manual_placement", g, {}, ["c"], "examples/manual_placement: c pinned to /cpu:1",
         config_text='device_count { key: "CPU" value: 2 }', as_text=True)


# ---- one small graph per attr TF added after 2.0 --------------------------------------

def attr_graphs():
  x_val = RNG.standard_normal((2, 3)).astype(np.float32)
  with tf.Graph().as_default() as g:
    x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
    w = tf.constant(RNG.standard_normal((3, 4)).astype(np.float32), name="w")
    y = tf.matmul(x, w, name="y")
    gx, gw = tf.gradients(tf.reduce_sum(y * y), [x, w])
    tf.identity(gx, name="grad_x")
    tf.identity(gw, name="grad_w")
  golden("matmul_grad_attrs", g, {"x": x_val}, ["y", "grad_x", "grad_w"],
         "MatMul with grad_a/grad_b (TF 2.21 sets them on gradient MatMuls)")

  img = RNG.standard_normal((2, 5, 5, 3)).astype(np.float32)
  with tf.Graph().as_default() as g:
    x = tf.compat.v1.placeholder(tf.float32, [2, 5, 5, 3], name="x")
    p = tf.nn.max_pool2d(x, 3, 2, "SAME", name="pool")
    (gp,) = tf.gradients(tf.reduce_sum(p * p), [x])
    tf.identity(gp, name="pool_grad")
  golden("maxpool_explicit_paddings", g, {"x": img}, ["pool", "pool_grad"],
         "MaxPool and MaxPoolGrad with explicit_paddings")

  with tf.Graph().as_default() as g:
    x = tf.compat.v1.placeholder(tf.float32, [2, 5, 5, 3], name="x")
    f = tf.constant(RNG.standard_normal((3, 3, 3, 2)).astype(np.float32), name="f")
    tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME", name="depthwise")
    tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "VALID", name="depthwise_s2")
  golden("depthwise_conv2d_native", g, {"x": img}, ["depthwise", "depthwise_s2"],
         "DepthwiseConv2dNative with explicit_paddings")

  with tf.Graph().as_default() as g:
    x = tf.compat.v1.placeholder(tf.float32, [2, 5, 5, 3], name="x")
    c = lambda n, v: tf.constant(v.astype(np.float32), name=n)
    y, _, _ = tf.compat.v1.nn.fused_batch_norm(
        x, c("scale", RNG.uniform(0.5, 1.5, 3)), c("offset", RNG.standard_normal(3)),
        mean=c("mean", RNG.standard_normal(3)), variance=c("variance", RNG.uniform(0.5, 2, 3)),
        epsilon=0.001, is_training=False, name="bn")
    tf.identity(y, name="y")
  golden("fused_batch_norm_v3", g, {"x": img}, ["y"],
         "FusedBatchNormV3 (inference) with exponential_avg_factor")

  a_val = RNG.standard_normal((2, 3, 4)).astype(np.float32)
  with tf.Graph().as_default() as g:
    a = tf.compat.v1.placeholder(tf.float32, [2, 3, 4], name="a")
    b = tf.constant(RNG.standard_normal((2, 4, 5)).astype(np.float32), name="b")
    y = tf.matmul(a, b, name="y")
    (ga,) = tf.gradients(tf.reduce_sum(y * y), [a])
    tf.identity(ga, name="grad_a")
  golden("batch_matmul_v2_grad_attrs", g, {"a": a_val}, ["y", "grad_a"],
         "BatchMatMulV2 with grad_x/grad_y")

  with tf.Graph().as_default() as g:
    a = tf.compat.v1.placeholder(tf.float32, [2, 3], name="a")
    b = tf.compat.v1.placeholder(tf.float32, [2, 2], name="b")
    c = tf.concat([a, b], axis=1, name="c")
    ga, gb = tf.gradients(tf.reduce_sum(c * c), [a, b])
    tf.identity(ga, name="grad_a")
    tf.identity(gb, name="grad_b")
  golden("concat_offset_shape_type", g,
         {"a": RNG.standard_normal((2, 3)).astype(np.float32),
          "b": RNG.standard_normal((2, 2)).astype(np.float32)},
         ["c", "grad_a", "grad_b"], "ConcatV2's gradient: ConcatOffset with shape_type")

  with tf.Graph().as_default() as g:
    params = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4), name="params")
    idx = tf.compat.v1.placeholder(tf.int32, [3, 2], name="idx")
    tf.gather_nd(params, idx, name="gathered")
    tf.scatter_nd(idx, tf.constant(np.ones((3, 4), np.float32)), [2, 3, 4], name="scattered")
  golden("gather_scatter_nd", g, {"idx": np.array([[0, 1], [1, 2], [0, 1]], np.int32)},
         ["gathered", "scattered"], "GatherNd and ScatterNd with bad_indices_policy")

  with tf.Graph().as_default() as g:
    x = tf.compat.v1.placeholder(tf.float32, [2, 6], name="x")
    values, indices = tf.math.top_k(x, 3, name="topk")
    tf.identity(values, name="values")
    tf.identity(indices, name="indices")
  golden("topk_v2", g, {"x": RNG.standard_normal((2, 6)).astype(np.float32)},
         ["values", "indices"], "TopKV2 with Tk and index_type")

  with tf.Graph().as_default() as g:
    x = tf.compat.v1.placeholder(tf.int32, [8], name="x")
    tf.raw_ops.DenseBincount(input=x, size=tf.constant(5), weights=tf.constant([], tf.float32),
                             binary_output=False, name="bincount")
  golden("dense_bincount", g, {"x": np.array([0, 1, 1, 4, 3, 1, 7, 0], np.int32)},
         ["bincount"], "DenseBincount (a TF 2.x op)")

  with tf.Graph().as_default() as g:
    a = tf.compat.v1.placeholder(tf.int8, [4], name="a")
    b = tf.compat.v1.placeholder(tf.int8, [4], name="b")
    tf.maximum(a, b, name="max")
    tf.minimum(a, b, name="min")
  golden("maximum_int8", g, {"a": np.array([-128, 5, 0, 127], np.int8),
                             "b": np.array([3, -5, 0, 126], np.int8)},
         ["max", "min"], "Maximum and Minimum on int8")


def half_graphs():
  for dtype, name in [(tf.float16, "float16"), (tf.bfloat16, "bfloat16")]:
    np_dtype = dtype.as_numpy_dtype
    x_val = RNG.standard_normal((3, 4)).astype(np.float32)
    with tf.Graph().as_default() as g:
      x = tf.compat.v1.placeholder(dtype, [3, 4], name="x")
      w = tf.constant(RNG.standard_normal((4, 5)).astype(np_dtype), name="w")
      bias = tf.constant(RNG.standard_normal(5).astype(np_dtype), name="bias")
      y = tf.nn.bias_add(tf.matmul(x, w), bias, name="dense")
      r = tf.nn.relu(y, name="relu")
      tf.nn.softmax(y, name="softmax")
      s = tf.add(x, tf.constant(0.5, dtype), name="add")
      m = tf.multiply(s, x, name="mul")
      tf.subtract(m, x, name="sub")
      tf.cast(r, tf.float32, name="to_float32")
      tf.cast(r, tf.int32, name="to_int32")
      tf.cast(tf.constant([1.5, -2.25, 70000.0], tf.float32), dtype, name="from_float32")
      tf.cast(tf.constant([3, -7, 300], tf.int32), dtype, name="from_int32")
    golden(name + "_ops", g, {"x": x_val.astype(np_dtype)},
           ["dense", "relu", "softmax", "add", "mul", "sub", "to_float32", "to_int32",
            "from_float32", "from_int32"],
           name + ": AddV2, Mul, Sub, MatMul, BiasAdd, Relu, Softmax and Cast",
           dtypes={"x": dtype})


def keras_frozen_cnn():
  """A small Keras CNN frozen as users freeze TF 2 models (convert_variables_to_constants_v2):
  Conv2D, BatchNormalization (FusedBatchNormV3), DepthwiseConv2D, ReLU6, pooling, Dense."""
  from tensorflow.python.framework import convert_to_constants
  tf.compat.v1.enable_eager_execution()
  try:
    tf.keras.utils.set_random_seed(7)
    model = tf.keras.Sequential([
        tf.keras.Input((12, 12, 3)),
        tf.keras.layers.Conv2D(8, 3, padding="same", use_bias=False),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.ReLU(),
        tf.keras.layers.DepthwiseConv2D(3, strides=2, padding="same", use_bias=False),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.ReLU(6.0),
        tf.keras.layers.MaxPooling2D(2),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(4, activation="softmax"),
    ])
    for layer in model.layers:  # non-trivial moving statistics
      if isinstance(layer, tf.keras.layers.BatchNormalization):
        n = layer.moving_mean.shape[0]
        layer.moving_mean.assign(RNG.standard_normal(n).astype(np.float32) * 0.1)
        layer.moving_variance.assign(RNG.uniform(0.5, 1.5, n).astype(np.float32))
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(
        tf.TensorSpec((2, 12, 12, 3), tf.float32, name="x"))
    frozen = convert_to_constants.convert_variables_to_constants_v2(fn)
    graph_def = frozen.graph.as_graph_def()
  finally:
    tf.compat.v1.disable_eager_execution()
  path = write_graph(graph_def, "keras_frozen_cnn.pb", False)
  feeds = {"x": RNG.standard_normal((2, 12, 12, 3)).astype(np.float32)}
  values, dtypes = run_file(path, feeds, ["Identity"])
  dump(os.path.join(GOLDENS, "keras_frozen_cnn.json"), {
      "file": path,
      "generator": "TensorFlow %s, tf.compat.v1.Session on the file as written" % tf.__version__,
      "note": "Keras Conv2D/BatchNormalization/DepthwiseConv2D/ReLU6/pooling/Dense frozen with "
              "convert_variables_to_constants_v2",
      "feeds": {k: tensor_json(v, v.dtype) for k, v in feeds.items()},
      "fetches": {"Identity": tensor_json(values[0], dtypes[0])},
  })


def unknown_attr_graph():
  """What a TensorFlow newer than 2.21 may write: an attr 2.21's MatMul does not declare."""
  with tf.Graph().as_default() as g:
    x = tf.compat.v1.placeholder(tf.float32, [2, 2], name="x")
    tf.matmul(x, tf.constant([[1., 2.], [3., 4.]]), name="y")
  graph_def = g.as_graph_def()
  for node in graph_def.node:
    if node.op == "MatMul":
      node.attr["attr_from_the_future"].i = 7
  path = write_graph(graph_def, "unknown_attr.pbtxt", True)
  feeds = {"x": np.array([[1, 0], [0, 1]], np.float32)}
  values, dtypes = run_file(path, feeds, ["y"])
  dump(os.path.join(GOLDENS, "unknown_attr.json"), {
      "file": path,
      "generator": "TensorFlow %s: it logs 'NodeDef mentions attribute attr_from_the_future "
                   "which is not in the op definition ... Unknown attributes will be ignored.' "
                   "and runs" % tf.__version__,
      "note": "an attr a newer TensorFlow added: accepted, dropped, warned about",
      "feeds": {k: tensor_json(v, v.dtype) for k, v in feeds.items()},
      "fetches": {"y": tensor_json(values[0], dtypes[0])},
  })


def import_only_graphs():
  with tf.Graph().as_default() as g:
    t = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    lst = tf.raw_ops.TensorListFromTensor(tensor=t, element_shape=tf.constant([2]))
    lst = tf.raw_ops.TensorListSetItem(input_handle=lst, index=1, item=tf.constant([9., 9.]))
    tf.raw_ops.TensorListGetItem(input_handle=lst, index=1, element_shape=tf.constant([2]),
                                 element_dtype=tf.float32, name="item")
  golden("tensor_list_items", g, {}, ["item"],
         "TensorListFromTensor, TensorListSetItem, TensorListGetItem (the Variant dtype)")



def resource_variable_graphs():
  # TF 1 graphs with use_resource=True: initializers, assign, assign_add/sub, reads,
  # gather, shape and is_initialized in one step, ordered by control dependencies (each
  # Run re-initializes, so the golden is one Run).
  with tf.Graph().as_default() as g:
    v = tf.compat.v1.get_variable("v", initializer=tf.constant([1., 2.]), use_resource=True)
    emb = tf.compat.v1.get_variable(
        "emb", initializer=tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3)),
        use_resource=True)
    count = tf.compat.v1.get_variable("count", initializer=tf.constant(5, tf.int64),
                                      use_resource=True)
    init = tf.group(v.initializer, emb.initializer, count.initializer, name="init")
    with tf.control_dependencies([init]):
      assigned = tf.compat.v1.assign(v, [3., 4.], name="assign")
    with tf.control_dependencies([assigned]):
      added = v.assign_add([10., 20.], name="assign_add")
      counted = count.assign_sub(tf.constant(2, tf.int64), name="assign_sub")
    with tf.control_dependencies([added, counted]):
      tf.identity(v.read_value(), name="v_value")
      tf.identity(count.read_value(), name="count_value")
      tf.gather(emb, [3, 0, 3], name="gathered")
      tf.shape(emb, name="emb_shape")
      tf.identity(tf.compat.v1.is_variable_initialized(v), name="is_init")
  golden("resource_variable", g, {},
         ["v_value", "count_value", "gathered", "emb_shape", "is_init"],
         "resource variables (use_resource=True): VarHandleOp, AssignVariableOp, "
         "AssignAdd/SubVariableOp, ReadVariableOp, ResourceGather, VariableShape, "
         "VarIsInitializedOp")


# ---- error cases: codes and texts ------------------------------------------------------

def error_cases():
  def gd(text):
    graph_def = tf.compat.v1.GraphDef()
    text_format.Parse(text, graph_def)
    return graph_def

  const = ('attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor '
           '{ dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 2 } } }')
  base = gd('node { name: "x" op: "Const" ' + const + ' } '
            'node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } } '
            'node { name: "y" op: "Identity" input: "p" attr { key: "T" value { type: DT_FLOAT } } }')
  def matrix(name, dims):
    return ('node { name: "%s" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
            'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { %s } '
            'float_val: 1 } } } }' % (name, " ".join("dim { size: %d }" % d for d in dims)))
  concat = ('node { name: "ax" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } '
            'attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } } '
            'node { name: "c" op: "ConcatV2" input: "a" input: "b" input: "ax" attr { key: "N" '
            'value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" '
            'value { type: DT_INT32 } } }')
  cases = [
      ("unknown_op", gd('node { name: "x" op: "FooBarOp" }'), {}, ["x:0"]),
      ("unknown_fetch", base, {}, ["nothere:0"]),
      ("unknown_feed", base, {"nothere:0": np.float32(1)}, ["x:0"]),
      ("fetch_output_out_of_range", base, {}, ["x:5"]),
      ("feed_output_out_of_range", base, {"x:3": np.float32(1)}, ["y:0"]),
      ("fetch_fed_tensor", base, {"y:0": np.float32(7)}, ["y:0"]),
      ("missing_control_input", gd('node { name: "x" op: "Const" ' + const + ' input: "^nothere" }'),
       {}, ["x:0"]),
      ("concat_dimension_mismatch", gd(matrix("a", [2, 3]) + matrix("b", [2, 4]) + concat),
       {}, ["c:0"]),
  ]
  for name, graph_def, feeds, fetches in cases:
    path = write_graph(graph_def, "error_" + name + ".pbtxt", True)
    code, c_result = tf_c_session.run(graph_def.SerializeToString(), feeds, fetches)
    doc = {"file": path, "feeds": {k: tensor_json(v, np.asarray(v).dtype) for k, v in feeds.items()},
           "fetches": fetches,
           "tf_c_api": {"code": code,
                        "message": c_result if code != "OK" else None,
                        "values": [as_list(v) for v in c_result] if code == "OK" else None},
           "tf_python_session": python_session_result(graph_def, feeds, fetches)}
    dump(os.path.join(ERRORS, name + ".json"), doc)


def python_session_result(graph_def, feeds, fetches):
  try:
    with tf.Graph().as_default() as g:
      tf.compat.v1.import_graph_def(graph_def, name="")
      with tf.compat.v1.Session(graph=g) as s:
        values = s.run(list(fetches), {k: v for k, v in feeds.items()})
    return {"code": "OK", "values": [as_list(v) for v in values]}
  except tf.errors.OpError as e:
    return {"code": tf_c_session.CODES[e.error_code],
            "message": e.message.split("\n\nOriginal")[0]}
  except (ValueError, TypeError, KeyError) as e:
    return {"code": "python " + type(e).__name__, "message": str(e)}


def main():
  for d in (GRAPHS, GOLDENS, ERRORS):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
  seed_graphs()
  attr_graphs()
  half_graphs()
  keras_frozen_cnn()
  unknown_attr_graph()
  import_only_graphs()
  resource_variable_graphs()
  error_cases()
  print("wrote", len(os.listdir(GRAPHS)), "graphs,", len(os.listdir(GOLDENS)), "goldens,",
        len(os.listdir(ERRORS)), "error cases")


if __name__ == "__main__":
  main()
