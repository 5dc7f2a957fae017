// Operator fusion on a CPU execution graph, as TensorFlow's grappler remapper does it:
// a layer's chain of nodes becomes one node whose kernel does the whole layer in one
// pass over memory (oneDNN post-ops on CPU), instead of writing and re-reading each
// intermediate tensor and dispatching one kernel per step.
//
// Rewrites, on float nodes assigned to one CPU device:
//   Pad(x, const paddings) -> Conv2D | DepthwiseConv2dNative (VALID or EXPLICIT)
//       => the convolution of x with EXPLICIT padding (the zero pad folded into it;
//          only spatial pads, TF's "Pad" op, i.e. zeros; Keras' ZeroPadding2D before
//          MobileNet's and EfficientNet's stride-2 depthwise convolutions).
//   Pad(x, const paddings) -> MaxPool (VALID or EXPLICIT), x a Relu's output (>= 0)
//       => the MaxPool of x with EXPLICIT padding (zeros and ignored padding give the
//          same maxima on x >= 0 when each pad is smaller than the window; Keras ResNets'
//          ZeroPadding2D before their first pool).
//   Conv2D -> BiasAdd (same data_format) | Add/AddV2 with a rank-1 Const bias of the
//   filter's out-channels (NHWC only) [-> Relu | Relu6]
//       => _FusedConv2D(input, filter, bias) fused_ops ["BiasAdd"(, "Relu"|"Relu6")]
//   Conv2D | DepthwiseConv2dNative -> FusedBatchNorm* (inference, Const statistics)
//       => Conv -> BiasAdd with the batch norm folded into the weights
//          (graph/batch_norm_folding.h), first, so the next rewrite fuses it.
//   DepthwiseConv2dNative -> BiasAdd | Add [-> Relu | Relu6]
//       => _FusedDepthwiseConv2dNative(input, filter, bias), as for Conv2D; with
//          EXPLICIT padding _DflowFusedDepthwiseConv2dNative (graph/ops/
//          dflow_internal_ops.pbtxt: TF's fused op has no explicit_paddings).
//   Conv2D | DepthwiseConv2dNative -> bias -> swish: Mul(x, Sigmoid(x)) (tf.nn.silu), or
//   Mul(x, Sigmoid(Mul(beta, x))) with a scalar Const beta (Keras 3)
//       => the fused convolution with fused_ops ["BiasAdd", "_DflowSwish"] and the float
//          attr _dflow_swish_beta (oneDNN's eltwise_swish post-op, alpha = beta).
//          Keras 3's IdentityN after the swish (its custom gradient) is forwarded first:
//          every CPU IdentityN without control edges passes its inputs straight on.
//   MatMul -> BiasAdd | Add/AddV2 with a rank-1 Const bias of B's columns
//   [-> Relu | Relu6]
//       => _FusedMatMul(a, b, bias) with the same fused_ops.
//   _FusedConv2D ["BiasAdd"] (NHWC) -> Add | AddV2 [-> Relu | Relu6]
//       => _FusedConv2D ["BiasAdd", "Add"(, act)] (graph/residual_add_fusion.h).
//   MatMul -> ResourceApplyGradientDescent (its delta)
//       => _DflowResourceApplyGradientDescentMatMul (graph/gradient_update_fusion.h).
//   MaxPoolGrad(x, ...) -> ReluGrad(., x)
//       => _DflowMaxPoolGradRelu (graph/max_pool_grad_relu_fusion.h).
//   _FusedConv2D (NHWC) -> MaxPool (NHWC, SAME or VALID)
//       => _DflowFusedConv2DMaxPool(input, filter, bias) with pool_ksize, pool_strides
//          and pool_padding (dflow's own op: each slice of the batch is pooled while its
//          convolution output is still in cache).
//   Mul(x, Const scale) -> Add(., Const shift) [-> Relu | Relu6], per-channel
//       => _DflowScaleShift (graph/scale_shift_fusion.h), after the convolution rules.
// An intermediate tensor must have exactly one consumer (the next node of the chain;
// fetches count, as their _Retval/_Send consumers) and no control successors. The fused
// node takes the name of the last node it replaces (as grappler names it), so errors and
// step stats name that node; control inputs of the replaced nodes move to it.
//
// Run on a partition's graph before MarkConstantInputs; nodes on other device types
// (simulated GPUs run the same kernels) are left alone.
#ifndef DFLOW_GRAPH_FUSION_H_
#define DFLOW_GRAPH_FUSION_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace dflow {

// The fused_ops entry of a swish activation, and the attr holding its beta.
inline constexpr char kFusedSwish[] = "_DflowSwish";
inline constexpr char kSwishBetaAttr[] = "_dflow_swish_beta";

// Applies the rewrites above to every match. Fails only on an internal inconsistency
// (a fused node the registry rejects).
absl::Status FuseCpuOps(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_FUSION_H_
