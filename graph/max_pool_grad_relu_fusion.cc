#include "graph/max_pool_grad_relu_fusion.h"

#include <vector>

#include "absl/strings/match.h"
#include "graph/rewrite_match.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

bool IsFloatOrDouble(const Node& node) {
  const AttrValue* t = node.attr("T");
  return t != nullptr && (t->type() == DT_FLOAT || t->type() == DT_DOUBLE);
}

// The MaxPoolGrad that alone feeds `relu_grad`'s gradients from the same tensor its
// features read, or null.
Node* FusiblePoolGrad(const Node& relu_grad) {
  if (relu_grad.op() != "ReluGrad" || !OnCpu(relu_grad) || !IsFloatOrDouble(relu_grad)) {
    return nullptr;
  }
  const Edge* gradients = relu_grad.input_edge(0);
  const Edge* features = relu_grad.input_edge(1);
  if (gradients == nullptr || features == nullptr || gradients->src_output != 0) return nullptr;
  Node* pool_grad = gradients->src;
  if (pool_grad->op() != "MaxPoolGrad" ||
      pool_grad->assigned_device() != relu_grad.assigned_device() ||
      SoleConsumer(*pool_grad) != gradients) {
    return nullptr;
  }
  for (int i = 0; i < 3; ++i) {
    if (pool_grad->input_edge(i) == nullptr) return nullptr;
  }
  const Edge* orig_input = pool_grad->input_edge(0);
  if (orig_input->src != features->src || orig_input->src_output != features->src_output) {
    return nullptr;
  }
  const AttrValue* pool_type = pool_grad->attr("T");
  const AttrValue* relu_type = relu_grad.attr("T");
  if (pool_type == nullptr || pool_type->type() != relu_type->type()) return nullptr;
  return pool_grad;
}

absl::Status Rewrite(Graph* graph, Node* relu_grad, Node* pool_grad) {
  NodeDef def;
  def.set_name(relu_grad->name());
  def.set_op("_DflowMaxPoolGradRelu");
  def.set_device(relu_grad->requested_device());
  auto& attrs = *def.mutable_attr();
  for (const auto& [name, value] : pool_grad->def().attr()) {
    if (!absl::StartsWith(name, "_")) attrs[name] = value;  // not dflow's or TF's marks
  }
  std::vector<OutputPort> inputs;
  for (int i = 0; i < 3; ++i) {
    const Edge* e = pool_grad->input_edge(i);
    inputs.push_back({e->src, e->src_output});
  }
  return ReplaceChain(graph, {pool_grad, relu_grad}, relu_grad, std::move(def), inputs).status();
}

}  // namespace

absl::Status FuseMaxPoolGradRelu(Graph* graph) {
  return ForEachNodeById(graph, [graph](Node* relu_grad) {
    Node* pool_grad = FusiblePoolGrad(*relu_grad);
    return pool_grad != nullptr ? Rewrite(graph, relu_grad, pool_grad) : absl::OkStatus();
  });
}

}  // namespace dflow
