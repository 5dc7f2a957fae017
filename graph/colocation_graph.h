// ColocationGraph: the colocation groups of a graph's nodes, as placement sees them
// (TF 1.x's common_runtime/colocation_graph.cc). It implements rules 2-6 of placer.h:
//
//  - Initialize() gives every node its supported device types (rule 2) and parsed
//    request (rule 3), then joins nodes into groups: the two ends of every ref/resource
//    edge (rule 4), and the members of each `_class loc:@NAME` group (rule 5). Groups
//    are a union-find over node ids; joining merges the groups' requested, resource and
//    assigned devices and intersects their supported types.
//  - GetCandidates() returns a group's devices, best first (rule 6), computed once per
//    group and cached until the group is pinned.
//  - Pin() records that a node went to a device and restricts its group to it.
//
// Every error text is TF's (plus dflow's "\nHint: ..." lines), and each group's debug
// info ("Colocation Debug Info: ...") lists its members' types and requests. Notes
// that TF logs with log_device_placement ("Ignoring device specification ...",
// "Ignoring request to colocate ...") and the soft-placement warning about moved
// resources are appended to `log_lines`.
//
// Ownership: borrows the options, devices, kernels, graph and log lines it is built
// with; all must outlive it. Never modifies the graph. Thread-compatible;
// deterministic (groups are joined in edge-id and node-id order).
#ifndef DFLOW_GRAPH_COLOCATION_GRAPH_H_
#define DFLOW_GRAPH_COLOCATION_GRAPH_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/device_name.h"
#include "graph/graph.h"
#include "graph/kernel_support.h"
#include "graph/placer.h"
#include "graph/placer_device_set.h"

namespace dflow {

class ColocationGraph {
 public:
  // The three device constraints of a group (TF's Member fields). Invariant:
  // `requested` is a specialisation of `resource` and `assigned`.
  struct GroupDevices {
    DeviceName requested;  // merged user requests
    DeviceName resource;   // requests of resource generators; never overridden
    DeviceName assigned;   // the device an assigned member pins the group to
  };

  // The devices a group may use, best first; cached per group until it is pinned.
  struct Candidates {
    std::vector<int> devices;  // indices into the PlacerDeviceSet
    std::string soft_note;     // why soft placement changed the request; "" if it did not
  };

  // What one node brought into its group, kept for messages and reasons.
  struct NodeInfo {
    DeviceName request;                // the node's own parsed request
    std::vector<std::string> types;    // the node's own supported types, best first
    std::string link;                  // how it first joined another node's group
    std::vector<std::string> remarks;  // requests of it that were overridden or ignored
    int assigned_device = -1;
  };

  // REQUIRES: `log_lines` is non-null.
  ColocationGraph(const PlacementOptions& options, const PlacerDeviceSet& devices,
                  const KernelSupport& kernels, const Graph& graph,
                  std::vector<std::string>* log_lines)
      : options_(options), devices_(devices), kernels_(kernels), graph_(graph),
        log_lines_(log_lines) {}

  // Builds the groups (rules 2-5). Errors are INVALID_ARGUMENT with TF's texts. Call
  // once, before anything else.
  absl::Status Initialize();
  // The candidates of the node's group; errors are TF's "Cannot assign a device ...".
  // The pointer stays valid until the group is next pinned.
  absl::StatusOr<const Candidates*> GetCandidates(const Node& node);
  // Records that `node` went to `device` and pins its group there.
  void Pin(const Node& node, int device);

  // The device `Pin` (or a pre-assigned device) gave node `id`; -1 if none yet.
  int AssignedDevice(int id) const { return info_[id].assigned_device; }
  // The node whose assignment pinned the node's group; -1 if the group is not pinned.
  int PinnedBy(const Node& node) { return members_[Root(node.id())].pinned_by; }
  const NodeInfo& Info(int id) const { return info_[id]; }
  const GroupDevices& Group(const Node& node) { return members_[Root(node.id())].devices; }
  // Whether the node's group has a (merged) device request.
  bool HasRequest(const Node& node);
  // "no GPU kernel for op 'Foo'" (or for which colocated node), "" if all have one.
  std::string MissingKernel(const Node& node, absl::string_view type);
  // "requested '/gpu:1'" (as written) when the node's own request is its group's,
  // else "colocation group requires '<merged request>'".
  std::string RequestText(const Node& node);

 private:
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
  const PlacerDeviceSet& devices_;
  const KernelSupport& kernels_;
  const Graph& graph_;
  std::vector<std::string>* log_lines_;
  std::vector<Member> members_;  // by node id
  std::vector<NodeInfo> info_;   // by node id
};

}  // namespace dflow

#endif  // DFLOW_GRAPH_COLOCATION_GRAPH_H_
