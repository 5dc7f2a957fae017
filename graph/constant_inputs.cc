#include "graph/constant_inputs.h"

#include <algorithm>
#include <vector>

#include "graph/graph_pass_registry.h"

namespace dflow {

const Edge* SkipForwarding(const Edge* edge) {
  for (int depth = 0; edge != nullptr && depth < 64; ++depth) {
    const std::string& op = edge->src->op();
    if (op != "Identity" && op != "Snapshot" && op != "StopGradient") return edge;
    edge = edge->src->input_edge(0);
  }
  return edge;
}

const Node* ConstSource(const Edge* edge) {
  edge = SkipForwarding(edge);
  if (edge == nullptr || edge->src->op() != "Const" || edge->src_output != 0) return nullptr;
  return edge->src;
}

void MarkConstantInputs(Graph* graph) {
  for (Node* node : graph->nodes()) {
    std::vector<int64_t> constant;
    for (const Edge* edge : node->in_edges()) {
      if (edge->IsControlEdge()) continue;
      if (ConstSource(edge) != nullptr) constant.push_back(edge->dst_input);
    }
    if (constant.empty()) continue;
    std::sort(constant.begin(), constant.end());
    AttrValue value;
    for (int64_t index : constant) value.mutable_list()->add_i(index);
    (*node->mutable_def()->mutable_attr())[kConstantInputsAttr] = std::move(value);
  }
}

DFLOW_REGISTER_GRAPH_PASS(mark_constant_inputs, "mark_constant_inputs",
                          GraphPassPhase::kPartition, 200,
                          [](const GraphPassContext&, Graph* graph) {
                            MarkConstantInputs(graph);
                            return absl::OkStatus();
                          });

}  // namespace dflow
