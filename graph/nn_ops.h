// Neural-network op functions for the builder API (TF's cc/ops nn_ops): convolutions,
// pooling, activations beyond ops.h's, and the losses training graphs use.
//
// As in ops.h, each function adds one node through the Scope; errors are recorded in the
// scope's status and give null handles. Layout attrs default to TF's (NHWC).
#ifndef DFLOW_GRAPH_NN_OPS_H_
#define DFLOW_GRAPH_NN_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/scope.h"

namespace dflow {

// Attrs shared by Conv2D and DepthwiseConv2dNative besides strides and padding.
struct ConvAttrs {
  std::string data_format = "NHWC";
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  // For padding "EXPLICIT": 8 values, a (before, after) pair per dimension.
  std::vector<int64_t> explicit_paddings;
};

// `input` [N,H,W,C] (NHWC) convolved with `filter` [KH,KW,C,OC]. `strides` has 4
// entries in data_format order; `padding` is "SAME", "VALID" or "EXPLICIT".
Output Conv2D(const Scope& scope, Input input, Input filter,
              const std::vector<int64_t>& strides, const std::string& padding,
              const ConvAttrs& attrs = {});
// Each input channel convolved with its own `filter` [KH,KW,C,M] slice (M per channel).
Output DepthwiseConv2dNative(const Scope& scope, Input input, Input filter,
                             const std::vector<int64_t>& strides, const std::string& padding,
                             const ConvAttrs& attrs = {});

// Pooling windows of `ksize` moved by `strides` (4 entries each, data_format order).
Output MaxPool(const Scope& scope, Input value, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding,
               const std::string& data_format = "NHWC");
Output AvgPool(const Scope& scope, Input value, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding,
               const std::string& data_format = "NHWC");

// Activations (element-wise; Softmax and Relu are in ops.h).
Output LogSoftmax(const Scope& scope, Input logits);
Output Elu(const Scope& scope, Input features);
Output Selu(const Scope& scope, Input features);
Output Softplus(const Scope& scope, Input features);
Output Softsign(const Scope& scope, Input features);
Output LeakyRelu(const Scope& scope, Input features, float alpha = 0.2f);

// Per-example cross entropy of `features` [batch, classes] against `labels`, with the
// gradient the kernel computes alongside (TF's fused op returns both).
struct CrossEntropyOutputs {
  Output loss;      // [batch]
  Output backprop;  // [batch, classes]
};
// `labels`: one probability distribution per row, shape [batch, classes].
CrossEntropyOutputs SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                  Input labels);
// `labels`: one class index (int32/int64) per row, shape [batch].
CrossEntropyOutputs SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features,
                                                        Input labels);
// sum(t * t) / 2 over all elements.
Output L2Loss(const Scope& scope, Input t);

// Inverted dropout as tf.nn.dropout: keeps each element with probability 1 - rate and
// scales kept ones by 1 / (1 - rate). `seed` and `seed2` as RandomUniform's (0, 0:
// nondeterministic). REQUIRES: 0 <= rate < 1 (else the scope records an error).
Output Dropout(const Scope& scope, Input x, float rate, int64_t seed = 0, int64_t seed2 = 0);

}  // namespace dflow

#endif  // DFLOW_GRAPH_NN_OPS_H_
