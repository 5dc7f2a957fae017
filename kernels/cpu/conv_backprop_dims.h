// CheckBackpropDim: TF's ConvBackpropExtractAndVerifyDimension, shared by
// Conv2DBackpropInput and Conv2DBackpropFilter: one spatial dim of the forward convolution
// (`d`: input, filter, stride, dilation, pads) must give out_backprop's size there.
#ifndef DFLOW_KERNELS_CPU_CONV_BACKPROP_DIMS_H_
#define DFLOW_KERNELS_CPU_CONV_BACKPROP_DIMS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"
#include "kernels/cpu/window_geometry.h"

namespace dflow {

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
