// The placer: TF 1.x's Placer::Run over a ColocationGraph, plus a reason for every node.
//
// Shape of the code (rule numbers refer to placer.h):
//   PlacerDeviceSet  the devices, their priorities, matching and candidate sorting (1, 6);
//                    placer_device_set.h
//   ColocationGraph  union-find over nodes: requests, supported types, ref-edge and
//                    `_class` groups, cached candidates, every TF error text (2-6);
//                    colocation_graph.h
//   Placer           the two assignment passes and the reasons (7, 8); below
// Assignments live in side tables until everything succeeded, so a failed placement
// leaves the graph untouched.
#include "graph/placer.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/colocation_graph.h"
#include "graph/placer_device_set.h"
#include "graph/status_macros.h"
#include "graph/types.h"

namespace dflow {
namespace {

using Candidates = ColocationGraph::Candidates;

constexpr absl::string_view kDefaultReason =
    "default: highest-priority device with a kernel (GPU before CPU)";

// No inputs and one non-ref output (Const, Placeholder): placed in the second pass.
bool IsGenerator(const Node& node) {
  return node.num_inputs() == 0 && node.num_outputs() == 1 &&
         !IsRefType(node.output_types()[0]);
}

bool IsMetadata(const Node& node) {
  return node.op() == "Shape" || node.op() == "Size" || node.op() == "Rank";
}

// ---- Placer -------------------------------------------------------------------------

// A device and the sentence explaining the choice.
struct Choice {
  int device = -1;
  std::string reason;
};

// Rules 7 and 8 over a ColocationGraph; collects decisions and log lines. Borrows
// everything it is constructed with; Run() once.
class Placer {
 public:
  Placer(const PlacementOptions& options, const PlacerDeviceSet& devices,
         const KernelSupport& kernels, const Graph& graph)
      : options_(options), devices_(devices), graph_(graph),
        colocation_(options, devices, kernels, graph, &log_lines_),
        reasons_(graph.num_node_ids()) {}

  absl::StatusOr<PlacementResult> Run();

 private:
  absl::Status PlaceNode(const Node& node);
  Choice Choose(const Node& node, const Candidates& candidates);
  int InputDevice(const Node& node) const;
  int ConsumersDevice(const Node& node) const;
  std::string CandidateReason(const Node& node, const Candidates& candidates);
  std::string FallbackReason(const Node& node, const PlacerDevice& chosen);
  std::string ColocatedReason(const Node& node, int pinned_by) const;
  void Assign(const Node& node, int device, std::string reason);
  PlacementResult Result();

  const PlacementOptions& options_;
  const PlacerDeviceSet& devices_;
  const Graph& graph_;
  std::vector<std::string> log_lines_;
  ColocationGraph colocation_;
  std::vector<std::string> reasons_;  // by node id
};

absl::StatusOr<PlacementResult> Placer::Run() {
  DFLOW_RETURN_IF_ERROR(colocation_.Initialize());
  std::vector<const Node*> generators;
  for (const Node* node : graph_.nodes()) {
    if (!node->assigned_device().empty()) {
      Assign(*node, colocation_.AssignedDevice(node->id()), "assigned before placement; kept");
    } else if (IsGenerator(*node)) {
      generators.push_back(node);
    } else {
      DFLOW_RETURN_IF_ERROR(PlaceNode(*node));
    }
  }
  for (const Node* node : generators) DFLOW_RETURN_IF_ERROR(PlaceNode(*node));
  return Result();
}

absl::Status Placer::PlaceNode(const Node& node) {
  DFLOW_ASSIGN_OR_RETURN(const Candidates* candidates, colocation_.GetCandidates(node));
  // A group pinned by another member has exactly one candidate, that member's device.
  const int pinned_by = colocation_.PinnedBy(node);
  Choice choice = pinned_by >= 0 && pinned_by != node.id()
                      ? Choice{candidates->devices[0], ColocatedReason(node, pinned_by)}
                      : Choose(node, *candidates);
  for (const std::string& remark : colocation_.Info(node.id()).remarks) {
    absl::StrAppend(&choice.reason, "; ", remark);
  }
  Assign(node, choice.device, std::move(choice.reason));
  return absl::OkStatus();
}

// candidates[0], except for the metadata and generator heuristics.
Choice Placer::Choose(const Node& node, const Candidates& candidates) {
  const std::vector<int>& devices = candidates.devices;
  auto is_candidate = [&devices](int device) {
    return std::find(devices.begin(), devices.end(), device) != devices.end();
  };
  if (IsMetadata(node) && is_candidate(InputDevice(node))) {
    return {InputDevice(node),
            absl::StrCat("metadata op follows its input's device (input '",
                         node.input_edge(0)->src->name(), "')")};
  }
  if (IsGenerator(node) && is_candidate(ConsumersDevice(node))) {
    return {ConsumersDevice(node), "generator placed with its consumers"};
  }
  return {devices[0], CandidateReason(node, candidates)};
}

// The device of the node's first data input; -1 when it has none (yet).
int Placer::InputDevice(const Node& node) const {
  const Edge* edge = node.input_edge(0);
  return edge == nullptr ? -1 : colocation_.AssignedDevice(edge->src->id());
}

// The device all consumers (data and control) share; -1 when they do not share one.
int Placer::ConsumersDevice(const Node& node) const {
  const std::vector<const Edge*>& edges = node.out_edges();
  if (edges.empty()) return -1;
  const int device = colocation_.AssignedDevice(edges[0]->dst->id());
  for (const Edge* edge : edges) {
    if (colocation_.AssignedDevice(edge->dst->id()) != device) return -1;
  }
  return device;
}

std::string Placer::CandidateReason(const Node& node, const Candidates& candidates) {
  const PlacerDevice& chosen = devices_.at(candidates.devices[0]);
  if (!candidates.soft_note.empty()) {
    return absl::StrCat(candidates.soft_note, "; fell back to ", ShortName(chosen));
  }
  std::vector<std::string> parts;
  if (colocation_.HasRequest(node)) {
    parts.push_back(colocation_.RequestText(node));
  }
  std::string fallback = FallbackReason(node, chosen);
  if (!fallback.empty()) {
    parts.push_back(std::move(fallback));
  } else if (parts.empty()) {
    return std::string(kDefaultReason);
  } else if (candidates.devices.size() > 1) {
    parts.push_back(absl::StrCat("first of ", candidates.devices.size(),
                                 " matching devices by type priority, then name"));
  }
  return absl::StrJoin(parts, "; ");
}

// "no GPU kernel for op 'Foo'; fell back to CPU" when a better device type matched the
// request but lacks a kernel; "" otherwise.
std::string Placer::FallbackReason(const Node& node, const PlacerDevice& chosen) {
  const std::string best =
      devices_.BestType(devices_.Matching(colocation_.Group(node).requested));
  if (best.empty() || best == chosen.type) return "";
  return absl::StrCat(colocation_.MissingKernel(node, best), "; fell back to ", chosen.type);
}

std::string Placer::ColocatedReason(const Node& node, int pinned_by) const {
  std::string reason =
      absl::StrCat("colocated with '", graph_.FindNodeId(pinned_by)->name(), "'");
  const std::string& link = colocation_.Info(node.id()).link;
  if (!link.empty()) absl::StrAppend(&reason, " (", link, ")");
  return reason;
}

void Placer::Assign(const Node& node, int device, std::string reason) {
  colocation_.Pin(node, device);
  reasons_[node.id()] = std::move(reason);
  if (options_.log_device_placement) {
    log_lines_.push_back(
        absl::StrCat(node.name(), ": (", node.op(), "): ", devices_.at(device).name));
  }
}

PlacementResult Placer::Result() {
  PlacementResult result;
  for (const Node* node : graph_.nodes()) {
    const PlacerDevice& device = devices_.at(colocation_.AssignedDevice(node->id()));
    result.decisions.push_back({node->name(), node->op(), device.name, reasons_[node->id()]});
  }
  result.log_lines = std::move(log_lines_);
  return result;
}

}  // namespace

absl::StatusOr<PlacementResult> PlaceGraph(const PlacementOptions& options,
                                           const std::vector<DeviceAttributes>& devices,
                                           const KernelSupport& kernels, Graph* graph) {
  DFLOW_ASSIGN_OR_RETURN(PlacerDeviceSet device_set, PlacerDeviceSet::Create(devices));
  if (device_set.size() == 0 && graph->num_nodes() > 0) {
    return absl::InvalidArgumentError("Cannot place the graph: no devices were given");
  }
  Placer placer(options, device_set, kernels, *graph);
  DFLOW_ASSIGN_OR_RETURN(PlacementResult result, placer.Run());
  const std::vector<Node*> nodes = graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i]->set_assigned_device(result.decisions[i].device);
  }
  return result;
}

int DeviceTypePriority(absl::string_view device_type) {
  if (device_type == "GPU") return 210;
  if (device_type == "CPU") return 70;
  if (device_type == "XLA_CPU" || device_type == "XLA_GPU") return 50;
  return -1;
}

}  // namespace dflow
