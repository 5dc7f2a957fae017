// Shape functions for math ops: element-wise unary and binary ops (with broadcasting),
// Select, AddN and the activation gradients, MatMul and BatchMatMul, reductions, and
// DenseBincount.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/node_def_util.h"
#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace dflow {
namespace shape_fn_util {
namespace {

// ---------------------------------------------------------------- elementwise

absl::Status CastShape(Ctx& c) {
  const AttrValue* dst = FindAttr(c.node(), "DstT");
  if (dst != nullptr && (dst->type() == DT_INT32 || dst->type() == DT_INT64)) {
    ForwardValue(c, 0, 0);
  }
  return UnchangedShape(c);
}

absl::Status ScalarShape(Ctx& c) {
  c.set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

// The one shape every input has (AddN, ReluGrad, ...).
absl::Status MergeInputsShape(Ctx& c) {
  PartialShape out;
  for (int i = 0; i < c.num_inputs(); ++i) {
    DFLOW_ASSIGN_OR_RETURN(out, MergeShapes(out, c.input(i)));
  }
  c.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status BroadcastBinaryShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, BroadcastShapes(c.input(0), c.input(1)));
  c.set_output(0, std::move(out));
  return absl::OkStatus();
}

// TF's Select: `condition` is a scalar, a vector over the first dim, or t's shape.
absl::Status SelectShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape data, MergeShapes(c.input(1), c.input(2)));
  const PartialShape& cond = c.input(0);
  if (cond.rank_known() && data.rank_known() && cond.rank() != 0) {
    if (cond.rank() == data.rank()) {
      DFLOW_ASSIGN_OR_RETURN(data, MergeShapes(data, cond));
    } else if (cond.rank() == 1 && data.rank() > 1) {
      DFLOW_RETURN_IF_ERROR(MergeDims(cond.dim(0), data.dim(0)).status());
    } else {
      return Invalid(absl::StrCat("Select condition of shape ", cond.ToString(),
                                  " must be a scalar, a vector over the first dimension "
                                  "or of shape ",
                                  data.ToString()));
    }
  }
  c.set_output(0, std::move(data));
  return absl::OkStatus();
}

absl::Status SelectV2Shape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape data, BroadcastShapes(c.input(1), c.input(2)));
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, BroadcastShapes(c.input(0), data));
  c.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- matrix products

absl::Status MatMulShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape a, WithRank(c.input(0), 2));
  DFLOW_ASSIGN_OR_RETURN(PartialShape b, WithRank(c.input(1), 2));
  const bool ta = BoolAttr(c, "transpose_a", false), tb = BoolAttr(c, "transpose_b", false);
  DFLOW_RETURN_IF_ERROR(MergeDims(a.dim(ta ? 0 : 1), b.dim(tb ? 1 : 0)).status());
  c.set_output(0, PartialShape({a.dim(ta ? 1 : 0), b.dim(tb ? 0 : 1)}));
  return absl::OkStatus();
}

// BatchMatMul (batch dims equal) and BatchMatMulV2 (batch dims broadcast).
absl::Status BatchMatMulShape(Ctx& c, bool broadcast_batch) {
  const PartialShape &x = c.input(0), &y = c.input(1);
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(x, 2));
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(y, 2));
  auto batch = [](const PartialShape& s) {
    if (!s.rank_known()) return PartialShape();
    return PartialShape(std::vector<int64_t>(s.dims().begin(), s.dims().end() - 2));
  };
  // from_end: 2 for rows, 1 for columns.
  auto inner = [](const PartialShape& s, int from_end) {
    return s.rank_known() ? s.dim(s.rank() - from_end) : kUnknown;
  };
  const bool adj_x = BoolAttr(c, "adj_x", false), adj_y = BoolAttr(c, "adj_y", false);
  DFLOW_RETURN_IF_ERROR(MergeDims(inner(x, adj_x ? 2 : 1), inner(y, adj_y ? 1 : 2)).status());
  absl::StatusOr<PartialShape> out =
      broadcast_batch ? BroadcastShapes(batch(x), batch(y)) : MergeShapes(batch(x), batch(y));
  DFLOW_RETURN_IF_ERROR(out.status());
  if (!out->rank_known()) return absl::OkStatus();
  std::vector<int64_t> dims = out->dims();
  dims.push_back(inner(x, adj_x ? 1 : 2));
  dims.push_back(inner(y, adj_y ? 2 : 1));
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- reductions

// Sum, Mean, ...: input 1 holds the axes; keep_dims keeps them as 1s.
absl::Status ReductionShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  const bool keep = BoolAttr(c, "keep_dims", false);
  const std::vector<int64_t>* axes = c.input_value(1);
  if (!in.rank_known()) return absl::OkStatus();
  if (axes == nullptr) {
    if (keep) c.set_output(0, PartialShape::UnknownOfRank(in.rank()));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(std::vector<bool> reduced, AxisSet(*axes, in.rank(), "Reduction axis"));
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    if (!reduced[i]) {
      dims.push_back(in.dim(i));
    } else if (keep) {
      dims.push_back(1);
    }
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ArgMax, ArgMin: the scalar axis in input 1 is removed.
absl::Status ArgReductionShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(in, 1));
  if (!in.rank_known()) return absl::OkStatus();
  const std::optional<int64_t> axis = ScalarValue(c, 1);
  if (!axis.has_value()) {
    c.set_output(0, PartialShape::UnknownOfRank(in.rank() - 1));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(int a, CanonicalAxis(*axis, in.rank(), "Reduction axis"));
  c.set_output(0, Removed(in, a));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- counting

// DenseBincount: [size] for a vector input, [rows, size] for a matrix; unknown until
// size is.
absl::Status DenseBincountShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  if (in.rank_known() && in.rank() > 2) {
    return Invalid(absl::StrCat("Shape must be at most rank 2 but is rank ", in.rank()));
  }
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(1), 0).status());
  const std::optional<int64_t> size = ScalarValue(c, 1);
  if (!size.has_value()) return absl::OkStatus();
  if (*size < 0) return Invalid(absl::StrCat("size (", *size, ") must be non-negative"));
  if (in.rank_known() && in.rank() == 1) c.set_output(0, PartialShape(std::vector<int64_t>{*size}));
  if (in.rank_known() && in.rank() == 2) c.set_output(0, PartialShape(std::vector<int64_t>{in.dim(0), *size}));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- segment reductions

// SegmentSum/Mean/Max: [?] + data.shape[1:] (the row count is the last id + 1, known
// only when the kernel runs).
absl::Status SegmentReductionShape(Ctx& c) {
  const PartialShape& data = c.input(0);
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(data, 1));
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(1), 1).status());
  if (data.rank_known()) c.set_output(0, Replaced(data, 0, kUnknown));
  return absl::OkStatus();
}

// UnsortedSegmentSum/Max: [num_segments] + data.shape[segment_ids.rank:].
absl::Status UnsortedSegmentReductionShape(Ctx& c) {
  const PartialShape& data = c.input(0);
  const PartialShape& ids = c.input(1);
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(2), 0).status());
  const std::optional<int64_t> num_segments = ScalarValue(c, 2);
  if (num_segments.has_value() && *num_segments < 0) {
    return Invalid(
        absl::StrCat("Input num_segments == ", *num_segments, " must not be negative."));
  }
  if (!data.rank_known() || !ids.rank_known()) return absl::OkStatus();
  if (ids.rank() > data.rank()) {
    return Invalid(absl::StrCat("Shape must be at least rank ", ids.rank(), " but is rank ",
                                data.rank()));
  }
  std::vector<int64_t> dims = {num_segments.value_or(kUnknown)};
  for (int d = ids.rank(); d < data.rank(); ++d) dims.push_back(data.dim(d));
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- registration

void RegisterElementwise(ShapeRegistry& r) {
  RegisterAll(r, {"Neg",        "Abs",      "Square",    "Sqrt",      "Rsqrt",         "Exp",
                  "Expm1",      "Log",      "Log1p",     "Relu",      "Relu6",         "Sigmoid",
                  "Tanh",       "Floor",    "Ceil",      "Round",     "Rint",          "Sign",
                  "Reciprocal", "Inv",      "ZerosLike", "OnesLike",  "LogicalNot",    "Elu",
                  "Selu",       "Softplus", "Softsign",  "LeakyRelu", "Sin",           "Cos",
                  "Tan",        "Asin",     "Acos",      "Atan",      "Sinh",          "Cosh",
                  "Asinh",      "Acosh",    "Atanh",     "Erf",       "Erfc",          "IsNan",
                  "IsInf",      "IsFinite", "Invert",    "Conj",      "Real",          "Imag",
                  "ComplexAbs", "Angle",    "Lgamma",    "Digamma",   "CheckNumerics", "LRN"},
              UnchangedShape);
  r.Register("Cast", CastShape);
  RegisterAll(r, {"Add",         "AddV2",       "Sub",
                  "Mul",         "RealDiv",     "Div",
                  "DivNoNan",    "FloorDiv",    "FloorMod",
                  "TruncateDiv", "TruncateMod", "Mod",
                  "Maximum",     "Minimum",     "SquaredDifference",
                  "Pow",         "Atan2",       "Xdivy",
                  "Xlogy",       "MulNoNan",    "Less",
                  "LessEqual",   "Greater",     "GreaterEqual",
                  "Equal",       "NotEqual",    "ApproximateEqual",
                  "LogicalAnd",  "LogicalOr",   "BitwiseAnd",
                  "BitwiseOr",   "BitwiseXor",  "LeftShift",
                  "RightShift",  "Igamma",      "Igammac",
                  "Zeta",        "Polygamma",   "Complex"},
              BroadcastBinaryShape);
  r.Register("Select", SelectShape);
  r.Register("SelectV2", SelectV2Shape);
  RegisterAll(r,
              {"AddN", "ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad",
               "SoftsignGrad", "LeakyReluGrad", "SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad",
               "ReciprocalGrad", "InvGrad"},
              MergeInputsShape);
  r.Register("L2Loss", ScalarShape);
}

void RegisterProductsAndReductions(ShapeRegistry& r) {
  r.Register("MatMul", MatMulShape);
  r.Register("BatchMatMul", [](Ctx& c) { return BatchMatMulShape(c, false); });
  r.Register("BatchMatMulV2", [](Ctx& c) { return BatchMatMulShape(c, true); });
  RegisterAll(r, {"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm"},
              ReductionShape);
  RegisterAll(r, {"ArgMax", "ArgMin"}, ArgReductionShape);
  r.Register("DenseBincount", DenseBincountShape);
  RegisterAll(r, {"SegmentSum", "SegmentMean", "SegmentMax"}, SegmentReductionShape);
  RegisterAll(r, {"UnsortedSegmentSum", "UnsortedSegmentMax"}, UnsortedSegmentReductionShape);
}

}  // namespace

void RegisterMathShapeFns(ShapeRegistry& registry) {
  RegisterElementwise(registry);
  RegisterProductsAndReductions(registry);
}

}  // namespace shape_fn_util
}  // namespace dflow
