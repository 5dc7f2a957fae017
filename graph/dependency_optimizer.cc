#include "graph/dependency_optimizer.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "graph/graph_pass_registry.h"
#include "graph/status_macros.h"
#include "graph/types.h"

namespace dflow {
namespace {

bool IsControlFlowOp(const Node& node) {
  static const auto* const kOps = new absl::flat_hash_set<std::string>{
      "Switch",        "RefSwitch", "_SwitchN",    "Merge",    "RefMerge",
      "Enter",         "RefEnter",  "Exit",        "RefExit",  "NextIteration",
      "RefNextIteration", "LoopCond", "ControlTrigger", "Abort"};
  return kOps->contains(node.op());
}

bool HasRefType(const DataTypeVector& types) {
  for (DataType t : types) {
    if (IsRefType(t)) return true;
  }
  return false;
}

bool ReadOnlyThroughControlEdges(const Node& node) {
  bool any = false;
  for (const Edge* edge : node.out_edges()) {
    if (!edge->IsControlEdge()) return false;
    any = true;
  }
  return any;
}

bool SafeToConvert(const Node& node) {
  if (node.op() == "NoOp" || !ReadOnlyThroughControlEdges(node)) return false;
  if (node.op_def().is_stateful() || IsControlFlowOp(node)) return false;
  if (node.op() == "_Arg" || node.op() == "_Retval" || node.op() == "_DeviceArg" ||
      node.op() == "_DeviceRetval") {
    return false;
  }
  if (HasRefType(node.input_types()) || HasRefType(node.output_types())) return false;
  for (const Edge* edge : node.in_edges()) {
    if (IsControlFlowOp(*edge->src)) return false;
  }
  return true;
}

absl::Status ConvertToNoOp(Graph* graph, Node* node) {
  // The edges as they are now: removing the node invalidates them.
  std::vector<Node*> inputs;
  absl::flat_hash_set<Node*> seen;
  for (const Edge* edge : node->in_edges()) {
    if (seen.insert(edge->src).second) inputs.push_back(edge->src);
  }
  std::vector<Node*> dependents;
  for (const Edge* edge : node->out_edges()) dependents.push_back(edge->dst);
  NodeDef def;
  def.set_name(node->name());
  def.set_op("NoOp");
  def.set_device(node->requested_device());
  const std::string assigned = node->assigned_device();
  graph->RemoveNode(node);
  DFLOW_ASSIGN_OR_RETURN(Node * noop, graph->AddNode(std::move(def)));
  noop->set_assigned_device(assigned);
  for (Node* input : inputs) graph->AddControlEdge(input, noop);
  for (Node* dependent : dependents) graph->AddControlEdge(noop, dependent);
  return absl::OkStatus();
}

// A NoOp that only relays ordering between nodes of its own device, none of them control
// flow, and that something waits for; its control inputs and successors.
struct Relay {
  std::vector<Node*> inputs, successors;
};

std::optional<Relay> RelayOf(const Node& node) {
  if (node.op() != "NoOp" || node.out_edges().empty()) return std::nullopt;
  Relay relay;
  absl::flat_hash_set<Node*> seen;
  for (const Edge* edge : node.in_edges()) {
    if (!edge->IsControlEdge()) return std::nullopt;
    if (seen.insert(edge->src).second) relay.inputs.push_back(edge->src);
  }
  seen.clear();
  for (const Edge* edge : node.out_edges()) {
    if (!edge->IsControlEdge()) return std::nullopt;
    if (seen.insert(edge->dst).second) relay.successors.push_back(edge->dst);
  }
  for (const std::vector<Node*>* side : {&relay.inputs, &relay.successors}) {
    for (const Node* other : *side) {
      if (other->assigned_device() != node.assigned_device() || IsControlFlowOp(*other)) {
        return std::nullopt;
      }
    }
  }
  const size_t in = relay.inputs.size(), out = relay.successors.size();
  if (in * out > in + out) return std::nullopt;
  return relay;
}

}  // namespace

int BypassRelayNoOps(Graph* graph) {
  int removed = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const std::vector<Node*> nodes = graph->nodes();  // a copy: the loop removes nodes
    for (Node* node : nodes) {
      std::optional<Relay> relay = RelayOf(*node);
      if (!relay.has_value()) continue;
      graph->RemoveNode(node);
      for (Node* input : relay->inputs) {
        for (Node* successor : relay->successors) graph->AddControlEdge(input, successor);
      }
      ++removed;
      changed = true;
    }
  }
  return removed;
}

bool DependencyOptimizationEnabled(const ConfigProto& config) {
  const GraphOptions& options = config.graph_options();
  return options.optimizer_options().opt_level() != OptimizerOptions::L0 &&
         options.rewrite_options().dependency_optimization() != RewriterConfig::OFF;
}

absl::StatusOr<int> ConvertUnreadNodesToNoOps(Graph* graph) {
  int converted = 0;
  // Sweeps until nothing changes: a node whose only reader became a NoOp is now read
  // through control edges alone.
  for (bool changed = true; changed;) {
    changed = false;
    for (Node* node : graph->nodes()) {
      if (!SafeToConvert(*node)) continue;
      DFLOW_RETURN_IF_ERROR(ConvertToNoOp(graph, node));
      ++converted;
      changed = true;
    }
  }
  return converted;
}

DFLOW_REGISTER_GRAPH_PASS(dependency_optimization, "dependency_optimization",
                          GraphPassPhase::kPrunedGraph, 150,
                          [](const GraphPassContext& context, Graph* graph) -> absl::Status {
                            if (!DependencyOptimizationEnabled(context.config)) {
                              return absl::OkStatus();
                            }
                            DFLOW_RETURN_IF_ERROR(ConvertUnreadNodesToNoOps(graph).status());
                            BypassRelayNoOps(graph);
                            return absl::OkStatus();
                          });

}  // namespace dflow
