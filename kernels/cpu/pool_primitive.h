// 2-D pooling of a batch of images on oneDNN, as MaxPool/AvgPool (pooling_ops.cc) and the
// fused conv + max-pool (conv_ops.cc) both compute it: the window over one image, and the
// forward-inference primitive for `n` such images.
#ifndef DFLOW_KERNELS_CPU_POOL_PRIMITIVE_H_
#define DFLOW_KERNELS_CPU_POOL_PRIMITIVE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/window_geometry.h"

namespace dflow {

struct PoolGeometry {
  int64_t depth = 0;
  WindowDim rows, cols;

  int64_t InImage() const { return depth * rows.input * cols.input; }
  int64_t OutImage() const { return depth * rows.output * cols.output; }
  double FlopsPerImage() const {
    return static_cast<double>(OutImage() * rows.size * cols.size);
  }
  // The primitive cache key for `n` images; the window is part of it (MaxPoolV2).
  std::vector<int64_t> Key(int64_t n) const {
    return {n, depth, rows.input, cols.input, rows.size, cols.size, rows.stride, cols.stride};
  }
};

// `algorithm`: dnnl_pooling_max or dnnl_pooling_avg_exclude_padding (TF's AvgPool).
absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakePoolPrimitive(
    const PoolGeometry& g, int64_t n, bool nchw, dnnl_alg_kind_t algorithm,
    dnnl_engine_t engine);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_POOL_PRIMITIVE_H_
