// Validation and geometry shared by the resize kernels (resize_ops.cc,
// resize_bicubic_op.cc): TF's ImageResizerState checks and scales.
#ifndef DFLOW_KERNELS_CPU_RESIZE_UTIL_H_
#define DFLOW_KERNELS_CPU_RESIZE_UTIL_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"

namespace dflow {

// The dtypes TF 2.21 registers both resize kernels for on the CPU (TF_CALL_REAL_NUMBER_TYPES).
inline std::vector<DataType> ResizeTypes() {
  return {DT_FLOAT,  DT_DOUBLE, DT_HALF,   DT_BFLOAT16, DT_INT8,   DT_INT16,
          DT_INT32,  DT_INT64,  DT_UINT8,  DT_UINT16,   DT_UINT32, DT_UINT64};
}

struct ResizeGeometry {
  int64_t batch = 0, in_height = 0, in_width = 0, channels = 0;
  int64_t out_height = 0, out_width = 0;
  float height_scale = 0, width_scale = 0;
};

inline float ResizeScale(int64_t in_size, int64_t out_size, bool align_corners) {
  return (align_corners && out_size > 1) ? (in_size - 1) / static_cast<float>(out_size - 1)
                                         : in_size / static_cast<float>(out_size);
}

// TF's ImageResizerState::ValidateAndCalculateOutputSize: the same checks, in its order,
// with its messages (the shape is appended without a space, as TF does).
inline absl::StatusOr<ResizeGeometry> ValidateResize(const OpKernelContext& ctx, bool align_corners,
                                              bool half_pixel_centers) {
  if (half_pixel_centers && align_corners) {
    return KernelError(ctx, "If half_pixel_centers is True, align_corners must be False.");
  }
  const TensorShape& input = ctx.input(0).shape();
  if (input.dims() != 4) {
    return KernelError(ctx, "input must be 4-dimensional", input.DebugString());
  }
  ResizeGeometry g;
  g.batch = input.dim_size(0);
  g.channels = input.dim_size(3);
  if (g.channels <= 0) return KernelError(ctx, "image must have at least one channel");
  g.in_height = input.dim_size(1);
  g.in_width = input.dim_size(2);
  if (g.in_height <= 0 || g.in_width <= 0) {
    return KernelError(ctx, "input image must be of non-zero size");
  }
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  if (g.in_height >= kInt32Max || g.in_width >= kInt32Max) {
    return KernelError(ctx, "input sizes must be between 0 and max int32");
  }
  const Tensor& size = ctx.input(1);
  if (size.shape().dims() != 1) {
    return KernelError(ctx, "shape_t must be 1-dimensional", size.shape().DebugString());
  }
  if (size.NumElements() != 2) {
    return KernelError(ctx, "shape_t must have two elements", size.shape().DebugString());
  }
  g.out_height = size.flat<int32_t>()[0];
  g.out_width = size.flat<int32_t>()[1];
  if (g.out_height <= 0 || g.out_width <= 0) {
    return KernelError(ctx, "output dimensions must be positive");
  }
  g.height_scale = ResizeScale(g.in_height, g.out_height, align_corners);
  g.width_scale = ResizeScale(g.in_width, g.out_width, align_corners);
  return g;
}

// Allocates output 0 of shape [batch, out_height, out_width, channels].
inline absl::StatusOr<Tensor*> AllocateResized(OpKernelContext* ctx, const ResizeGeometry& g) {
  DFLOW_ASSIGN_OR_RETURN(TensorShape shape,
                         OutputShape(*ctx, {g.batch, g.out_height, g.out_width, g.channels}));
  return ctx->allocate_output(0, shape);
}

// ResizeBicubic (resize_bicubic_op.cc), registered by RegisterResizeKernels.
absl::Status RegisterResizeBicubicKernel(KernelRegistry* registry);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_RESIZE_UTIL_H_
