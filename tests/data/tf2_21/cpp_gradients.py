"""TF 1 graphs (control flow v1) that C++ code differentiates after importing them:
tests/graph/gradients/imported_graph_grads_test.cc. Run by hand with tensorflow-cpu==2.21.0:

  /tmp/tfvenv/bin/python tests/data/tf2_21/cpp_gradients.py

Per graph: cpp_gradients/NAME.pbtxt, the GraphDef as TF built it before any gradient
(tf.compat.v1.while_loop / tf.cond with control flow v1: TF's pivots, switches and frame
names), and NAME.json with the feeds, the loss and TF's tf.gradients of it.
"""
import json
import os

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
  return [x, w], tf.reduce_sum(y * WEIGHTS, name="loss")


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
  return [x, w], tf.reduce_sum(y * WEIGHTS, name="loss")


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
  return [x, w], tf.reduce_sum(y * np.linspace(1.0, 2.1, 12).reshape(4, 3), name="loss")


RNN_X = [0.3, -0.7, 0.9, 0.1, 0.2, -0.4, -0.6, 0.5, 0.05, 0.8, -0.1, 0.35]


def main():
  os.makedirs(HERE, exist_ok=True)
  for name, build in [("loop_cond", loop_cond), ("nested_loops", nested_loops),
                      ("tensor_array_rnn", tensor_array_rnn)]:
    feeds = {"x:0": RNN_X if name == "tensor_array_rnn" else [0.3, -0.7, 0.9],
             "w:0": [1.2, 0.8, -0.5]}
    with tf.Graph().as_default() as g:
      inputs, loss = build()
      text = str(g.as_graph_def())
      grads = tf.gradients(loss, inputs)
      with v1.Session() as s:
        values = s.run([loss] + grads,
                       {t: np.reshape(feeds[t.name], t.shape) for t in inputs})
    with open(os.path.join(HERE, name + ".pbtxt"), "w") as f:
      f.write(text)
    golden = {"generator": "TensorFlow %s, tf.compat.v1 (control flow v1)" % tf.__version__,
              "feeds": feeds, "loss": "loss:0", "inputs": [t.name for t in inputs],
              "loss_value": float(values[0]),
              "gradients": [np.asarray(v).tolist() for v in values[1:]]}
    with open(os.path.join(HERE, name + ".json"), "w") as f:
      json.dump(golden, f, indent=1)
    print(name, values[0], [np.asarray(v).tolist() for v in values[1:]])


if __name__ == "__main__":
  main()
