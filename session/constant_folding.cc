#include "session/constant_folding.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_pass_registry.h"
#include "graph/node_def_util.h"
#include "graph/rewrite_match.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "session/session.h"

namespace dflow {
namespace {

// Ops that never fold even when their inputs are constant (rule 1). Identity and its
// kin do fold: a frozen Keras model reads every weight through one (its former
// ReadVariableOp), and a batch norm's statistics must fold through it.
bool IsUnfoldableOp(const std::string& op) {
  static const absl::flat_hash_set<std::string>* const kOps = new absl::flat_hash_set<std::string>{
      "Const", "HostConst", "Placeholder", "PlaceholderWithDefault", "_Arg", "_Retval",
      "_Send", "_Recv", "_HostSend", "_HostRecv", "Switch", "RefSwitch", "_SwitchN", "Merge",
      "RefMerge",
      "Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond",
      "ControlTrigger", "NoOp", "CheckNumerics", "Assert", "Print", "PrintV2"};
  return kOps->contains(op);
}

bool HasPlainTypes(const Node& node) {
  for (const DataTypeVector* types : {&node.input_types(), &node.output_types()}) {
    for (DataType type : *types) {
      if (IsRefType(type) || type == DT_RESOURCE || type == DT_VARIANT) return false;
    }
  }
  return true;
}

bool IsConst(const Node& node) { return IsConstantOp(node.op()); }

bool IsIdentityLike(const std::string& op) {
  return op == "Identity" || op == "Snapshot" || op == "StopGradient";
}

// The Const an identity-like `node` forwards unchanged (rule 0), or null.
Node* ForwardedConst(const Node& node) {
  if (!IsIdentityLike(node.op()) || node.in_edges().size() != 1) return nullptr;
  const Edge* in = node.in_edges()[0];
  if (in->IsControlEdge() || !IsConst(*in->src) ||
      in->src->assigned_device() != node.assigned_device()) {
    return nullptr;
  }
  return in->src;
}

// Rule 0; returns the number of nodes bypassed.
int BypassIdentitiesOfConsts(Graph* graph) {
  std::vector<int> work;  // ids: a node may be queued again after it was removed
  for (const Node* node : graph->nodes()) work.push_back(node->id());
  int bypassed = 0;
  while (!work.empty()) {
    Node* node = graph->FindNodeId(work.back());
    work.pop_back();
    Node* constant = node == nullptr ? nullptr : ForwardedConst(*node);
    if (constant == nullptr) continue;
    const std::vector<const Edge*> readers = node->out_edges();
    for (const Edge* e : readers) {
      if (e->IsControlEdge()) {
        graph->AddControlEdge(constant, e->dst);
      } else {
        graph->AddEdge(constant, 0, e->dst, e->dst_input);
        work.push_back(e->dst->id());  // an Identity of this one now reads the Const
      }
    }
    graph->RemoveNode(node);
    ++bypassed;
  }
  return bypassed;
}

// Whether rule 1 lets `node` fold, its inputs aside.
bool MayFold(const Node& node) {
  return !IsUnfoldableOp(node.op()) && OnCpu(node) && !node.op_def().is_stateful() &&
         HasPlainTypes(node) && node.num_inputs() > 0;
}

// Rule 1: the folding nodes' ids. A worklist in topological order: a node folds once
// every edge into it comes from a Const or a folding node (linear in the graph).
absl::flat_hash_set<int> FoldingNodes(const Graph& graph) {
  absl::flat_hash_map<int, int> pending;  // per candidate: in-edges not yet constant
  std::vector<Node*> ready;
  for (Node* node : graph.nodes()) {
    if (!MayFold(*node)) continue;
    int count = 0;
    for (const Edge* e : node->in_edges()) count += IsConst(*e->src) ? 0 : 1;
    pending[node->id()] = count;
    if (count == 0) ready.push_back(node);
  }
  absl::flat_hash_set<int> folding;
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    folding.insert(node->id());
    for (const Edge* e : node->out_edges()) {
      auto it = pending.find(e->dst->id());
      if (it != pending.end() && --it->second == 0) ready.push_back(e->dst);
    }
  }
  return folding;
}

struct FoldedOutput {
  Node* node;
  int index;
};

// Whether `node` computes on data that is not constant: a data input from a node that is
// neither a Const nor folding.
bool ReadsRuntimeData(const Node& node, const absl::flat_hash_set<int>& folding) {
  for (const Edge* e : node.in_edges()) {
    if (!e->IsControlEdge() && !IsConst(*e->src) && !folding.contains(e->src->id())) return true;
  }
  return false;
}

// The outputs of folding nodes read by a node that computes on runtime data (rule 2).
// A value only fetched, or only read by other constant work, stays computed: an
// all-constant graph (a placement example, a test) keeps its nodes and devices.
std::vector<FoldedOutput> FrontierOutputs(const Graph& graph,
                                          const absl::flat_hash_set<int>& folding) {
  std::vector<FoldedOutput> outputs;
  absl::flat_hash_set<std::string> seen;
  for (Node* node : graph.nodes()) {
    if (!folding.contains(node->id())) continue;
    for (const Edge* e : node->out_edges()) {
      if (e->IsControlEdge() || folding.contains(e->dst->id()) ||
          !ReadsRuntimeData(*e->dst, folding)) {
        continue;
      }
      if (seen.insert(absl::StrCat(node->name(), ":", e->src_output)).second) {
        outputs.push_back({node, e->src_output});
      }
    }
  }
  return outputs;
}

// The folding nodes and the Consts they read, device-free, for the nested session.
GraphDef FoldingGraphDef(const Graph& graph, const absl::flat_hash_set<int>& folding) {
  GraphDef graph_def;
  *graph_def.mutable_library() = graph.library();
  absl::flat_hash_set<int> added;
  auto add = [&](const Node& node) {
    if (!added.insert(node.id()).second) return;
    NodeDef def = graph.NodeDefWithInputs(node);
    def.clear_device();
    def.mutable_attr()->erase("_class");  // colocation with nodes left out
    *graph_def.add_node() = std::move(def);
  };
  for (Node* node : graph.nodes()) {
    if (!folding.contains(node->id())) continue;
    for (const Edge* e : node->in_edges()) {
      if (IsConst(*e->src)) add(*e->src);
    }
    add(*node);
  }
  return graph_def;
}

std::string FoldedName(const Graph& graph, const FoldedOutput& output) {
  const std::string base = output.index == 0
                               ? absl::StrCat(output.node->name(), "/_folded")
                               : absl::StrCat(output.node->name(), "/_folded_", output.index);
  std::string name = base;
  for (int i = 1; graph.FindNode(name) != nullptr; ++i) name = absl::StrCat(base, "_", i);
  return name;
}

// Replaces the readers of `output` outside the folding set by a Const of `value`.
absl::Status ReplaceWithConst(Graph* graph, const FoldedOutput& output, const Tensor& value,
                              const absl::flat_hash_set<int>& folding) {
  NodeDef def;
  def.set_name(FoldedName(*graph, output));
  def.set_op("Const");
  def.set_device(output.node->requested_device());
  (*def.mutable_attr())["dtype"].set_type(value.dtype());
  *(*def.mutable_attr())["value"].mutable_tensor() = value.ToProto();
  DFLOW_ASSIGN_OR_RETURN(Node * constant, graph->AddNode(std::move(def)));
  constant->set_assigned_device(output.node->assigned_device());
  struct Reader {
    Node* node;
    int input;
  };
  std::vector<Reader> readers;
  std::vector<const Edge*> edges;
  for (const Edge* e : output.node->out_edges()) {
    if (!e->IsControlEdge() && e->src_output == output.index &&
        !folding.contains(e->dst->id()) && ReadsRuntimeData(*e->dst, folding)) {
      readers.push_back({e->dst, e->dst_input});
      edges.push_back(e);
    }
  }
  for (const Edge* e : edges) graph->RemoveEdge(e);
  for (const Reader& reader : readers) graph->AddEdge(constant, 0, reader.node, reader.input);
  return absl::OkStatus();
}

// Rule 3: the folding nodes and the Consts they read (`candidates`, by name) that no
// node reads any more, repeatedly.
int RemoveUnread(Graph* graph, const std::vector<std::string>& candidates) {
  int removed = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    for (const std::string& name : candidates) {
      Node* node = graph->FindNode(name);
      if (node == nullptr || !node->out_edges().empty()) continue;
      graph->RemoveNode(node);
      ++removed;
      changed = true;
    }
  }
  return removed;
}

}  // namespace

bool ConstantFoldingEnabled(const ConfigProto& config) {
  const GraphOptions& graph = config.graph_options();
  return graph.optimizer_options().opt_level() != OptimizerOptions::L0 &&
         graph.rewrite_options().constant_folding() != RewriterConfig::OFF;
}

absl::StatusOr<int> FoldConstants(Graph* graph, const ConstantFoldingOptions& options) {
  const int bypassed = BypassIdentitiesOfConsts(graph);
  const absl::flat_hash_set<int> folding = FoldingNodes(*graph);
  if (folding.empty()) return bypassed;
  std::vector<FoldedOutput> outputs = FrontierOutputs(*graph, folding);
  if (outputs.empty()) return bypassed;
  ConfigProto config;
  (*config.mutable_device_count())["GPU"] = 0;
  config.set_intra_op_parallelism_threads(1);
  config.set_inter_op_parallelism_threads(1);
  config.mutable_graph_options()->mutable_rewrite_options()->set_constant_folding(
      RewriterConfig::OFF);
  std::vector<std::string> fetches;
  for (const FoldedOutput& output : outputs) {
    fetches.push_back(absl::StrCat(output.node->name(), ":", output.index));
  }
  std::vector<std::string> candidates;
  for (Node* node : graph->nodes()) {
    if (!folding.contains(node->id())) continue;
    candidates.push_back(node->name());
    for (const Edge* e : node->in_edges()) {
      if (IsConst(*e->src)) candidates.push_back(e->src->name());
    }
  }
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config);
  if (!session.ok()) return bypassed;  // rule 4
  std::vector<Tensor> values;
  if (!(*session)->Create(FoldingGraphDef(*graph, folding)).ok() ||
      !(*session)->Run({}, fetches, {}, &values).ok()) {
    return bypassed;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (values[i].TotalBytes() > static_cast<size_t>(options.max_constant_bytes)) continue;
    DFLOW_RETURN_IF_ERROR(ReplaceWithConst(graph, outputs[i], values[i], folding));
  }
  return bypassed + RemoveUnread(graph, candidates);
}

// The pruned graph of each signature, unless the ConfigProto turns folding off.
DFLOW_REGISTER_GRAPH_PASS(constant_folding, "constant_folding", GraphPassPhase::kPrunedGraph,
                          100, [](const GraphPassContext& context, Graph* graph) {
                            if (!ConstantFoldingEnabled(context.config)) return absl::OkStatus();
                            return FoldConstants(graph).status();
                          });

}  // namespace dflow
