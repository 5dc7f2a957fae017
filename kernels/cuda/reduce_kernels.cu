// Reductions (Sum, Mean, Max over the middle dim of [outer, extent, inner]) and Softmax.
//
// Accuracy: sums accumulate in double (int64 for integers), so over 1e8 floats the error
// is that of double arithmetic, far below float's resolution.
//
// Two shapes of work:
//  - Long rows (inner == 1, extent >= kThreads): blocks of a row's `parts` each sum a
//    strided slice (threads serially in double, then the block pairwise through a
//    shared-memory tree); a second kernel combines a row's partials the same way.
//  - Everything else (columns, and short rows): threads own outputs; when there are too
//    few outputs to fill the GPU (Sum over axis 0 of [1e7, 8] has 8), the reduced extent
//    is cut into `parts` runs of rows, each thread sums one run into a double partial, and
//    the row kernel's second pass combines each output's partials.
// Every kernel loops grid-stride with int64 indexes over a capped grid, so no count of
// rows or outputs overflows gridDim (2^31 - 1) or a 32-bit index.
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/launchers.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocksPerRow = 1024;
constexpr int64_t kElementsPerThread = 16;
// Enough blocks to fill any GPU many times over; grid-stride loops cover the rest.
constexpr int64_t kMaxGrid = int64_t{65535} * 16;
// Column reductions split the extent until about this many threads run...
constexpr int64_t kColumnTargetThreads = int64_t{1} << 20;
// ...while each thread still sums at least this many rows.
constexpr int64_t kMinRowsPerPart = 32;

unsigned GridFor(int64_t blocks) {
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxGrid ? kMaxGrid : blocks));
}

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

// The output value: the accumulator, divided by `divisor` when it is > 0 (Mean). Integers
// as the CPU kernel does it: the sum wrapped to T, then int64 division (exact, and the
// same whether the sum took one pass or several).
template <typename T, typename A>
__device__ T Finish(A acc, double divisor) {
  if (!(divisor > 0)) return static_cast<T>(acc);
  if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(static_cast<int64_t>(static_cast<T>(acc)) /
                          static_cast<int64_t>(divisor));
  } else {
    return static_cast<T>(static_cast<double>(acc) / divisor);
  }
}

// Pairwise tree over the block's threads; every thread gets the result. Ends with a
// barrier so that a block may call it again (grid-stride loops) without a thread
// overwriting `shared` while another still reads the previous result.
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
  const A result = shared[0];
  __syncthreads();
  return result;
}

// Work item (row, part) of a long-row reduction, one block each: with one part the row's
// result goes to out[row], else to partials[row * parts + part].
template <typename T, typename A>
__global__ void RowPartialKernel(bool max, const T* in, int64_t rows, int64_t extent,
                                 int64_t parts, A* partials, double divisor, T* out) {
  for (int64_t item = blockIdx.x; item < rows * parts; item += gridDim.x) {
    const int64_t row = item / parts, part = item % parts;
    const T* data = in + row * extent;
    A acc = Identity<A>(max);
    for (int64_t i = part * kThreads + threadIdx.x; i < extent; i += parts * kThreads) {
      acc = Combine<A>(max, acc, static_cast<A>(data[i]));
    }
    acc = BlockCombine<A>(max, acc);
    if (threadIdx.x != 0) continue;
    if (parts == 1) {
      out[row] = Finish<T, A>(acc, divisor);
    } else {
      partials[item] = acc;
    }
  }
}

// One block per output: combines its `parts` partials (contiguous) and writes the result.
template <typename T, typename A>
__global__ void FinishKernel(bool max, const A* partials, int64_t outputs, int64_t parts,
                             double divisor, T* out) {
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    const A* mine = partials + o * parts;
    A acc = Identity<A>(max);
    for (int64_t i = threadIdx.x; i < parts; i += kThreads) acc = Combine<A>(max, acc, mine[i]);
    acc = BlockCombine<A>(max, acc);
    if (threadIdx.x == 0) out[o] = Finish<T, A>(acc, divisor);
  }
}

// One thread per (outer, part, inner): sums rows [part * rows_per_part, +rows_per_part)
// of column (outer, inner), walking with stride `inner` (neighbouring threads read
// neighbouring addresses). With one part the result goes to out[output], output =
// outer * inner + inner index, else to partials[output * parts + part].
template <typename T, typename A>
__global__ void ColumnPartialKernel(bool max, const T* in, int64_t outer, int64_t extent,
                                    int64_t inner, int64_t parts, int64_t rows_per_part,
                                    A* partials, double divisor, T* out) {
  const int64_t total = outer * parts * inner;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t i = t % inner, part = (t / inner) % parts, o = t / (inner * parts);
    const int64_t begin = part * rows_per_part;
    const int64_t end = begin + rows_per_part < extent ? begin + rows_per_part : extent;
    const T* data = in + o * extent * inner + i;
    A acc = Identity<A>(max);
    for (int64_t r = begin; r < end; ++r) acc = Combine<A>(max, acc, static_cast<A>(data[r * inner]));
    const int64_t output = o * inner + i;
    if (parts == 1) {
      out[output] = Finish<T, A>(acc, divisor);
    } else {
      partials[output * parts + part] = acc;
    }
  }
}

bool UseRowKernels(int64_t extent, int64_t inner) { return inner == 1 && extent >= kThreads; }

int64_t PartsPerRow(int64_t extent) {
  int64_t parts = (extent + kThreads * kElementsPerThread - 1) / (kThreads * kElementsPerThread);
  return parts < 1 ? 1 : (parts > kMaxBlocksPerRow ? kMaxBlocksPerRow : parts);
}

struct ColumnSplit {
  int64_t parts = 1;
  int64_t rows_per_part = 0;
};

// Enough parts for ~kColumnTargetThreads threads, none shorter than kMinRowsPerPart rows
// and none empty. outputs * parts <= kColumnTargetThreads whenever parts > 1.
ColumnSplit SplitColumns(int64_t outputs, int64_t extent) {
  ColumnSplit split;
  split.rows_per_part = extent;
  if (outputs <= 0 || outputs >= kColumnTargetThreads) return split;
  const int64_t by_threads = kColumnTargetThreads / outputs;
  const int64_t by_rows = (extent + kMinRowsPerPart - 1) / kMinRowsPerPart;
  const int64_t parts = by_threads < by_rows ? by_threads : by_rows;
  if (parts <= 1) return split;
  split.rows_per_part = (extent + parts - 1) / parts;
  split.parts = (extent + split.rows_per_part - 1) / split.rows_per_part;
  return split;
}

// One block per row, grid-stride over rows.
__global__ void SoftmaxKernel(const float* in, float* out, int64_t rows, int64_t cols) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* x = in + row * cols;
    float* y = out + row * cols;
    float local_max = -INFINITY;
    for (int64_t i = threadIdx.x; i < cols; i += kThreads) local_max = fmaxf(local_max, x[i]);
    const float row_max = BlockCombine<double>(true, local_max);
    double local_sum = 0;
    for (int64_t i = threadIdx.x; i < cols; i += kThreads) local_sum += expf(x[i] - row_max);
    const double sum = BlockCombine<double>(false, local_sum);
    for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
      y[i] = static_cast<float>(expf(x[i] - row_max) / sum);
    }
  }
}

}  // namespace

int64_t ReduceScratchElements(int64_t outer, int64_t extent, int64_t inner) {
  if (UseRowKernels(extent, inner)) {
    const int64_t parts = PartsPerRow(extent);
    return parts > 1 ? outer * parts : 0;
  }
  const ColumnSplit split = SplitColumns(outer * inner, extent);
  return split.parts > 1 ? outer * inner * split.parts : 0;
}

template <typename T>
cudaError_t LaunchReduce(ReduceOp op, const T* in, T* out, int64_t outer, int64_t extent,
                         int64_t inner, double divisor, double* scratch, cudaStream_t stream) {
  using A = typename Accumulator<T>::Type;
  static_assert(sizeof(A) == sizeof(double), "scratch is sized in doubles");
  const bool max = op == ReduceOp::kMax;
  if (op != ReduceOp::kMean) divisor = 0;
  if (outer == 0 || inner == 0) return cudaSuccess;
  A* partials = reinterpret_cast<A*>(scratch);
  if (UseRowKernels(extent, inner)) {
    const int64_t parts = PartsPerRow(extent);
    RowPartialKernel<T, A><<<GridFor(outer * parts), kThreads, 0, stream>>>(
        max, in, outer, extent, parts, partials, divisor, out);
    if (parts > 1) {
      FinishKernel<T, A><<<GridFor(outer), kThreads, 0, stream>>>(max, partials, outer, parts,
                                                                  divisor, out);
    }
    return cudaGetLastError();
  }
  const int64_t outputs = outer * inner;
  const ColumnSplit split = SplitColumns(outputs, extent);
  const int64_t threads = outputs * split.parts;
  ColumnPartialKernel<T, A><<<GridFor((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      max, in, outer, extent, inner, split.parts, split.rows_per_part, partials, divisor, out);
  if (split.parts > 1) {
    FinishKernel<T, A><<<GridFor(outputs), kThreads, 0, stream>>>(max, partials, outputs,
                                                                  split.parts, divisor, out);
  }
  return cudaGetLastError();
}

cudaError_t LaunchSoftmax(const float* in, float* out, int64_t rows, int64_t cols,
                          cudaStream_t stream) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  SoftmaxKernel<<<GridFor(rows), kThreads, 0, stream>>>(in, out, rows, cols);
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
