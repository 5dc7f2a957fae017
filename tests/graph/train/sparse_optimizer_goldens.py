"""TF 2.21's tables for tests/graph/train/sparse_gradient_test.cc (run by hand with
tensorflow-cpu==2.21.0; the test holds the printed values, CI never needs TensorFlow).

An embedding table (resource variable, float64) read by tf.gather (ResourceGather, so TF's
optimizers take their sparse paths), loss = sum(rows * [1, 2]) + sum(rows^2), trained on
ids [1, 1] then [1, 3] by each tf.compat.v1.train optimizer.
"""
import numpy as np, tensorflow as tf
v1 = tf.compat.v1
v1.disable_eager_execution()
def run(make):
  with tf.Graph().as_default():
    table = v1.get_variable("table", initializer=np.array([[0.1,0.2],[0.3,0.4],[0.5,0.6],[0.7,0.8]]), use_resource=True)
    ids = v1.placeholder(tf.int32, [None])
    rows = tf.gather(table, ids)
    loss = tf.reduce_sum(rows * np.array([[1.0, 2.0]])) + tf.reduce_sum(tf.square(rows))
    train = make().minimize(loss)
    with v1.Session() as s:
      s.run(v1.global_variables_initializer())
      for i in ([1,1],[1,3]):
        s.run(train, {ids: i})
      return s.run(table).ravel().tolist()
opts = {
 "rmsprop": lambda: v1.train.RMSPropOptimizer(0.01, 0.9, 0.5),
 "rmsprop_centered": lambda: v1.train.RMSPropOptimizer(0.01, 0.9, 0.5, 1e-10, centered=True),
 "ftrl": lambda: v1.train.FtrlOptimizer(0.1),
 "ftrl_shrinkage": lambda: v1.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.1),
 "adam": lambda: v1.train.AdamOptimizer(0.1),
 "momentum": lambda: v1.train.MomentumOptimizer(0.1, 0.9),
 "adagrad": lambda: v1.train.AdagradOptimizer(0.1),
 "adadelta": lambda: v1.train.AdadeltaOptimizer(1.0),
 "sgd": lambda: v1.train.GradientDescentOptimizer(0.1),
}
for k, f in opts.items():
  print(k, repr(run(f)))
