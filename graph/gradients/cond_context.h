// The conditionals (TF 1.x Switch/Merge, graph/cond_ops.h) a value of a while loop's body
// lives under: the values the loop's gradient must replay (graph/gradients/while_grad.h)
// may be computed in a branch, alive only in the iterations that took it.
//
// A value's context is the chain of branches it is inside, outermost first: a Switch's
// output `b` adds (its predicate, Identities stripped, b) to the Switch's own context; a Merge of a
// conditional's branches leaves them (the longest prefix its inputs share); any other
// node is in the deepest context of its inputs (data and control). The Exits of a loop
// nested in the body are in the deepest context of what enters that loop. The loop's
// own Switches and Merges (on a LoopCond, or fed by a NextIteration) and its Enters
// start an empty context, and so do values from outside the body.
//
// A node whose inputs come from branches neither of which contains the other (one branch
// of each of two separate conditionals) is UNIMPLEMENTED: it is alive only when both are
// taken, which no single chain of branches describes.
#ifndef DFLOW_GRAPH_GRADIENTS_COND_CONTEXT_H_
#define DFLOW_GRAPH_GRADIENTS_COND_CONTEXT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/scope.h"

namespace dflow {

struct CondBranch {
  Output pred;     // the Switch's predicate (a scalar bool)
  int branch = 0;  // 1: alive when pred is true; 0: when false
  bool operator==(const CondBranch& o) const { return pred == o.pred && branch == o.branch; }
};
using CondContext = std::vector<CondBranch>;

class CondContexts {
 public:
  // `in_body(node)`: whether the node computes in the loop body (its frame's nodes and
  // Enters). `nested_inputs(exit)`: for an Exit of a loop nested in the body, the
  // tensors entering that loop (empty for any other node; may be null). `loop_name` is
  // used in error messages.
  using NestedInputs = std::function<std::vector<Output>(const Node&)>;
  CondContexts(std::function<bool(const Node&)> in_body, std::string loop_name,
               NestedInputs nested_inputs = nullptr)
      : in_body_(std::move(in_body)), loop_name_(std::move(loop_name)),
        nested_inputs_(std::move(nested_inputs)) {}

  absl::StatusOr<CondContext> Of(const Output& value);

 private:
  absl::StatusOr<CondContext> OfNode(const Node& node);
  absl::StatusOr<CondContext> Compute(const Node& node);
  // What `node`'s context derives from: its in-edges' sources (data ones as tensors,
  // control ones as their node's output -1), or for a nested loop's Exit the tensors
  // entering that loop.
  std::vector<Output> Sources(const Node& node) const;
  bool IsNestedExit(const Node& node) const;
  bool Boundary(const Node& node) const;

  std::function<bool(const Node&)> in_body_;
  std::string loop_name_;
  NestedInputs nested_inputs_;
  absl::flat_hash_map<const Node*, CondContext> memo_;
};

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRADIENTS_COND_CONTEXT_H_
