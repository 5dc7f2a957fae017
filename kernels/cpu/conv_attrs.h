// ConvAttrs: a 2-D convolution's attrs (data_format, padding, strides, dilations,
// explicit_paddings), validated once when the kernel is constructed. Shared by Conv2D,
// DepthwiseConv2dNative, the fused convolutions and Conv2DBackpropInput.
#ifndef DFLOW_KERNELS_CPU_CONV_ATTRS_H_
#define DFLOW_KERNELS_CPU_CONV_ATTRS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cpu/window_geometry.h"
#include "runtime/op_kernel.h"

namespace dflow {

struct ConvAttrs {
  ImageLayout layout;
  Padding padding = Padding::kValid;
  std::vector<int64_t> strides;                                     // {h, w}
  std::vector<int64_t> dilations;                                   // {h, w}
  std::vector<int64_t> explicit_pads = std::vector<int64_t>(4, 0);  // {top, bottom, left, right}
};

// The attrs of the kernel being constructed; TF's errors for bad values.
absl::StatusOr<ConvAttrs> ParseConvAttrs(OpKernelConstruction* c);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_CONV_ATTRS_H_
