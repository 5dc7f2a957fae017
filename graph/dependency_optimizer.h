// Dependency optimization: a computation nobody reads becomes a NoOp (grappler's
// DependencyOptimizer, its first rule).
//
// TF 1 training graphs group each op's gradients with tf.tuple, whose control edges make
// every gradient run even when no one reads it: the gradient of the first MatMul with
// respect to the fed images (64x512x784, a quarter of an MLP step) is computed and
// dropped. A node whose outputs reach other nodes only through control edges, and whose
// running has no effect but its value, is replaced by a NoOp of the same name and
// device whose inputs are the node's inputs as control edges: everything that waited for
// it still waits for the same things, deadness included.
//
// Left alone: stateful ops (variables, random numbers, I/O, sends), nodes with ref
// inputs or outputs, control-flow ops and nodes reading one (a control edge from a
// Switch is not dead where its output is), _Arg/_Retval, and nodes nothing depends on
// (a target of the step). Runs on each signature's pruned graph (GraphPassPhase::
// kPrunedGraph) unless the ConfigProto's rewrite_options turn dependency_optimization
// OFF or the optimizer level is L0.
#ifndef DFLOW_GRAPH_DEPENDENCY_OPTIMIZER_H_
#define DFLOW_GRAPH_DEPENDENCY_OPTIMIZER_H_

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "proto/config.pb.h"

namespace dflow {

// Whether `config` leaves dependency optimization on (the default).
bool DependencyOptimizationEnabled(const ConfigProto& config);

// Replaces every node read only through control edges by a NoOp; returns how many.
absl::StatusOr<int> ConvertUnreadNodesToNoOps(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_DEPENDENCY_OPTIMIZER_H_
