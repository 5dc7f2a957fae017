"""Expected values and error texts of tests/kernels/cpu/strided_slice_grad_op_test.cc and
dynamic_stitch_op_test.cc, from TensorFlow.

Run with TF 2.21 (tensorflow-cpu):  python stitch_and_strided_slice_grad_tf.py
Each line prints a call's tf.raw_ops result (values, shape) or its error text without the
eager wrapper's "{{function_node ...}}" prefix.
"""
import re

import numpy as np
import tensorflow as tf

r = tf.raw_ops


def show(label, fn, **kw):
    try:
        v = fn(**kw)
        print("%s: %s %s" % (label, v.numpy().ravel().tolist(), list(v.shape)))
    except tf.errors.OpError as e:
        msg = re.sub(r"^\{\{function_node [^}]*\}\} ", "", e.message).split(" [Op:")[0]
        print("%s: %s: %s" % (label, type(e).__name__, msg))


f32 = lambda v: np.array(v, np.float32)
SG = r.StridedSliceGrad
print("# StridedSliceGrad")
show("strides 2, 2", SG, shape=[3, 4], begin=[0, 1], end=[3, 4], strides=[2, 2],
     dy=f32([[1, 2], [3, 4]]))
show("stride -2", SG, shape=[5], begin=[4], end=[0], strides=[-2], dy=f32([10, 20]))
show("x[..., 1:3]", SG, shape=[2, 3, 4], begin=[0, 1], end=[0, 3], strides=[1, 1],
     ellipsis_mask=1, dy=f32(np.arange(1, 13).reshape(2, 3, 2)))
show("x[:, newaxis, 1]", SG, shape=[2, 3, 4], begin=[0, 0, 1], end=[0, 0, 2],
     strides=[1, 1, 1], begin_mask=1, end_mask=1, new_axis_mask=2, shrink_axis_mask=4,
     dy=f32(np.arange(1, 9).reshape(2, 1, 4)))
show("x[1, ::-1]", SG, shape=[2, 3, 2], begin=[1, 0], end=[2, 0], strides=[1, -1],
     begin_mask=2, end_mask=2, shrink_axis_mask=1, dy=f32(np.arange(1, 7).reshape(3, 2)))
show("int64 Index, int32 T", SG, shape=np.array([4], np.int64), begin=np.array([1], np.int64),
     end=np.array([3], np.int64), strides=np.array([1], np.int64),
     dy=np.array([7, 8], np.int32))
show("strings", SG, shape=[3], begin=[1], end=[2], strides=[1], dy=tf.constant(["s"]))
show("empty slice", SG, shape=[3], begin=[2], end=[1], strides=[1], dy=f32([]))
show("dy shape", SG, shape=[3, 4], begin=[0, 1], end=[3, 4], strides=[2, 2],
     dy=np.ones((2, 3), np.float32))
show("shape 2-D", SG, shape=[[3, 4]], begin=[0, 1], end=[3, 4], strides=[2, 2],
     dy=np.ones((2, 2), np.float32))
show("zero stride", SG, shape=[3, 4], begin=[0, 1], end=[3, 4], strides=[0, 2],
     dy=np.ones((2, 2), np.float32))
show("shrink out of range", SG, shape=[3, 4], begin=[5], end=[6], strides=[1],
     shrink_axis_mask=1, dy=np.ones((4,), np.float32))
show("negative dim", SG, shape=[3, -4], begin=[0], end=[1], strides=[1],
     dy=np.ones((1, 4), np.float32))
show("unequal sizes", SG, shape=[3, 4], begin=[0, 1], end=[3, 4, 1], strides=[2, 2],
     dy=np.ones((2, 2), np.float32))

for name, op in (("DynamicStitch", r.DynamicStitch),
                 ("ParallelDynamicStitch", r.ParallelDynamicStitch)):
    print("# " + name)
    show("rows", op, indices=[[0, 2], [1]], data=[f32([[1, 2], [3, 4]]), f32([[5, 6]])])
    show("gap", op, indices=[[0, 3], [1]], data=[f32([1, 2]), f32([5])])
    show("2-D and scalar indices", op,
         indices=[tf.constant([[0, 1], [2, 3]]), tf.constant(4)],
         data=[f32(np.arange(1, 9).reshape(2, 2, 2)), f32([9, 10])])
    show("strings", op, indices=[[1, 0]], data=[tf.constant(["a", "b"])])
    show("empty", op, indices=[tf.zeros([0], tf.int32)], data=[tf.zeros([0, 3])])
    show("negative", op, indices=[[0, 2], [-1, 1]], data=[f32([1, 2]), f32([5, 6])])
    show("prefix", op, indices=[[0, 2], [1]], data=[f32([1, 2]), f32([5, 6])])
    show("row shape", op, indices=[[0, 2], [1]], data=[f32([[1], [2]]), f32([[5, 6]])])
    show("first prefix", op, indices=[[0, 2], [1]], data=[f32([1, 2, 3]), f32([5])])
print("# DynamicStitch duplicates: the last wins")
show("duplicates", r.DynamicStitch, indices=[[0, 1, 2], [1]], data=[f32([1, 2, 3]), f32([9])])
show("duplicates in one", r.DynamicStitch, indices=[[2, 0, 2]], data=[f32([1, 2, 3])])
