// A residual connection fused into the convolution before it, on a CPU partition, as
// TF's oneDNN build fuses Conv2D + BiasAdd + Add [+ Relu] (ResNet's blocks):
//
//   _FusedConv2D(x, filter, bias) ["BiasAdd"] -> Add | AddV2(., y) [-> Relu | Relu6]
//       => _FusedConv2D(x, filter, bias, y) ["BiasAdd", "Add"(, "Relu" | "Relu6")]
//
// The kernel (kernels/cpu/conv_ops.cc) adds y by oneDNN's sum post-op, writing into y's
// buffer when it holds the only reference: the sum and the activation cost no pass over
// memory of their own (ResNet50's 16 AddV2 and Relu were 5% of a 2-thread step). y may
// have any shape TF's Add broadcasts (the kernel then adds after the convolution).
// The convolution must be NHWC with no activation of its own and read by the Add alone
// (no other reader, no control successors, not fetched); the Add by the activation
// alone. When both of the Add's inputs qualify, its first input is the one fused. The
// fused node takes the last node's name; control inputs move to it. Run after
// FuseCpuOps' chain rewrites, before the MaxPool fusion (which leaves these alone).
#ifndef DFLOW_GRAPH_RESIDUAL_ADD_FUSION_H_
#define DFLOW_GRAPH_RESIDUAL_ADD_FUSION_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace dflow {

// Applies the rewrite to every match on a CPU; other devices' nodes are left alone.
absl::Status FuseResidualAdds(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_RESIDUAL_ADD_FUSION_H_
