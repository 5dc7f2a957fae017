// Reductions (Sum, Mean, Max over the middle dim of [outer, extent, inner]) and Softmax.
//
// Accuracy: sums accumulate in double (int64 for integers). Rows (inner == 1) are split
// across up to kMaxBlocksPerRow blocks; each thread sums a strided slice serially in
// double, the block combines its threads pairwise (a shared-memory tree), and a second
// kernel combines the blocks' partials of a row pairwise again. Over 1e8 floats the error
// is that of double arithmetic, far below float's resolution.
#include <cfloat>
#include <climits>
#include <cmath>

#include "kernels/cuda/launchers.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocksPerRow = 1024;
constexpr int64_t kElementsPerThread = 16;

template <typename T>
struct Accumulator {
  using Type = double;
};
template <>
struct Accumulator<int32_t> {
  using Type = int64_t;
};
template <>
struct Accumulator<int64_t> {
  using Type = int64_t;
};

template <typename A>
__device__ A Lowest() {
  return static_cast<A>(-INFINITY);
}
template <>
__device__ int64_t Lowest<int64_t>() {
  return LLONG_MIN;
}

template <typename A>
__device__ A Combine(bool max, A a, A b) {
  return max ? (a > b || isnan(static_cast<double>(a)) ? a : b) : a + b;
}

template <typename A>
__device__ A Identity(bool max) {
  return max ? Lowest<A>() : A(0);
}

// Pairwise tree over the block's threads; thread 0 gets the result.
template <typename A>
__device__ A BlockCombine(bool max, A value) {
  __shared__ A shared[kThreads];
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      shared[threadIdx.x] = Combine(max, shared[threadIdx.x], shared[threadIdx.x + width]);
    }
    __syncthreads();
  }
  return shared[0];
}

// Block (row, part) of a row reduction: partials[row * parts + part].
template <typename T, typename A>
__global__ void RowPartialKernel(bool max, const T* in, int64_t extent, int64_t parts,
                                 A* partials) {
  const int64_t row = blockIdx.x / parts, part = blockIdx.x % parts;
  const T* data = in + row * extent;
  A acc = Identity<A>(max);
  for (int64_t i = part * kThreads + threadIdx.x; i < extent; i += parts * kThreads) {
    acc = Combine<A>(max, acc, static_cast<A>(data[i]));
  }
  acc = BlockCombine<A>(max, acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// One block per row: combines the row's partials and writes the result.
template <typename T, typename A>
__global__ void RowFinishKernel(bool max, const A* partials, int64_t parts, double divisor,
                                T* out) {
  const A* row = partials + blockIdx.x * parts;
  A acc = Identity<A>(max);
  for (int64_t i = threadIdx.x; i < parts; i += kThreads) acc = Combine<A>(max, acc, row[i]);
  acc = BlockCombine<A>(max, acc);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = divisor > 0 ? static_cast<T>(static_cast<double>(acc) / divisor)
                                  : static_cast<T>(acc);
  }
}

// One thread per output of [outer, inner]: walks the extent with stride `inner`
// (neighbouring threads read neighbouring addresses).
template <typename T, typename A>
__global__ void ColumnKernel(bool max, const T* in, T* out, int64_t outer, int64_t extent,
                             int64_t inner, double divisor) {
  const int64_t total = outer * inner;
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < total;
       o += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const T* data = in + (o / inner) * extent * inner + o % inner;
    A acc = Identity<A>(max);
    for (int64_t r = 0; r < extent; ++r) acc = Combine<A>(max, acc, static_cast<A>(data[r * inner]));
    out[o] = divisor > 0 ? static_cast<T>(static_cast<double>(acc) / divisor) : static_cast<T>(acc);
  }
}

int64_t PartsPerRow(int64_t extent) {
  int64_t parts = (extent + kThreads * kElementsPerThread - 1) / (kThreads * kElementsPerThread);
  return parts < 1 ? 1 : (parts > kMaxBlocksPerRow ? kMaxBlocksPerRow : parts);
}

__global__ void SoftmaxKernel(const float* in, float* out, int64_t cols) {
  const float* x = in + blockIdx.x * cols;
  float* y = out + blockIdx.x * cols;
  float local_max = -INFINITY;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) local_max = fmaxf(local_max, x[i]);
  const float row_max = BlockCombine<double>(true, local_max);
  __syncthreads();
  double local_sum = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) local_sum += expf(x[i] - row_max);
  const double sum = BlockCombine<double>(false, local_sum);
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
    y[i] = static_cast<float>(expf(x[i] - row_max) / sum);
  }
}

}  // namespace

int64_t ReduceScratchElements(int64_t outer, int64_t extent, int64_t inner) {
  return inner == 1 ? outer * PartsPerRow(extent) : 0;
}

template <typename T>
cudaError_t LaunchReduce(ReduceOp op, const T* in, T* out, int64_t outer, int64_t extent,
                         int64_t inner, double divisor, double* scratch, cudaStream_t stream) {
  using A = typename Accumulator<T>::Type;
  static_assert(sizeof(A) == sizeof(double), "scratch is sized in doubles");
  const bool max = op == ReduceOp::kMax;
  if (op != ReduceOp::kMean) divisor = 0;
  if (outer == 0 || inner == 0) return cudaSuccess;
  if (inner == 1) {
    const int64_t parts = PartsPerRow(extent);
    A* partials = reinterpret_cast<A*>(scratch);
    RowPartialKernel<T, A><<<static_cast<unsigned>(outer * parts), kThreads, 0, stream>>>(
        max, in, extent, parts, partials);
    RowFinishKernel<T, A><<<static_cast<unsigned>(outer), kThreads, 0, stream>>>(
        max, partials, parts, divisor, out);
  } else {
    const int64_t total = outer * inner;
    const int64_t blocks = (total + kThreads - 1) / kThreads;
    ColumnKernel<T, A><<<static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8), kThreads,
                         0, stream>>>(max, in, out, outer, extent, inner, divisor);
  }
  return cudaGetLastError();
}

cudaError_t LaunchSoftmax(const float* in, float* out, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  SoftmaxKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(in, out, cols);
  return cudaGetLastError();
}

template cudaError_t LaunchReduce<float>(ReduceOp, const float*, float*, int64_t, int64_t,
                                         int64_t, double, double*, cudaStream_t);
template cudaError_t LaunchReduce<double>(ReduceOp, const double*, double*, int64_t, int64_t,
                                          int64_t, double, double*, cudaStream_t);
template cudaError_t LaunchReduce<int32_t>(ReduceOp, const int32_t*, int32_t*, int64_t, int64_t,
                                           int64_t, double, double*, cudaStream_t);
template cudaError_t LaunchReduce<int64_t>(ReduceOp, const int64_t*, int64_t*, int64_t, int64_t,
                                           int64_t, double, double*, cudaStream_t);

}  // namespace dflow::cuda
