// Gradients of the matrix decompositions, as TF 2.21's linalg_grad.py:
//  - Qr (_QrGrad, arXiv 2009.10071): tall and square matrices directly; a wide one
//    [X Y] = Q [U V] through the square case of X; UNIMPLEMENTED, as TF, with
//    full_matrices on a tall matrix;
//  - Svd (_SvdGrad): through A^T when A is tall; with full_matrices only when M and N
//    differ by at most one (TF's limit); without compute_uv from a second Svd;
//  - SelfAdjointEigV2 (_SelfAdjointEigV2Grad): symmetrised into the lower triangle that
//    the forward op reads.
// Qr's and Svd's (with compute_uv) formulas depend on the matrix dims: they read them from
// shape inference (grad::StaticShape) and refuse unknown ones with UNIMPLEMENTED naming
// the node, as TF refuses them.
// Repeated eigenvalues or singular values give infinite gradients, as in TF.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/gradients/matrix_ops.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using grad::Adjoint;
using grad::MatrixBandPart;
using grad::MatrixDiag;
using grad::MatrixDiagPart;
using grad::MatrixSetDiag;
using grad::Out;
using Grads = std::vector<Output>;

Output MatMul(const Scope& s, const Output& a, const Output& b, bool adj_a = false,
              bool adj_b = false) {
  return grad::BatchMatMul(s, a, b, adj_a, adj_b);
}
Output LowerTriangle(const Scope& s, const Output& x) { return MatrixBandPart(s, x, -1, 0); }
Output Reciprocal(const Scope& s, const Output& x) {
  return AddOp(s, "Reciprocal", {x}).output(0);
}

// x[..., :, begin:end].
Output Columns(const Scope& s, const Output& x, int begin, int end) {
  StridedSliceAttrs attrs;
  attrs.ellipsis_mask = 1;
  attrs.begin_mask = 2;
  attrs.end_mask = 2;
  return StridedSlice(s, x, Const(s, {0, 0, begin}), Const(s, {0, 0, end}), Const(s, {1, 1, 1}),
                      attrs);
}
// x[..., :, begin:].
Output ColumnsFrom(const Scope& s, const Output& x, int begin) {
  StridedSliceAttrs attrs;
  attrs.ellipsis_mask = 1;
  attrs.begin_mask = 2;
  attrs.end_mask = 2 | 4;
  return StridedSlice(s, x, Const(s, {0, 0, begin}), Const(s, {0, 0, 0}), Const(s, {1, 1, 1}),
                      attrs);
}

// The static [rows, cols] of a batch of matrices, or UNIMPLEMENTED naming `op`.
absl::StatusOr<std::vector<int64_t>> MatrixDims(const Scope& s, const Operation& op,
                                                const Output& x, const char* what) {
  const PartialShape shape = grad::StaticShape(s, x);
  if (!shape.rank_known() || shape.rank() < 2 || shape.dim(shape.rank() - 2) < 0 ||
      shape.dim(shape.rank() - 1) < 0) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of ", op.node->op(), " (node '", op.name(), "') needs the static ",
        what, " dims, as TF's; shape inference gives ", shape.ToString()));
  }
  return std::vector<int64_t>{shape.dim(shape.rank() - 2), shape.dim(shape.rank() - 1)};
}

// ---- Qr ---------------------------------------------------------------------------

// x R^-H for upper triangular R: (R^-1 x^H)^H.
Output SolveRightUpper(const Scope& s, const Output& x, const Output& r) {
  Output solved = AddOp(s, "MatrixTriangularSolve", {r, Adjoint(s, x)},
                        {{"lower", BoolAttr(false)}, {"adjoint", BoolAttr(false)}})
                      .output(0);
  return Adjoint(s, solved);
}

Output QrGradTallOrSquare(const Scope& s, const Output& q, const Output& r, const Output& dq,
                          const Output& dr) {
  Output qdq = MatMul(s, q, dq, true, false);
  Output qdq_skew = Sub(s, qdq, Adjoint(s, qdq));
  Output rdr = MatMul(s, r, dr, false, true);
  Output rdr_skew = Sub(s, rdr, Adjoint(s, rdr));
  Output tril = LowerTriangle(s, Add(s, qdq_skew, rdr_skew));
  Output grad_a = MatMul(s, q, Add(s, dr, SolveRightUpper(s, tril, r)));
  Output grad_b = SolveRightUpper(s, Sub(s, dq, MatMul(s, q, qdq)), r);
  return Add(s, grad_a, grad_b);
}

absl::Status QrGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output q = Out(op, 0), r = Out(op, 1);
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> q_dims, MatrixDims(s, op, q, "matrix"));
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> r_dims, MatrixDims(s, op, r, "matrix"));
  const int64_t rows = q_dims[0], cols = r_dims[1];
  if (r_dims[0] > r_dims[1] && q_dims[0] == q_dims[1]) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of Qr (node '", op.name(), "') with full_matrices on a matrix of more "
        "rows than columns (", rows, "x", cols, ") is not defined, as in TF"));
  }
  if (rows >= cols) {
    *dx = {QrGradTallOrSquare(s, q, r, dy[0], dy[1])};
    return absl::OkStatus();
  }
  // Wide: A = [X Y], R = [U V] with U square; X = Q U is the square case.
  const int m = static_cast<int>(rows);
  Output y = ColumnsFrom(s, In(op, 0), m);
  Output u = Columns(s, r, 0, m);
  Output dv = ColumnsFrom(s, dy[1], m), du = Columns(s, dy[1], 0, m);
  Output d_y = MatMul(s, q, dv);
  Output d_x = QrGradTallOrSquare(s, q, u, Add(s, dy[0], MatMul(s, y, dv, false, true)), du);
  *dx = {ConcatV2(s, {d_x, d_y}, -1)};
  return absl::OkStatus();
}

// ---- Svd --------------------------------------------------------------------------

Output SafeReciprocal(const Scope& s, const Output& x) {
  return Mul(s, x, Reciprocal(s, Add(s, Mul(s, x, x), Cast(s, 1e-20, x.dtype()))));
}

struct SvdParts {
  Output s, u, v, grad_s, grad_u, grad_v;
  int64_t m = 0, n = 0;  // m <= n (A^H's when A is tall)
  bool full = false;
};

Output SvdGradWide(const Scope& s, const SvdParts& p) {
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n);
  Output grad_s_mat = MatrixDiag(s, p.grad_s);
  Output s_mat = MatrixDiag(s, p.s);
  Output s2 = Square(s, p.s);
  Output f = MatrixSetDiag(
      s, SafeReciprocal(s, Sub(s, ExpandDims(s, s2, -2), ExpandDims(s, s2, -1))),
      ZerosLike(s, p.s));
  Output s_inv_mat = MatrixDiag(s, SafeReciprocal(s, p.s));
  Output v1 = Columns(s, p.v, 0, m), grad_v1 = Columns(s, p.grad_v, 0, m);
  Output f_u = Mul(s, f, MatMul(s, p.u, p.grad_u, true, false));
  Output f_v = Mul(s, f, MatMul(s, v1, grad_v1, true, false));
  Output term1_nouv =
      Add(s, Add(s, grad_s_mat, MatMul(s, Add(s, f_u, Adjoint(s, f_u)), s_mat)),
          MatMul(s, s_mat, Add(s, f_v, Adjoint(s, f_v))));
  Output term1 = MatMul(s, p.u, MatMul(s, term1_nouv, v1, false, true));
  if (m == n) return term1;
  Output gv1t = Adjoint(s, grad_v1);
  Output term2_nous = Sub(s, gv1t, MatMul(s, MatMul(s, gv1t, v1), v1, false, true));
  if (p.full) {
    Output v2 = Columns(s, p.v, m, n), grad_v2 = Columns(s, p.grad_v, m, n);
    Output v1t_gv2 = MatMul(s, v1, grad_v2, true, false);
    term2_nous = Sub(s, term2_nous, MatMul(s, v1t_gv2, v2, false, true));
  }
  Output term2 = MatMul(s, MatMul(s, p.u, s_inv_mat), term2_nous);
  return Add(s, term1, term2);
}

absl::Status SvdGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output a = In(op, 0);
  if (!grad::BoolAttrOf(op, "compute_uv")) {  // any shape: u diag(ds) v^T
    Operation svd = AddOp(s, "Svd", {a},
                          {{"compute_uv", BoolAttr(true)}, {"full_matrices", BoolAttr(false)}});
    *dx = {MatMul(s, svd.output(1), MatMul(s, MatrixDiag(s, dy[0]), svd.output(2), false, true))};
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> dims, MatrixDims(s, op, a, "input matrix"));
  SvdParts p{Out(op, 0), Out(op, 1), Out(op, 2), dy[0], dy[1], dy[2], dims[0], dims[1],
             grad::BoolAttrOf(op, "full_matrices")};
  const bool adjoint = p.m > p.n;  // differentiate A^H = V S U^H instead
  if (adjoint) {
    std::swap(p.m, p.n);
    std::swap(p.u, p.v);
    std::swap(p.grad_u, p.grad_v);
  }
  if (p.full && p.n - p.m > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of Svd (node '", op.name(), "') with full_matrices is defined only when "
        "the matrix dims differ by at most 1, as in TF; got ", dims[0], "x", dims[1]));
  }
  Output grad_a = SvdGradWide(s, p);
  *dx = {adjoint ? Adjoint(s, grad_a) : grad_a};
  return absl::OkStatus();
}

// ---- SelfAdjointEigV2 -------------------------------------------------------------

absl::Status SelfAdjointEigGrad(const Scope& s, const Operation& op, const Grads& dy,
                                Grads* dx) {
  Output e = Out(op, 0);
  Output grad_a;
  if (grad::BoolAttrOf(op, "compute_v")) {
    Output v = Out(op, 1);
    // f[i][j] = 1 / (e_i - e_j) off the diagonal, 0 on it (TF writes it as the adjoint
    // of 1 / (e_j - e_i)).
    Output f = MatrixSetDiag(
        s, Reciprocal(s, Sub(s, ExpandDims(s, e, -1), ExpandDims(s, e, -2))), ZerosLike(s, e));
    Output middle = Add(s, MatrixDiag(s, dy[0]), Mul(s, f, MatMul(s, v, dy[1], true, false)));
    grad_a = MatMul(s, v, MatMul(s, middle, v, false, true));
  } else {
    Operation eig = AddOp(s, "SelfAdjointEigV2", {In(op, 0)}, {{"compute_v", BoolAttr(true)}});
    Output v = eig.output(1);
    grad_a = MatMul(s, v, MatMul(s, MatrixDiag(s, dy[0]), v, false, true));
  }
  // The forward op reads only the lower triangle: symmetrise into it, diagonal halved.
  grad_a = LowerTriangle(s, Add(s, grad_a, Adjoint(s, grad_a)));
  *dx = {MatrixSetDiag(s, grad_a, Mul(s, MatrixDiagPart(s, grad_a), Cast(s, 0.5, e.dtype())))};
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterDecompositionGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register("Qr", QrGrad));
  DFLOW_RETURN_IF_ERROR(r->Register("Svd", SvdGrad));
  return r->Register("SelfAdjointEigV2", SelfAdjointEigGrad);
}

}  // namespace dflow
