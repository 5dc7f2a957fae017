// Control-flow frames of a TF 1.x graph (while loops built from Enter/Exit/NextIteration).
//
// Every node runs in one static frame: the root frame, or the frame a while loop's Enter
// nodes open. The rules (TF's BuildControlFlowInfo, restated for the executor):
//  1. Nodes without inputs are in the root frame (frame 0).
//  2. An Enter node runs in its input's frame; its successors are in the child frame
//     named by its `frame_name` attr (one static child per (parent frame, name)).
//  3. An Exit node runs in the loop's frame; its successors are in the parent frame.
//  4. Every other node's successors are in its own frame; NextIteration back edges stay
//     in the frame, so loops are cycles inside one frame.
//  5. A node reached from two different frames, an Exit outside any loop, an Enter
//     without a frame name, and a node reachable from no root are INVALID_ARGUMENT.
//
// graph/ only: used by the executor (per-frame iteration state) and by the partitioner
// (per-device control loops for frames that span devices, partition.h rule 9). Pure functions; the Graph is only read.
#ifndef DFLOW_GRAPH_CONTROL_FLOW_H_
#define DFLOW_GRAPH_CONTROL_FLOW_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace dflow {

// Op classes of v1 control flow (the Ref* variants included).
bool IsEnter(const Node& node);
bool IsExit(const Node& node);
bool IsNextIteration(const Node& node);
bool IsMerge(const Node& node);
// An Enter whose `is_constant` attr is true: a loop invariant, seen by every iteration.
bool IsConstantEnter(const Node& node);
// Whether `graph` has any node that needs frame-aware execution (Enter, Exit,
// NextIteration or Merge).
bool HasControlFlow(const Graph& graph);
// Whether `node` is any op of TF 1.x control flow (Switch, _SwitchN, Merge, Enter, Exit,
// NextIteration, LoopCond, and their Ref forms): with one of them in a graph, a tensor
// may be dead and a control edge carries that deadness, even with no loop (a lone
// Switch of tf.cond), so a rewrite that drops or moves control edges must not run.
bool IsV1ControlFlowOp(const Node& node);

struct StaticFrame {
  std::string name;             // the Enters' frame_name; "" for the root frame
  int parent = -1;              // index into ControlFlowInfo::frames; -1 for the root
  int num_enters = 0;           // Enter nodes feeding this frame
  int parallel_iterations = 1;  // from the first Enter (in node-id order of discovery)
  const Node* first_enter = nullptr;
};

struct ControlFlowInfo {
  std::vector<StaticFrame> frames;  // frames[0] is the root frame
  // Per node id (Graph::num_node_ids()): the frame the node runs in; -1 for removed ids.
  std::vector<int> node_frame;
  // Per node id: for Enter nodes, the frame they feed; -1 otherwise.
  std::vector<int> entered_frame;
};

absl::StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph);

// The outermost while loop `node` belongs to (an Enter belongs to the loop it feeds), as
// an index into info.frames; 0 when the node is in no loop.
int OutermostLoop(const ControlFlowInfo& info, const Node& node);


}  // namespace dflow

#endif  // DFLOW_GRAPH_CONTROL_FLOW_H_
