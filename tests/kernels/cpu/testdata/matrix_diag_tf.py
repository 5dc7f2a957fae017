"""Expected values and error texts of tests/kernels/cpu/matrix_diag_ops_test.cc, from
TensorFlow.

Run with TF 2.21 (tensorflow-cpu):  python matrix_diag_tf.py
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
        print("%s: %s: %r" % (label, type(e).__name__, msg))


f32 = lambda v: np.array(v, np.float32)
ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")
X = f32(np.arange(1, 25).reshape(2, 3, 4))  # two 3x4 matrices, 1..24

print("# tf.eye and num_rows/num_cols inference")
show("eye(3)", r.MatrixDiagV3, diagonal=f32([1, 1, 1]), k=0, num_rows=-1, num_cols=-1,
     padding_value=0.0)
show("eye(2, 3)", r.MatrixDiagV3, diagonal=f32([1, 1]), k=0, num_rows=2, num_cols=3,
     padding_value=0.0)
show("k=1 square", r.MatrixDiagV3, diagonal=f32([1, 2]), k=1, num_rows=-1, num_cols=-1,
     padding_value=0.0)
show("k=1 rows=2", r.MatrixDiagV3, diagonal=f32([1, 2]), k=1, num_rows=2, num_cols=-1,
     padding_value=0.0)
show("k=-1 cols=4", r.MatrixDiagV3, diagonal=f32([1, 2]), k=-1, num_rows=-1, num_cols=4,
     padding_value=7.0)

print("# MatrixDiagPartV3 of 1..24 as [2,3,4], k=[-1,2], padding 9, each align")
for align in ALIGNS:
    show("part " + align, r.MatrixDiagPartV3, input=X, k=[-1, 2], padding_value=9.0,
         align=align)
print("# MatrixDiagV3 of the part, back into [2,3,4], padding -1, each align")
for align in ALIGNS:
    d = r.MatrixDiagPartV3(input=X, k=[-1, 2], padding_value=9.0, align=align)
    print("diag input %s: %s" % (align, d.numpy().ravel().tolist()))
    show("diag " + align, r.MatrixDiagV3, diagonal=d, k=[-1, 2], num_rows=3, num_cols=4,
         padding_value=-1.0, align=align)
print("# a range of sub-diagonals only, rows and columns inferred")
show("diag k=[-2,-1]", r.MatrixDiagV3, diagonal=f32([[1, 2], [3, 4]]), k=[-2, -1],
     num_rows=-1, num_cols=-1, padding_value=0.0, align="RIGHT_LEFT")

print("# MatrixSetDiagV3")
D = f32(np.arange(101, 125).reshape(2, 3, 4))[:, :, :3]  # [2,3,3]
show("set k=[-1,1] RIGHT_LEFT", r.MatrixSetDiagV3, input=X, diagonal=D, k=[-1, 1])
show("set k=[-1,1] LEFT_RIGHT", r.MatrixSetDiagV3, input=X, diagonal=D, k=[-1, 1],
     align="LEFT_RIGHT")
show("set k=1", r.MatrixSetDiagV3, input=X, diagonal=f32([[-1, -2, -3], [-4, -5, -6]]), k=1)

print("# V1 and V2")
show("MatrixDiag", r.MatrixDiag, diagonal=f32([[1, 2], [3, 4]]))
show("MatrixDiagPart", r.MatrixDiagPart, input=X)
show("MatrixSetDiag", r.MatrixSetDiag, input=X, diagonal=f32([[0, 0, 0], [1, 1, 1]]))
show("MatrixDiagPartV2 k=[-1,2]", r.MatrixDiagPartV2, input=X, k=[-1, 2], padding_value=9.0)
show("MatrixDiagV2 k=[0,1]", r.MatrixDiagV2, diagonal=f32([[1, 2], [3, 0]]), k=[0, 1],
     num_rows=-1, num_cols=-1, padding_value=0.0)
show("MatrixSetDiagV2 k=[0,1]", r.MatrixSetDiagV2, input=f32(np.zeros((2, 3))),
     diagonal=f32([[1, 2], [3, 4]]), k=[0, 1])

print("# int32, int64, double and bool")
show("int32 part", r.MatrixDiagPartV3, input=np.arange(12, dtype=np.int32).reshape(3, 4),
     k=[-1, 0], padding_value=np.int32(-1), align="LEFT_RIGHT")
show("int64 diag", r.MatrixDiagV3, diagonal=np.array([5, 6], np.int64), k=-1, num_rows=-1,
     num_cols=-1, padding_value=np.int64(8))
show("double set", r.MatrixSetDiagV3, input=np.ones((2, 2)), diagonal=np.array([0.5, -0.5]),
     k=0)
show("bool diag", r.MatrixDiagV3, diagonal=np.array([False, True]), k=0, num_rows=-1,
     num_cols=3, padding_value=True)

print("# errors")
show("k0 > k1", r.MatrixDiagV3, diagonal=f32([[1, 2], [3, 4]]), k=[1, 0], num_rows=-1,
     num_cols=-1, padding_value=0.0)
show("lower out of range", r.MatrixDiagPartV3, input=X, k=[-3, 0], padding_value=0.0)
show("upper out of range", r.MatrixDiagPartV3, input=X, k=[0, 4], padding_value=0.0)
show("set upper out of range", r.MatrixSetDiagV3, input=X, diagonal=D, k=[0, 4])
show("three k", r.MatrixDiagPartV3, input=X, k=[0, 1, 2], padding_value=0.0)
show("empty k", r.MatrixDiagPartV3, input=X, k=np.zeros([0], np.int32), padding_value=0.0)
show("set empty k", r.MatrixSetDiagV3, input=X, diagonal=D, k=np.zeros([0], np.int32))
show("rows too small", r.MatrixDiagV3, diagonal=f32([1, 2]), k=0, num_rows=1, num_cols=-1,
     padding_value=0.0)
show("inconsistent", r.MatrixDiagV3, diagonal=f32([1, 2]), k=0, num_rows=3, num_cols=3,
     padding_value=0.0)
show("diagonal count", r.MatrixDiagV3, diagonal=f32([[1, 2], [3, 4]]), k=[0, 2],
     num_rows=-1, num_cols=-1, padding_value=0.0)
show("padding not scalar", r.MatrixDiagPartV3, input=X, k=0, padding_value=f32([0, 1]))
show("part input rank", r.MatrixDiagPart, input=f32([1, 2]))
show("set diagonal shape", r.MatrixSetDiag, input=X, diagonal=f32([[1, 2], [3, 4]]))
show("set diagonal count", r.MatrixSetDiagV3, input=X, diagonal=D[:, :2], k=[-1, 1])
show("set diagonal rank", r.MatrixSetDiagV3, input=X, diagonal=f32([1, 2, 3]), k=[0, 1])
