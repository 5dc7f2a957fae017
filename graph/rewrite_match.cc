#include "graph/rewrite_match.h"

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

}  // namespace dflow
