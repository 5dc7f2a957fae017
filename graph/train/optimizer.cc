#include "graph/train/optimizer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "graph/status_macros.h"
#include "graph/train/initializers.h"

namespace dflow {
namespace {

// Zeros shaped like `var`: from the handle's static shape when fully known (no read, so
// no ordering against var's own initializer), else like var's initial value.
Output ZerosLikeVariable(const Scope& scope, const Variable& var) {
  const AttrValue* shape_attr = var.handle().node->attr("shape");
  if (shape_attr != nullptr) {
    absl::StatusOr<PartialShape> shape = PartialShape::FromProto(shape_attr->shape());
    if (shape.ok() && shape->IsFullyDefined()) return Zeros(scope, shape->dims(), var.dtype());
  }
  const Edge* initial = var.initializer().node == nullptr
                            ? nullptr
                            : var.initializer().node->input_edge(1);
  if (initial == nullptr) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "variable '", var.name(), "' has neither a static shape nor an initial value")));
    return Output();
  }
  return ZerosLike(scope, Output(initial->src, initial->src_output));
}

}  // namespace

absl::StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(
    const Scope& scope, const Output& loss, const std::vector<Variable>& var_list) {
  std::vector<Output> handles;
  std::vector<Variable> trainable;
  for (const Variable& v : var_list) {
    if (v.handle().node == nullptr) {
      return absl::InvalidArgumentError("ComputeGradients: var_list holds a null Variable");
    }
    if (!v.trainable()) continue;
    handles.push_back(v.handle());
    trainable.push_back(v);
  }
  std::vector<Output> grads;
  DFLOW_RETURN_IF_ERROR(AddSymbolicGradients(scope, {loss}, handles, &grads));
  std::vector<GradAndVar> pairs;
  for (size_t i = 0; i < trainable.size(); ++i) pairs.push_back({grads[i], trainable[i]});
  return pairs;
}

absl::StatusOr<Operation> Optimizer::ApplyGradients(
    const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
    const Variable* global_step) {
  DFLOW_RETURN_IF_ERROR(scope.status());
  std::vector<const GradAndVar*> with_grad;
  for (const GradAndVar& gv : grads_and_vars) {
    if (gv.variable.handle().node == nullptr) {
      return absl::InvalidArgumentError("ApplyGradients: a pair holds a null Variable");
    }
    if (gv.gradient.node != nullptr) with_grad.push_back(&gv);
  }
  if (with_grad.empty()) {
    std::string names;
    for (const GradAndVar& gv : grads_and_vars) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", gv.variable.name());
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "No gradients provided for any variable, check your graph for ops that do not "
        "support gradients, between variables [", names, "] and loss"));
  }
  outer_ = scope;
  Scope s = scope.NewSubScope(name_);
  // State such as beta powers lives with the first variable (TF colocates it so).
  DFLOW_RETURN_IF_ERROR(Prepare(with_grad[0]->variable));
  std::vector<Operation> updates;
  for (const GradAndVar* gv : with_grad) {
    Scope update = gv->variable.Colocated(s.NewSubScope("update_" + gv->variable.name()));
    std::optional<SparseGradient> sparse =
        FindSparseGradient(update.NewSubScope("sparse_gradient"), gv->gradient, gv->variable);
    updates.push_back(sparse ? ApplySparse(update, *sparse, gv->variable)
                             : ApplyDense(update, gv->gradient, gv->variable));
  }
  DFLOW_RETURN_IF_ERROR(scope.status());
  Operation finish = Finish(s, updates);
  if (global_step == nullptr) {
    DFLOW_RETURN_IF_ERROR(scope.status());
    return finish;
  }
  Scope step = global_step->Colocated(s.WithControlDependencies(finish));
  Operation increment = AddOp(step.WithOpName("increment_global_step"), "AssignAddVariableOp",
                              {global_step->handle(), Cast(step, 1, global_step->dtype())});
  DFLOW_RETURN_IF_ERROR(scope.status());
  return increment;
}

absl::StatusOr<Operation> Optimizer::Minimize(const Scope& scope, const Output& loss,
                                              const std::vector<Variable>& var_list,
                                              const Variable* global_step) {
  DFLOW_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                         ComputeGradients(scope, loss, var_list));
  return ApplyGradients(scope, grads, global_step);
}

std::vector<Variable> Optimizer::AllVariables(
    const std::vector<Variable>& model_variables) const {
  std::vector<Variable> all = model_variables;
  all.insert(all.end(), variables_.begin(), variables_.end());
  return all;
}

absl::Status Optimizer::Prepare(const Variable&) { return absl::OkStatus(); }

Operation Optimizer::ApplySparse(const Scope& scope, const SparseGradient& grad,
                                 const Variable& var) {
  return ApplyDense(scope, grad.dense, var);
}

Operation Optimizer::Finish(const Scope& scope, const std::vector<Operation>& updates) {
  return NoOp(scope.WithOpName("update").WithControlDependencies(updates));
}

Variable Optimizer::MakeSlot(const Variable& var, double fill, const std::string& suffix) {
  Scope scope = var.Colocated(outer_->WithNoControlDependencies());
  std::string name = var.name();
  const std::string& prefix = scope.name_prefix();
  if (!prefix.empty() && name.rfind(prefix + "/", 0) == 0) name = name.substr(prefix.size() + 1);
  name += "/" + name_ + suffix;
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  Scope init = scope.NewSubScope(name + "_init");
  Output initial = ZerosLikeVariable(init, var);
  if (fill != 0.0) initial = Add(init, initial, fill);
  Variable slot = Variable::Create(scope.WithOpName(name), initial, /*trainable=*/false);
  variables_.push_back(slot);
  by_name_.emplace(name, slot);
  return slot;
}

Variable Optimizer::MakeState(const std::string& name, double value, DataType dtype,
                              const Variable& colocate_with) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  Scope scope = colocate_with.Colocated(outer_->WithNoControlDependencies());
  Output initial = Cast(scope.WithOpName(name + "/initial_value"), value, dtype);
  Variable state = Variable::Create(scope.WithOpName(name), initial, /*trainable=*/false);
  variables_.push_back(state);
  by_name_.emplace(name, state);
  return state;
}

}  // namespace dflow
