// Dependency optimization: a computation nobody reads becomes a NoOp, and NoOps that
// only relay ordering are bypassed (grappler's DependencyOptimizer, its first two rules).
//
// TF 1 training graphs group each op's gradients with tf.tuple, whose control edges make
// every gradient run even when no one reads it: the gradient of the first MatMul with
// respect to the fed images (64x512x784, a quarter of an MLP step) is computed and
// dropped. A node whose outputs reach other nodes only through control edges, and whose
// running has no effect but its value, is replaced by a NoOp of the same name and
// device whose inputs are the node's inputs as control edges: everything that waited for
// it still waits for the same things, deadness included.
//
// A NoOp that relays control edges is then removed where that adds no edges: each of
// its control inputs is wired to each of its control successors when inputs x
// successors <= inputs + successors (grappler's rule), so ordering and deadness pass as
// before. Keras models frozen by TF 2 end in a NoOp waiting for every variable read
// (262 in MobileNetV2): after constant folding those reads are NoOps on Consts, and the
// step ran 525 NoOps (3% of MobileNetV2's 2-thread step). Every node of a step runs
// whether or not anything waits for it, so a relay is safe to drop; NoOps nothing waits
// for (a target), on another device than their neighbours, or next to control flow stay.
//
// Left alone by the first rule: stateful ops (variables, random numbers, I/O, sends),
// nodes with ref inputs or outputs, control-flow ops and nodes reading one (a control edge
// from a Switch is not dead where its output is), _Arg/_Retval, and nodes nothing depends
// on (a target of the step). Runs on each signature's pruned graph (GraphPassPhase::
// kPrunedGraph) unless the ConfigProto's rewrite_options turn dependency_optimization OFF
// or the optimizer level is L0.
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

// Removes the NoOps whose bypass adds no edges (the rule above); returns how many.
int BypassRelayNoOps(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_DEPENDENCY_OPTIMIZER_H_
