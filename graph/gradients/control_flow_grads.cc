// Gradients of TF 1.x conditionals (graph/cond_ops.h), as TF's control_flow_grad.py
// builds them outside a while loop.
//
// The backward pass runs under the forward pass's deadness: the gradient of a branch that
// did not run is dead too, and a Merge of the two branches' gradients forwards the live
// one. Switch: each branch's gradient re-switched on the forward predicate (so that a
// gradient fed from outside the branch also dies with it), then merged. Merge: the
// incoming gradient switched to the input that was forwarded (value_index == i), the
// others dead. Inside a while loop's body the same functions apply: the loop's gradient
// (while_grad.h) replays the predicates and value indices they read, per iteration.
#include "absl/status/status.h"
#include "graph/array_ops.h"
#include "graph/cond_ops.h"
#include "graph/gradients/grad_util.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

using grad::In;
using grad::Out;
using Grads = std::vector<Output>;

// Switch(data, pred) -> (output_false, output_true).
absl::Status SwitchGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output pred = In(op, 1);
  if (dy[0].node == nullptr || dy[1].node == nullptr) {
    // Only for a resource never read as a variable on one side (no zeros to make): the
    // one gradient there is, as TF's cond_resource_grad.
    const Output& only = dy[0].node != nullptr ? dy[0] : dy[1];
    *dx = {only.node == nullptr ? Output() : Merge(s, {only, only}).output, Output()};
    return absl::OkStatus();
  }
  Output false_grad = Switch(s, dy[0], pred).output_false;
  Output true_grad = Switch(s, dy[1], pred).output_true;
  *dx = {Merge(s, {false_grad, true_grad}).output, Output()};
  return absl::OkStatus();
}

// Merge(inputs...) -> (output, value_index).
absl::Status MergeGrad(const Scope& s, const Operation& op, const Grads& dy, Grads* dx) {
  Output value_index = Out(op, 1);
  dx->clear();
  for (int i = 0; i < op.node->num_inputs(); ++i) {
    dx->push_back(Switch(s, dy[0], Equal(s, value_index, i)).output_true);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterControlFlowGradients(GradientRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register("Switch", SwitchGrad));
  return r->Register("Merge", MergeGrad);
}

}  // namespace dflow
