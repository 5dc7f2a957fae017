#include "session/execution_plan.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def_import.h"
#include "graph/graph_pass_registry.h"
#include "graph/node_def_util.h"
#include "graph/partition.h"
#include "graph/status_macros.h"
#include "graph/subgraph.h"
#include "session/kernel_coverage.h"

namespace dflow {
namespace {

// A Const value above this many bytes is left out of the partition GraphDef the plan
// keeps for RunMetadata (PartitionGraphDefs puts it back from the session's graph).
constexpr size_t kKeptConstValueBytes = 1024;

// Imports a GraphDef whose `device` fields hold assigned devices, assigning them.
absl::StatusOr<std::unique_ptr<Graph>> ImportAssigned(GraphDef graph_def,
                                                      const OpRegistry& ops) {
  ImportOptions options;
  options.infer_shapes = false;
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                         ImportGraphDef(std::move(graph_def), options, ops));
  for (Node* node : graph->nodes()) node->set_assigned_device(node->requested_device());
  return graph;
}

// The shape the session's graph knows for tensor `name` ("node:k"); unknown if none.
PartialShape KnownShape(const Graph& graph, const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok()) return PartialShape();
  const Node* node = graph.FindNode(id->node);
  if (node == nullptr || id->index >= static_cast<int>(node->output_shapes().size())) {
    return PartialShape();
  }
  return node->output_shapes()[id->index];
}

// The dtype of fed tensor `name` ("node:k"). REQUIRES: the rewrite accepted the feed.
DataType FedType(const Graph& graph, const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  const Node* node = id.ok() ? graph.FindNode(id->node) : nullptr;
  if (node == nullptr || id->index >= node->num_outputs()) return DT_INVALID;
  return BaseType(node->output_types()[id->index]);
}

absl::StatusOr<std::unique_ptr<Graph>> CopyPlacedGraph(const Graph& placed) {
  GraphDef graph_def = placed.ToGraphDef();
  for (NodeDef& node : *graph_def.mutable_node()) {
    node.set_device(placed.FindNode(node.name())->assigned_device());
  }
  return ImportAssigned(std::move(graph_def), placed.op_registry());
}

// A copy of `graph_def` without its big Const values, made without copying them; the
// names of the Consts left bare go to `bare`.
GraphDef WithoutBigConstValues(GraphDef* graph_def, std::vector<std::string>* bare) {
  std::vector<std::pair<NodeDef*, AttrValue>> set_aside;
  for (NodeDef& node : *graph_def->mutable_node()) {
    if (!IsConstantOp(node.op())) continue;
    auto value = node.mutable_attr()->find("value");
    if (value == node.mutable_attr()->end() ||
        value->second.ByteSizeLong() <= kKeptConstValueBytes) {
      continue;
    }
    set_aside.emplace_back(&node, std::move(value->second));
    node.mutable_attr()->erase(value);
    bare->push_back(node.name());
  }
  GraphDef copy = *graph_def;
  for (auto& [node, value] : set_aside) (*node->mutable_attr())["value"] = std::move(value);
  return copy;
}

// The big Const values of `graph` (this plan's own copy, about to be partitioned) moved
// out by node name, so partitioning does not copy them once more.
absl::flat_hash_map<std::string, AttrValue> TakeBigConstValues(Graph* graph) {
  absl::flat_hash_map<std::string, AttrValue> values;
  for (Node* node : graph->nodes()) {
    if (!IsConstantOp(node->op())) continue;
    auto* attrs = node->mutable_def()->mutable_attr();
    auto value = attrs->find("value");
    if (value == attrs->end() || value->second.ByteSizeLong() <= kKeptConstValueBytes) continue;
    values.emplace(node->name(), std::move(value->second));
    attrs->erase(value);
  }
  return values;
}

// Puts the values TakeBigConstValues moved out back into the partition that has the Const.
void RestoreConstValues(absl::flat_hash_map<std::string, AttrValue>* values,
                        GraphDef* partition) {
  for (NodeDef& node : *partition->mutable_node()) {
    if (!IsConstantOp(node.op())) continue;
    auto it = values->find(node.name());
    if (it == values->end()) continue;
    (*node.mutable_attr())["value"] = std::move(it->second);
    values->erase(it);
  }
}

}  // namespace

std::string PlanSignature::Key() const {
  return absl::StrCat(absl::StrJoin(feeds, ","), "->", absl::StrJoin(fetches, ","), "/",
                      absl::StrJoin(targets, ","));
}

absl::StatusOr<std::string> CanonicalTensorName(absl::string_view name) {
  DFLOW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
  if (id.IsControl()) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a tensor name"));
  }
  return id.ToString();
}

absl::StatusOr<std::unique_ptr<ExecutionPlan>> ExecutionPlan::Build(
    std::shared_ptr<const Graph> placed, const PlanSignature& signature,
    const DeviceMgr& devices, const KernelRegistry& kernels, const ConfigProto& config,
    StatefulKernels* shared) {
  const Graph& placed_graph = *placed;
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, CopyPlacedGraph(placed_graph));
  RewriteSpec spec;
  spec.feeds = signature.feeds;
  spec.fetches = signature.fetches;
  spec.targets = signature.targets;
  spec.client_device = devices.client_device()->name();
  DFLOW_ASSIGN_OR_RETURN(RewriteResult rewrite, RewriteGraphForExecution(spec, graph.get()));
  DFLOW_RETURN_IF_ERROR(MissingKernelsError(FindMissingKernels(*graph, kernels)));
  const GraphPassRegistry& passes = GraphPassRegistry::Global();
  DFLOW_RETURN_IF_ERROR(
      passes.Run(GraphPassPhase::kPrunedGraph, GraphPassContext{config, ""}, graph.get()));

  std::unique_ptr<ExecutionPlan> plan(new ExecutionPlan());
  // From the session's graph: a feed nothing needs has its _Arg pruned (TF accepts such
  // feeds, e.g. a SavedModel's asset paths fed to every loading step).
  for (const std::string& feed : signature.feeds) {
    plan->feed_types_.push_back(FedType(placed_graph, feed));
  }
  plan->feed_names_ = signature.feeds;
  for (const std::string& feed : signature.feeds) {
    plan->feed_shapes_.push_back(KnownShape(placed_graph, feed));
  }
  plan->num_fetches_ = static_cast<int>(signature.fetches.size());
  plan->fetch_names_ = signature.fetches;

  PartitionOptions partition_options;
  partition_options.kernels = &kernels;  // HostMemory args cross devices without copies
  // The pruned graph is the plan's own copy: its big constants move into the partitions
  // rather than being copied again, and it is gone before the kernels make their tensors
  // (a frozen VGG16's 553 MB of weights are not held four times while the plan is built).
  absl::flat_hash_map<std::string, AttrValue> const_values = TakeBigConstValues(graph.get());
  DFLOW_ASSIGN_OR_RETURN(auto partition_defs, PartitionGraph(partition_options, *graph));
  graph.reset();
  for (auto& [device_name, graph_def] : partition_defs) {
    RestoreConstValues(&const_values, &graph_def);
  }
  plan->needs_rendezvous_ = partition_defs.size() > 1;
  for (auto& [device_name, graph_def] : partition_defs) {
    for (const NodeDef& node : graph_def.node()) {
      if (node.op() == "_Send" || node.op() == "_HostSend") plan->needs_rendezvous_ = true;
    }
    DFLOW_ASSIGN_OR_RETURN(Device * device, devices.Lookup(device_name));
    Partition part;
    part.device = device;
    part.graph_def = WithoutBigConstValues(&graph_def, &part.bare_consts);
    DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> partition,
                           ImportAssigned(std::move(graph_def), placed_graph.op_registry()));
    DFLOW_RETURN_IF_ERROR(passes.Run(GraphPassPhase::kPartition,
                                     GraphPassContext{config, device->device_type()},
                                     partition.get()));
    DFLOW_ASSIGN_OR_RETURN(part.executor, Executor::Create(*partition, device, kernels, shared));
    plan->partitions_.push_back(std::move(part));
  }
  plan->placed_graph_ = std::move(placed);
  return plan;
}

GraphDef ExecutionPlan::PartitionGraphDef(const Partition& partition) const {
  GraphDef graph_def = partition.graph_def;
  if (partition.bare_consts.empty()) return graph_def;
  const absl::flat_hash_set<std::string> bare(partition.bare_consts.begin(),
                                              partition.bare_consts.end());
  for (NodeDef& node : *graph_def.mutable_node()) {
    if (!bare.contains(node.name())) continue;
    const Node* source = placed_graph_->FindNode(node.name());
    const AttrValue* value = source != nullptr ? source->attr("value") : nullptr;
    if (value != nullptr) (*node.mutable_attr())["value"] = *value;
  }
  return graph_def;
}

}  // namespace dflow
