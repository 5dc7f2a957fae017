#include "graph/array_ops.h"

#include <utility>

#include "graph/ops.h"

namespace dflow {
namespace {

Output BinaryOp(const Scope& scope, absl::string_view op, Input x, Input y) {
  return AddOp(scope, op, {std::move(x), std::move(y)}).output(0);
}

}  // namespace

Output Slice(const Scope& scope, Input input, Input begin, Input size) {
  return AddOp(scope, "Slice", {std::move(input), std::move(begin), std::move(size)})
      .output(0);
}

Output StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
                    const StridedSliceAttrs& attrs) {
  return AddOp(scope, "StridedSlice",
               {std::move(input), std::move(begin), std::move(end), std::move(strides)},
               {{"begin_mask", IntAttr(attrs.begin_mask)},
                {"end_mask", IntAttr(attrs.end_mask)},
                {"ellipsis_mask", IntAttr(attrs.ellipsis_mask)},
                {"new_axis_mask", IntAttr(attrs.new_axis_mask)},
                {"shrink_axis_mask", IntAttr(attrs.shrink_axis_mask)}})
      .output(0);
}

Output GatherV2(const Scope& scope, Input params, Input indices, Input axis,
                int64_t batch_dims) {
  return AddOp(scope, "GatherV2", {std::move(params), std::move(indices), std::move(axis)},
               {{"batch_dims", IntAttr(batch_dims)}})
      .output(0);
}

Output Tile(const Scope& s, Input input, Input multiples) {
  return BinaryOp(s, "Tile", input, multiples);
}
Output Pad(const Scope& s, Input input, Input paddings) {
  return BinaryOp(s, "Pad", input, paddings);
}

OutputList Unpack(const Scope& scope, Input value, int64_t num, int64_t axis) {
  Operation node =
      AddOp(scope, "Unpack", {std::move(value)}, {{"num", IntAttr(num)}, {"axis", IntAttr(axis)}});
  OutputList outputs;
  for (int i = 0; i < node.num_outputs(); ++i) outputs.push_back(node.output(i));
  return outputs;
}

Output SelectV2(const Scope& scope, Input condition, Input x, Input y) {
  return AddOp(scope, "SelectV2", {std::move(condition), std::move(x), std::move(y)})
      .output(0);
}

Output StopGradient(const Scope& scope, Input input) {
  return AddOp(scope, "StopGradient", {std::move(input)}).output(0);
}

Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value,
              Input off_value, int64_t axis) {
  return AddOp(scope, "OneHot",
               {std::move(indices), std::move(depth), std::move(on_value),
                std::move(off_value)},
               {{"axis", IntAttr(axis)}})
      .output(0);
}

Output BroadcastTo(const Scope& s, Input input, Input shape) {
  return BinaryOp(s, "BroadcastTo", input, shape);
}

Output Equal(const Scope& s, Input x, Input y) { return BinaryOp(s, "Equal", x, y); }
Output NotEqual(const Scope& s, Input x, Input y) { return BinaryOp(s, "NotEqual", x, y); }
Output Less(const Scope& s, Input x, Input y) { return BinaryOp(s, "Less", x, y); }
Output LessEqual(const Scope& s, Input x, Input y) { return BinaryOp(s, "LessEqual", x, y); }
Output Greater(const Scope& s, Input x, Input y) { return BinaryOp(s, "Greater", x, y); }
Output GreaterEqual(const Scope& s, Input x, Input y) {
  return BinaryOp(s, "GreaterEqual", x, y);
}

Output ArgMax(const Scope& scope, Input input, Input dimension, DataType output_type) {
  return AddOp(scope, "ArgMax", {std::move(input), std::move(dimension)},
               {{"output_type", TypeAttr(output_type)}})
      .output(0);
}

Output ArgMin(const Scope& scope, Input input, Input dimension, DataType output_type) {
  return AddOp(scope, "ArgMin", {std::move(input), std::move(dimension)},
               {{"output_type", TypeAttr(output_type)}})
      .output(0);
}

}  // namespace dflow
