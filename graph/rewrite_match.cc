#include "graph/rewrite_match.h"

#include <algorithm>

#include "graph/device_name.h"
#include "graph/node_def_util.h"

namespace dflow {

bool OnCpu(const Node& node) {
  absl::StatusOr<DeviceName> device = ParseDeviceName(node.assigned_device());
  return device.ok() && device->type.has_value() && *device->type == "CPU";
}

bool HasFloatAttr(const Node& node, const char* type_attr) {
  absl::StatusOr<DataType> type = GetTypeAttr(node.def(), type_attr);
  return type.ok() && *type == DT_FLOAT;
}

std::string StringAttrOr(const Node& node, const char* name, const char* fallback) {
  absl::StatusOr<std::string> value = GetStringAttr(node.def(), name);
  return value.ok() ? *value : fallback;
}

const Edge* SoleConsumer(const Node& node) {
  if (node.out_edges().size() != 1) return nullptr;
  const Edge* edge = node.out_edges()[0];
  return edge->IsControlEdge() || edge->src_output != 0 ? nullptr : edge;
}

bool IsFusible(const Node& node, const std::string& device) {
  return node.assigned_device() == device && HasFloatAttr(node);
}

Node* SoleActivationConsumer(const Node& node) {
  const Edge* edge = SoleConsumer(node);
  if (edge == nullptr) return nullptr;
  Node* next = edge->dst;
  const bool activation = next->op() == "Relu" || next->op() == "Relu6";
  return activation && IsFusible(*next, node.assigned_device()) ? next : nullptr;
}

absl::StatusOr<Node*> ReplaceChain(Graph* graph, const std::vector<Node*>& replaced,
                                   const Node* last, NodeDef def,
                                   const std::vector<OutputPort>& inputs) {
  // Control edges between the replaced nodes themselves disappear with them.
  const auto is_replaced = [&](const Node* n) {
    return std::find(replaced.begin(), replaced.end(), n) != replaced.end();
  };
  std::vector<Node*> control_inputs;
  for (Node* node : replaced) {
    for (const Edge* e : node->in_edges()) {
      if (e->IsControlEdge() && !is_replaced(e->src)) control_inputs.push_back(e->src);
    }
  }
  std::vector<OutputPort> readers;  // {reader, its input slot}
  for (const Edge* e : last->out_edges()) readers.push_back({e->dst, e->dst_input});
  const std::string device = last->assigned_device();
  for (Node* node : replaced) graph->RemoveNode(node);
  absl::StatusOr<Node*> fused = graph->AddNode(std::move(def));
  if (!fused.ok()) return fused.status();
  (*fused)->set_assigned_device(device);
  for (size_t i = 0; i < inputs.size(); ++i) {
    graph->AddEdge(inputs[i].node, inputs[i].index, *fused, static_cast<int>(i));
  }
  for (Node* src : control_inputs) graph->AddControlEdge(src, *fused);
  for (const OutputPort& reader : readers) {
    if (reader.index == kControlSlot) {
      graph->AddControlEdge(*fused, reader.node);
    } else {
      graph->AddEdge(*fused, 0, reader.node, reader.index);
    }
  }
  return fused;
}

absl::Status ForEachNodeById(Graph* graph, const std::function<absl::Status(Node*)>& rewrite) {
  const int num_ids = graph->num_node_ids();
  for (int id = 0; id < num_ids; ++id) {
    Node* node = graph->FindNodeId(id);
    if (node == nullptr) continue;
    absl::Status status = rewrite(node);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace dflow
