// Folding inference batch normalization into the convolution before it, as TF's
// transform_graph `fold_batch_norms` and grappler's remapper let a frozen CNN run its
// BatchNormalization layers for free.
//
// On float nodes assigned to one CPU device:
//   Conv2D | DepthwiseConv2dNative (x, W)  [-> BiasAdd | Add/AddV2 (b)]
//     -> FusedBatchNorm | V2 | V3 (is_training = false; scale, offset, mean, variance)
//   => Conv(x, W') -> BiasAdd(b'), the BiasAdd named after the batch norm node,
// with s = scale / sqrt(variance + epsilon) per output channel,
//      W'[..., k] = W[..., k] * s[k],   b' = b * s + (offset - mean * s)   (b = 0 without one).
// The same for a per-channel Mul then Add (NHWC; Consts of dims [C] or [1, ..., 1, C]):
//   Conv [-> bias] -> Mul(x, f) -> Add/AddV2(., c)  =>  s = f, b' = b * f + c.
// That is Keras 3's BatchNormalization once session/constant_folding.h has computed
// its Rsqrt(variance + epsilon) * gamma and beta - mean * that.
// W, b and the four statistics (or f and c) must be Consts (directly or through Identity), the
// batch norm's data_format the convolution's, its outputs other than y unused, and every
// intermediate read by the next node alone (no fetch, no control successor). W' and b'
// are new Consts on the same device; the original W stays for its other readers.
// graph/fusion.h then fuses the convolution with the BiasAdd and an activation.
//
// Numerics: W' and b' are computed in double and rounded once to float, so the result
// differs from TF's unfolded graph by rounding only (about 1e-6 relative on real models).
#ifndef DFLOW_GRAPH_BATCH_NORM_FOLDING_H_
#define DFLOW_GRAPH_BATCH_NORM_FOLDING_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace dflow {

// Folds every match above. Fails only when the graph rejects a node it builds.
absl::Status FoldBatchNorms(Graph* graph);

}  // namespace dflow

#endif  // DFLOW_GRAPH_BATCH_NORM_FOLDING_H_
