// Constant inputs: which data inputs of each node hold the same tensor in every step.
//
// A kernel may prepare such an input once (oneDNN reorders a Conv2D filter or packs a
// MatMul's weights into its blocked layout) instead of every step. An input is constant
// when it comes from a Const in the same graph, directly or through a chain of
// Identity / Snapshot / StopGradient nodes (frozen graphs read every weight through a
// `.../read` Identity). Run on an execution graph (after feeds became _Arg nodes and the
// graph was partitioned), so a fed tensor or one received from another device is never
// marked.
#ifndef DFLOW_GRAPH_CONSTANT_INPUTS_H_
#define DFLOW_GRAPH_CONSTANT_INPUTS_H_

#include "graph/graph.h"

namespace dflow {

// The private attr (list(int), sorted input indices) MarkConstantInputs sets.
inline constexpr char kConstantInputsAttr[] = "_dflow_constant_inputs";

// Sets kConstantInputsAttr on every node with at least one constant data input.
void MarkConstantInputs(Graph* graph);

// The edge `edge`'s value really comes from: Identity / Snapshot / StopGradient nodes
// are followed back to their input (at most 64 of them). nullptr when a forwarding node
// has no input.
const Edge* SkipForwarding(const Edge* edge);

// The Const whose value `edge` carries, directly or through forwarding nodes; nullptr
// when it is not a Const's.
const Node* ConstSource(const Edge* edge);

}  // namespace dflow

#endif  // DFLOW_GRAPH_CONSTANT_INPUTS_H_
