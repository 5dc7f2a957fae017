// Device code of train_launchers.h: activation gradients, comparisons, selects, strided
// gathers and the tiled 2-D transpose, ArgMax, and the softmax cross-entropies.
// Element-wise kernels are grid-stride loops over int64 indices; row kernels give each
// row (or ArgMax output) one block and stride over rows when there are more than blocks.
#include <cmath>
#include <cstdint>

#include "kernels/cuda/train_launchers.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535 * 8;

inline int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

// One block per row, capped: the kernels stride over the remaining rows.
inline int RowBlocks(int64_t rows) {
  return static_cast<int>(rows < kMaxBlocks ? (rows > 0 ? rows : 1) : kMaxBlocks);
}

#define DFLOW_GRID_LOOP(i, n)                                                             \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// ---- Activation gradients ----

// TF's Selu constants, as activation_grad_ops.cc writes them.
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

__device__ inline float ExpOf(float x) { return expf(x); }
__device__ inline double ExpOf(double x) { return exp(x); }

// The CPU formulas, operation for operation (float and double compute in T there).
template <typename T, ActivationGradOp kOp>
__device__ T ApplyGrad(T a, T b, T alpha) {
  switch (kOp) {
    case ActivationGradOp::kRelu: return b > T(0) ? a : T(0);
    // A product, not a select: inf * 0 is NaN, as on the CPU.
    case ActivationGradOp::kRelu6: return a * T(b > T(0) && b < T(6) ? 1 : 0);
    case ActivationGradOp::kElu: return !(b < T(0)) ? a : (b + T(1)) * a;
    case ActivationGradOp::kSelu:
      return b < T(0) ? a * (b + static_cast<T>(kSeluScaleAlpha)) : a * static_cast<T>(kSeluScale);
    case ActivationGradOp::kLeakyRelu: return b > T(0) ? a : a * alpha;
    case ActivationGradOp::kSoftplus: return a / (ExpOf(-b) + T(1));
    case ActivationGradOp::kSoftsign: {
      const T d = (b < T(0) ? -b : b) + T(1);
      return a / (d * d);
    }
    case ActivationGradOp::kSigmoid: return b * a * (T(1) - a);  // a = y, b = dy
    case ActivationGradOp::kTanh: return b * (T(1) - a * a);
  }
  return a;
}

template <typename T, ActivationGradOp kOp>
__global__ void ActivationGradKernel(const T* a, const T* b, T* out, int64_t n, T alpha) {
  DFLOW_GRID_LOOP(i, n) out[i] = ApplyGrad<T, kOp>(a[i], b[i], alpha);
}

template <typename T, ActivationGradOp kOp>
cudaError_t Grad(const T* a, const T* b, T* out, int64_t n, T alpha, cudaStream_t stream) {
  ActivationGradKernel<T, kOp><<<Blocks(n), kThreads, 0, stream>>>(a, b, out, n, alpha);
  return cudaGetLastError();
}

// ---- Comparisons ----

template <typename T, CompareOp kOp>
__device__ bool Compare(T x, T y) {
  switch (kOp) {
    case CompareOp::kEqual: return x == y;
    case CompareOp::kNotEqual: return x != y;
    case CompareOp::kGreater: return x > y;
    case CompareOp::kGreaterEqual: return x >= y;
    case CompareOp::kLess: return x < y;
    case CompareOp::kLessEqual: return x <= y;
  }
  return false;
}

template <typename T, CompareOp kOp>
__global__ void CompareSameShapeKernel(const T* x, const T* y, bool* z, int64_t n) {
  DFLOW_GRID_LOOP(i, n) z[i] = Compare<T, kOp>(x[i], y[i]);
}

template <typename T, CompareOp kOp>
__global__ void CompareBroadcastKernel(const T* x, const T* y, bool* z, int64_t n,
                                       BroadcastIndex b) {
  DFLOW_GRID_LOOP(i, n) {
    int64_t rest = i, xo = 0, yo = 0;
    for (int d = b.rank - 1; d >= 0; --d) {
      const int64_t index = rest % b.dims[d];
      rest /= b.dims[d];
      xo += index * b.x_strides[d];
      yo += index * b.y_strides[d];
    }
    z[i] = Compare<T, kOp>(x[xo], y[yo]);
  }
}

template <typename T, CompareOp kOp>
cudaError_t CompareWith(const T* x, const T* y, bool* z, int64_t n, const BroadcastIndex& b,
                        cudaStream_t stream) {
  if (b.rank == 1 && b.x_strides[0] == 1 && b.y_strides[0] == 1) {
    CompareSameShapeKernel<T, kOp><<<Blocks(n), kThreads, 0, stream>>>(x, y, z, n);
  } else {
    CompareBroadcastKernel<T, kOp><<<Blocks(n), kThreads, 0, stream>>>(x, y, z, n, b);
  }
  return cudaGetLastError();
}

// ---- Selects and gathers (element types by size) ----

template <typename E>
__global__ void SelectRowsKernel(const bool* cond, const E* t, const E* e, E* out, int64_t n,
                                 int64_t row) {
  DFLOW_GRID_LOOP(i, n) out[i] = cond[i / row] ? t[i] : e[i];
}

template <typename E>
__global__ void SelectBroadcastKernel(const bool* cond, const E* t, const E* e, E* out,
                                      int64_t n, Select3Index s) {
  DFLOW_GRID_LOOP(i, n) {
    int64_t rest = i, co = 0, to = 0, eo = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      const int64_t index = rest % s.dims[d];
      rest /= s.dims[d];
      co += index * s.strides[0][d];
      to += index * s.strides[1][d];
      eo += index * s.strides[2][d];
    }
    out[i] = cond[co] ? t[to] : e[eo];
  }
}

template <typename E>
__global__ void GatherKernel(const E* in, E* out, int64_t n, GatherIndex g) {
  DFLOW_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0;
    for (int d = g.rank - 1; d >= 0; --d) {
      int64_t index = rest % g.dims[d];
      rest /= g.dims[d];
      if (g.mods[d] != g.dims[d]) index %= g.mods[d];
      offset += index * g.strides[d];
    }
    out[i] = in[offset];
  }
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threadIdx.y extent: each thread moves kTile / kTileRows

// Tiles of [rows, cols] go through shared memory (one padding column against bank
// conflicts) so the reads along cols and the writes along rows are both coalesced.
template <typename E>
__global__ void Transpose2DKernel(const E* in, E* out, int64_t batch, int64_t rows,
                                  int64_t cols) {
  __shared__ E tile[kTile][kTile + 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const E* src = in + b * rows * cols;
    E* dst = out + b * rows * cols;
    for (int64_t ty = blockIdx.y; ty < row_tiles; ty += gridDim.y) {
      for (int64_t tx = blockIdx.x; tx < col_tiles; tx += gridDim.x) {
        const int64_t c = tx * kTile + threadIdx.x;
        for (int k = threadIdx.y; k < kTile; k += kTileRows) {
          const int64_t r = ty * kTile + k;
          if (r < rows && c < cols) tile[k][threadIdx.x] = src[r * cols + c];
        }
        __syncthreads();
        const int64_t r = ty * kTile + threadIdx.x;
        for (int k = threadIdx.y; k < kTile; k += kTileRows) {
          const int64_t oc = tx * kTile + k;
          if (r < rows && oc < cols) dst[oc * rows + r] = tile[threadIdx.x][k];
        }
        __syncthreads();  // the tile is refilled by the next iteration
      }
    }
  }
}

// ---- ArgMax ----

// v != v is false for integers: one NaN test for every T.
template <typename T>
__device__ inline bool IsNan(T v) {
  return v != v;
}

// What a sequential "replace when strictly greater" scan needs from a set of elements:
// the element at the lowest index (the scan's start, which sticks when it is NaN), and
// the lowest index of the largest non-NaN value. Merging is associative and commutative,
// so any split of a row over threads reproduces the scan.
template <typename T>
struct ArgSummary {
  int64_t first;  // INT64_MAX when empty
  bool first_nan;
  int64_t best;  // -1 when no non-NaN element
  T best_value;
};

template <typename T>
__device__ ArgSummary<T> EmptySummary() {
  ArgSummary<T> s;
  s.first = INT64_MAX;
  s.first_nan = false;
  s.best = -1;
  s.best_value = T(0);
  return s;
}

template <typename T>
__device__ void TakeBest(ArgSummary<T>& s, T value, int64_t index) {
  if (s.best < 0 || value > s.best_value || (value == s.best_value && index < s.best)) {
    s.best = index;
    s.best_value = value;
  }
}

template <typename T>
__device__ void Add(ArgSummary<T>& s, T value, int64_t index) {
  if (index < s.first) {
    s.first = index;
    s.first_nan = IsNan(value);
  }
  if (!IsNan(value)) TakeBest(s, value, index);
}

template <typename T>
__device__ void Merge(ArgSummary<T>& a, const ArgSummary<T>& b) {
  if (b.first < a.first) {
    a.first = b.first;
    a.first_nan = b.first_nan;
  }
  if (b.best >= 0) TakeBest(a, b.best_value, b.best);
}

// The index the sequential scan ends on.
template <typename T>
__device__ int64_t ScanResult(const ArgSummary<T>& s) {
  return s.first_nan ? s.first : s.best;
}

// The CPU's lane count (reduction_ops.cc ArgOfRow): rows of at least 2 * kLanes elements
// are scanned as kLanes interleaved lanes, whose winners are then combined in lane order
// (ties and NaNs: the lower index), then the tail past the last full group of kLanes.
constexpr int kLanes = 16;
constexpr int kArgThreads = 256;  // a multiple of kLanes and a power of two

// One block per output. `lanes`: inner == 1 and len >= 2 * kLanes, the CPU's lane scan;
// otherwise one sequential scan over the whole row (the CPU's column and short-row path).
template <typename T, typename Index>
__global__ void ArgMaxBlockKernel(const T* in, Index* out, int64_t outputs, int64_t len,
                                  int64_t inner, bool lanes) {
  __shared__ ArgSummary<T> s[kArgThreads];
  const int t = threadIdx.x;
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    const T* row = in + (o / inner) * len * inner + o % inner;
    const int64_t lane_end = lanes ? len / kLanes * kLanes : len;
    // Thread t reads t, t + blockDim.x, ...: all in lane t % kLanes.
    ArgSummary<T> mine = EmptySummary<T>();
    for (int64_t i = t; i < lane_end; i += blockDim.x) Add(mine, row[i * inner], i);
    s[t] = mine;
    __syncthreads();
    if (lanes) {
      if (t < kLanes) {
        for (int k = t + kLanes; k < static_cast<int>(blockDim.x); k += kLanes) Merge(s[t], s[k]);
      }
    } else {
      for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) Merge(s[t], s[t + half]);
        __syncthreads();
      }
    }
    __syncthreads();
    if (t == 0) {
      int64_t best = ScanResult(s[0]);
      if (lanes) {
        T value = row[best * inner];
        for (int j = 1; j < kLanes; ++j) {
          const int64_t index = ScanResult(s[j]);
          const T v = row[index * inner];
          const bool tie = !(value > v) && !(v > value);  // NaN ties with everything
          if (v > value || (tie && index < best)) {
            value = v;
            best = index;
          }
        }
        for (int64_t l = lane_end; l < len; ++l) {
          const T v = row[l * inner];
          if (v > value) {
            value = v;
            best = l;
          }
        }
      }
      out[o] = static_cast<Index>(best);
    }
    __syncthreads();  // s is reused for the next output
  }
}

// One thread per output, scanning sequentially as the CPU's column path: coalesced across
// neighbouring outputs when inner > 1.
template <typename T, typename Index>
__global__ void ArgMaxColumnKernel(const T* in, Index* out, int64_t outputs, int64_t len,
                                   int64_t inner) {
  DFLOW_GRID_LOOP(o, outputs) {
    const T* p = in + (o / inner) * len * inner + o % inner;
    T best = p[0];
    int64_t index = 0;
    for (int64_t l = 1; l < len; ++l) {
      const T v = p[l * inner];
      if (v > best) {
        best = v;
        index = l;
      }
    }
    out[o] = static_cast<Index>(index);
  }
}

// ---- Softmax cross-entropies ----

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// The reduction of every thread's v, returned to every thread. blockDim.x is a multiple of
// 32; all threads of the block must call it.
template <typename Op>
__device__ float BlockReduce(float v, Op op, float* shared) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  __syncthreads();  // shared[] may still be read by a previous call
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
  __syncthreads();
  v = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w) v = op(v, shared[w]);
  return v;
}

// The row's max and sum(exp(f - max)), f[c] at f[c * col].
struct RowSoftmax {
  float max, sum;
};
__device__ RowSoftmax SoftmaxOfRow(const float* f, int64_t col, int64_t classes, float* shared) {
  float max = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) max = fmaxf(max, f[c * col]);
  max = BlockReduce(max, MaxOp(), shared);
  float sum = 0.f;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) sum += expf(f[c * col] - max);
  return {max, BlockReduce(sum, SumOp(), shared)};
}

// nn_grad_ops.cc SoftmaxXentOp: loss = sum(y * (log(sum) - shifted)),
// backprop = exp(shifted) / sum - y.
__global__ void SoftmaxXentKernel(const float* logits, const float* labels, float* loss,
                                  float* backprop, XentLayout l) {
  __shared__ float shared[32];
  for (int64_t r = blockIdx.x; r < l.batch; r += gridDim.x) {
    const float* f = logits + r * l.logits_row;
    const float* y = labels + r * l.labels_row;
    float* b = backprop + r * l.classes;
    const RowSoftmax s = SoftmaxOfRow(f, l.logits_col, l.classes, shared);
    const float log_sum = logf(s.sum);
    float total = 0.f;
    for (int64_t c = threadIdx.x; c < l.classes; c += blockDim.x) {
      const float shifted = f[c * l.logits_col] - s.max;
      const float label = y[c * l.labels_col];
      total += label * (log_sum - shifted);
      b[c] = expf(shifted) / s.sum - label;
    }
    total = BlockReduce(total, SumOp(), shared);
    if (threadIdx.x == 0) loss[r] = total;
  }
}

// nn_grad_ops.cc XentRow: loss = log(sum) - (f[label] - max),
// backprop = exp(f - max) / sum - onehot(label); NaN rows for invalid labels.
template <typename L>
__global__ void SparseXentKernel(const float* logits, const L* labels, float* loss,
                                 float* backprop, int64_t batch, int64_t classes) {
  __shared__ float shared[32];
  for (int64_t r = blockIdx.x; r < batch; r += gridDim.x) {
    const float* f = logits + r * classes;
    float* b = backprop + r * classes;
    const int64_t label = static_cast<int64_t>(labels[r]);
    const bool valid = label >= 0 && label < classes;
    const RowSoftmax s = SoftmaxOfRow(f, 1, classes, shared);
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
      b[c] = valid ? expf(f[c] - s.max) / s.sum - (c == label ? 1.f : 0.f) : NAN;
    }
    if (threadIdx.x == 0) loss[r] = valid ? logf(s.sum) - (f[label] - s.max) : NAN;
  }
}

// Threads per row: the classes rounded up to a warp multiple, at most kThreads.
inline int RowThreads(int64_t classes) {
  int threads = 32;
  while (threads < kThreads && threads < classes) threads *= 2;
  return threads;
}

}  // namespace

template <typename T>
cudaError_t LaunchActivationGrad(ActivationGradOp op, const T* a, const T* b, T* out, int64_t n,
                                 T alpha, cudaStream_t stream) {
  using G = ActivationGradOp;
  switch (op) {
    case G::kRelu: return Grad<T, G::kRelu>(a, b, out, n, alpha, stream);
    case G::kRelu6: return Grad<T, G::kRelu6>(a, b, out, n, alpha, stream);
    case G::kElu: return Grad<T, G::kElu>(a, b, out, n, alpha, stream);
    case G::kSelu: return Grad<T, G::kSelu>(a, b, out, n, alpha, stream);
    case G::kLeakyRelu: return Grad<T, G::kLeakyRelu>(a, b, out, n, alpha, stream);
    case G::kSoftplus: return Grad<T, G::kSoftplus>(a, b, out, n, alpha, stream);
    case G::kSoftsign: return Grad<T, G::kSoftsign>(a, b, out, n, alpha, stream);
    case G::kSigmoid: return Grad<T, G::kSigmoid>(a, b, out, n, alpha, stream);
    case G::kTanh: return Grad<T, G::kTanh>(a, b, out, n, alpha, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t LaunchCompare(CompareOp op, const T* x, const T* y, bool* z, int64_t n,
                          const BroadcastIndex& b, cudaStream_t stream) {
  switch (op) {
    case CompareOp::kEqual: return CompareWith<T, CompareOp::kEqual>(x, y, z, n, b, stream);
    case CompareOp::kNotEqual: return CompareWith<T, CompareOp::kNotEqual>(x, y, z, n, b, stream);
    case CompareOp::kGreater: return CompareWith<T, CompareOp::kGreater>(x, y, z, n, b, stream);
    case CompareOp::kGreaterEqual:
      return CompareWith<T, CompareOp::kGreaterEqual>(x, y, z, n, b, stream);
    case CompareOp::kLess: return CompareWith<T, CompareOp::kLess>(x, y, z, n, b, stream);
    case CompareOp::kLessEqual: return CompareWith<T, CompareOp::kLessEqual>(x, y, z, n, b, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename E>
cudaError_t LaunchSelectRows(const bool* cond, const E* t, const E* e, E* out, int64_t n,
                             int64_t row, cudaStream_t stream) {
  SelectRowsKernel<E><<<Blocks(n), kThreads, 0, stream>>>(cond, t, e, out, n, row);
  return cudaGetLastError();
}

template <typename E>
cudaError_t LaunchSelectBroadcast(const bool* cond, const E* t, const E* e, E* out, int64_t n,
                                  const Select3Index& index, cudaStream_t stream) {
  SelectBroadcastKernel<E><<<Blocks(n), kThreads, 0, stream>>>(cond, t, e, out, n, index);
  return cudaGetLastError();
}

template <typename E>
cudaError_t LaunchGather(const E* in, E* out, int64_t n, const GatherIndex& index,
                         cudaStream_t stream) {
  GatherKernel<E><<<Blocks(n), kThreads, 0, stream>>>(in, out, n, index);
  return cudaGetLastError();
}

template <typename E>
cudaError_t LaunchTranspose2D(const E* in, E* out, int64_t batch, int64_t rows, int64_t cols,
                              cudaStream_t stream) {
  auto cap = [](int64_t n) { return static_cast<unsigned>(n < 65535 ? (n > 0 ? n : 1) : 65535); };
  const dim3 grid(cap((cols + kTile - 1) / kTile), cap((rows + kTile - 1) / kTile), cap(batch));
  Transpose2DKernel<E><<<grid, dim3(kTile, kTileRows), 0, stream>>>(in, out, batch, rows, cols);
  return cudaGetLastError();
}

template <typename T, typename Index>
cudaError_t LaunchArgMax(const T* in, Index* out, int64_t outer, int64_t len, int64_t inner,
                         cudaStream_t stream) {
  const int64_t outputs = outer * inner;
  if (inner == 1 && len >= 2 * kLanes) {
    ArgMaxBlockKernel<T, Index><<<RowBlocks(outputs), kArgThreads, 0, stream>>>(
        in, out, outputs, len, inner, /*lanes=*/true);
  } else if (inner == 1 || outputs >= 4096 || len < 1024) {
    // Short rows, or enough outputs (columns) to fill the GPU with one thread each.
    ArgMaxColumnKernel<T, Index><<<Blocks(outputs), kThreads, 0, stream>>>(in, out, outputs,
                                                                          len, inner);
  } else {
    // Few long columns: a block per column.
    ArgMaxBlockKernel<T, Index><<<RowBlocks(outputs), kArgThreads, 0, stream>>>(
        in, out, outputs, len, inner, /*lanes=*/false);
  }
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxXent(const float* logits, const float* labels, float* loss,
                              float* backprop, const XentLayout& layout, cudaStream_t stream) {
  SoftmaxXentKernel<<<RowBlocks(layout.batch), RowThreads(layout.classes), 0, stream>>>(
      logits, labels, loss, backprop, layout);
  return cudaGetLastError();
}

template <typename L>
cudaError_t LaunchSparseSoftmaxXent(const float* logits, const L* labels, float* loss,
                                    float* backprop, int64_t batch, int64_t classes,
                                    cudaStream_t stream) {
  SparseXentKernel<L><<<RowBlocks(batch), RowThreads(classes), 0, stream>>>(
      logits, labels, loss, backprop, batch, classes);
  return cudaGetLastError();
}

#define DFLOW_INSTANTIATE_REAL(T)                                                          \
  template cudaError_t LaunchActivationGrad<T>(ActivationGradOp, const T*, const T*, T*,   \
                                               int64_t, T, cudaStream_t);
DFLOW_INSTANTIATE_REAL(float)
DFLOW_INSTANTIATE_REAL(double)

#define DFLOW_INSTANTIATE_NUMERIC(T)                                                       \
  template cudaError_t LaunchCompare<T>(CompareOp, const T*, const T*, bool*, int64_t,     \
                                        const BroadcastIndex&, cudaStream_t);              \
  template cudaError_t LaunchArgMax<T, int32_t>(const T*, int32_t*, int64_t, int64_t,      \
                                                int64_t, cudaStream_t);                    \
  template cudaError_t LaunchArgMax<T, int64_t>(const T*, int64_t*, int64_t, int64_t,      \
                                                int64_t, cudaStream_t);
DFLOW_INSTANTIATE_NUMERIC(float)
DFLOW_INSTANTIATE_NUMERIC(double)
DFLOW_INSTANTIATE_NUMERIC(int32_t)
DFLOW_INSTANTIATE_NUMERIC(int64_t)

#define DFLOW_INSTANTIATE_MOVE(E)                                                          \
  template cudaError_t LaunchSelectRows<E>(const bool*, const E*, const E*, E*, int64_t,   \
                                           int64_t, cudaStream_t);                         \
  template cudaError_t LaunchSelectBroadcast<E>(const bool*, const E*, const E*, E*,       \
                                                int64_t, const Select3Index&, cudaStream_t); \
  template cudaError_t LaunchGather<E>(const E*, E*, int64_t, const GatherIndex&,          \
                                       cudaStream_t);                                      \
  template cudaError_t LaunchTranspose2D<E>(const E*, E*, int64_t, int64_t, int64_t,       \
                                            cudaStream_t);
DFLOW_INSTANTIATE_MOVE(uint8_t)
DFLOW_INSTANTIATE_MOVE(uint16_t)
DFLOW_INSTANTIATE_MOVE(uint32_t)
DFLOW_INSTANTIATE_MOVE(uint64_t)

template cudaError_t LaunchSparseSoftmaxXent<int32_t>(const float*, const int32_t*, float*,
                                                      float*, int64_t, int64_t, cudaStream_t);
template cudaError_t LaunchSparseSoftmaxXent<int64_t>(const float*, const int64_t*, float*,
                                                      float*, int64_t, int64_t, cudaStream_t);

}  // namespace dflow::cuda
