// Function inlining: calls of GraphDef library functions become the functions' bodies.
//
// A GraphDef may call a FunctionDef of its `library` in two ways: a node whose op is the
// function's name (TF 1.x's Defun; the corpus's tf_mlir_graph_function_call.pbtxt) or a
// PartitionedCall / StatefulPartitionedCall node whose `f` attr names it (graphs TF 2.x
// exports). dflow runs neither as a call: like TF's own function inlining (the default
// for such graphs), each call node N is replaced by
//   - the body's nodes, renamed "N/<node>", inheriting N's device when they have none,
//     with attr placeholders bound from the call's attrs;
//   - "N/_inputs", a NoOp carrying N's control inputs, which every body node without
//     inputs depends on, so the body waits for what the call waited for;
//   - N itself, now an IdentityN of the function's results (so consumers of "N:i" and
//     fetches of N are unchanged) that also waits for the body's sinks and control_ret.
// Calls inside bodies are inlined too; recursion and unknown functions are errors
// naming the call. Functional control flow (If, Case, While: graph/functional_control_flow.h)
// is lowered to v1 frames around calls in the same rounds, so it nests with calls freely.
#ifndef DFLOW_GRAPH_FUNCTION_INLINER_H_
#define DFLOW_GRAPH_FUNCTION_INLINER_H_

#include "absl/status/statusor.h"
#include "graph/op_registry.h"
#include "proto/graph.pb.h"

namespace dflow {

// At most this many nodes after inlining by default: a library whose calls fan out (a
// function calling the next one twice, 25 levels deep; recursion through two call
// sites) grows exponentially, and is refused when it crosses this budget, before memory
// grows. Sessions take theirs from ConfigProto dflow_limits (docs/LIMITS.md).
inline constexpr int64_t kMaxInlinedNodes = 1000000;
// Calls (and If/Case/While) nested at most this deep by default.
inline constexpr int kMaxCallDepth = 32;

struct InlineLimits {
  int64_t max_nodes = kMaxInlinedNodes;
  int max_depth = kMaxCallDepth;
};

// The GraphDef with every function call inlined (the library is kept). Returns the
// input unchanged when it calls no function. INVALID_ARGUMENT naming the call node for a
// call with the wrong number of inputs, a missing function, an output it cannot map,
// argument lists of variable length, calls nested deeper than limits.max_depth, or a
// graph that would grow past limits.max_nodes (the call node's name is the call chain).
absl::StatusOr<GraphDef> InlineFunctionCalls(const GraphDef& graph_def,
                                             const OpRegistry& ops = OpRegistry::Global(),
                                             const InlineLimits& limits = {});

// True when `graph_def` contains a call InlineFunctionCalls would inline.
bool HasFunctionCalls(const GraphDef& graph_def, const OpRegistry& ops = OpRegistry::Global());

}  // namespace dflow

#endif  // DFLOW_GRAPH_FUNCTION_INLINER_H_
