#include "graph/residual_add_fusion.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "graph/rewrite_match.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

// Whether `node` is a _FusedConv2D that may take a fused Add: NHWC, its bias alone
// (no activation, no addend yet), float, on a CPU, every input present.
bool AcceptsAddend(const Node& node) {
  if (node.op() != "_FusedConv2D" || !OnCpu(node) || !HasFloatAttr(node) ||
      StringAttrOr(node, "data_format", "NHWC") != "NHWC") {
    return false;
  }
  const AttrValue* fused_ops = node.attr("fused_ops");
  const AttrValue* num_host_args = node.attr("num_host_args");
  if (fused_ops == nullptr || fused_ops->list().s_size() != 1 ||
      fused_ops->list().s(0) != "BiasAdd" ||
      (num_host_args != nullptr && num_host_args->i() != 0)) {
    return false;
  }
  for (int i = 0; i < 3; ++i) {
    if (node.input_edge(i) == nullptr) return false;
  }
  return true;
}

struct ResidualChain {
  Node* conv = nullptr;
  Node* add = nullptr;
  const Edge* addend = nullptr;  // the Add's other input
  Node* activation = nullptr;    // may be null

  Node* last() const { return activation != nullptr ? activation : add; }
};

// The chain whose Add is `add`, fusing the first of its inputs that qualifies.
bool MatchChain(Node* add, ResidualChain* chain) {
  if ((add->op() != "Add" && add->op() != "AddV2") || !OnCpu(*add) || !HasFloatAttr(*add)) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    const Edge* in = add->input_edge(i);
    const Edge* other = add->input_edge(1 - i);
    if (in == nullptr || other == nullptr) return false;
    Node* conv = in->src;
    if (in->src_output != 0 || !AcceptsAddend(*conv) || SoleConsumer(*conv) != in ||
        conv->assigned_device() != add->assigned_device()) {
      continue;
    }
    chain->conv = conv;
    chain->add = add;
    chain->addend = other;
    chain->activation = SoleActivationConsumer(*add);
    return true;
  }
  return false;
}

NodeDef FusedDef(const ResidualChain& chain) {
  NodeDef def;
  def.set_name(chain.last()->name());
  def.set_op("_FusedConv2D");
  def.set_device(chain.last()->requested_device());
  auto& attrs = *def.mutable_attr();
  for (const auto& [name, value] : chain.conv->def().attr()) {
    if (!absl::StartsWith(name, "_")) attrs[name] = value;  // not dflow's or TF's marks
  }
  attrs["num_args"].set_i(2);
  auto* types = attrs["TArgs"].mutable_list();
  types->clear_type();
  types->add_type(DT_FLOAT);
  types->add_type(DT_FLOAT);
  auto* fused_ops = attrs["fused_ops"].mutable_list();
  fused_ops->add_s("Add");
  if (chain.activation != nullptr) fused_ops->add_s(chain.activation->op());
  return def;
}

absl::Status Rewrite(Graph* graph, const ResidualChain& chain) {
  std::vector<OutputPort> inputs;
  for (int i = 0; i < 3; ++i) {
    const Edge* e = chain.conv->input_edge(i);
    inputs.push_back({e->src, e->src_output});
  }
  inputs.push_back({chain.addend->src, chain.addend->src_output});
  std::vector<Node*> replaced = {chain.conv, chain.add};
  if (chain.activation != nullptr) replaced.push_back(chain.activation);
  return ReplaceChain(graph, replaced, chain.last(), FusedDef(chain), inputs).status();
}

}  // namespace

absl::Status FuseResidualAdds(Graph* graph) {
  return ForEachNodeById(graph, [graph](Node* add) {
    ResidualChain chain;
    return MatchChain(add, &chain) ? Rewrite(graph, chain) : absl::OkStatus();
  });
}

}  // namespace dflow
