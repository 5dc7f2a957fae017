// Variable: a resource variable for graphs built with the builder API (TF 2's
// ResourceVariable in graph mode): a VarHandleOp, the AssignVariableOp that gives it
// its initial value, and a ReadVariableOp the model uses.
//
//   Variable w = Variable::Create(root.WithOpName("w"), GlorotUniform(root, {784, 10}));
//   Output logits = MatMul(root, x, w.value());
//   ... session->Run({}, {}, {w.initializer()}, nullptr);   // once
//
// Gradients reach the variable through its reads: AddSymbolicGradients with
// `handle()` among the inputs sums the gradients of every read (graph/gradients).
// Optimizers (optimizer.h) update the variable in place through its handle.
#ifndef DFLOW_GRAPH_TRAIN_VARIABLE_H_
#define DFLOW_GRAPH_TRAIN_VARIABLE_H_

#include <string>
#include <vector>

#include "graph/scope.h"

namespace dflow {

class Variable {
 public:
  Variable() = default;

  // A variable named after the scope's op name (default "Variable"), shared_name the
  // same, placed per the scope's device; `initial_value` fixes its dtype. Its shape is
  // the initial value's when known statically, else unknown. Errors go to the scope.
  static Variable Create(const Scope& scope, Input initial_value, bool trainable = true);

  const Output& handle() const { return handle_; }
  // The read made at creation, for building the model.
  const Output& value() const { return value_; }
  // A fresh read in `scope` (e.g. after a control dependency on an update).
  Output Read(const Scope& scope) const;
  const Operation& initializer() const { return initializer_; }
  DataType dtype() const { return dtype_; }
  bool trainable() const { return trainable_; }
  // The VarHandleOp's node name ("" for a null variable).
  std::string name() const;
  // `scope` with this variable's requested device in place of its own, colocated with
  // the variable: where TF's optimizers build updates, slots and state (under
  // ops.device(var.device) / colocate_with(var), both of which replace the device the
  // caller's scope asks for).
  Scope Colocated(const Scope& scope) const;

 private:
  Output handle_;
  Output value_;
  Operation initializer_;
  DataType dtype_ = DT_INVALID;
  bool trainable_ = true;
};

// A NoOp that runs every variable's initializer (tf.compat.v1.global_variables_initializer).
Operation InitializeVariables(const Scope& scope, const std::vector<Variable>& variables);

}  // namespace dflow

#endif  // DFLOW_GRAPH_TRAIN_VARIABLE_H_
