// Builders for the batched-matrix ops the linear-algebra gradients are written in
// (linalg_grads.cc, decomposition_grads.cc), named as TF's Python spells them.
#ifndef DFLOW_GRAPH_GRADIENTS_MATRIX_OPS_H_
#define DFLOW_GRAPH_GRADIENTS_MATRIX_OPS_H_

#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/ops.h"
#include "graph/scope.h"

namespace dflow::grad {

// op(a) op(b) per matrix of a batch, op = adjoint where asked (BatchMatMulV2).
inline Output BatchMatMul(const Scope& s, const Output& a, const Output& b, bool adj_a = false,
                          bool adj_b = false) {
  return AddOp(s, "BatchMatMulV2", {a, b},
               {{"adj_x", BoolAttr(adj_a)}, {"adj_y", BoolAttr(adj_b)}})
      .output(0);
}

// `x` with its last two dims swapped, for any rank.
inline Output Adjoint(const Scope& s, const Output& x) {
  Output rank = Size(s, Shape(s, x));
  Output leading = Range(s, 0, Sub(s, rank, 2), 1);
  Output last_two = Pack(s, {Sub(s, rank, 1), Sub(s, rank, 2)});
  return Transpose(s, x, ConcatV2(s, {leading, last_two}, 0));
}

inline Output MatrixDiag(const Scope& s, const Output& diagonal) {
  return AddOp(s, "MatrixDiag", {diagonal}).output(0);
}
inline Output MatrixDiagPart(const Scope& s, const Output& x) {
  return AddOp(s, "MatrixDiagPart", {x}).output(0);
}
inline Output MatrixSetDiag(const Scope& s, const Output& x, const Output& diagonal) {
  return AddOp(s, "MatrixSetDiag", {x, diagonal}).output(0);
}
// The band of `x` with `lower` diagonals below and `upper` above the main one (-1: all).
inline Output MatrixBandPart(const Scope& s, const Output& x, Input lower, Input upper) {
  return AddOp(s, "MatrixBandPart", {x, std::move(lower), std::move(upper)}).output(0);
}

}  // namespace dflow::grad

#endif  // DFLOW_GRAPH_GRADIENTS_MATRIX_OPS_H_
