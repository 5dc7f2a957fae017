// BuildWhileLoop: a TF 1.x while loop built through a Scope (TF's cc/ops/while_loop.h,
// with the same signature).
//
//   std::vector<Output> out;  // {10, x * 2^10}
//   DFLOW_RETURN_IF_ERROR(BuildWhileLoop(
//       root, {Const(root, 0), x},
//       [](const Scope& s, const std::vector<Output>& v, Output* pred) {
//         *pred = Less(s, v[0], 10);
//         return s.status();
//       },
//       [](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
//         *next = {Add(s, v[0], 1), Mul(s, v[1], 2.0f)};
//         return s.status();
//       },
//       "double", &out));
//
// The loop runs `body` while `cond` is true; outputs[i] is loop variable i after the last
// iteration. Layout per variable: graph/while_loop_structure.h. `cond` sees the Merge
// outputs, `body` the Identities of the Switches' true outputs; they may build any ops.
//
// Beyond TF's C++ API, as Python's tf.while_loop: `cond` and `body` may read tensors from
// outside the loop (each becomes one loop invariant, an Enter with is_constant), and ops
// they make without inputs (constants) get a control edge from the loop, so they run in
// its frame; ops reading nothing but invariants are anchored too, so they run once per
// iteration. A Merge output the body reads (kept from `cond`) is read as the variable's
// body input. The frame is named after the uniquified sub-scope `frame_name` ("while"
// when empty; e.g. "tower_1/while_2"), so two loops never share one.
//
// Gradients: AddSymbolicGradients differentiates through the loop
// (graph/gradients/while_grad.h).
//
// Errors (INVALID_ARGUMENT naming the loop): no inputs; `body` returning another number
// of tensors, or a dtype other than its variable's; `cond` not a bool. An error status
// returned by `cond` or `body` is passed on. All are also recorded in the scope.
#ifndef DFLOW_GRAPH_WHILE_LOOP_H_
#define DFLOW_GRAPH_WHILE_LOOP_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/scope.h"

namespace dflow {

using CondGraphBuilderFn =
    std::function<absl::Status(const Scope&, const std::vector<Output>& inputs, Output* output)>;
using BodyGraphBuilderFn = std::function<absl::Status(
    const Scope&, const std::vector<Output>& inputs, std::vector<Output>* outputs)>;

struct WhileLoopOptions {
  // Iterations that may run at once (tf.while_loop's parallel_iterations).
  int parallel_iterations = 10;
};

absl::Status BuildWhileLoop(const Scope& scope, const std::vector<Output>& inputs,
                            const CondGraphBuilderFn& cond, const BodyGraphBuilderFn& body,
                            const std::string& frame_name, std::vector<Output>* outputs,
                            const WhileLoopOptions& options = {});

}  // namespace dflow

#endif  // DFLOW_GRAPH_WHILE_LOOP_H_
