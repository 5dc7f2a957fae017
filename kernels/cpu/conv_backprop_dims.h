// The checks the convolution backprops (Conv2DBackpropInput/Filter and the depthwise
// ones) share: the sizes input is a vector (ReadSizeVector), and TF's
// ConvBackpropExtractAndVerifyDimension (CheckBackpropDim): one spatial dim of the forward
// convolution (`d`: input, filter, stride, dilation, pads) must give out_backprop's size.
#ifndef DFLOW_KERNELS_CPU_CONV_BACKPROP_DIMS_H_
#define DFLOW_KERNELS_CPU_CONV_BACKPROP_DIMS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "runtime/tensor.h"
#include "kernels/cpu/window_geometry.h"

namespace dflow {

// The values of `sizes` (input `what` of `op`, e.g. Conv2DBackpropInput's input_sizes);
// INVALID_ARGUMENT in TF's words unless it is a vector.
inline absl::StatusOr<std::vector<int64_t>> ReadSizeVector(const Tensor& sizes,
                                                           absl::string_view op,
                                                           absl::string_view what) {
  if (sizes.shape().dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " input must be 1-dim, not ",
                                                   sizes.shape().dims()));
  }
  return ReadIndices(sizes);
}

// Computes d's output; INVALID_ARGUMENT in TF's words, prefixed with `label` (TF names the
// kernel: "Conv2DCustomBackpropInput: "), when it is not `out_size`.
inline absl::Status CheckBackpropDim(absl::string_view label, Padding padding, int spatial_dim,
                                     int64_t out_size, WindowDim* d) {
  DFLOW_RETURN_IF_ERROR(ComputeWindow(padding, d));
  if (d->output == out_size) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      label, "Size of out_backprop doesn't match computed: actual = ", out_size,
      ", computed = ", d->output, " spatial_dim: ", spatial_dim, " input: ", d->input,
      " filter: ", d->size, " output: ", out_size, " stride: ", d->stride,
      " dilation: ", d->dilation));
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONV_BACKPROP_DIMS_H_
