// Constant folding of an execution graph, as grappler's ConstantFolding does for every
// TF Session: nodes whose inputs are all constant are computed once, when the plan is
// built, and replaced by Consts. Frozen Keras 3 models need it: their BatchNormalization
// is Rsqrt(var + eps) * gamma, mean * that, beta - that (on Consts) before the two
// per-channel ops on the activation; folded, those become Consts that
// graph/batch_norm_folding.h then folds into the convolution.
//
// Rules:
//  0. An Identity (Snapshot, StopGradient) of a Const on the same device, with no control
//     inputs, is bypassed: its readers read the Const (control readers wait on it) and
//     the node goes. No value is computed or copied: a frozen Keras model reads every
//     weight through such an Identity (its former ReadVariableOp), and VGG16's 553 MB
//     would otherwise pass through the nested session of rule 2, copied several times.
//  1. A node folds when it is on a CPU device, its op is stateless and not a source,
//     control-flow, send/receive, argument or Placeholder op, it has at least one data
//     input, every input (data and control) comes from a Const or a folding node, and
//     none of its inputs or outputs is a reference, resource or variant.
//  2. The folding nodes run once, in a nested CPU-only session with folding off, and
//     every output read by a node that computes on runtime data (a data input that is
//     neither constant nor folding) becomes, for that reader, a Const on the producer's
//     device (values only fetched stay computed, so an all-constant graph keeps its
//     nodes, devices and partitions), named `<node>/_folded` (`_folded_<i>` for output i > 0). Outputs over
//     `max_constant_bytes` (10 MiB, grappler's limit) stay computed.
//  3. Nodes and Consts nobody reads any more are removed.
//  4. Folding is an optimization: when the nested run fails (a kernel error on these
//     values, e.g. an Assert), the graph is left as it was and the step reports the
//     error when it runs, naming the node.
// Off when the ConfigProto says so: graph_options.optimizer_options.opt_level L0 or
// graph_options.rewrite_options.constant_folding OFF.
#ifndef DFLOW_SESSION_CONSTANT_FOLDING_H_
#define DFLOW_SESSION_CONSTANT_FOLDING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "proto/config.pb.h"

namespace dflow {

struct ConstantFoldingOptions {
  int64_t max_constant_bytes = int64_t{10} << 20;
};

// Whether `config` leaves constant folding on (see above).
bool ConstantFoldingEnabled(const ConfigProto& config);

// Rules 0-4 on `graph`; returns the number of nodes folded or bypassed away.
absl::StatusOr<int> FoldConstants(Graph* graph, const ConstantFoldingOptions& options = {});

}  // namespace dflow

#endif  // DFLOW_SESSION_CONSTANT_FOLDING_H_
