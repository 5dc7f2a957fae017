// Functional control flow lowered to TF v1 frames, as TF's LowerFunctionalOpsPass does.
//
// TF 2 writes conditionals and loops as single nodes whose branches and bodies are
// FunctionDefs of the graph's library: If / StatelessIf (then_branch, else_branch), Case
// (branches) and While / StatelessWhile (cond, body). dflow runs them as TF 1.x graphs run
// tf.cond and tf.while_loop: each such node N becomes Switch/Merge (or _SwitchN) and
// Enter/Merge/Switch/Exit/NextIteration/LoopCond nodes named "N/...", around
// PartitionedCall nodes that call the branch or body functions. InlineFunctionCalls
// (graph/function_inliner.h) lowers and inlines round after round, so bodies that hold
// further If/While nodes or calls are handled at any depth.
//
//  - If:    Switch(cond, cond) gives the pivots N/pivot_t and N/pivot_f; every input goes
//           through Switch(input, cond); the then-call reads the true side and waits for
//           pivot_t (so the constants of a branch not taken are dead too), the else-call
//           the false side; output j is Merge(else:j, then:j). A non-bool cond is first
//           turned into a bool as TF's ToBool does.
//  - Case:  the same with _SwitchN on branch_index (out of range: the last branch, as TF).
//  - While: input k -> Enter (frame N, parallel_iterations) -> Merge(enter, next) ->
//           cond-call -> LoopCond -> Switch; the false side leaves by Exit, the true side
//           feeds the body-call, whose outputs go back through NextIteration. The calls
//           wait for a node of the frame, so body constants live in the loop frame.
//  - N itself becomes an IdentityN of the outputs (consumers of "N:i" unchanged) that also
//    waits for "N/branch_executed" (a Merge of the taken branch's completion), so a
//    control edge from N still means "after the branch that ran", side effects included.
// Every new node carries N's device.
#ifndef DFLOW_GRAPH_FUNCTIONAL_CONTROL_FLOW_H_
#define DFLOW_GRAPH_FUNCTIONAL_CONTROL_FLOW_H_

#include "absl/status/status.h"
#include "proto/graph.pb.h"

namespace dflow {

// If, StatelessIf, Case, While or StatelessWhile.
bool IsFunctionalControlFlow(const NodeDef& node);

// Appends the lowered form of `node` (IsFunctionalControlFlow) to `out`. `library` is the
// graph's function library (the While cond's result type is read from it).
// INVALID_ARGUMENT naming the node for a missing attr or function, a While without loop
// variables, or input/type counts that disagree.
absl::Status LowerFunctionalControlFlow(const NodeDef& node, const FunctionDefLibrary& library,
                                        GraphDef* out);

}  // namespace dflow

#endif  // DFLOW_GRAPH_FUNCTIONAL_CONTROL_FLOW_H_
