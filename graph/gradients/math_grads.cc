// Gradients of arithmetic, element-wise math, matrix products, reductions and casts
// (TF's math_grad.py, operation for operation).
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/array_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using grad::Out;
using Grads = std::vector<Output>;

absl::Status AddNGrad(const Scope&, const Operation& op, const Grads& dy, Grads* dx) {
  dx->assign(op.node->num_inputs(), dy[0]);
  return absl::OkStatus();
}

absl::Status AddGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  grad::ReduceBroadcastGrads(s, In(op, 0), In(op, 1), dy[0], dy[0], dx);
  return absl::OkStatus();
}

absl::Status SubGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  grad::ReduceBroadcastGrads(s, In(op, 0), In(op, 1), dy[0], Neg(s, dy[0]), dx);
  return absl::OkStatus();
}

absl::Status MulGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), y = In(op, 1);
  grad::ReduceBroadcastGrads(s, x, y, Mul(s, dy[0], y), Mul(s, x, dy[0]), dx);
  return absl::OkStatus();
}

absl::Status DivGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), y = In(op, 1);
  Output gx = RealDiv(s, dy[0], y);
  Output gy = Mul(s, dy[0], RealDiv(s, RealDiv(s, Neg(s, x), y), y));
  grad::ReduceBroadcastGrads(s, x, y, gx, gy, dx);
  return absl::OkStatus();
}

// Maximum/Minimum: the gradient goes to the input that was chosen (x on ties, as TF).
template <bool kMax>
absl::Status MaxMinGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), y = In(op, 1);
  Output x_chosen = kMax ? GreaterEqual(s, x, y) : LessEqual(s, x, y);
  Output zeros = ZerosLike(s, dy[0]);
  grad::ReduceBroadcastGrads(s, x, y, SelectV2(s, x_chosen, dy[0], zeros),
                             SelectV2(s, x_chosen, zeros, dy[0]), dx);
  return absl::OkStatus();
}

absl::Status SquaredDifferenceGrad(const Scope& s, const Operation& op, const Grads& dy,
                                   Grads* dx) {
  Output x = In(op, 0), y = In(op, 1);
  Output two_diff = Mul(s, Mul(s, dy[0], 2.0), Sub(s, x, y));
  grad::ReduceBroadcastGrads(s, x, y, two_diff, Neg(s, two_diff), dx);
  return absl::OkStatus();
}

// d(x^y)/dx = y x^(y-1); d(x^y)/dy = x^y log(x), taken as 0 where x <= 0 (as TF).
absl::Status PowGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), y = In(op, 1), z = Out(op, 0);
  Output gx = Mul(s, Mul(s, dy[0], y), AddOp(s, "Pow", {x, Sub(s, y, 1.0)}).output(0));
  Output positive = Greater(s, x, ZerosLike(s, x));
  Output safe_x = SelectV2(s, positive, x, OnesLike(s, x));
  Output log_x = SelectV2(s, positive, Log(s, safe_x), ZerosLike(s, x));
  grad::ReduceBroadcastGrads(s, x, y, gx, Mul(s, Mul(s, dy[0], z), log_x), dx);
  return absl::OkStatus();
}

absl::Status NegGrad(const Scope& s, const Operation&, const Grads& dy, Grads* dx) {
  *dx = {Neg(s, dy[0])};
  return absl::OkStatus();
}

absl::Status AbsGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Mul(s, dy[0], AddOp(s, "Sign", {In(op, 0)}).output(0))};
  return absl::OkStatus();
}

absl::Status SquareGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Mul(s, dy[0], Mul(s, In(op, 0), 2.0))};
  return absl::OkStatus();
}

absl::Status ExpGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Mul(s, dy[0], Out(op, 0))};
  return absl::OkStatus();
}

absl::Status LogGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Mul(s, dy[0], AddOp(s, "Reciprocal", {In(op, 0)}).output(0))};
  return absl::OkStatus();
}

absl::Status Log1pGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {RealDiv(s, dy[0], Add(s, In(op, 0), 1.0))};
  return absl::OkStatus();
}

// Ops whose gradient is a fused kernel of (forward output y, dy): SigmoidGrad etc.
absl::Status OutputGradKernel(const char* grad_op, const Scope& s, const Operation& op,
                              const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, grad_op, {Out(op, 0), dy[0]}).output(0)};
  return absl::OkStatus();
}

GradFunc OutputGrad(const char* grad_op) {
  return [grad_op](const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
    return OutputGradKernel(grad_op, s, op, dy, dx);
  };
}

bool IsFloatType(DataType t) {
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16;
}

// Between two float types the gradient casts back; from or to integers none flows.
absl::Status CastGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  DataType src = BaseType(In(op, 0).dtype());
  DataType dst = BaseType(Out(op, 0).dtype());
  dx->assign(1, Output());
  if (IsFloatType(src) && IsFloatType(dst)) (*dx)[0] = Cast(s, dy[0], src);
  return absl::OkStatus();
}

absl::Status MatMulGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  const bool ta = grad::BoolAttrOf(op, "transpose_a");
  const bool tb = grad::BoolAttrOf(op, "transpose_b");
  Output a = In(op, 0), b = In(op, 1), g = dy[0];
  auto mm = [&](Output x, Output y, bool tx, bool ty) {
    return MatMul(s, x, y, MatMulAttrs{tx, ty});
  };
  if (!ta && !tb) {
    *dx = {mm(g, b, false, true), mm(a, g, true, false)};
  } else if (!ta && tb) {
    *dx = {mm(g, b, false, false), mm(g, a, true, false)};
  } else if (ta && !tb) {
    *dx = {mm(b, g, false, true), mm(a, g, false, false)};
  } else {
    *dx = {mm(b, g, true, true), mm(g, a, true, true)};
  }
  return absl::OkStatus();
}

// dy reshaped to the kept-dims shape and broadcast back over the reduced dimensions.
Output BroadcastReduced(const Scope& s, const Output& x, const Output& axes,
                        const Output& g) {
  return grad::BroadcastOverAxes(s, g, Shape(s, x), axes);
}

absl::Status SumGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {BroadcastReduced(s, In(op, 0), In(op, 1), dy[0]), Output()};
  return absl::OkStatus();
}

absl::Status MeanGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0);
  DataType t = BaseType(x.dtype());
  // Integer division first, as TF's _safe_shape_div: exact, and no overflow of half.
  Output count = Cast(s, AddOp(s, "FloorDiv", {Size(s, x), Maximum(s, Size(s, Out(op, 0)), 1)})
                             .output(0),
                      t);
  *dx = {RealDiv(s, BroadcastReduced(s, x, In(op, 1), dy[0]), count), Output()};
  return absl::OkStatus();
}

// Max/Min: the gradient is shared equally among the entries equal to the result.
absl::Status MaxMinReduceGrad(const Scope& s, const Operation& op, const Grads& dy,
                              Grads* dx) {
  Output x = In(op, 0), axes = In(op, 1);
  Output shape = Shape(s, x);
  Output kept = grad::KeptDimsShape(s, shape, axes);
  Output y = Reshape(s, Out(op, 0), kept);
  Output indicators = Cast(s, Equal(s, y, x), BaseType(x.dtype()));
  Output num_selected = Reshape(s, Sum(s, indicators, axes), kept);
  Output share = RealDiv(s, indicators, num_selected);
  *dx = {Mul(s, share, Reshape(s, dy[0], kept)), Output()};
  return absl::OkStatus();
}

// Prod: each entry's gradient is the product of the others along the reduced axes,
// computed with exclusive cumulative products from both ends (no division, so zeros
// are handled), as TF does.
absl::Status ProdGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0);
  Output shape = Shape(s, x);
  Output rank = Rank(s, x);
  Output axes = In(op, 1).dtype() == DT_INT32 ? In(op, 1) : Cast(s, In(op, 1), DT_INT32);
  Output reduced =
      Reshape(s, AddOp(s, "FloorMod", {Add(s, axes, rank), rank}).output(0), {-1});
  Output covered = Sum(s, OneHot(s, reduced, rank, 1, 0), 0);
  Output other = Cast(s, Reshape(s, AddOp(s, "Where", {Equal(s, covered, 0)}).output(0),
                                 {-1}),
                      DT_INT32);
  Output perm = ConcatV2(s, {reduced, other}, 0);
  Output reduced_num = Prod(s, GatherV2(s, shape, reduced, 0), 0);
  Output other_num = Prod(s, GatherV2(s, shape, other, 0), 0);
  Output permuted = Transpose(s, x, perm);
  Output permuted_shape = Shape(s, permuted);
  Output reshaped = Reshape(s, permuted, Pack(s, {reduced_num, other_num}));
  auto cumprod = [&](bool reverse) {
    return AddOp(s, "Cumprod", {reshaped, Input(0)},
                 {{"exclusive", BoolAttr(true)}, {"reverse", BoolAttr(reverse)}})
        .output(0);
  };
  Output others = Reshape(s, Mul(s, cumprod(false), cumprod(true)), permuted_shape);
  Output unpermuted =
      Transpose(s, others, AddOp(s, "InvertPermutation", {perm}).output(0));
  Output g = BroadcastReduced(s, x, In(op, 1), dy[0]);
  *dx = {Mul(s, g, unpermuted), Output()};
  return absl::OkStatus();
}

absl::Status Expm1Grad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Mul(s, dy[0], Exp(s, In(op, 0)))};
  return absl::OkStatus();
}

// d erf(x)/dx = 2/sqrt(pi) exp(-x^2); erfc is its negative.
template <bool kComplement>
absl::Status ErfGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0);
  const double two_over_sqrt_pi = (kComplement ? -2.0 : 2.0) / std::sqrt(M_PI);
  *dx = {Mul(s, Mul(s, dy[0], two_over_sqrt_pi), Exp(s, Neg(s, Square(s, x))))};
  return absl::OkStatus();
}

absl::Status DivNoNanGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), y = In(op, 1);
  auto div_no_nan = [&](const Output& a, const Output& b) {
    return AddOp(s, "DivNoNan", {a, b}).output(0);
  };
  Output gx = div_no_nan(dy[0], y);
  Output gy = Mul(s, dy[0], div_no_nan(div_no_nan(Neg(s, x), y), y));
  grad::ReduceBroadcastGrads(s, x, y, gx, gy, dx);
  return absl::OkStatus();
}

// x mod y = x - floor(x / y) * y (FloorMod) or trunc (TruncateMod).
template <bool kFloor>
absl::Status ModGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), y = In(op, 1);
  Output q = kFloor ? AddOp(s, "FloorDiv", {x, y}).output(0)
                    : AddOp(s, "TruncateDiv", {x, y}).output(0);
  grad::ReduceBroadcastGrads(s, x, y, dy[0], Mul(s, dy[0], Neg(s, q)), dx);
  return absl::OkStatus();
}

// BatchMatMulV2: MatMul's four cases per batch, then summed over the batch dims each
// operand was broadcast along.
absl::Status BatchMatMulGrad(const Scope& s, const Operation& op, const Grads& dy,
                             Grads* dx) {
  const bool ax = grad::BoolAttrOf(op, "adj_x");
  const bool ay = grad::BoolAttrOf(op, "adj_y");
  Output x = In(op, 0), y = In(op, 1), g = dy[0];
  auto bmm = [&](Output a, Output b, bool adj_a, bool adj_b) {
    return AddOp(s, "BatchMatMulV2", {a, b},
                 {{"adj_x", BoolAttr(adj_a)}, {"adj_y", BoolAttr(adj_b)}})
        .output(0);
  };
  Output gx, gy;
  if (!ax && !ay) {
    gx = bmm(g, y, false, true), gy = bmm(x, g, true, false);
  } else if (!ax && ay) {
    gx = bmm(g, y, false, false), gy = bmm(g, x, true, false);
  } else if (ax && !ay) {
    gx = bmm(y, g, false, true), gy = bmm(x, g, false, false);
  } else {
    gx = bmm(y, g, true, true), gy = bmm(g, x, true, true);
  }
  Output sx = Shape(s, x), sy = Shape(s, y);
  Output bx = Slice(s, sx, {0}, Reshape(s, Sub(s, Size(s, sx), 2), {1}));
  Output by = Slice(s, sy, {0}, Reshape(s, Sub(s, Size(s, sy), 2), {1}));
  Operation args = AddOp(s.WithOpName("BroadcastGradientArgs"), "BroadcastGradientArgs",
                         {bx, by});
  *dx = {Reshape(s, Sum(s, gx, args.output(0)), sx), Reshape(s, Sum(s, gy, args.output(1)), sy)};
  return absl::OkStatus();
}

// Cumsum: the gradient is the cumulative sum the other way round.
absl::Status CumsumGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  AttrMap attrs = {{"exclusive", BoolAttr(grad::BoolAttrOf(op, "exclusive"))},
                   {"reverse", BoolAttr(!grad::BoolAttrOf(op, "reverse"))}};
  *dx = {AddOp(s, "Cumsum", {dy[0], In(op, 1)}, attrs).output(0), Output()};
  return absl::OkStatus();
}

absl::Status Register(GradientRegistry* r, const char* op, GradFunc f) {
  return r->Register(op, std::move(f));
}

}  // namespace

absl::Status RegisterMathGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(Register(r, "AddN", AddNGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Add", AddGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "AddV2", AddGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Sub", SubGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Mul", MulGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "RealDiv", DivGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Div", DivGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Maximum", MaxMinGrad<true>));
  DFLOW_RETURN_IF_ERROR(Register(r, "Minimum", MaxMinGrad<false>));
  DFLOW_RETURN_IF_ERROR(Register(r, "SquaredDifference", SquaredDifferenceGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Pow", PowGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Neg", NegGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Abs", AbsGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Square", SquareGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Exp", ExpGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Log", LogGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Log1p", Log1pGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Sqrt", OutputGrad("SqrtGrad")));
  DFLOW_RETURN_IF_ERROR(Register(r, "Rsqrt", OutputGrad("RsqrtGrad")));
  DFLOW_RETURN_IF_ERROR(Register(r, "Reciprocal", OutputGrad("ReciprocalGrad")));
  DFLOW_RETURN_IF_ERROR(Register(r, "Inv", OutputGrad("InvGrad")));
  DFLOW_RETURN_IF_ERROR(Register(r, "Sigmoid", OutputGrad("SigmoidGrad")));
  DFLOW_RETURN_IF_ERROR(Register(r, "Tanh", OutputGrad("TanhGrad")));
  DFLOW_RETURN_IF_ERROR(Register(r, "Cast", CastGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "MatMul", MatMulGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Sum", SumGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Mean", MeanGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Max", MaxMinReduceGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Min", MaxMinReduceGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Prod", ProdGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Expm1", Expm1Grad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Erf", ErfGrad<false>));
  DFLOW_RETURN_IF_ERROR(Register(r, "Erfc", ErfGrad<true>));
  DFLOW_RETURN_IF_ERROR(Register(r, "DivNoNan", DivNoNanGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "FloorMod", ModGrad<true>));
  DFLOW_RETURN_IF_ERROR(Register(r, "TruncateMod", ModGrad<false>));
  DFLOW_RETURN_IF_ERROR(Register(r, "BatchMatMulV2", BatchMatMulGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "BatchMatMulV3", BatchMatMulGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Cumsum", CumsumGrad));
  // Piecewise-constant or integer-valued results: no gradient, as in TF.
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                         "ArgMax", "ArgMin", "Sign", "Floor", "Ceil", "Round", "Rint",
                         "LogicalAnd", "LogicalOr", "LogicalNot", "FloorDiv", "TruncateDiv",
                         "IsFinite", "IsNan", "IsInf", "Range"}) {
    DFLOW_RETURN_IF_ERROR(r->RegisterNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace dflow
