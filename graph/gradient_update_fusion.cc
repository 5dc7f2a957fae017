#include "graph/gradient_update_fusion.h"

#include <string>
#include <vector>

#include "graph/control_flow.h"
#include "graph/node_def_util.h"
#include "graph/rewrite_match.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

// A matched update: the MatMul, the Identity TF's gradient tuple puts between them (or
// null), and the update.
struct UpdateChain {
  Node* matmul = nullptr;
  Node* identity = nullptr;
  Node* apply = nullptr;
};

// Whether `matmul`'s output goes to `reader` alone. Control successors lose the
// MatMul's ordering, which only said "after this product" (TF's gradient tuple: the
// other gradient's Identity, group_deps); a product has no side effects to order, and
// graphs with v1 control flow, where a control edge also carries deadness, are not
// rewritten. No cycle can follow: the fused node waits only for what the update did.
bool ReadOnlyBy(const Node& matmul, const Node* reader) {
  int data = 0;
  for (const Edge* e : matmul.out_edges()) {
    if (e->IsControlEdge()) continue;
    if (e->dst != reader || e->src_output != 0) return false;
    ++data;
  }
  return data == 1;
}

bool MatchChain(Node* apply, UpdateChain* chain) {
  if (apply->op() != "ResourceApplyGradientDescent" || !OnCpu(*apply) ||
      !HasFloatAttr(*apply)) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    if (apply->input_edge(i) == nullptr) return false;
  }
  const Edge* delta = apply->input_edge(2);
  if (delta == nullptr || delta->src_output != 0) return false;
  Node* source = delta->src;
  Node* identity = nullptr;
  if (source->op() == "Identity") {
    if (!IsFusible(*source, apply->assigned_device()) || SoleConsumer(*source) != delta ||
        source->input_edge(0) == nullptr || source->input_edge(0)->src_output != 0) {
      return false;
    }
    identity = source;
    source = source->input_edge(0)->src;
  }
  Node* reader = identity != nullptr ? identity : apply;
  if (source->op() != "MatMul" || !IsFusible(*source, apply->assigned_device()) ||
      !ReadOnlyBy(*source, reader) || source->input_edge(0) == nullptr ||
      source->input_edge(1) == nullptr) {
    return false;
  }
  *chain = UpdateChain{source, identity, apply};
  return true;
}

NodeDef FusedDef(const UpdateChain& chain) {
  NodeDef def;
  def.set_name(chain.apply->name());
  def.set_op("_DflowResourceApplyGradientDescentMatMul");
  def.set_device(chain.apply->requested_device());
  auto& attrs = *def.mutable_attr();
  attrs["T"].set_type(DT_FLOAT);
  for (const char* flag : {"transpose_a", "transpose_b"}) {
    absl::StatusOr<bool> value = GetBoolAttr(chain.matmul->def(), flag);
    attrs[flag].set_b(value.ok() && *value);
  }
  absl::StatusOr<bool> use_locking = GetBoolAttr(chain.apply->def(), "use_locking");
  attrs["use_locking"].set_b(use_locking.ok() && *use_locking);
  return def;
}

absl::Status Rewrite(Graph* graph, const UpdateChain& chain) {
  std::vector<OutputPort> inputs;
  for (const Edge* e : {chain.apply->input_edge(0), chain.apply->input_edge(1),
                        chain.matmul->input_edge(0), chain.matmul->input_edge(1)}) {
    inputs.push_back({e->src, e->src_output});
  }
  std::vector<Node*> replaced = {chain.matmul};
  if (chain.identity != nullptr) replaced.push_back(chain.identity);
  replaced.push_back(chain.apply);
  return ReplaceChain(graph, replaced, chain.apply, FusedDef(chain), inputs).status();
}

}  // namespace

absl::Status FuseGradientUpdates(Graph* graph) {
  for (const Node* node : graph->nodes()) {
    if (IsV1ControlFlowOp(*node)) return absl::OkStatus();
  }
  return ForEachNodeById(graph, [graph](Node* apply) {
    UpdateChain chain;
    return MatchChain(apply, &chain) ? Rewrite(graph, chain) : absl::OkStatus();
  });
}

}  // namespace dflow
