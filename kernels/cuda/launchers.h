// Host-side entry points of the nvcc-compiled kernels (kernels/cuda/*.cu). Each enqueues
// on `stream` and returns cudaGetLastError() (launch errors only; execution errors surface
// on the stream later). Callers convert the result with DFLOW_CUDA_RETURN_IF_ERROR.
//
// Templates are explicitly instantiated in the .cu files for float, double, int32_t and
// int64_t (casts also from and to bool); the kernel registrations in *_kernels.cc restrict
// dtypes to what is instantiated.
// This header is shared by nvcc and the host compiler: CUDA runtime types only.
#ifndef DFLOW_KERNELS_CUDA_LAUNCHERS_H_
#define DFLOW_KERNELS_CUDA_LAUNCHERS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace dflow::cuda {

enum class UnaryOp {
  kNeg, kAbs, kSquare, kSqrt, kRsqrt, kExp, kLog, kRelu, kRelu6, kSigmoid, kTanh,
  // Activations and float math with kernels/cpu's formulas (activation_ops.cc,
  // math_unary_ops.cc); kRound is Round and Rint (half to even; integers unchanged).
  kElu, kSelu, kSoftsign, kSoftplus, kErf, kErfc, kRound
};
// kDivNoNan / kMulNoNan: 0 where y == 0, else x / y or x * y.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kSquaredDifference, kDivNoNan, kMulNoNan };
// IsNan, IsInf, IsFinite: bool outputs.
enum class PredicateOp { kIsNan, kIsInf, kIsFinite };
enum class ReduceOp { kSum, kMean, kMax };

// Output element i of a broadcast binary op, decomposed over `rank` collapsed dims:
// x's offset is sum(index[d] * x_strides[d]) (stride 0 where x is broadcast).
inline constexpr int kMaxBroadcastRank = 8;
struct BroadcastIndex {
  int rank = 1;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t x_strides[kMaxBroadcastRank] = {};
  int64_t y_strides[kMaxBroadcastRank] = {};
};

// Up to kMaxAddN input pointers for one AddN pass.
inline constexpr int kMaxAddN = 16;
template <typename T>
struct PointerArray {
  const T* ptrs[kMaxAddN] = {};
  int count = 0;
};

template <typename T>
cudaError_t LaunchUnary(UnaryOp op, const T* x, T* y, int64_t n, cudaStream_t stream);
// y = x > 0 ? x : x * alpha (LeakyRelu; alpha already rounded to T).
template <typename T>
cudaError_t LaunchLeakyRelu(const T* x, T* y, int64_t n, T alpha, cudaStream_t stream);
// Instantiated for float and double only.
template <typename T>
cudaError_t LaunchPredicate(PredicateOp op, const T* x, bool* y, int64_t n, cudaStream_t stream);
// REQUIRES: bcast.rank >= 1; z has prod(bcast.dims) = n elements.
template <typename T>
cudaError_t LaunchBinary(BinaryOp op, const T* x, const T* y, T* z, int64_t n,
                         const BroadcastIndex& bcast, cudaStream_t stream);
// out = sum(inputs) (+ out when `accumulate`).
template <typename T>
cudaError_t LaunchAddN(const PointerArray<T>& inputs, bool accumulate, T* out, int64_t n,
                       cudaStream_t stream);
// y[i] = x[i] + bias[(i / inner) % channels].
template <typename T>
cudaError_t LaunchBiasAdd(const T* x, const T* bias, T* y, int64_t n, int64_t channels,
                          int64_t inner, cudaStream_t stream);
template <typename Src, typename Dst>
cudaError_t LaunchCast(const Src* x, Dst* y, int64_t n, cudaStream_t stream);
// out[i] = *value (read on the device: `value` may be device or pinned host memory).
template <typename T>
cudaError_t LaunchFill(const T* value, T* out, int64_t n, cudaStream_t stream);
template <typename T>
cudaError_t LaunchFillConstant(T value, T* out, int64_t n, cudaStream_t stream);

// Reduces the middle dim of [outer, extent, inner] into out[outer, inner]. Sums
// accumulate in double (int64 for integers) per thread and per block, pairwise up the
// block tree, so 1e8 float elements keep ~1e-7 relative error. `divisor` > 0: the result
// is divided by it (Mean). `scratch` holds at least ReduceScratchElements(...) doubles
// (0 when one pass suffices). Any outer/extent/inner (int64) works: grids are capped and
// stride; a long reduced extent with few outputs is split across threads (two passes).
int64_t ReduceScratchElements(int64_t outer, int64_t extent, int64_t inner);
template <typename T>
cudaError_t LaunchReduce(ReduceOp op, const T* in, T* out, int64_t outer, int64_t extent,
                         int64_t inner, double divisor, double* scratch, cudaStream_t stream);
// Row-wise softmax of [rows, cols] (float).
cudaError_t LaunchSoftmax(const float* in, float* out, int64_t rows, int64_t cols,
                          cudaStream_t stream);

// NHWC image geometry for im2col and pooling.
struct WindowGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t window_h = 1, window_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};
// cols[(b*out_h*out_w + oh*out_w + ow), (kh*window_w + kw)*channels + c] for `batch`
// images starting at `in` (zero where the window hangs over the padding).
cudaError_t LaunchIm2Col(const float* in, float* cols, const WindowGeometry& g,
                         cudaStream_t stream);
// MaxPool (padding ignored) or AvgPool (divides by the in-image count, TF's rule).
cudaError_t LaunchPool(bool max_pool, const float* in, float* out, const WindowGeometry& g,
                       cudaStream_t stream);

// ---- Vision kernels (image_kernels.cu), float. ----

// DepthwiseConv2dNative: out channel c * multiplier + m of each pixel is the window of
// input channel c dotted with filter[:, :, c, m] (filter [window_h, window_w, channels,
// multiplier]). `g.channels` is the input depth; NHWC, or NCHW when `nchw`.
cudaError_t LaunchDepthwiseConv(const float* in, const float* filter, float* out,
                                const WindowGeometry& g, int64_t multiplier, bool nchw,
                                cudaStream_t stream);

// x seen as [outer, channels, inner] (channels last: inner = 1).
struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 0;
};
// y = (x - mean[c]) * (1 / sqrt(variance[c] + epsilon) * scale[c]) + offset[c].
cudaError_t LaunchBatchNormAffine(const float* x, const float* scale, const float* offset,
                                  const float* mean, const float* variance, float epsilon,
                                  float* y, const ChannelView& v, cudaStream_t stream);
// Training statistics, one block per channel, accumulated in double: batch_mean[c] and
// the biased batch_variance[c] (written to `batch_mean` / `batch_variance`), and the
// running averages (1 - f) * old + f * batch, the variance times n / (n - 1), into
// running_mean / running_variance (old_* unread when factor == 1).
// REQUIRES: v.outer * v.inner > 0.
cudaError_t LaunchBatchNormMoments(const float* x, const ChannelView& v, float factor,
                                   const float* old_mean, const float* old_variance,
                                   float* batch_mean, float* batch_variance, float* running_mean,
                                   float* running_variance, cudaStream_t stream);

// NHWC resize geometry; scales as kernels/cpu/resize_util.h's ResizeScale.
struct ResizeGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0, out_h = 0, out_w = 0;
  float height_scale = 0, width_scale = 0;
  bool align_corners = false, half_pixel_centers = false;
};
cudaError_t LaunchResizeBilinear(const float* in, float* out, const ResizeGeometry& g,
                                 cudaStream_t stream);
cudaError_t LaunchResizeBicubic(const float* in, float* out, const ResizeGeometry& g,
                                cudaStream_t stream);
// Instantiated for float, double, int32_t and int64_t.
template <typename T>
cudaError_t LaunchResizeNearest(const T* in, T* out, const ResizeGeometry& g, cudaStream_t stream);

}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_LAUNCHERS_H_
