#include "graph/constant_inputs.h"

#include <algorithm>
#include <vector>

namespace dflow {
namespace {

bool IsForwardingOp(const Node& node) {
  const std::string& op = node.op();
  return op == "Identity" || op == "Snapshot" || op == "StopGradient";
}

// True when output `index` of `node` is a Const's value, possibly forwarded.
bool IsConstantOutput(const Node& node, int index, int depth = 0) {
  if (node.op() == "Const") return index == 0;
  if (!IsForwardingOp(node) || depth > 64) return false;
  const Edge* input = node.input_edge(0);
  return input != nullptr && IsConstantOutput(*input->src, input->src_output, depth + 1);
}

}  // namespace

void MarkConstantInputs(Graph* graph) {
  for (Node* node : graph->nodes()) {
    std::vector<int64_t> constant;
    for (const Edge* edge : node->in_edges()) {
      if (edge->IsControlEdge()) continue;
      if (IsConstantOutput(*edge->src, edge->src_output)) constant.push_back(edge->dst_input);
    }
    if (constant.empty()) continue;
    std::sort(constant.begin(), constant.end());
    AttrValue value;
    for (int64_t index : constant) value.mutable_list()->add_i(index);
    (*node->mutable_def()->mutable_attr())[kConstantInputsAttr] = std::move(value);
  }
}

}  // namespace dflow
