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

bool IsLoopMerge(const Node& node) {
  if (!IsMerge(node)) return false;
  for (const Edge* e : node.in_edges()) {
    if (!e->IsControlEdge() && IsNextIteration(*e->src)) return true;
  }
  return false;
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
  if (!context.ok() || !IsSwitch(*value.node) || IsLoopSwitch(*value.node) ||
      !in_body_(*value.node)) {
    return context;
  }
  const Edge* pred = value.node->input_edge(1);
  context->push_back({Output(pred->src, pred->src_output), value.index});
  return context;
}

// Post-order over the body's nodes from `root` back to the boundaries (an explicit stack:
// a body may hold long chains).
absl::StatusOr<CondContext> CondContexts::OfNode(const Node& root) {
  auto boundary = [&](const Node& n) {
    return !in_body_(n) || IsEnter(n) || IsExit(n) || IsLoopSwitch(n) || IsLoopMerge(n);
  };
  std::vector<std::pair<const Node*, bool>> stack = {{&root, false}};
  while (!stack.empty()) {
    auto& [node, expanded] = stack.back();
    const Node* n = node;
    if (memo_.contains(n)) {
      stack.pop_back();
    } else if (!expanded && !boundary(*n)) {
      expanded = true;
      for (const Edge* e : n->in_edges()) {
        if (!memo_.contains(e->src)) stack.push_back({e->src, false});
      }
    } else {
      stack.pop_back();
      absl::StatusOr<CondContext> context =
          boundary(*n) ? CondContext() : Compute(*n);
      if (!context.ok()) return context.status();
      memo_.emplace(n, *std::move(context));
    }
  }
  return memo_.at(&root);
}

// Every input of `node` has its context in memo_.
absl::StatusOr<CondContext> CondContexts::Compute(const Node& node) {
  std::vector<CondContext> inputs;
  for (const Edge* e : node.in_edges()) {
    if (e->IsControlEdge()) {
      inputs.push_back(memo_.at(e->src));
    } else {
      absl::StatusOr<CondContext> context = Of(Output(e->src, e->src_output));
      if (!context.ok()) return context.status();
      inputs.push_back(*std::move(context));
    }
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
