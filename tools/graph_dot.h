// A placed graph as Graphviz DOT, for `dflow graph`.
//
// Rules:
//  1. One cluster per device (its full name as the label), each with its own fill colour
//     for its nodes; devices in name order, so CPU:0 is always the first colour.
//  2. A node shows its name and op. Data edges are solid, control edges dashed grey.
//  3. An edge between two devices is a copy the partitioner turns into a `_Send`/`_Recv`
//     pair: drawn thick red, labelled "copy" with the tensor's dtype, shape and bytes when
//     shape inference knows them.
//  4. The graph's label counts nodes, devices and copies.
//
// Thread-safe: pure function.
#ifndef DFLOW_TOOLS_GRAPH_DOT_H_
#define DFLOW_TOOLS_GRAPH_DOT_H_

#include <string>

#include "graph/graph.h"

namespace dflow {

// `graph`'s nodes must carry their assigned devices (unassigned ones form a cluster "").
std::string PlacedGraphDot(const Graph& graph);

}  // namespace dflow

#endif  // DFLOW_TOOLS_GRAPH_DOT_H_
