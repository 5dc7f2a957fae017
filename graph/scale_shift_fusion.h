// A per-channel scale and shift no convolution absorbed, fused into one node on a CPU
// partition, as TF's grappler fuses a FusedBatchNorm and its Relu (_FusedBatchNormEx):
//
//   Mul(x, scale) -> Add | AddV2(., shift) [-> Relu | Relu6]
//       => _DflowScaleShift(x, scale, shift) with attr activation ("", "Relu", "Relu6")
//
// scale and shift are float Consts (read directly or through Identity) of one shape,
// [C] or [1, ..., 1, C] or a scalar, each operand on either side of its Mul/Add. It is an
// inference batch norm that constant folding turned into Mul and Add but that precedes
// its Relu and convolution (DenseNet's and ResNetV2's pre-activation), so that
// FoldBatchNorms cannot move it into weights: one pass over x instead of three.
// The chain's intermediates must have no other reader and no control successors; the
// fused node takes the last node's name. graph/ops/dflow_internal_ops.pbtxt declares the
// op; kernels/cpu/scale_shift_op.cc computes it with Mul's and Add's roundings.
#ifndef DFLOW_GRAPH_SCALE_SHIFT_FUSION_H_
#define DFLOW_GRAPH_SCALE_SHIFT_FUSION_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace dflow {

// Applies the rewrite to every match on a CPU; other devices' nodes are left alone.
absl::Status FuseScaleShift(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_SCALE_SHIFT_FUSION_H_
