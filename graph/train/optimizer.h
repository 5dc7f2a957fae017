// Optimizer: turns a loss into the graph that trains variables (TF's
// tf.compat.v1.train.Optimizer for the builder API).
//
//   GradientDescentOptimizer sgd(0.1);
//   absl::StatusOr<Operation> train = sgd.Minimize(root, loss, {w, b});
//   Operation init = InitializeVariables(root, sgd.AllVariables({w, b}));
//   ... run `init` once, then `*train` once per step.
//
// Minimize = ComputeGradients (AddSymbolicGradients with respect to the variables'
// handles) + ApplyGradients (one ResourceApply* op per variable with a gradient, then
// the optimizer's own bookkeeping, such as Adam's beta powers, then global_step += 1).
// A variable read only through ResourceGather (an embedding table) has a gradient of a
// few rows (sparse_gradient.h): it is updated as TF's sparse paths do, rows alone
// (ResourceSparseApply*; GradientDescent's scatter; Adam's scatters into its slots).
// ApplyGradients takes any gradients, e.g. the average of several towers' (towers.h).
//
// Slots (Momentum's accumulators, Adam's moments, ...) are variables the optimizer
// creates next to each variable, named "<var>/<Optimizer name>" as TF does; they and
// any other optimizer state are listed by variables() and need initializing too.
#ifndef DFLOW_GRAPH_TRAIN_OPTIMIZER_H_
#define DFLOW_GRAPH_TRAIN_OPTIMIZER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "graph/train/sparse_gradient.h"
#include "graph/train/variable.h"

namespace dflow {

struct GradAndVar {
  Output gradient;  // null when the loss does not depend on the variable
  Variable variable;
};

class Optimizer {
 public:
  explicit Optimizer(std::string name, bool use_locking = false)
      : name_(std::move(name)), use_locking_(use_locking) {}
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // The gradient of `loss` for each trainable variable of `var_list`, in order.
  absl::StatusOr<std::vector<GradAndVar>> ComputeGradients(
      const Scope& scope, const Output& loss, const std::vector<Variable>& var_list);
  // The update of every pair with a gradient; INVALID_ARGUMENT ("No gradients provided
  // for any variable", TF's text) when none has one. `global_step`, when given, is
  // incremented after the updates.
  absl::StatusOr<Operation> ApplyGradients(const Scope& scope,
                                           const std::vector<GradAndVar>& grads_and_vars,
                                           const Variable* global_step = nullptr);
  absl::StatusOr<Operation> Minimize(const Scope& scope, const Output& loss,
                                     const std::vector<Variable>& var_list,
                                     const Variable* global_step = nullptr);

  // The optimizer's own variables (slots, step counters) created so far.
  const std::vector<Variable>& variables() const { return variables_; }
  // `model_variables` followed by variables(): everything an initializer must run.
  std::vector<Variable> AllVariables(const std::vector<Variable>& model_variables) const;
  const std::string& name() const { return name_; }

 protected:
  // Called once per ApplyGradients before the updates, with the first variable that
  // has a gradient (state such as Adam's beta powers goes with it). Default: nothing.
  virtual absl::Status Prepare(const Variable& first);
  // The update of `var` by `grad`.
  virtual Operation ApplyDense(const Scope& scope, const Output& grad, const Variable& var) = 0;
  // The update of `var` by a gradient of some rows (repeated indices possible). Default:
  // ApplyDense of the dense gradient.
  virtual Operation ApplySparse(const Scope& scope, const SparseGradient& grad,
                                const Variable& var);
  // Runs after all updates (`updates` as control inputs); returns the op that finishes
  // the step. Default: a NoOp grouping the updates.
  virtual Operation Finish(const Scope& scope, const std::vector<Operation>& updates);

  // A slot variable for `var`: var's shape, every element `fill`, named
  // "<var>/<name_>[_<slot>]" (TF's "w/Adam", "w/Adam_1") and colocated with `var`.
  // Built in the scope ApplyGradients was given, outside its dependencies; a second
  // call for the same name returns the first one's variable.
  Variable MakeSlot(const Variable& var, double fill, const std::string& suffix = "");
  // A scalar non-slot variable (e.g. Adam's beta1_power) holding `value`, colocated
  // with `colocate_with`.
  Variable MakeState(const std::string& name, double value, DataType dtype,
                     const Variable& colocate_with);

  bool use_locking() const { return use_locking_; }

 private:
  std::string name_;
  bool use_locking_;
  std::vector<Variable> variables_;
  absl::flat_hash_map<std::string, Variable> by_name_;  // slots and state, by name
  // The scope of the ApplyGradients call in progress (for MakeSlot / MakeState).
  std::optional<Scope> outer_;
};

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_OPTIMIZER_H_
