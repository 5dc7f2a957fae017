// Small predicates the graph rewrites (fusion.h, batch_norm_folding.h, and the session's
// constant folding) share to match node chains, and the replacement of a matched chain
// by one node.
#ifndef DFLOW_GRAPH_REWRITE_MATCH_H_
#define DFLOW_GRAPH_REWRITE_MATCH_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "graph/graph.h"

namespace dflow {

// Whether the node is assigned to a CPU device.
bool OnCpu(const Node& node);

// Whether the node's type attr `type_attr` is DT_FLOAT.
bool HasFloatAttr(const Node& node, const char* type_attr = "T");

// The node's string attr `name`, or `fallback` when it is missing or not a string.
std::string StringAttrOr(const Node& node, const char* name, const char* fallback);

// The one edge that reads `node`: a data edge from output 0, and no control successors;
// nullptr otherwise.
const Edge* SoleConsumer(const Node& node);

// Whether `node` may join a fused chain on `device`: assigned there, with a float `T`.
bool IsFusible(const Node& node, const std::string& device);

// The Relu or Relu6 that alone reads `node`, fusible on its device; nullptr otherwise
// (the activation a fused chain may end with).
Node* SoleActivationConsumer(const Node& node);

// An output of a node: what a new node's input reads.
struct OutputPort {
  Node* node = nullptr;
  int index = 0;
};

// Replaces the nodes of a matched chain by one node made from `def`, assigned to the
// device of `last` (the chain's last node, whose readers and control successors the new
// node takes over); the new node reads `inputs` in order, and the control inputs of
// every replaced node move to it (but for those from another replaced node). `replaced`
// holds every node of the chain, `last` included.
absl::StatusOr<Node*> ReplaceChain(Graph* graph, const std::vector<Node*>& replaced,
                                   const Node* last, NodeDef def,
                                   const std::vector<OutputPort>& inputs);

// Calls `rewrite` on every node the graph has when the walk starts, in id order, and
// stops at the first error. A rewrite may remove nodes later in the order (they are
// skipped) and add nodes (they get new ids and are not visited): each fusion pass walks
// the graph this way.
absl::Status ForEachNodeById(Graph* graph, const std::function<absl::Status(Node*)>& rewrite);

}  // namespace dflow

#endif  // DFLOW_GRAPH_REWRITE_MATCH_H_
