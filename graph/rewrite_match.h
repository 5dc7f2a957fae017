// Small predicates the graph rewrites (fusion.h, batch_norm_folding.h, and the session's
// constant folding) share to match node chains.
#ifndef DFLOW_GRAPH_REWRITE_MATCH_H_
#define DFLOW_GRAPH_REWRITE_MATCH_H_

#include <string>

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

}  // namespace dflow

#endif  // DFLOW_GRAPH_REWRITE_MATCH_H_
