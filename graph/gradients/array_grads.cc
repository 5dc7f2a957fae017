// Gradients of shape, layout, slicing, gathering and selection ops (TF's array_grad.py).
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

absl::Status PassThroughGrad(const Scope&, const Operation& op, const Grads& dy, Grads* dx) {
  dx->assign(op.node->num_inputs(), Output());
  for (size_t i = 0; i < dy.size() && i < dx->size(); ++i) (*dx)[i] = dy[i];
  return absl::OkStatus();
}

// Reshape, ExpandDims, Squeeze: the gradient takes the input's shape back.
absl::Status ReshapeLikeGrad(const Scope& s, const Operation& op, const Grads& dy,
                             Grads* dx) {
  dx->assign(op.node->num_inputs(), Output());
  (*dx)[0] = Reshape(s, dy[0], Shape(s, In(op, 0)));
  return absl::OkStatus();
}

absl::Status TransposeGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output inverse = AddOp(s, "InvertPermutation", {In(op, 1)}).output(0);
  *dx = {Transpose(s, dy[0], inverse), Output()};
  return absl::OkStatus();
}

absl::Status ConcatV2Grad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  const int n = op.node->num_inputs() - 1;
  Output axis = In(op, n);
  Output axis32 = axis.dtype() == DT_INT32 ? axis : Cast(s, axis, DT_INT32);
  Output rank = Rank(s, In(op, 0));
  Output positive_axis = AddOp(s, "FloorMod", {axis32, rank}).output(0);
  std::vector<Output> shapes;
  for (int i = 0; i < n; ++i) shapes.push_back(Shape(s, In(op, i)));
  Operation offsets = AddOp(s, "ConcatOffset", {positive_axis, InputList(shapes)});
  dx->assign(n + 1, Output());
  for (int i = 0; i < n; ++i) (*dx)[i] = Slice(s, dy[0], offsets.output(i), shapes[i]);
  return absl::OkStatus();
}

absl::Status PackGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  const int n = op.node->num_inputs();
  *dx = Unpack(s, dy[0], n, grad::IntAttrOf(op, "axis"));
  return absl::OkStatus();
}

absl::Status UnpackGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Pack(s, dy, grad::IntAttrOf(op, "axis"))};
  return absl::OkStatus();
}

// Slice: dy padded with zeros back to the input's shape.
absl::Status SliceGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), begin = In(op, 1);
  DataType index = BaseType(begin.dtype());
  Output input_shape = Shape(s, x, index);
  Output after = Sub(s, Sub(s, input_shape, begin), Shape(s, Out(op, 0), index));
  Output before_col = Reshape(s, begin, {-1, 1});
  Output after_col = Reshape(s, after, {-1, 1});
  *dx = {Pad(s, dy[0], ConcatV2(s, {before_col, after_col}, 1)), Output(), Output()};
  return absl::OkStatus();
}

absl::Status StridedSliceGrad(const Scope& s, const Operation& op, const Grads& dy,
                              Grads* dx) {
  Output begin = In(op, 1);
  Output shape = Shape(s, In(op, 0), BaseType(begin.dtype()));
  Output g = AddOp(s, "StridedSliceGrad", {shape, begin, In(op, 2), In(op, 3), dy[0]},
                   grad::CopyAttrs(op, {"begin_mask", "end_mask", "ellipsis_mask",
                                        "new_axis_mask", "shrink_axis_mask"}))
                 .output(0);
  *dx = {g, Output(), Output(), Output()};
  return absl::OkStatus();
}

// GatherV2 along a constant axis: dy's rows are summed into the rows they came from
// (UnsortedSegmentSum), after moving the gathered axis to the front. TF returns
// IndexedSlices here; a dense gradient gives the same values.
absl::Status GatherV2Grad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  std::optional<std::vector<int64_t>> axis_value = grad::ConstIntValues(In(op, 2));
  if (grad::IntAttrOf(op, "batch_dims") != 0 || !axis_value || axis_value->size() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of GatherV2 (node '", op.name(),
        "') needs batch_dims = 0 and a constant scalar axis"));
  }
  Output params = In(op, 0), indices = In(op, 1);
  Output params_shape = Shape(s, params);
  Output rank = Rank(s, params);
  Output axis =
      AddOp(s, "FloorMod", {Input(static_cast<int32_t>((*axis_value)[0])), rank}).output(0);
  Output flat_indices = Reshape(s, indices, {-1});
  Output outer = Slice(s, params_shape, {0}, Reshape(s, axis, {1}));
  Output inner = Slice(s, params_shape, Reshape(s, Add(s, axis, 1), {1}), {-1});
  Output values = Reshape(s, dy[0], ConcatV2(s, {outer, Output(Const(s, {-1})), inner}, 0));
  Output values_rank = Rank(s, values);
  // [axis, 0..axis-1, axis+1..rank-1]: the gathered axis first.
  Output perm = ConcatV2(s, {Reshape(s, axis, {1}), grad::Range(s, 0, axis, 1),
                             grad::Range(s, Add(s, axis, 1), values_rank, 1)},
                         0);
  Output moved = Transpose(s, values, perm);
  Output num_rows = GatherV2(s, params_shape, axis, 0);
  Output summed =
      AddOp(s, "UnsortedSegmentSum", {moved, flat_indices, num_rows}).output(0);
  Output back = Transpose(s, summed, AddOp(s, "InvertPermutation", {perm}).output(0));
  *dx = {back, Output(), Output()};
  return absl::OkStatus();
}

// Tile: dy seen as [m0, d0, m1, d1, ...] and summed over the multiples' dimensions.
absl::Status TileGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output multiples = In(op, 1);
  Output input_shape = Shape(s, In(op, 0), BaseType(multiples.dtype()));
  Output split_shape =
      Reshape(s, Transpose(s, Pack(s, {multiples, input_shape}), {1, 0}), {-1});
  Output axes = grad::Range(s, 0, Size(s, split_shape), 2);
  *dx = {Sum(s, Reshape(s, dy[0], split_shape), axes), Output()};
  return absl::OkStatus();
}

absl::Status PadGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), paddings = In(op, 1);
  Output before = Reshape(s, Slice(s, paddings, {0, 0}, {-1, 1}), {-1});
  Output begin = before.dtype() == DT_INT32 ? before : Cast(s, before, DT_INT32);
  dx->assign(op.node->num_inputs(), Output());
  (*dx)[0] = Slice(s, dy[0], begin, Shape(s, x));
  return absl::OkStatus();
}

absl::Status SelectV2Grad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output c = In(op, 0), x = In(op, 1), y = In(op, 2);
  Output zeros = ZerosLike(s, dy[0]);
  Output gx = grad::SumToShapeOf(s, SelectV2(s, c, dy[0], zeros), x);
  Output gy = grad::SumToShapeOf(s, SelectV2(s, c, zeros, dy[0]), y);
  *dx = {Output(), gx, gy};
  return absl::OkStatus();
}

absl::Status SelectGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output c = In(op, 0);
  Output zeros = ZerosLike(s, dy[0]);
  *dx = {Output(), AddOp(s, "Select", {c, dy[0], zeros}).output(0),
         AddOp(s, "Select", {c, zeros, dy[0]}).output(0)};
  return absl::OkStatus();
}

absl::Status BroadcastToGrad(const Scope& s, const Operation& op, const Grads& dy,
                             Grads* dx) {
  *dx = {grad::SumToShapeOf(s, dy[0], In(op, 0)), Output()};
  return absl::OkStatus();
}

// Fill(dims, value): every element came from the scalar.
absl::Status FillGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output all = grad::Range(s, 0, Rank(s, dy[0]), 1);
  *dx = {Output(), Sum(s, dy[0], all)};
  return absl::OkStatus();
}

// Split(axis, value) and SplitV(value, sizes, axis): the pieces' gradients concatenated.
absl::Status SplitGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Output(), ConcatV2(s, dy, In(op, 0))};
  return absl::OkStatus();
}

absl::Status SplitVGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {ConcatV2(s, dy, In(op, 2)), Output(), Output()};
  return absl::OkStatus();
}

absl::Status ReverseV2Grad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {AddOp(s, "ReverseV2", {dy[0], In(op, 1)}).output(0), Output()};
  return absl::OkStatus();
}

// GatherNd(params, indices): the gathered slices' gradients scattered (and summed where
// indices repeat) into zeros of params' shape.
absl::Status GatherNdGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output indices = In(op, 1);
  Output shape = Shape(s, In(op, 0), BaseType(indices.dtype()));
  *dx = {AddOp(s, "ScatterNd", {indices, dy[0], shape}).output(0), Output()};
  return absl::OkStatus();
}

// ScatterNd(indices, updates, shape): each update's gradient gathered back.
absl::Status ScatterNdGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  *dx = {Output(), AddOp(s, "GatherNd", {dy[0], In(op, 0)}).output(0), Output()};
  return absl::OkStatus();
}

// ReverseSequence(input, seq_lengths): the same reversal of the gradient.
absl::Status ReverseSequenceGrad(const Scope& s, const Operation& op, const Grads& dy,
                                 Grads* dx) {
  *dx = {AddOp(s, "ReverseSequence", {dy[0], In(op, 1)},
               grad::CopyAttrs(op, {"seq_dim", "batch_dim"}))
             .output(0),
         Output()};
  return absl::OkStatus();
}

// UnsortedSegmentSum: each input row gets its segment's gradient (zero for a negative,
// dropped, segment id).
absl::Status UnsortedSegmentSumGrad(const Scope& s, const Operation& op, const Grads& dy,
                                    Grads* dx) {
  Output ids = In(op, 1);
  Output kept = GreaterEqual(s, ids, Cast(s, 0, BaseType(ids.dtype())));
  Output safe = Maximum(s, ids, Cast(s, 0, BaseType(ids.dtype())));
  Output rows = GatherV2(s, dy[0], safe, 0);
  // Broadcast `kept` over the trailing dims of the gathered rows.
  Output rank_diff = Sub(s, Rank(s, rows), Rank(s, ids));
  Output mask_shape = ConcatV2(
      s, {Shape(s, ids), Fill(s, Reshape(s, rank_diff, {1}), 1)}, 0);
  Output mask = Reshape(s, kept, mask_shape);
  *dx = {SelectV2(s, mask, rows, ZerosLike(s, rows)), Output(), Output()};
  return absl::OkStatus();
}

// TopKV2: dy scattered back to the positions the top k came from.
absl::Status TopKGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output x = In(op, 0), indices = Out(op, 1);
  Output x_shape = Shape(s, x);
  Output n = GatherV2(s, x_shape, Sub(s, Size(s, x_shape), 1), 0);
  Output k = GatherV2(s, Shape(s, indices), Sub(s, Rank(s, indices), 1), 0);
  Output rows_by_k = Reshape(s, indices, Pack(s, {Output(Const(s, -1)), k}));
  Output num_rows = GatherV2(s, Shape(s, rows_by_k), 0, 0);
  // Flat positions: row * n + index, for every row's k entries.
  Output offsets = Reshape(s, Mul(s, grad::Range(s, 0, num_rows, 1), n), {-1, 1});
  Output flat = Reshape(s, Add(s, rows_by_k, offsets), {-1, 1});
  Output scattered = AddOp(s, "ScatterNd", {flat, Reshape(s, dy[0], {-1}),
                                            Reshape(s, Size(s, x), {1})})
                         .output(0);
  *dx = {Reshape(s, scattered, x_shape), Output()};
  return absl::OkStatus();
}

absl::Status Register(GradientRegistry* r, const char* op, GradFunc f) {
  return r->Register(op, std::move(f));
}

}  // namespace

absl::Status RegisterArrayGradients(GradientRegistry* r) {
  for (const char* op : {"Identity", "IdentityN", "Snapshot", "PlaceholderWithDefault",
                         "PreventGradient", "EnsureShape"}) {
    DFLOW_RETURN_IF_ERROR(Register(r, op, PassThroughGrad));
  }
  for (const char* op : {"Reshape", "ExpandDims", "Squeeze"}) {
    DFLOW_RETURN_IF_ERROR(Register(r, op, ReshapeLikeGrad));
  }
  DFLOW_RETURN_IF_ERROR(Register(r, "Transpose", TransposeGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "ConcatV2", ConcatV2Grad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Pack", PackGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Unpack", UnpackGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Slice", SliceGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "StridedSlice", StridedSliceGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "GatherV2", GatherV2Grad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Tile", TileGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Pad", PadGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "SelectV2", SelectV2Grad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Select", SelectGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "BroadcastTo", BroadcastToGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Fill", FillGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "Split", SplitGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "SplitV", SplitVGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "ReverseV2", ReverseV2Grad));
  DFLOW_RETURN_IF_ERROR(Register(r, "ReverseSequence", ReverseSequenceGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "GatherNd", GatherNdGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "ScatterNd", ScatterNdGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "UnsortedSegmentSum", UnsortedSegmentSumGrad));
  DFLOW_RETURN_IF_ERROR(Register(r, "TopKV2", TopKGrad));
  // Ops whose outputs carry no gradient back (TF's NotDifferentiable / NoGradient).
  for (const char* op : {"Const", "Placeholder", "Shape", "ShapeN", "Size", "Rank",
                         "ZerosLike", "OnesLike", "StopGradient", "OneHot", "NoOp",
                         "InvertPermutation", "BroadcastGradientArgs", "ConcatOffset",
                         "RandomUniform", "RandomStandardNormal", "TruncatedNormal",
                         "RandomUniformInt", "Where", "Unique"}) {
    DFLOW_RETURN_IF_ERROR(r->RegisterNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace dflow
