// Gradients of matrix ops and the CTC loss, as TF's linalg_grad.py and ctc_ops.py:
// MatrixInverse, MatrixDeterminant, MatrixTriangularSolve (operands of one batch shape),
// MatrixBandPart, Cholesky, and CTCLoss, whose kernel computes the gradient with the loss
// (output 1).
#include "absl/status/status.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/gradients/matrix_ops.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using grad::BatchMatMul;
using grad::MatrixBandPart;
using grad::MatrixDiagPart;
using grad::MatrixSetDiag;
using grad::Out;
using Grads = std::vector<Output>;

// d(A^-1) = -A^-T dy A^-T (adjoint: the inverse of A^T).
absl::Status MatrixInverseGrad(const Scope& s, const Operation& op, const Grads& dy,
                               Grads* dx) {
  const bool adjoint = grad::BoolAttrOf(op, "adjoint");
  Output inverse = Out(op, 0);
  Output inner = BatchMatMul(s, dy[0], inverse, adjoint, !adjoint);
  *dx = {Neg(s, BatchMatMul(s, inverse, inner, !adjoint, adjoint))};
  return absl::OkStatus();
}

// d det(A) / dA = det(A) A^-T.
absl::Status MatrixDeterminantGrad(const Scope& s, const Operation& op, const Grads& dy,
                                   Grads* dx) {
  Output det = Out(op, 0);
  Output inverse_t = AddOp(s, "MatrixInverse", {In(op, 0)}, {{"adjoint", BoolAttr(true)}})
                         .output(0);
  Output shape = ConcatV2(s, {Shape(s, det), Const(s, {1, 1})}, 0);
  *dx = {Mul(s, Reshape(s, Mul(s, dy[0], det), shape), inverse_t)};
  return absl::OkStatus();
}

// C = A^-1 B with A triangular: dB = A^-T dC, dA = -dB C^T kept in A's triangle.
absl::Status TriangularSolveGrad(const Scope& s, const Operation& op, const Grads& dy,
                                 Grads* dx) {
  const bool adjoint = grad::BoolAttrOf(op, "adjoint");
  const bool lower = grad::BoolAttrOf(op, "lower");
  Output a = In(op, 0), c = Out(op, 0);
  Output db = AddOp(s, "MatrixTriangularSolve", {a, dy[0]},
                    {{"lower", BoolAttr(lower)}, {"adjoint", BoolAttr(!adjoint)}})
                  .output(0);
  Output da = Neg(s, adjoint ? BatchMatMul(s, c, db, false, true)
                             : BatchMatMul(s, db, c, false, true));
  da = MatrixBandPart(s, da, lower ? -1 : 0, lower ? 0 : -1);
  *dx = {da, db};
  return absl::OkStatus();
}

// Cholesky: A = L L^T. With M = L^T dL, its diagonal halved, its lower triangle kept,
// and X = L^-T M L^-1: dA = (X + X^T) / 2 (TF's _CholeskyGrad).
absl::Status CholeskyGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output l = Out(op, 0);
  Output diagonal = MatrixDiagPart(s, l);
  Output eye = MatrixSetDiag(s, ZerosLike(s, l), OnesLike(s, diagonal));
  Output l_inverse = AddOp(s, "MatrixTriangularSolve", {l, eye},
                           {{"lower", BoolAttr(true)}, {"adjoint", BoolAttr(false)}})
                         .output(0);
  Output middle = BatchMatMul(s, l, dy[0], true, false);
  Output half_diagonal = Mul(s, MatrixDiagPart(s, middle), 0.5);
  middle = MatrixSetDiag(s, middle, half_diagonal);
  middle = MatrixBandPart(s, middle, -1, 0);
  Output x = BatchMatMul(s, BatchMatMul(s, l_inverse, middle, true, false), l_inverse, false,
                         false);
  Output x_t = BatchMatMul(s, BatchMatMul(s, l_inverse, middle, true, true), l_inverse, false,
                           false);
  *dx = {Mul(s, Add(s, x, x_t), 0.5)};
  return absl::OkStatus();
}

// MatrixBandPart(input, num_lower, num_upper): the gradient keeps the same band.
absl::Status BandPartGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "MatrixBandPart", {dy[0], In(op, 1), In(op, 2)}).output(0), Output(),
         Output()};
  return absl::OkStatus();
}

// CTCLoss(inputs, labels_indices, labels_values, sequence_length) -> (loss, gradient):
// the kernel's gradient [time, batch, classes] scaled by each batch entry's dy.
absl::Status CtcLossGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Mul(s, ExpandDims(s, dy[0], -1), Out(op, 1)), Output(), Output(), Output()};
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterLinalgGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register("MatrixInverse", MatrixInverseGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("MatrixDeterminant", MatrixDeterminantGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("MatrixTriangularSolve", TriangularSolveGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("MatrixBandPart", BandPartGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("Cholesky", CholeskyGrad));
  return r->Register("CTCLoss", CtcLossGrad);
}

}  // namespace dflow
