// ColocationGraph (colocation_graph.h): rules 2-6 of placer.h, TF's error texts and the
// colocation debug info.
#include "graph/colocation_graph.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "graph/device_name.h"
#include "graph/status_macros.h"
#include "graph/types.h"

namespace dflow {
namespace {

using GroupDevices = ColocationGraph::GroupDevices;
using Candidates = ColocationGraph::Candidates;

constexpr absl::string_view kColocationAttr = "_class";
constexpr absl::string_view kColocationGroupPrefix = "loc:@";

// ---- Device-name helpers (TF's DeviceNameUtils functions device_name.h lacks) -------

bool HasSomeDetails(const DeviceName& name) { return name != DeviceName(); }

template <typename T>
bool FieldCompatible(const std::optional<T>& a, const std::optional<T>& b) {
  return !a || !b || *a == *b;
}

// Whether no field is set in both with different values (TF's AreCompatibleDevNames).
bool AreCompatible(const DeviceName& a, const DeviceName& b) {
  return FieldCompatible(a.job, b.job) && FieldCompatible(a.replica, b.replica) &&
         FieldCompatible(a.task, b.task) && FieldCompatible(a.type, b.type) &&
         FieldCompatible(a.id, b.id);
}

// Fills the fields `name` leaves unset from `base` (TF's EnsureSpecification).
void EnsureSpecification(DeviceName* name, const DeviceName& base) {
  if (!name->job) name->job = base.job;
  if (!name->replica) name->replica = base.replica;
  if (!name->task) name->task = base.task;
  if (!name->type) name->type = base.type;
  if (!name->id) name->id = base.id;
}

// ---- Node classification and formatting ---------------------------------------------

bool IsRefOrResource(DataType type) { return IsRefType(type) || type == DT_RESOURCE; }

// No inputs and one ref/resource output (VariableV2, VarHandleOp): its request is a
// resource device that merges cannot override.
bool IsResourceGenerator(const Node& node) {
  return node.num_inputs() == 0 && node.num_outputs() == 1 &&
         IsRefOrResource(node.output_types()[0]);
}

// Ops that forward ref/resource inputs instead of dereferencing them (TF's input
// colocation exemption registry: partitioned calls and tf.data map-like datasets).
bool IsExemptFromRefColocation(const Node& node) {
  static const auto* const kExempt = new absl::flat_hash_set<std::string>{
      "PartitionedCall",     "StatefulPartitionedCall",     "MapDataset",
      "ParallelMapDataset",  "ParallelInterleaveDatasetV2", "ScanDataset",
      "ExperimentalMapDataset", "ExperimentalScanDataset"};
  return kExempt->contains(node.op());
}

// The `loc:@` groups of the node's `_class` attr, without the prefix, in attr order.
std::vector<std::string> ColocationGroups(const Node& node) {
  std::vector<std::string> groups;
  const AttrValue* attr = node.attr(kColocationAttr);
  if (attr == nullptr || !attr->has_list()) return groups;
  for (absl::string_view entry : attr->list().s()) {
    if (absl::ConsumePrefix(&entry, kColocationGroupPrefix)) groups.emplace_back(entry);
  }
  return groups;
}

std::string FormatNode(absl::string_view name) { return absl::StrCat("{{node ", name, "}}"); }

std::string FormatColocationNode(absl::string_view name) {
  return absl::StrCat("{{colocation_node ", name, "}}");
}

// TF's AttachDef: appends "\n\t [[{{node x}}]]" (just "[[x]]" when the message already
// names a node in `{{node ...}}` form).
absl::Status AttachDef(const absl::Status& status, const Node& node) {
  const bool named = absl::StrContains(status.message(), "{{node ");
  return absl::Status(status.code(),
                      absl::StrCat(status.message(), "\n\t [[",
                                   named ? node.name() : FormatNode(node.name()), "]]"));
}

std::string ShapeString(const TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "<unknown>";
  std::vector<std::string> dims;
  for (const auto& dim : shape.dim()) {
    dims.push_back(dim.size() < 0 ? "?" : absl::StrCat(dim.size()));
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string TensorSummary(const TensorProto& tensor) {
  return absl::StrCat("Tensor<type: ", DataTypeString(tensor.dtype()),
                      " shape: ", ShapeString(tensor.tensor_shape()), ">");
}

std::string SummarizeList(const AttrValue::ListValue& list) {
  std::vector<std::string> items;
  for (const auto& s : list.s()) items.push_back(absl::StrCat("\"", absl::CEscape(s), "\""));
  for (int64_t i : list.i()) items.push_back(absl::StrCat(i));
  for (float f : list.f()) items.push_back(absl::StrCat(f));
  for (bool b : list.b()) items.push_back(b ? "true" : "false");
  for (int t : list.type()) items.push_back(DataType_Name(static_cast<DataType>(t)));
  for (const auto& shape : list.shape()) items.push_back(ShapeString(shape));
  for (const auto& tensor : list.tensor()) items.push_back(TensorSummary(tensor));
  for (const auto& func : list.func()) items.push_back(func.name());
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

// One attr value as TF's SummarizeAttrValue prints it (tensors without their values).
std::string SummarizeAttrValue(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS: return absl::StrCat("\"", absl::CEscape(value.s()), "\"");
    case AttrValue::kI: return absl::StrCat(value.i());
    case AttrValue::kF: return absl::StrCat(value.f());
    case AttrValue::kB: return value.b() ? "true" : "false";
    case AttrValue::kType: return DataType_Name(value.type());
    case AttrValue::kShape: return ShapeString(value.shape());
    case AttrValue::kTensor: return TensorSummary(value.tensor());
    case AttrValue::kList: return SummarizeList(value.list());
    case AttrValue::kFunc: return value.func().name();
    case AttrValue::kPlaceholder: return absl::StrCat("$", value.placeholder());
    default: return "<Unknown AttrValue type>";
  }
}

// "name=value, ..." sorted by attr name (TF's AttrSlice::DebugString, made deterministic).
std::string SummarizeAttrs(const NodeDef& def) {
  std::map<std::string, std::string> sorted;
  for (const auto& [name, value] : def.attr()) sorted[name] = SummarizeAttrValue(value);
  return absl::StrJoin(sorted, ", ", absl::PairFormatter("="));
}

std::string DataTypesString(const DataTypeVector& types) {
  std::vector<std::string> names;
  for (DataType t : types) names.push_back(DataTypeString(t));
  return absl::StrJoin(names, ", ");
}

// ---- Group constraints --------------------------------------------------------------

// Merges two groups' constraints (TF's Member::MergeDeviceNames): assigned and
// resource devices must agree; requests merge with soft placement's leniency.
absl::StatusOr<GroupDevices> MergeGroupDevices(const GroupDevices& a, const GroupDevices& b,
                                               bool allow_soft_placement) {
  GroupDevices merged;
  DFLOW_ASSIGN_OR_RETURN(merged.assigned, MergeDeviceNames(a.assigned, b.assigned, false));
  DFLOW_ASSIGN_OR_RETURN(merged.resource, MergeDeviceNames(a.resource, b.resource, false));
  DFLOW_ASSIGN_OR_RETURN(merged.requested,
                         MergeDeviceNames(a.requested, b.requested, allow_soft_placement));
  EnsureSpecification(&merged.requested, merged.assigned);
  EnsureSpecification(&merged.requested, merged.resource);
  return merged;
}

absl::Status RefEdgeConflict(absl::string_view what, const DeviceName& src_device,
                             const DeviceName& dst_device, const Node& src, const Node& dst) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Cannot place the graph because a reference or resource edge connects colocation "
      "groups with incompatible ", what, " devices: ", ToString(src_device), " vs ",
      ToString(dst_device), ". The edge src node is ", src.name(), " , and the dst node is ",
      dst.name()));
}

}  // namespace

int ColocationGraph::Root(int id) {
  int root = id;
  while (members_[root].parent != root) root = members_[root].parent;
  while (members_[id].parent != root) id = std::exchange(members_[id].parent, root);
  return root;
}

std::vector<const Node*> ColocationGraph::GroupMembers(int root) {
  std::vector<const Node*> group;
  for (const Node* node : graph_.nodes()) {
    if (Root(node->id()) == root) group.push_back(node);
  }
  return group;
}

// Rule 2: the present device types with a kernel for the node; all of them for calls
// of library functions (ops the registry does not declare).
std::vector<std::string> ColocationGraph::SupportedTypes(const Node& node) const {
  if (graph_.op_registry().Find(node.op()) == nullptr) return devices_.types();
  const std::vector<std::string> kernel_types = kernels_.SupportedDeviceTypes(node.def());
  std::vector<std::string> types;
  for (const std::string& type : devices_.types()) {
    if (std::find(kernel_types.begin(), kernel_types.end(), type) != kernel_types.end()) {
      types.push_back(type);
    }
  }
  return types;
}

absl::Status ColocationGraph::Initialize() {
  members_.resize(graph_.num_node_ids());
  info_.resize(graph_.num_node_ids());
  for (const Node* node : graph_.nodes()) {
    absl::Status status = InitializeMember(*node);
    if (!status.ok()) return AttachDef(status, *node);
  }
  DFLOW_RETURN_IF_ERROR(ColocateRefEdges());
  DFLOW_RETURN_IF_ERROR(ColocateClassGroups());
  return absl::OkStatus();
}

// Rules 2 and 3 for one node.
absl::Status ColocationGraph::InitializeMember(const Node& node) {
  Member& member = members_[node.id()];
  NodeInfo& info = info_[node.id()];
  member.parent = node.id();
  member.types = info.types = SupportedTypes(node);
  if (!node.assigned_device().empty()) return InitializeAssigned(node, &member);
  if (member.types.empty()) return NoKernelError(node);
  if (node.requested_device().empty()) return absl::OkStatus();
  absl::StatusOr<DeviceName> request = ParseDeviceName(node.requested_device());
  if (!request.ok()) {
    absl::string_view why = request.status().message();
    absl::ConsumePrefix(&why, absl::StrCat("Malformed device specification '",
                                           node.requested_device(), "': "));
    return absl::InvalidArgumentError(
        absl::StrCat("Malformed device specification '", node.requested_device(),
                     "' in node: ", node.name(), " (", node.op(), "): ", why));
  }
  info.request = member.devices.requested = *request;
  if (IsResourceGenerator(node)) member.devices.resource = *request;
  return absl::OkStatus();
}

// A node assigned before placement pins its group to that device.
absl::Status ColocationGraph::InitializeAssigned(const Node& node, Member* member) {
  absl::StatusOr<DeviceName> name = ParseDeviceName(node.assigned_device());
  const int device = name.ok() ? devices_.Find(*name) : -1;
  if (device < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Assigned device '", node.assigned_device(), "' does not match any device. ",
        "Available devices: [", devices_.Names(false), "]"));
  }
  const std::string& type = devices_.at(device).type;
  if (std::find(member->types.begin(), member->types.end(), type) == member->types.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Assigned device '", node.assigned_device(),
                     "' does not have registered OpKernel support for ", node.op()));
  }
  member->devices.assigned = member->devices.requested = devices_.at(device).parsed;
  member->pinned_by = node.id();
  member->pinned_device = info_[node.id()].assigned_device = device;
  return absl::OkStatus();
}

// Rule 4: data edges into ref/resource inputs, in edge-id order (TF's graph order).
absl::Status ColocationGraph::ColocateRefEdges() {
  std::vector<const Edge*> edges;
  for (const Node* node : graph_.nodes()) {
    for (const Edge* edge : node->in_edges()) {
      if (!edge->IsControlEdge()) edges.push_back(edge);
    }
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge* a, const Edge* b) { return a->id < b->id; });
  for (const Edge* edge : edges) {
    const DataType type = edge->dst->input_types()[edge->dst_input];
    if (!IsRefOrResource(type) || IsExemptFromRefColocation(*edge->dst)) continue;
    DFLOW_RETURN_IF_ERROR(ColocateRefEdge(*edge->src, *edge->dst, type));
  }
  return absl::OkStatus();
}

absl::Status ColocationGraph::ColocateRefEdge(const Node& src, const Node& dst,
                                              DataType type) {
  DFLOW_RETURN_IF_ERROR(ReconcileAcrossRefEdge(src, dst));
  absl::Status status = ColocateNodes(src, dst);
  if (!status.ok()) {
    return AttachDef(
        absl::InvalidArgumentError(absl::StrCat(
            "Nodes were connected by a reference connection (requiring them to be on the "
            "same device), but the two nodes were assigned two different devices: ",
            status.message())),
        dst);
  }
  const char* kind = IsRefType(type) ? "reference" : "resource";
  NodeInfo& dst_info = info_[dst.id()];
  NodeInfo& src_info = info_[src.id()];
  if (dst_info.link.empty()) dst_info.link = absl::StrCat(kind, " input from '", src.name(), "'");
  if (src_info.link.empty()) src_info.link = absl::StrCat(kind, " edge to '", dst.name(), "'");
  return absl::OkStatus();
}

// TF's Member::EnsureCompatibilityAcrossResourceEdge: conflicting assigned or resource
// devices fail; a conflicting request of the destination's group is replaced by the
// source's.
absl::Status ColocationGraph::ReconcileAcrossRefEdge(const Node& src, const Node& dst) {
  const GroupDevices& from = members_[Root(src.id())].devices;
  GroupDevices& to = members_[Root(dst.id())].devices;
  if (!AreCompatible(from.assigned, to.assigned)) {
    return RefEdgeConflict("assigned", from.assigned, to.assigned, src, dst);
  }
  if (!AreCompatible(from.resource, to.resource)) {
    return RefEdgeConflict("resource", from.resource, to.resource, src, dst);
  }
  if (AreCompatible(from.requested, to.requested)) return absl::OkStatus();
  if (options_.log_device_placement) {
    log_lines_->push_back(absl::StrCat(
        "Ignoring device specification ", ToString(to.requested), " for node '", dst.name(),
        "' because the input edge from '", src.name(),
        "' is a reference connection and already has a device field set to ",
        ToString(from.requested)));
  }
  info_[dst.id()].remarks.push_back(absl::StrCat(
      "request '", ToString(to.requested), "' ignored: the reference input from '",
      src.name(), "' requires '", ToString(from.requested), "'"));
  to.requested = from.requested;
  EnsureSpecification(&to.requested, to.assigned);
  EnsureSpecification(&to.requested, to.resource);
  return absl::OkStatus();
}

// Rule 5, in node-id order.
absl::Status ColocationGraph::ColocateClassGroups() {
  absl::flat_hash_map<std::string, const Node*> roots;  // group key -> first node
  for (const Node* node : graph_.nodes()) {
    std::vector<std::string> groups = ColocationGroups(*node);
    if (groups.empty()) groups.push_back(node->name());
    for (const std::string& group : groups) {
      DFLOW_RETURN_IF_ERROR(ColocateWithGroup(*node, group, &roots));
    }
  }
  return absl::OkStatus();
}

absl::Status ColocationGraph::ColocateWithGroup(
    const Node& node, const std::string& group,
    absl::flat_hash_map<std::string, const Node*>* roots) {
  auto [it, inserted] = roots->try_emplace(group, &node);
  if (inserted) return absl::OkStatus();
  const Node& root = *it->second;
  absl::Status status = ColocateNodes(node, root);
  NodeInfo& info = info_[node.id()];
  if (status.ok()) {
    if (info.link.empty()) {
      info.link = group == node.name()
                      ? absl::StrCat("'", root.name(), "' has _class loc:@", group)
                      : absl::StrCat("_class loc:@", group);
    }
    return absl::OkStatus();
  }
  if (!options_.allow_soft_placement) {
    constexpr absl::string_view kHint =
        "\nHint: remove one of the conflicting device requests, or set "
        "allow_soft_placement to relax the colocation.";
    return AttachDef(absl::Status(status.code(), absl::StrCat(status.message(), kHint)), node);
  }
  if (options_.log_device_placement) {
    log_lines_->push_back(absl::StrCat(
        "Ignoring request to colocate node '", node.name(), "' with nodes in colocation group '",
        group, "' because soft placement is on and an attempt at doing so resulted in the "
        "following error: ", AttachDef(status, node).ToString()));
  }
  info.remarks.push_back(
      absl::StrCat("soft placement ignored its colocation with group '", group, "'"));
  return absl::OkStatus();
}

// Joins the groups of `x` and `y` (TF's ColocateNodes); on error nothing changes.
absl::Status ColocationGraph::ColocateNodes(const Node& x, const Node& y) {
  const int x_root = Root(x.id()), y_root = Root(y.id());
  if (x_root == y_root) return absl::OkStatus();
  // Union by rank; on a tie x's root stays the root (TF's Member::Merge).
  const bool y_wins = members_[x_root].rank < members_[y_root].rank;
  const int new_root = y_wins ? y_root : x_root, old_root = y_wins ? x_root : y_root;
  const Member& keep = members_[new_root];
  const Member& other = members_[old_root];
  absl::StatusOr<GroupDevices> merged =
      MergeGroupDevices(keep.devices, other.devices, options_.allow_soft_placement);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot colocate nodes ", FormatColocationNode(x.name()), " and ",
        FormatColocationNode(y.name()), ": ", merged.status().message()));
  }
  std::vector<std::string> types;
  for (const std::string& type : keep.types) {
    if (std::find(other.types.begin(), other.types.end(), type) != other.types.end()) {
      types.push_back(type);
    }
  }
  if (types.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot colocate nodes ", FormatColocationNode(x.name()), " and ",
        FormatColocationNode(y.name()),
        " because no device type supports both of those nodes and the other nodes "
        "colocated with them.",
        DebugInfo(x_root), DebugInfo(y_root)));
  }
  NoteSoftMerge(x, y, keep.devices, other.devices);
  Union(new_root, old_root, *std::move(merged), std::move(types));
  return absl::OkStatus();
}

// Explains a request that soft placement weakened while merging two groups.
void ColocationGraph::NoteSoftMerge(const Node& x, const Node& y, const GroupDevices& a,
                                    const GroupDevices& b) {
  absl::StatusOr<DeviceName> strict = MergeDeviceNames(a.requested, b.requested, false);
  if (strict.ok()) return;
  info_[x.id()].remarks.push_back(absl::StrCat(
      "soft placement dropped the conflicting device type/id while colocating with '",
      y.name(), "' (", strict.status().message(), ")"));
}

void ColocationGraph::Union(int new_root, int old_root, GroupDevices devices,
                            std::vector<std::string> types) {
  Member& keep = members_[new_root];
  Member& other = members_[old_root];
  other.parent = new_root;
  if (keep.rank == other.rank) ++keep.rank;
  keep.devices = std::move(devices);
  keep.types = std::move(types);
  if (keep.pinned_by < 0) {
    keep.pinned_by = other.pinned_by;
    keep.pinned_device = other.pinned_device;
  }
  keep.candidates.reset();
}

absl::StatusOr<const Candidates*> ColocationGraph::GetCandidates(const Node& node) {
  const int root = Root(node.id());
  if (!members_[root].candidates) {
    absl::StatusOr<Candidates> candidates = ComputeCandidates(node, root);
    if (!candidates.ok()) {
      return AttachDef(
          Annotate(candidates.status(),
                   absl::StrCat("Cannot assign a device for operation ", node.name(), ": ")),
          node);
    }
    members_[root].candidates = *std::move(candidates);
  }
  return &*members_[root].candidates;
}

// Rule 6 (TF's ColocationGraph::GetDevicesForNode).
absl::StatusOr<Candidates> ColocationGraph::ComputeCandidates(const Node& node, int root) {
  const Member& member = members_[root];
  Candidates result;
  if (!HasSomeDetails(member.devices.requested)) {
    result.devices = devices_.Supported(devices_.Matching(DeviceName()), member.types);
    if (result.devices.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Node had no OpKernel registered to support this operation: Operation was ",
          node.op(), " and inputs were [", DataTypesString(node.input_types()), "].\n",
          DebugInfo(root)));
    }
    return result;
  }
  result.devices = devices_.Supported(devices_.Matching(member.devices.requested), member.types);
  if (result.devices.empty() && options_.allow_soft_placement) {
    result = SoftCandidates(node, root);
  }
  if (result.devices.empty()) return UnsatisfiableError(node, root);
  return result;
}

// Soft placement: drop the request's type and id, first keeping those a resource or
// assigned device pins, then (moving a resource, with a warning) not even those.
Candidates ColocationGraph::SoftCandidates(const Node& node, int root) {
  const Member& member = members_[root];
  const GroupDevices& group = member.devices;
  DeviceName preferred = group.requested;
  if (!group.assigned.type && !group.resource.type) preferred.type.reset();
  if (!group.assigned.id && !group.resource.id) preferred.id.reset();
  Candidates result;
  result.devices = devices_.Supported(devices_.Matching(preferred), member.types);
  bool moved_resource = false;
  if (result.devices.empty()) {
    DeviceName soft = group.requested;
    if (!group.assigned.type) soft.type.reset();
    if (!group.assigned.id) soft.id.reset();
    result.devices = devices_.Supported(devices_.Matching(soft), member.types);
    moved_resource = !result.devices.empty();
  }
  if (result.devices.empty()) return result;
  result.soft_note = SoftNote(node, root, moved_resource);
  if (moved_resource) {
    std::vector<std::string> names;
    for (int i : result.devices) names.push_back(devices_.at(i).name);
    log_lines_->push_back(absl::StrCat(
        "Failed to place the graph without changing the devices of some resources. Some of "
        "the operations (that had to be colocated with resource generating operations) are "
        "not supported on the resources' devices. Current candidate devices are [\n  ",
        absl::StrJoin(names, "\n   "), "].\nSee below for details of this colocation group:",
        DebugInfo(root)));
  }
  return result;
}

bool ColocationGraph::HasRequest(const Node& node) {
  return HasSomeDetails(Group(node).requested);
}

// "requested '<as written>'" when the node's own request is the group's, else the
// group's merged request.
std::string ColocationGraph::RequestText(const Node& node) {
  const DeviceName& group = Group(node).requested;
  if (info_[node.id()].request == group) {
    return absl::StrCat("requested '", node.requested_device(), "'");
  }
  return absl::StrCat("colocation group requires '", ToString(group), "'");
}

std::string ColocationGraph::SoftNote(const Node& node, int root, bool moved_resource) {
  const GroupDevices& group = members_[root].devices;
  const std::vector<int> matching = devices_.Matching(group.requested);
  std::string why = matching.empty()
                        ? "does not exist"
                        : absl::StrCat("is unusable: ",
                                       MissingKernel(node, devices_.BestType(matching)));
  if (moved_resource) {
    absl::StrAppend(&why, "; moved off resource device '", ToString(group.resource), "'");
  }
  const std::string subject =
      info_[node.id()].request == group.requested
          ? absl::StrCat("requested '", node.requested_device(), "'")
          : absl::StrCat("the colocation group's request '", ToString(group.requested), "'");
  return absl::StrCat("soft placement: ", subject, " ", why);
}

std::string ColocationGraph::MissingKernel(const Node& node, absl::string_view type) {
  auto lacks = [&](const Node& n) {
    const std::vector<std::string>& types = info_[n.id()].types;
    return std::find(types.begin(), types.end(), type) == types.end();
  };
  if (lacks(node)) return absl::StrCat("no ", type, " kernel for op '", node.op(), "'");
  for (const Node* member : GroupMembers(Root(node.id()))) {
    if (lacks(*member)) {
      return absl::StrCat("no ", type, " kernel for colocated node '", member->name(),
                          "' (op '", member->op(), "')");
    }
  }
  return "";
}

// ---- Error texts --------------------------------------------------------------------

// "\nHint: set allow_soft_placement to <what>." when soft placement is off.
std::string ColocationGraph::SoftPlacementHint(absl::string_view what) const {
  if (options_.allow_soft_placement) return "";
  return absl::StrCat("\nHint: set allow_soft_placement to ", what, ".");
}

absl::Status ColocationGraph::NoKernelError(const Node& node) const {
  std::vector<std::string> types = devices_.types();
  std::sort(types.begin(), types.end());
  return absl::InvalidArgumentError(absl::StrCat(
      "No OpKernel was registered to support Op '", node.op(), "' used by ",
      FormatNode(node.name()), "with these attrs: [", SummarizeAttrs(node.def()),
      "]\nRegistered devices: [", absl::StrJoin(types, ", "), "]\nRegistered kernels:\n",
      kernels_.DescribeKernels(node.op())));
}

namespace {

// A device request as errors quote it: whole, unless it is absurdly long (a 10 MB
// request was quoted twice in one message).
std::string QuotedRequest(const std::string& spec) {
  constexpr size_t kMax = 200;
  if (spec.size() <= kMax) return spec;
  return absl::StrCat(spec.substr(0, kMax), "... (", spec.size(), " characters)");
}

}  // namespace

// TF's four "Could not satisfy explicit device specification" cases.
absl::Status ColocationGraph::UnsatisfiableError(const Node& node, int root) {
  const DeviceName& group = members_[root].devices.requested;
  if (info_[node.id()].request != group) return ColocatedIncompatibleError(node, root);
  if (devices_.Matching(group).empty()) return NoMatchingDeviceError(node);
  if (group.type) return NoKernelForTypeError(node, root, *group.type);
  return absl::InvalidArgumentError(absl::StrCat(
      "Could not satisfy explicit device specification '",
      QuotedRequest(node.requested_device()),
      DebugInfo(root)));
}

absl::Status ColocationGraph::NoMatchingDeviceError(const Node& node) const {
  const std::string spec = QuotedRequest(node.requested_device());
  const DeviceName& request = info_[node.id()].request;
  std::string gpu_note;
  DeviceName any_gpu;
  any_gpu.type = "GPU";
  if (request.type == "GPU" && devices_.Matching(any_gpu).empty()) {
    gpu_note = " The requested device appears to be a GPU, but this process has no GPU.";
  }
  const bool soft_helps = request.type.has_value() || request.id.has_value();
  return absl::InvalidArgumentError(absl::StrCat(
      "Could not satisfy explicit device specification '", spec,
      "' because no devices matching that specification are registered in this process: ",
      FormatNode(node.name()), " was explicitly assigned to ", spec,
      " but available devices are [ ", devices_.Names(true),
      " ]. Make sure the device specification refers to a valid device.", gpu_note,
      soft_helps ? SoftPlacementHint("place it on an available device instead") : ""));
}

absl::Status ColocationGraph::NoKernelForTypeError(const Node& node, int root,
                                                   const std::string& type) {
  const std::string missing = MissingKernel(node, type);
  std::string hint = SoftPlacementHint("fall back to a device with a kernel");
  if (!hint.empty() && !missing.empty()) {
    hint = absl::StrCat("\nHint: ", missing, "; set allow_soft_placement to fall back to a "
                        "device with a kernel, or remove the device request.");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "Could not satisfy explicit device specification '",
      QuotedRequest(node.requested_device()),
      "' because no supported kernel for ", type, " devices is available.", DebugInfo(root),
      "\nOp: ", node.op(), "\nNode attrs: ", SummarizeAttrs(node.def()),
      "\nRegistered kernels:\n", kernels_.DescribeKernels(node.op()), hint));
}

absl::Status ColocationGraph::ColocatedIncompatibleError(const Node& node, int root) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Could not satisfy explicit device specification '",
      QuotedRequest(node.requested_device()),
      "' because the node ", FormatColocationNode(node.name()),
      " was colocated with a group of nodes that required incompatible device '",
      ToString(members_[root].devices.requested), "'. All available devices [",
      devices_.Names(false), "]. ", DebugInfo(root),
      SoftPlacementHint("let the placer choose a device the whole group supports")));
}

// TF's ColocationGraph::DebugInfo: the group's constraints and members.
std::string ColocationGraph::DebugInfo(int root) {
  std::map<std::string, std::string> op_types;  // sorted, for determinism
  std::string members;
  for (const Node* node : GroupMembers(root)) {
    std::string& types = op_types[node->op()];
    types.clear();
    for (const std::string& type : info_[node->id()].types) absl::StrAppend(&types, type, " ");
    absl::StrAppend(&members, "\n  ", node->name(), " (", node->op(), ") ",
                    node->requested_device());
    const int assigned = info_[node->id()].assigned_device;
    if (assigned >= 0) {
      absl::StrAppend(&members, " framework assigned device=", devices_.at(assigned).name);
    }
  }
  std::string text = absl::StrCat(
      "\nColocation Debug Info:\nColocation group had the following types and supported "
      "devices: \nRoot ", MemberDebugString(root));
  for (const auto& [op, types] : op_types) absl::StrAppend(&text, "\n", op, ": ", types);
  return absl::StrCat(text,
                      "\n\nColocation members, user-requested devices, and framework "
                      "assigned devices, if any:",
                      members, "\n");
}

std::string ColocationGraph::MemberDebugString(int root) {
  const Member& member = members_[root];
  std::vector<std::string> possible;
  if (member.candidates) {
    for (int i : member.candidates->devices) possible.push_back(devices_.at(i).name);
  }
  return absl::StrCat(
      "Member(assigned_device_name_index_=", member.pinned_device,
      " requested_device_name_='", ToString(member.devices.requested),
      "' assigned_device_name_='", ToString(member.devices.assigned),
      "' resource_device_name_='", ToString(member.devices.resource),
      "' supported_device_types_=[", absl::StrJoin(member.types, ", "),
      "] possible_devices_=[", absl::StrJoin(possible, ", "), "]");
}

// TF's Member::AssignDevice: the group may now use only `device`.
void ColocationGraph::Pin(const Node& node, int device) {
  info_[node.id()].assigned_device = device;
  Member& root = members_[Root(node.id())];
  if (root.pinned_device == device) return;
  const DeviceName& name = devices_.at(device).parsed;
  root.devices = GroupDevices{name, name, name};
  root.pinned_by = node.id();
  root.pinned_device = device;
  root.candidates.reset();
}

}  // namespace dflow
