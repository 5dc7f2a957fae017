// Shape functions for sources and state: Const, Placeholder, PlaceholderWithDefault,
// EnsureShape, Variable/VariableV2 and Assign/AssignAdd/AssignSub.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/node_def_util.h"
#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"
#include "graph/tensor_proto_util.h"

namespace dflow {
namespace shape_fn_util {
namespace {

PartialValue KnownValue(const std::vector<int64_t>& values) {
  PartialValue out;
  for (int64_t v : values) out.push_back(ValueElement::Known(v));
  return out;
}

absl::Status ConstShape(Ctx& c) {
  const AttrValue* value = FindAttr(c.node(), "value");
  if (value == nullptr || value->value_case() != AttrValue::kTensor) {
    return Invalid("attr 'value' is missing or not a tensor");
  }
  absl::StatusOr<PartialShape> shape = PartialShape::FromProto(value->tensor().tensor_shape());
  if (!shape.ok()) return Invalid(absl::StrCat("attr 'value': ", shape.status().message()));
  c.set_output(0, *shape);
  const std::optional<int64_t> n = shape->NumElements();
  if (n.has_value() && *n <= kMaxTrackedValueElements) {
    // Fails, leaving no value, for non-integer dtypes.
    absl::StatusOr<std::vector<int64_t>> ints =
        TensorProtoToInt64s(value->tensor(), kMaxTrackedValueElements);
    if (ints.ok()) c.set_output_value(0, KnownValue(*ints));
  }
  return absl::OkStatus();
}

// Placeholder, Variable, VariableV2: the `shape` attr.
absl::Status ShapeAttrShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape shape, ShapeAttr(c, "shape"));
  c.set_output(0, std::move(shape));
  return absl::OkStatus();
}

// PlaceholderWithDefault: the `shape` attr, which the default must fit.
absl::Status PlaceholderWithDefaultShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape shape, ShapeAttr(c, "shape"));
  DFLOW_RETURN_IF_ERROR(MergeShapes(c.input(0), shape).status());
  c.set_output(0, std::move(shape));
  return absl::OkStatus();
}

absl::Status EnsureShapeShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape shape, ShapeAttr(c, "shape"));
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, MergeShapes(c.input(0), shape));
  c.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Assign, AssignAdd, AssignSub: the ref's shape, which the value must fit (unless
// validate_shape=false, when the ref takes the value's shape).
absl::Status AssignShape(Ctx& c) {
  if (!BoolAttr(c, "validate_shape", true)) {
    c.set_output(0, c.input(1));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, MergeShapes(c.input(0), c.input(1)));
  c.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterStateShapeFns(ShapeRegistry& r) {
  r.Register("Const", ConstShape);
  RegisterAll(r, {"Placeholder", "Variable", "VariableV2"}, ShapeAttrShape);
  r.Register("PlaceholderWithDefault", PlaceholderWithDefaultShape);
  r.Register("EnsureShape", EnsureShapeShape);
  RegisterAll(r, {"Assign", "AssignAdd", "AssignSub"}, AssignShape);
}

}  // namespace shape_fn_util
}  // namespace dflow
