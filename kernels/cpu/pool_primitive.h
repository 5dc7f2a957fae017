// 2-D pooling of a batch of images on oneDNN, as MaxPool/AvgPool (pooling_ops.cc) and the
// fused conv + max-pool (conv_ops.cc) both compute it: the window over one image, the
// forward-inference primitive for `n` such images, and a batch run over the session's
// pool (RunPool).
#ifndef DFLOW_KERNELS_CPU_POOL_PRIMITIVE_H_
#define DFLOW_KERNELS_CPU_POOL_PRIMITIVE_H_

#include <cstdint>
#include <functional>
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
  // The primitive cache key for `n` images; the window (MaxPoolV2) and the padding (a
  // band of rows has its own) are part of it.
  std::vector<int64_t> Key(int64_t n) const {
    return {n,           depth,           rows.input,     cols.input,
            rows.size,   cols.size,       rows.stride,    cols.stride,
            rows.pad_before, rows.pad_after, cols.pad_before, cols.pad_after};
  }
};

// `algorithm`: dnnl_pooling_max or dnnl_pooling_avg_exclude_padding (TF's AvgPool).
absl::StatusOr<std::shared_ptr<const onednn::Primitive>> MakePoolPrimitive(
    const PoolGeometry& g, int64_t n, bool nchw, dnnl_alg_kind_t algorithm,
    dnnl_engine_t engine);

// The primitive for `n` images of geometry `g` (a kernel's cached MakePoolPrimitive).
using PoolPrimitiveFn = std::function<absl::StatusOr<std::shared_ptr<const onednn::Primitive>>(
    const PoolGeometry& g, int64_t n)>;

// Pools `batch` images from `src` to `dst` on the context's pool: shards of whole images,
// or, when an NHWC batch is smaller than the pool (a batch of 1), bands of output rows
// (conv_row_bands.h: a band reads a contiguous band of input rows and keeps the
// padding of the image edges it touches, so max and average pools are exact).
absl::Status RunPool(OpKernelContext* ctx, const PoolGeometry& g, int64_t batch, bool nchw,
                     dnnl_engine_t engine, const PoolPrimitiveFn& primitive, const float* src,
                     float* dst);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_POOL_PRIMITIVE_H_
