"""Prints TF 2.21's results for tests/kernels/cpu/linalg_ops_test.cc (run by hand with
tensorflow-cpu==2.21.0; the test hard-codes what this prints)."""
import numpy as np
import tensorflow as tf

raw = tf.raw_ops
A = np.float64([[4, 1, 2], [1, 5, 3], [2, 3, 6]])          # symmetric positive definite
B = np.float64([[1, 2, 0], [3, -1, 4], [0.5, 2, -2]])     # general, invertible
RHS = np.float64([[1, 2], [0, -1], [3, 0.5]])


def show(name, t):
  print(name, np.asarray(t, np.float64).ravel().round(7).tolist())


for dtype in (np.float32, np.float64):
  print("dtype", dtype.__name__)
  show("inverse", raw.MatrixInverse(input=np.stack([A, B]).astype(dtype)))
  show("inverse_adjoint", raw.MatrixInverse(input=B.astype(dtype), adjoint=True))
  show("solve", raw.MatrixSolve(matrix=B.astype(dtype), rhs=RHS.astype(dtype)))
  show("solve_adjoint", raw.MatrixSolve(matrix=B.astype(dtype), rhs=RHS.astype(dtype),
                                        adjoint=True))
  show("cholesky", raw.Cholesky(input=A.astype(dtype)))
  show("trsm_lower", raw.MatrixTriangularSolve(matrix=B.astype(dtype), rhs=RHS.astype(dtype)))
  show("trsm_upper_adjoint", raw.MatrixTriangularSolve(
      matrix=np.stack([B, A]).astype(dtype), rhs=RHS.astype(dtype), lower=False, adjoint=True))
  show("det", raw.MatrixDeterminant(input=np.stack([A, B]).astype(dtype)))
  s, l = raw.LogMatrixDeterminant(input=np.stack([A, B]).astype(dtype))
  show("logdet_sign", s)
  show("logdet_log", l)
