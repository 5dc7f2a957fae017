// The gradient of Relu -> MaxPool fused on a CPU partition:
//
//   ReluGrad(MaxPoolGrad(x, y, grad), x)   (x: the Relu's output, the pool's input)
//       => _DflowMaxPoolGradRelu(x, y, grad) with MaxPoolGrad's attrs
//
// ReluGrad keeps a gradient where x > 0; the pooling gradient is non-zero only at each
// window's maximum of x, so the fused kernel (kernels/cpu/max_pool_grad_op.cc) writes a
// window's gradient only where that maximum is positive, and a pass over the layer's
// activations disappears (LeNet's first: 100x28x28x6 floats read twice and written once
// a step). The MaxPoolGrad must be read by the ReluGrad alone (no other reader, no
// control successors, not fetched), both on one CPU device; ReluGrad's features must be
// the very tensor MaxPoolGrad's orig_input reads. The fused node takes the ReluGrad's
// name; control inputs of both move to it.
#ifndef DFLOW_GRAPH_MAX_POOL_GRAD_RELU_FUSION_H_
#define DFLOW_GRAPH_MAX_POOL_GRAD_RELU_FUSION_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace dflow {

// Applies the rewrite to every match on a CPU; other devices' nodes are left alone.
absl::Status FuseMaxPoolGradRelu(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_MAX_POOL_GRAD_RELU_FUSION_H_
