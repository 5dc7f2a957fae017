// The placer: TF 1.x's ColocationGraph + Placer::Run, plus a reason for every node.
//
// Shape of the code (rule numbers refer to placer.h):
//   DeviceSet        the devices, their priorities, matching and candidate sorting (1, 6)
//   ColocationGraph  union-find over nodes: requests, supported types, ref-edge and
//                    `_class` groups, cached candidates, every TF error text (2-6)
//   Placer           the two assignment passes and the reasons (7, 8)
// Assignments live in side tables until everything succeeded, so a failed placement
// leaves the graph untouched.
#include "graph/placer.h"

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

constexpr absl::string_view kColocationAttr = "_class";
constexpr absl::string_view kColocationGroupPrefix = "loc:@";
constexpr absl::string_view kDefaultReason =
    "default: highest-priority device with a kernel (GPU before CPU)";

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

// No inputs and one non-ref output (Const, Placeholder): placed in the second pass.
bool IsGenerator(const Node& node) {
  return node.num_inputs() == 0 && node.num_outputs() == 1 &&
         !IsRefType(node.output_types()[0]);
}

bool IsMetadata(const Node& node) {
  return node.op() == "Shape" || node.op() == "Size" || node.op() == "Rank";
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

// ---- DeviceSet ----------------------------------------------------------------------

struct PlacerDevice {
  std::string name;  // full name, as given
  std::string type;  // DeviceAttributes.device_type
  DeviceName parsed;
  int priority = -1;
};

// Higher device-type priority first, then type name (a total order over types).
bool BetterType(absl::string_view a, absl::string_view b) {
  const int pa = DeviceTypePriority(a), pb = DeviceTypePriority(b);
  return pa != pb ? pa > pb : a < b;
}

// The devices placement may use, in device order. Indices into it identify devices.
class DeviceSet {
 public:
  static absl::StatusOr<DeviceSet> Create(const std::vector<DeviceAttributes>& attrs);

  int size() const { return static_cast<int>(devices_.size()); }
  const PlacerDevice& at(int index) const { return devices_[index]; }
  // Device types present, best first.
  const std::vector<std::string>& types() const { return types_; }

  // Indices of the devices `spec` matches, in device order.
  std::vector<int> Matching(const DeviceName& spec) const;
  // Those of `devices` whose type is in `types`, sorted by type priority (descending),
  // then by full name as a string (TF's order: GPU:10 before GPU:2).
  std::vector<int> Supported(const std::vector<int>& devices,
                             const std::vector<std::string>& types) const;
  // The device named exactly `name`, or -1.
  int Find(const DeviceName& name) const;
  // The best type among `devices` ("" when empty).
  std::string BestType(const std::vector<int>& devices) const;
  // Full names joined by ", ", sorted or in device order.
  std::string Names(bool sorted) const;

 private:
  std::vector<PlacerDevice> devices_;
  std::vector<std::string> types_;
};

absl::StatusOr<DeviceSet> DeviceSet::Create(const std::vector<DeviceAttributes>& attrs) {
  DeviceSet set;
  for (const DeviceAttributes& attr : attrs) {
    absl::StatusOr<DeviceName> parsed = ParseDeviceName(attr.name());
    if (!parsed.ok() || !IsFullySpecified(*parsed)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Placement was given device '", attr.name(), "', which is not a full device name"));
    }
    set.devices_.push_back(
        {attr.name(), attr.device_type(), *parsed, DeviceTypePriority(attr.device_type())});
    if (std::find(set.types_.begin(), set.types_.end(), attr.device_type()) ==
        set.types_.end()) {
      set.types_.push_back(attr.device_type());
    }
  }
  std::sort(set.types_.begin(), set.types_.end(), BetterType);
  return set;
}

std::vector<int> DeviceSet::Matching(const DeviceName& spec) const {
  std::vector<int> matching;
  for (int i = 0; i < size(); ++i) {
    if (Matches(spec, devices_[i].parsed)) matching.push_back(i);
  }
  return matching;
}

std::vector<int> DeviceSet::Supported(const std::vector<int>& devices,
                                      const std::vector<std::string>& types) const {
  std::vector<int> supported;
  for (int i : devices) {
    if (std::find(types.begin(), types.end(), devices_[i].type) != types.end()) {
      supported.push_back(i);
    }
  }
  std::stable_sort(supported.begin(), supported.end(), [this](int a, int b) {
    const PlacerDevice& da = devices_[a];
    const PlacerDevice& db = devices_[b];
    return da.priority != db.priority ? da.priority > db.priority : da.name < db.name;
  });
  return supported;
}

int DeviceSet::Find(const DeviceName& name) const {
  for (int i = 0; i < size(); ++i) {
    if (devices_[i].parsed == name) return i;
  }
  return -1;
}

std::string DeviceSet::BestType(const std::vector<int>& devices) const {
  std::string best;
  for (int i : devices) {
    if (best.empty() || BetterType(devices_[i].type, best)) best = devices_[i].type;
  }
  return best;
}

std::string DeviceSet::Names(bool sorted) const {
  std::vector<std::string> names;
  for (const PlacerDevice& device : devices_) names.push_back(device.name);
  if (sorted) std::sort(names.begin(), names.end());
  return absl::StrJoin(names, ", ");
}

// "GPU:1": a device's short name, for reasons.
std::string ShortName(const PlacerDevice& device) {
  return absl::StrCat(*device.parsed.type, ":", *device.parsed.id);
}

// ---- ColocationGraph ----------------------------------------------------------------

// The three device constraints of a group (TF's Member fields). Invariant: `requested`
// is a specialisation of `resource` and `assigned`.
struct GroupDevices {
  DeviceName requested;  // merged user requests
  DeviceName resource;   // requests of resource generators; never overridden
  DeviceName assigned;   // the device an assigned member pins the group to
};

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

// The devices a group may use, best first; cached per group until it is pinned.
struct Candidates {
  std::vector<int> devices;
  std::string soft_note;  // why soft placement changed the request; "" if it did not
};

// A union-find entry. Only a root's group fields are meaningful.
struct Member {
  int parent = -1;
  int rank = 0;
  GroupDevices devices;
  std::vector<std::string> types;  // device types every member supports, best first
  int pinned_by = -1;              // the node whose assignment pinned the group
  int pinned_device = -1;
  std::optional<Candidates> candidates;
};

// What one node brought into its group, kept for messages and reasons.
struct NodeInfo {
  DeviceName request;               // the node's own parsed request
  std::vector<std::string> types;   // the node's own supported types, best first
  std::string link;                 // how it first joined another node's group
  std::vector<std::string> remarks; // requests of it that were overridden or ignored
  int assigned_device = -1;
};

// Colocation groups over the graph's nodes (TF's ColocationGraph): built by
// Initialize() (rules 2-5), then asked for each group's candidates (rule 6) and told
// about assignments (Pin). Borrows everything it is constructed with.
class ColocationGraph {
 public:
  ColocationGraph(const PlacementOptions& options, const DeviceSet& devices,
                  const KernelSupport& kernels, const Graph& graph,
                  std::vector<std::string>* log_lines)
      : options_(options), devices_(devices), kernels_(kernels), graph_(graph),
        log_lines_(log_lines) {}

  absl::Status Initialize();
  // The candidates of the node's group; errors are TF's "Cannot assign a device ...".
  absl::StatusOr<const Candidates*> GetCandidates(const Node& node);
  // Records that `node` went to `device` and pins its group there.
  void Pin(const Node& node, int device);

  int AssignedDevice(int id) const { return info_[id].assigned_device; }
  int PinnedBy(const Node& node) { return members_[Root(node.id())].pinned_by; }
  const NodeInfo& Info(int id) const { return info_[id]; }
  const GroupDevices& Group(const Node& node) { return members_[Root(node.id())].devices; }
  // "no GPU kernel for op 'Foo'" (or for which colocated node), "" if all have one.
  std::string MissingKernel(const Node& node, absl::string_view type);
  // "requested '/gpu:1'" (as written) when the node's own request is its group's,
  // else "colocation group requires '<merged request>'".
  std::string RequestText(const Node& node);

 private:
  int Root(int id);
  std::vector<const Node*> GroupMembers(int root);
  std::vector<std::string> SupportedTypes(const Node& node) const;

  absl::Status InitializeMember(const Node& node);
  absl::Status InitializeAssigned(const Node& node, Member* member);
  absl::Status ColocateRefEdges();
  absl::Status ColocateRefEdge(const Node& src, const Node& dst, DataType type);
  absl::Status ReconcileAcrossRefEdge(const Node& src, const Node& dst);
  absl::Status ColocateClassGroups();
  absl::Status ColocateWithGroup(const Node& node, const std::string& group,
                                 absl::flat_hash_map<std::string, const Node*>* roots);
  absl::Status ColocateNodes(const Node& x, const Node& y);
  void NoteSoftMerge(const Node& x, const Node& y, const GroupDevices& a,
                     const GroupDevices& b);
  void Union(int new_root, int old_root, GroupDevices devices,
             std::vector<std::string> types);

  absl::StatusOr<Candidates> ComputeCandidates(const Node& node, int root);
  Candidates SoftCandidates(const Node& node, int root);
  std::string SoftNote(const Node& node, int root, bool moved_resource);

  absl::Status NoKernelError(const Node& node) const;
  absl::Status UnsatisfiableError(const Node& node, int root);
  absl::Status NoMatchingDeviceError(const Node& node) const;
  absl::Status NoKernelForTypeError(const Node& node, int root, const std::string& type);
  absl::Status ColocatedIncompatibleError(const Node& node, int root);
  std::string SoftPlacementHint(absl::string_view what) const;
  std::string DebugInfo(int root);
  std::string MemberDebugString(int root);

  const PlacementOptions& options_;
  const DeviceSet& devices_;
  const KernelSupport& kernels_;
  const Graph& graph_;
  std::vector<std::string>* log_lines_;
  std::vector<Member> members_;  // by node id
  std::vector<NodeInfo> info_;   // by node id
};

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
  return ColocateClassGroups();
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

absl::Status RefEdgeConflict(absl::string_view what, const DeviceName& src_device,
                             const DeviceName& dst_device, const Node& src, const Node& dst) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Cannot place the graph because a reference or resource edge connects colocation "
      "groups with incompatible ", what, " devices: ", ToString(src_device), " vs ",
      ToString(dst_device), ". The edge src node is ", src.name(), " , and the dst node is ",
      dst.name()));
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

// TF's four "Could not satisfy explicit device specification" cases.
absl::Status ColocationGraph::UnsatisfiableError(const Node& node, int root) {
  const DeviceName& group = members_[root].devices.requested;
  if (info_[node.id()].request != group) return ColocatedIncompatibleError(node, root);
  if (devices_.Matching(group).empty()) return NoMatchingDeviceError(node);
  if (group.type) return NoKernelForTypeError(node, root, *group.type);
  return absl::InvalidArgumentError(absl::StrCat(
      "Could not satisfy explicit device specification '", node.requested_device(),
      DebugInfo(root)));
}

absl::Status ColocationGraph::NoMatchingDeviceError(const Node& node) const {
  const std::string& spec = node.requested_device();
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
      "Could not satisfy explicit device specification '", node.requested_device(),
      "' because no supported kernel for ", type, " devices is available.", DebugInfo(root),
      "\nOp: ", node.op(), "\nNode attrs: ", SummarizeAttrs(node.def()),
      "\nRegistered kernels:\n", kernels_.DescribeKernels(node.op()), hint));
}

absl::Status ColocationGraph::ColocatedIncompatibleError(const Node& node, int root) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Could not satisfy explicit device specification '", node.requested_device(),
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
  Placer(const PlacementOptions& options, const DeviceSet& devices,
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
  const DeviceSet& devices_;
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
  if (HasSomeDetails(colocation_.Group(node).requested)) {
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
  DFLOW_ASSIGN_OR_RETURN(DeviceSet device_set, DeviceSet::Create(devices));
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
