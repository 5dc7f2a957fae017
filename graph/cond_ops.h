// Op functions for TF 1.x conditionals built through a Scope (TF's cc/ops Switch and
// Merge): `Switch` sends a tensor down one of two branches, `Merge` joins them.
//
//   SwitchOutputs sw = Switch(root, x, pred);
//   Output then_value = Square(root, sw.output_true);   // runs only when pred is true
//   Output else_value = Neg(root, sw.output_false);     // runs only when pred is false
//   Output y = Merge(root, {then_value, else_value}).output;
//
// The output of the branch not taken is dead: nodes reading it do not run and pass the
// deadness on, until a Merge forwards whichever input is alive (the executor's v1
// control-flow rules, as TF's). AddSymbolicGradients differentiates through both
// (graph/gradients/control_flow_grads.cc).
#ifndef DFLOW_GRAPH_COND_OPS_H_
#define DFLOW_GRAPH_COND_OPS_H_

#include "graph/ops.h"
#include "graph/scope.h"

namespace dflow {

struct SwitchOutputs {
  Output output_false;  // `data` when pred is false, else dead
  Output output_true;   // `data` when pred is true, else dead
};
// `pred` is a scalar bool.
SwitchOutputs Switch(const Scope& scope, Input data, Input pred);

struct MergeOutputs {
  Output output;       // the value of the input that is alive
  Output value_index;  // its index in `inputs` (int32)
};
// `inputs`: one or more tensors of one dtype, at most one of them alive in a step.
MergeOutputs Merge(const Scope& scope, InputList inputs);

}  // namespace dflow

#endif  // DFLOW_GRAPH_COND_OPS_H_
