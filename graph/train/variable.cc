#include "graph/train/variable.h"

#include "graph/ops.h"

namespace dflow {
namespace {

PartialShape ShapeOf(const TensorProto& tensor) {
  absl::StatusOr<PartialShape> shape = PartialShape::FromProto(tensor.tensor_shape());
  return shape.ok() ? *shape : PartialShape();
}

// The static shape of `value` when its node is a Const, else unknown.
PartialShape StaticShape(const Output& value) {
  if (value.node != nullptr && value.node->op() == "Const") {
    if (const AttrValue* attr = value.node->attr("value")) return ShapeOf(attr->tensor());
  }
  return PartialShape();
}

// `full` without the scope's prefix: what WithOpName takes to name a sibling.
std::string RelativeName(const Scope& scope, const std::string& full) {
  const std::string& prefix = scope.name_prefix();
  return prefix.empty() ? full : full.substr(prefix.size() + 1);
}

}  // namespace

Variable Variable::Create(const Scope& scope, Input initial_value, bool trainable) {
  Variable var;
  if (!scope.ok()) return var;
  const TensorProto* literal = initial_value.is_literal() ? &initial_value.literal().proto()
                                                          : nullptr;
  var.dtype_ = literal != nullptr ? literal->dtype() : BaseType(initial_value.output().dtype());
  var.trainable_ = trainable;
  PartialShape shape = literal != nullptr ? ShapeOf(*literal)
                                          : StaticShape(initial_value.output());
  // The handle is named first (the scope's op name, else "Variable"); its helpers are
  // named under it, as TF names "w/Assign" and "w/Read/ReadVariableOp".
  var.handle_ = AddOp(scope, "VarHandleOp", {},
                      {{"dtype", TypeAttr(var.dtype_)}, {"shape", ShapeAttr(shape)}})
                    .output(0);
  if (!scope.ok()) return Variable();
  const std::string name = var.handle_.node->name();
  (*var.handle_.node->mutable_def()->mutable_attr())["shared_name"] = StringAttr(name);
  const std::string base = RelativeName(scope, name);
  Output initial = literal != nullptr
                       ? Const(scope.WithOpName(base + "/Initializer"), initial_value.literal())
                       : initial_value.output();
  var.initializer_ = AddOp(scope.WithOpName(base + "/Assign").ColocateWith(var.handle_),
                           "AssignVariableOp", {var.handle_, initial});
  var.value_ = var.Read(scope.WithOpName(base + "/Read"));
  if (!scope.ok()) return Variable();
  return var;
}

Output Variable::Read(const Scope& scope) const {
  return AddOp(scope.ColocateWith(handle_), "ReadVariableOp", {handle_},
               {{"dtype", TypeAttr(dtype_)}})
      .output(0);
}

std::string Variable::name() const {
  return handle_.node == nullptr ? "" : handle_.node->name();
}

Operation InitializeVariables(const Scope& scope, const std::vector<Variable>& variables) {
  std::vector<Operation> inits;
  for (const Variable& v : variables) inits.push_back(v.initializer());
  return NoOp(scope.WithOpName("init").WithControlDependencies(inits));
}

Scope Variable::Colocated(const Scope& scope) const {
  const std::string device = handle_.node == nullptr ? "" : handle_.node->requested_device();
  return scope.WithDevice(device).ColocateWith(handle_);
}

}  // namespace dflow
