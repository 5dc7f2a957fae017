// Shared shape-function helpers (shape_fn_util.h).
#include "graph/shape_fn_util.h"

#include "absl/strings/str_cat.h"
#include "graph/node_def_util.h"
#include "graph/status_macros.h"

namespace dflow {
namespace shape_fn_util {

// ---------------------------------------------------------------- attrs and values

int64_t IntAttr(const Ctx& c, absl::string_view name, int64_t fallback) {
  const AttrValue* v = FindAttr(c.node(), name);
  return v != nullptr && v->value_case() == AttrValue::kI ? v->i() : fallback;
}

bool BoolAttr(const Ctx& c, absl::string_view name, bool fallback) {
  const AttrValue* v = FindAttr(c.node(), name);
  return v != nullptr && v->value_case() == AttrValue::kB ? v->b() : fallback;
}

std::string StringAttr(const Ctx& c, absl::string_view name, absl::string_view fallback) {
  const AttrValue* v = FindAttr(c.node(), name);
  return v != nullptr && v->value_case() == AttrValue::kS ? v->s() : std::string(fallback);
}

std::vector<int64_t> IntListAttr(const Ctx& c, absl::string_view name) {
  const AttrValue* v = FindAttr(c.node(), name);
  if (v == nullptr || v->value_case() != AttrValue::kList) return {};
  return std::vector<int64_t>(v->list().i().begin(), v->list().i().end());
}

absl::StatusOr<PartialShape> ShapeAttr(const Ctx& c, absl::string_view name) {
  const AttrValue* v = FindAttr(c.node(), name);
  if (v == nullptr || v->value_case() != AttrValue::kShape) return PartialShape();
  absl::StatusOr<PartialShape> shape = PartialShape::FromProto(v->shape());
  if (!shape.ok()) return Invalid(absl::StrCat("attr '", name, "': ", shape.status().message()));
  return shape;
}

std::optional<int64_t> ScalarValue(const Ctx& c, int input) {
  const std::vector<int64_t>* v = c.input_value(input);
  if (v == nullptr || v->size() != 1) return {};
  return (*v)[0];
}

void ForwardValue(Ctx& c, int input, int output) {
  if (const PartialValue* v = c.input_partial_value(input)) c.set_output_value(output, *v);
}

// ---------------------------------------------------------------- shape helpers

PartialShape Inserted(const PartialShape& s, int axis, int64_t dim) {
  std::vector<int64_t> dims = s.dims();
  dims.insert(dims.begin() + axis, dim);
  return PartialShape(std::move(dims));
}

PartialShape Removed(const PartialShape& s, int axis) {
  std::vector<int64_t> dims = s.dims();
  dims.erase(dims.begin() + axis);
  return PartialShape(std::move(dims));
}

PartialShape Replaced(const PartialShape& s, int axis, int64_t dim) {
  std::vector<int64_t> dims = s.dims();
  dims[axis] = dim;
  return PartialShape(std::move(dims));
}

absl::StatusOr<std::vector<bool>> AxisSet(const std::vector<int64_t>& axes, int rank,
                                          absl::string_view what) {
  std::vector<bool> set(rank, false);
  for (int64_t axis : axes) {
    DFLOW_ASSIGN_OR_RETURN(int a, CanonicalAxis(axis, rank, what));
    set[a] = true;
  }
  return set;
}

// ---------------------------------------------------------------- shared shape functions

absl::Status UnchangedShape(Ctx& c) {
  c.set_output(0, c.input(0));
  return absl::OkStatus();
}

void RegisterAll(ShapeRegistry& registry, std::initializer_list<const char*> ops,
                 const ShapeFn& fn) {
  for (const char* op : ops) registry.Register(op, fn);
}

}  // namespace shape_fn_util
}  // namespace dflow
