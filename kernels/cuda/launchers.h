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

enum class UnaryOp { kNeg, kAbs, kSquare, kSqrt, kRsqrt, kExp, kLog, kRelu, kRelu6, kSigmoid, kTanh };
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kSquaredDifference };
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

}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_LAUNCHERS_H_
