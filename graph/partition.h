// Partitioning a placed graph into one GraphDef per device, with explicit copy nodes:
// TF 1.x's `Partition` (graph/graph_partition.cc) as DirectSession configures it.
//
// Rules:
//  1. There is one partition per assigned device name. Every node goes to the partition
//     of its assigned device, with its NodeDef `device` field set to that device. Nodes are
//     visited in id order, so output is byte-identical for the same input graph (given
//     deterministic serialisation: protobuf map fields such as `attr` need
//     `SetSerializationDeterministic` for byte comparison).
//  2. A data edge src:k -> dst:j between devices becomes `_Send` (on src's device, input
//     src:k, attr T) and `_Recv` (on dst's device, attr tensor_type) feeding dst:j. Both
//     carry tensor_name `edge_<edge id>_<src name>`, send_device, send_device_incarnation
//     (`PartitionOptions::send_device_incarnation`), recv_device and
//     client_terminated=false. The dtype is the base type of the src output.
//  3. Dedup: one pair per (src node, src slot, dst device); later consumers on that device
//     read the same `_Recv`. Edges of ref type are never deduped; their `_Recv` takes
//     control inputs from dst's other (non-ref) inputs in its partition, so it reads the
//     ref after them (TF's read-after-dependency rule).
//  4. A control edge A -> B between devices becomes, on A's device, a dummy float `Const`
//     of shape [0] with `^A` feeding a `_Send`; on B's device, `_Recv` -> `Identity`, and B
//     takes `^Identity`. Deduped like data edges (slot -1).
//  5. New node names come from `PartitionOptions::new_name(src name)`, called in the order
//     dummy Const, `_Send`, `_Recv`, `Identity` (as TF does).
//  6. Each partition copies the graph's versions and the library functions (and their
//     gradients) that its nodes reach, directly or through other functions.
//  7. A node inputs list holds data inputs by index, then control inputs by source id.
//  8. Memory types (when `PartitionOptions::kernels` is set; memory_types.h): a data edge
//     whose source output lives in host memory on its device (e.g. Shape's output on a
//     GPU) is sent with `_HostSend`; one whose destination input lives in host memory
//     (e.g. Reshape's shape on a GPU) is received with `_HostRecv`, into host memory,
//     with no device copy. Dedup (rule 3) keys on the receiving memory type too.
//  9. Loops across devices (TF's AddControlFlow): a data or control edge that crosses
//     devices inside a while-loop frame F (an Enter's output is in the frame it opens, an
//     Exit's in the loop's parent frame)
//     gets its `_Recv` a control input from the Merge of F's *control loop* on the
//     receiving device D, so the `_Recv` runs once per iteration, in the frame: one per
//     (F, D), built on first use as Enter(F) -> Merge -> Switch(pred) -> Identity ->
//     NextIteration -> Merge (all float, names "_cloop..."). The Enter reads a float
//     [0] Const in the root frame, or for a nested F the Merge of the parent frame's
//     control loop on D; pred is F's LoopCond, read directly on its own device or
//     through a pair deduped with the graph's own LoopCond edges (into host memory when
//     D's Switch keeps `pred` there). A frame without a LoopCond is INVALID_ARGUMENT
//     "A cross-device loop must have a pivot predicate: <frame>" (TF's text).
// 10. Same-device memory types (TF's EnsureMemoryTypes, one direction): a data edge
//     from an output in device memory into an input the kernel keeps in host memory on
//     the SAME device (a GPU comparison feeding a GPU LoopCond or Switch's pred) goes
//     through a same-device `_Send`/`_HostRecv` pair, the `_Recv` taking `^_Send` (which
//     also puts it in the sender's frame). Host outputs into device inputs need no copy
//     (accelerators read their pinned host memory directly).
//
// 11. Control-flow colocation (TF's OptimizeControlFlowColocation), applied before rules
//     1-10 and only to partitioning (placement, as `log_device_placement` shows it, is
//     unchanged): a non-ref Enter and a NextIteration run on the device of the first node
//     they feed, a Switch on the device of its data input, an Exit on its Switch's. A
//     non-constant Enter or a NextIteration that still feeds another device (it feeds
//     two) is INVALID_ARGUMENT naming both nodes: it delivers to one iteration only,
//     while rule 9's `_Recv`s run in every iteration, so the step would hang.
//
// Not done (TF features DirectSession uses that dflow does not have yet): bfloat16
// casting of float edges.
#ifndef DFLOW_GRAPH_PARTITION_H_
#define DFLOW_GRAPH_PARTITION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/kernel_support.h"
#include "proto/graph.pb.h"
#include "proto/types.pb.h"

namespace dflow {

struct PartitionOptions {
  // A fresh node name derived from `prefix` (a source node's name). When unset, a
  // counter local to the PartitionGraph call gives "<prefix>/_<N>" (N = 0, 1, ...),
  // skipping names the graph already has. A caller-supplied function must return names
  // unique in the graph and across calls (DirectSession uses a session-wide counter).
  std::function<std::string(const std::string& prefix)> new_name;
  // The incarnation written into every `_Send`/`_Recv` (DirectSession: 1).
  int64_t send_device_incarnation = 1;
  // Rule 8's memory types come from the kernels this answers for (borrowed; null: every
  // edge is device memory, plain `_Send`/`_Recv`).
  const KernelSupport* kernels = nullptr;
};

// Splits `graph` per rules 1-11. Returns the partitions keyed (and so sorted) by device.
// INVALID_ARGUMENT naming the node when a node has no assigned device.
// REQUIRES: every node has an assigned device (placement ran).
[[nodiscard]] absl::StatusOr<std::map<std::string, GraphDef>> PartitionGraph(
    const PartitionOptions& options, const Graph& graph);

// One cross-device data transfer (one `_Send`/`_Recv` pair, rule 3), for
// `dflow place --explain` and RunMetadata. Control-edge pairs are not listed.
struct CrossDeviceCopy {
  std::string tensor;  // "src:slot"
  std::string src_device;
  std::string dst_device;
  DataType dtype = DT_INVALID;         // base dtype of the source output
  std::vector<std::string> consumers;  // dst nodes reading it, in id order
};

// The copies PartitionGraph would insert for the graph's edges between assigned devices,
// in the order it creates them (not rules 9-11's: control-loop predicates, same-device
// copies, moved control-flow nodes). Ref-typed edges are listed once per consuming edge
// (they are not deduped). The byte size is left to the
// caller (from `Node::output_shapes()` of the source).
std::vector<CrossDeviceCopy> ListCrossDeviceCopies(const Graph& graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_PARTITION_H_
