// Placement: assigns every node of a Graph to one device, following TensorFlow 1.x's
// placer (common_runtime/placer.cc, colocation_graph.cc), and records *why* for each
// node (docs/STYLE.md #12; `dflow place --explain` prints the reasons).
//
// Rules, applied in this order:
//  1. Devices. `devices` is the device set in device order (CPU devices first). A
//     device type's priority is GPU 210 > CPU 70 > XLA_CPU/XLA_GPU 50 > anything else
//     -1 (DeviceTypePriority below); higher is preferred.
//  2. Supported types. A node can run on the device types, among those present, that
//     `KernelSupport::SupportedDeviceTypes` names for it; a call of a library function
//     (an op missing from the op registry) can run on every present type. A node with
//     no supported type fails: `No OpKernel was registered to support Op ...`.
//  3. Requested devices. `NodeDef.device` is parsed with ParseDeviceName, so every
//     spelling users write works (`/gpu:1`, `GPU:1`, `/device:gpu:1`, partial specs
//     such as `/device:GPU:*` or `/job:localhost`). A malformed one fails:
//     `Malformed device specification '<spec>' in node: <name> ...`. The request of a
//     resource generator (no inputs, one ref or DT_RESOURCE output: VariableV2,
//     VarHandleOp) is also a *resource device*, which later merges cannot override.
//  4. Reference and resource edges. Every data edge into a ref or DT_RESOURCE input
//     puts its two ends in one colocation group (edge-id order). When the two groups'
//     requests conflict, the destination's request is silently replaced by the
//     source's (logged when log_device_placement), whatever allow_soft_placement says;
//     only incompatible assigned or resource devices fail.
//  5. `_class` groups. Each `loc:@NAME` entry of a node's `_class` attr joins it to the
//     group keyed NAME; a node with no such entry joins the group keyed by its own
//     name. The first node seen for a key is the group's root. Joining merges the
//     groups' requests (MergeDeviceNames; with soft placement a conflicting type/id is
//     dropped) and intersects their supported types. A failed join is an error
//     (`Cannot colocate nodes {{colocation_node a}} and {{colocation_node b}}: ...`),
//     or, with allow_soft_placement, is ignored (logged when log_device_placement).
//  6. Candidates, computed once per group: the devices matching the group's merged
//     request (all devices when there is none) whose type the group supports, sorted
//     by device-type priority (descending), then by full device name as a *string*
//     (TF's quirk, kept on purpose: GPU:10 sorts before GPU:2). When a request leaves
//     no candidate and allow_soft_placement is on, the request's device type and id
//     are dropped (unless a resource or assigned device pins them) and the search is
//     retried. Still nothing is an INVALID_ARGUMENT `Cannot assign a device for
//     operation <name>: ...` in TF's words, followed by a hint naming the fix.
//  7. First pass, node-id order: a node that is already assigned keeps its device; a
//     generator (no inputs, exactly one output, not a ref) waits for the second pass;
//     a metadata op (Shape, Size, Rank) takes its first input's device when that is a
//     candidate; every other node takes candidates[0]. Assigning a node pins its
//     whole group to that device.
//  8. Second pass: a generator takes its consumers' device when they all share one
//     and it is a candidate, else candidates[0].
//
// Differences from TF 1.15, all deliberate:
//   - Device specs parse leniently (rule 3): TF's C++ keeps `/device:gpu:0` as type
//     `gpu` (never matching) and rejects `GPU:0`; Python users expect both to work.
//   - Kernel priorities (KernelDef.priority) do not exist here; candidates sort by
//     device priority and name only.
//   - "No device matches the request" says both TF 1.12's and 1.15's sentences with one
//     device list; a GPU request with no GPU present adds "The requested device appears
//     to be a GPU, but this process has no GPU." (TF: "... but CUDA is not enabled.").
//   - Errors end with a "\nHint: ..." line naming the fix (e.g. allow_soft_placement),
//     placed before TF's "\n\t [[node]]" suffix.
//   - Colocation debug info lists each op type's own supported types, sorted by op type
//     (TF prints the root's merged types for the root's op, in hash-map order).
//   - A pre-assigned device that is not in `devices` is INVALID_ARGUMENT (TF: INTERNAL).
//   - On error the graph is left untouched (TF may have assigned some nodes).
//
// Thread-compatible; deterministic: the same graph, devices and kernels always give the
// same assignments, reasons and log lines.
#ifndef DFLOW_GRAPH_PLACER_H_
#define DFLOW_GRAPH_PLACER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/kernel_support.h"
#include "proto/device_attributes.pb.h"

namespace dflow {

// The two ConfigProto switches that change placement.
struct PlacementOptions {
  // Drop unsatisfiable device types/ids and colocation requests instead of failing.
  bool allow_soft_placement = false;
  // Fill PlacementResult::log_lines with TF's per-node lines and "Ignoring ..." notes.
  bool log_device_placement = false;
};

// Where one node went, and why.
struct PlacementDecision {
  std::string node;
  std::string op;
  std::string device;  // full device name
  // One sentence for a person, e.g. "requested '/gpu:1'",
  // "colocated with 'v' (_class loc:@v)",
  // "no GPU kernel for op 'Foo'; fell back to CPU",
  // "default: highest-priority device with a kernel (GPU before CPU)",
  // "metadata op follows its input's device (input 'x')",
  // "generator placed with its consumers",
  // "soft placement: requested '/gpu:2' does not exist; fell back to GPU".
  std::string reason;
};

struct PlacementResult {
  // One per node, in node-id order.
  std::vector<PlacementDecision> decisions;
  // What TF logs, in TF's order, for the caller to print:
  //   - with log_device_placement: the "Ignoring device specification ..." and
  //     "Ignoring request to colocate ..." notes made while grouping, then one
  //     `<name>: (<op>): <full device>` line per node (first-pass nodes in id order,
  //     then generators);
  //   - always: the warning "Failed to place the graph without changing the devices
  //     of some resources. ..." when soft placement had to move a resource.
  std::vector<std::string> log_lines;
};

// Places every node of `graph` on one of `devices` (rules above) and sets each node's
// assigned device to that device's full name. Nodes that already have an assigned
// device keep it and pin their colocation group.
// Errors: INVALID_ARGUMENT with TF's texts (see rules 2-6); on error `graph` is
// unchanged.
// REQUIRES: every device name is a full device name (FullDeviceName), `graph` is
// non-null. `kernels` is only borrowed for the call.
absl::StatusOr<PlacementResult> PlaceGraph(const PlacementOptions& options,
                                           const std::vector<DeviceAttributes>& devices,
                                           const KernelSupport& kernels, Graph* graph);

// TF's device-factory priority of a device type (rule 1): GPU 210, CPU 70,
// XLA_CPU/XLA_GPU 50, anything else -1.
int DeviceTypePriority(absl::string_view device_type);

}  // namespace dflow

#endif  // DFLOW_GRAPH_PLACER_H_
