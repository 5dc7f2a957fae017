// The gradient of a TF 1.x while loop (graph/while_loop.h, or one TensorFlow wrote), as
// TF's Python gradients build it, with TF 2's list accumulators in place of stacks.
//
// Forward, for loop variables x and invariants w: x_{k+1} = body(x_k, w), k < N. With
// g_N = dL/dx_N (the gradients arriving at the Exits), the backward loop runs N times:
//
//   g_k = (d body / d x)(x_k)^T g_{k+1}        dL/dw += (d body / d w)(x_k)^T g_{k+1}
//
// and dL/dx_0 = g_0 leaves through its Exit. Built as:
//   1. the forward loop gains a variable counting its iterations (N);
//   2. a backward loop in its own frame (named after the gradient scope) carries the
//      counter (running while > 0), g per differentiable variable and one sum per
//      differentiable invariant (a resource variable's: the sum over its reads);
//   3. its body is AddSymbolicGradients of the forward body from NextIteration's inputs
//      back to the Switches' true outputs and the invariants' Enters;
//   4. every forward value that body reads is replaced: an invariant (or a tensor from
//      outside) by an Enter into the backward frame, a constant by a copy anchored in the
//      backward frame, anything else by an accumulator: the forward loop gains a TensorList
//      variable that pushes the value each iteration, the backward loop a variable that
//      pops it, so iteration N-1-k reads what forward iteration k pushed (the order is
//      carried by data, so any parallel_iterations is safe).
//
// A value computed inside a conditional (Switch/Merge) of the body is pushed only in the
// iterations that took its branch: the list is switched on the branch's predicates,
// pushed in the branch, merged back (graph/gradients/cond_context.h), and popped the same
// way backward, where the Switch and Merge gradients keep the same deadness.
//
// A loop nested in the body is differentiated inside the backward body, its accumulators
// and counter restarted per outer iteration and replayed by the outer loop
// (graph/gradients/enclosing_loop_grad.h), to any depth.
//
// Not supported (UNIMPLEMENTED naming the frame): a gradient reading a variable's Enter
// directly; a loop nested in a conditional of another loop's body and differentiated;
// a value reading branches of two separate conditionals; a branch reading a
// differentiable tensor from outside it without a Switch (its gradient would be dead in
// the iterations that skip the branch). The loop's predicate has no gradient. Lists the
// gradient adds to replay values are marked, so a later gradient through the same loop
// does not differentiate them.
#ifndef DFLOW_GRAPH_GRADIENTS_WHILE_GRAD_H_
#define DFLOW_GRAPH_GRADIENTS_WHILE_GRAD_H_

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/control_flow.h"
#include "graph/gradients/enclosing_loop_grad.h"
#include "graph/gradients/gradient_registry.h"
#include "graph/graph.h"
#include "graph/scope.h"

namespace dflow {

using NodeGrads = absl::flat_hash_map<const Node*, Output>;

// `exit`: one Exit of the loop; `info`: the graph's frames, read before this gradient's
// nodes were added (every node the user built is in it; forward nodes a nested gradient
// adds are known through `enclosing`). `exit_grads`: the gradient arriving at each of
// the loop's Exits (absent: none). `enclosing`: the gradient of the loop whose body holds
// this one (null for a loop in the root frame). On success `enter_grads` maps each Enter
// of the loop whose input gets a gradient to it. Nodes go under `scope`. Errors are also
// recorded in the scope.
absl::Status AddWhileLoopGradient(const GradientRegistry& registry, const Scope& scope,
                                  const ControlFlowInfo& info, const Node& exit,
                                  const NodeGrads& exit_grads,
                                  const EnclosingLoopGrad* enclosing, NodeGrads* enter_grads);

// The ops of a loop's structure (Enter, Exit, NextIteration, LoopCond and their Ref
// forms), which have no gradient function of their own: AddSymbolicGradients
// differentiates a loop as a whole.
bool DifferentiatedAsLoop(absl::string_view op);

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRADIENTS_WHILE_GRAD_H_
