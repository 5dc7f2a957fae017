// What the gradient of a while loop nested in another loop's body needs from the
// gradient being built around it (graph/gradients/while_grad.h).
//
// The outer loop's backward body is AddSymbolicGradients of its forward body; a nested
// loop met on the way is differentiated as a whole, inside that backward body. Its
// backward loop then runs once per outer backward iteration, and what it replays comes
// from the matching outer forward iteration:
//  - the nested loop's accumulators (and its iteration counter) start empty in each
//    outer forward iteration (their constants anchored to `forward_pivot`), so each
//    outer iteration's lists leave the nested loop as values of the outer body;
//  - the nested backward loop reads those values, and the outer gradient replays them
//    like any other forward value (a TensorList of TensorLists).
// Nodes a nested gradient adds to the forward loops are forward nodes: the outer
// gradient must not treat them as backward nodes reading forward values, so they are
// recorded in `forward_additions`, shared by every level.
#ifndef DFLOW_GRAPH_GRADIENTS_ENCLOSING_LOOP_GRAD_H_
#define DFLOW_GRAPH_GRADIENTS_ENCLOSING_LOOP_GRAD_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/control_flow.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/graph.h"
#include "graph/scope.h"

namespace dflow {

struct EnclosingLoopGrad {
  // The graph's frames, read before any gradient node was added: the body's gradient is
  // built on them (the graph is not consistent again until every forward read of the
  // backward loops is replaced).
  const ControlFlowInfo* info = nullptr;
  std::string forward_frame;  // the enclosing forward loop's frame name
  Output forward_pivot;       // alive in every iteration of the enclosing forward loop
  absl::flat_hash_set<const Node*>* forward_additions = nullptr;
  // Whether a value of the enclosing forward body is computed inside a conditional of it.
  std::function<absl::StatusOr<bool>(const Output&)> in_conditional;
};

// AddSymbolicGradients(registry, scope, ys, xs, dys, dx) for the body of a loop whose
// gradient is `enclosing`: loops nested in the body get their gradients built inside it.
absl::Status AddLoopBodyGradients(const GradientRegistry& registry, const Scope& scope,
                                  const std::vector<Output>& ys, const std::vector<Output>& xs,
                                  const std::vector<Output>& dys,
                                  const EnclosingLoopGrad& enclosing, std::vector<Output>* dx);

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRADIENTS_ENCLOSING_LOOP_GRAD_H_
