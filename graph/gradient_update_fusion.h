// A gradient-descent update fused with the MatMul that computes its delta, on a CPU
// partition:
//
//   MatMul(a, b) [-> Identity] -> ResourceApplyGradientDescent(var, alpha, .)
//       => _DflowResourceApplyGradientDescentMatMul(var, alpha, a, b) with MatMul's
//          transpose_a/transpose_b
//
// A dense layer's weight gradient (X^T dY) then accumulates straight into the weights:
// one GEMM with beta 1 (kernels/io/apply_matmul_op.cc) instead of a GEMM writing the
// gradient, and an update pass reading it and the weights and writing the weights (the
// MLP's 784x512 and 512x512 layers: 1.6 and 1 MB each way, ~0.1 ms each a step). Float
// MatMul and update, both on one CPU device; the MatMul's output read by the update alone
// (or by the Identity TF's gradient tuple writes, itself read by the update alone); its
// control successors (the tuple's group_deps and other Identity) stop waiting for the
// product. Graphs with v1 control flow are left alone. The fused node takes the
// update's name; control inputs of every replaced node move to it.
#ifndef DFLOW_GRAPH_GRADIENT_UPDATE_FUSION_H_
#define DFLOW_GRAPH_GRADIENT_UPDATE_FUSION_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace dflow {

// Applies the rewrite to every match on a CPU; other devices' nodes are left alone.
absl::Status FuseGradientUpdates(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_GRADIENT_UPDATE_FUSION_H_
