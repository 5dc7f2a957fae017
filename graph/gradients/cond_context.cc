#include "graph/gradients/cond_context.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/control_flow.h"

namespace dflow {
namespace {

bool IsSwitch(const Node& node) { return node.op() == "Switch" || node.op() == "RefSwitch"; }

// A Switch on a LoopCond: a loop's own, not a conditional's.
bool IsLoopSwitch(const Node& node) {
  if (!IsSwitch(node)) return false;
  const Edge* pred = node.input_edge(1);
  return pred != nullptr && pred->src->op() == "LoopCond";
}

// A loop variable's Merge (its back edge from a NextIteration): alive every iteration,
// and the walk must stop there or it would follow the back edge round the loop.
bool IsLoopMerge(const Node& node) {
  if (!IsMerge(node)) return false;
  for (const Edge* e : node.in_edges()) {
    if (!e->IsControlEdge() && IsNextIteration(*e->src)) return true;
  }
  return false;
}

// A predicate with its Identities stripped: TF's cond switches its pivots on `pred` and
// the tensors it captures on `pred_id = Identity(pred)`, one conditional either way.
Output CanonicalPredicate(Output pred) {
  while (pred.node != nullptr && pred.node->op() == "Identity") {
    const Edge* in = pred.node->input_edge(0);
    if (in == nullptr) break;
    pred = Output(in->src, in->src_output);
  }
  return pred;
}

bool IsPrefix(const CondContext& shorter, const CondContext& longer) {
  if (shorter.size() > longer.size()) return false;
  for (size_t i = 0; i < shorter.size(); ++i) {
    if (!(shorter[i] == longer[i])) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<CondContext> CondContexts::Of(const Output& value) {
  absl::StatusOr<CondContext> context = OfNode(*value.node);
  if (!context.ok() || value.index < 0 || !IsSwitch(*value.node) ||
      IsLoopSwitch(*value.node) || !in_body_(*value.node)) {
    return context;
  }
  const Edge* pred = value.node->input_edge(1);
  context->push_back({CanonicalPredicate(Output(pred->src, pred->src_output)), value.index});
  return context;
}

bool CondContexts::IsNestedExit(const Node& node) const {
  return nested_inputs_ != nullptr && IsExit(node) && !nested_inputs_(node).empty();
}

bool CondContexts::Boundary(const Node& node) const {
  if (IsNestedExit(node)) return false;
  return !in_body_(node) || IsEnter(node) || IsExit(node) || IsLoopSwitch(node) ||
         IsLoopMerge(node);
}

std::vector<Output> CondContexts::Sources(const Node& node) const {
  if (IsNestedExit(node)) return nested_inputs_(node);
  std::vector<Output> sources;
  for (const Edge* e : node.in_edges()) {
    sources.push_back(Output(e->src, e->IsControlEdge() ? -1 : e->src_output));
  }
  return sources;
}

// Post-order over the body's nodes from `root` back to the boundaries (an explicit stack:
// a body may hold long chains).
absl::StatusOr<CondContext> CondContexts::OfNode(const Node& root) {
  std::vector<std::pair<const Node*, bool>> stack = {{&root, false}};
  while (!stack.empty()) {
    auto& [node, expanded] = stack.back();
    const Node* n = node;
    if (memo_.contains(n)) {
      stack.pop_back();
    } else if (!expanded && !Boundary(*n)) {
      expanded = true;
      for (const Output& source : Sources(*n)) {
        if (!memo_.contains(source.node)) stack.push_back({source.node, false});
      }
    } else {
      stack.pop_back();
      absl::StatusOr<CondContext> context = Boundary(*n) ? CondContext() : Compute(*n);
      if (!context.ok()) return context.status();
      memo_.emplace(n, *std::move(context));
    }
  }
  return memo_.at(&root);
}

// Every source of `node` has its context in memo_.
absl::StatusOr<CondContext> CondContexts::Compute(const Node& node) {
  std::vector<CondContext> inputs;
  for (const Output& source : Sources(node)) {
    absl::StatusOr<CondContext> context = Of(source);  // index -1: the node's own
    if (!context.ok()) return context.status();
    inputs.push_back(*std::move(context));
  }
  if (inputs.empty()) return CondContext();
  if (IsMerge(node)) {  // a conditional's branches join: the prefix they share
    CondContext shared = inputs[0];
    for (const CondContext& in : inputs) {
      size_t n = 0;
      while (n < shared.size() && n < in.size() && shared[n] == in[n]) ++n;
      shared.resize(n);
    }
    return shared;
  }
  const CondContext* deepest = &inputs[0];
  for (const CondContext& in : inputs) {
    if (in.size() > deepest->size()) deepest = &in;
  }
  for (const CondContext& in : inputs) {
    if (!IsPrefix(in, *deepest)) {
      return absl::UnimplementedError(absl::StrCat(
          "the gradient of while loop '", loop_name_, "' needs '", node.name(),
          "', which reads values from branches of two separate conditionals (Switch/Merge) "
          "in the loop body; such values are not supported"));
    }
  }
  return *deepest;
}

}  // namespace dflow
