// Element-wise kernels: unary (math and activations), LeakyRelu, IsNan/IsInf/IsFinite,
// broadcasting binary, AddN, BiasAdd, Cast, Fill.
// Grid-stride loops over int64 indices (tensors beyond 2^31 elements work).
#include <cmath>

#include "kernels/cuda/launchers.h"

namespace dflow::cuda {
namespace {

constexpr int kThreads = 256;

inline int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 * 8 ? (blocks > 0 ? blocks : 1) : 65535 * 8);
}

#define DFLOW_GRID_LOOP(i, n)                                                         \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Round half to even (Round, Rint); integers round to themselves (no trip through
// double, which would lose int64 precision).
__device__ inline float RoundHalfEven(float x) { return rintf(x); }
__device__ inline double RoundHalfEven(double x) { return rint(x); }
__device__ inline int32_t RoundHalfEven(int32_t x) { return x; }
__device__ inline int64_t RoundHalfEven(int64_t x) { return x; }

// TF's softplus threshold log(epsilon) + 2 (kernels/cpu/activation_ops.cc SoftplusFn).
__device__ inline double SoftplusThreshold(double) { return log(2.220446049250313e-16) + 2.0; }
__device__ inline float SoftplusThreshold(float) { return logf(1.1920928955078125e-7f) + 2.f; }

// x above -t, e^x below t, else log1p(e^x).
template <typename C>
__device__ C Softplus(C x) {
  const C t = SoftplusThreshold(x);
  if (x > -t) return x;
  const C e = exp(x);
  if (x < t) return e;
  return log1p(e);
}

// TF's Selu constants: scale * alpha folded into one, and scale.
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

template <typename T>
__device__ T ApplyUnary(UnaryOp op, T x) {
  switch (op) {
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return x < T(0) ? -x : x;
    case UnaryOp::kSquare: return x * x;
    case UnaryOp::kSqrt: return static_cast<T>(sqrt(static_cast<double>(x)));
    case UnaryOp::kRsqrt: return static_cast<T>(1.0 / sqrt(static_cast<double>(x)));
    case UnaryOp::kExp: return static_cast<T>(exp(static_cast<double>(x)));
    case UnaryOp::kLog: return static_cast<T>(log(static_cast<double>(x)));
    // NaN falls through to x in both, as on the CPU and in TF.
    case UnaryOp::kRelu: return x < T(0) ? T(0) : x;
    case UnaryOp::kRelu6: return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
    case UnaryOp::kSigmoid: return static_cast<T>(1.0 / (1.0 + exp(-static_cast<double>(x))));
    case UnaryOp::kTanh: return static_cast<T>(tanh(static_cast<double>(x)));
    case UnaryOp::kElu: {
      const double d = static_cast<double>(x);
      return d < 0 ? static_cast<T>(exp(d) - 1.0) : x;
    }
    case UnaryOp::kSelu: {
      const double d = static_cast<double>(x);
      return static_cast<T>(d < 0 ? kSeluScaleAlpha * (exp(d) - 1.0) : kSeluScale * d);
    }
    case UnaryOp::kSoftsign: {
      const double d = static_cast<double>(x);
      return static_cast<T>(d / (fabs(d) + 1.0));
    }
    case UnaryOp::kSoftplus: return static_cast<T>(Softplus<double>(static_cast<double>(x)));
    case UnaryOp::kErf: {
      const double d = static_cast<double>(x);
      return static_cast<T>(isinf(d) ? nan("") : erf(d));  // TF's double Erf: NaN at +-inf
    }
    case UnaryOp::kErfc: return static_cast<T>(erfc(static_cast<double>(x)));
    case UnaryOp::kRound: return RoundHalfEven(x);
  }
  return x;
}

// Float math in float (the double forms above are for the integer instantiations).
template <>
__device__ float ApplyUnary<float>(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return fabsf(x);
    case UnaryOp::kSquare: return x * x;
    case UnaryOp::kSqrt: return sqrtf(x);
    case UnaryOp::kRsqrt: return rsqrtf(x);
    case UnaryOp::kExp: return expf(x);
    case UnaryOp::kLog: return logf(x);
    case UnaryOp::kRelu: return x < 0.f ? 0.f : x;  // NaN stays NaN, as TF's relu
    case UnaryOp::kRelu6: return x < 0.f ? 0.f : (x > 6.f ? 6.f : x);
    case UnaryOp::kSigmoid: return 1.f / (1.f + expf(-x));
    case UnaryOp::kTanh: return tanhf(x);
    case UnaryOp::kElu: return x < 0.f ? expf(x) - 1.f : x;
    case UnaryOp::kSelu:
      return x < 0.f ? static_cast<float>(kSeluScaleAlpha) * (expf(x) - 1.f)
                     : static_cast<float>(kSeluScale) * x;
    case UnaryOp::kSoftsign: return x / (fabsf(x) + 1.f);
    case UnaryOp::kSoftplus: {
      const float t = SoftplusThreshold(x);
      if (x > -t) return x;
      const float e = expf(x);
      return x < t ? e : log1pf(e);
    }
    case UnaryOp::kErf: return erff(x);  // +-1 at +-inf, as TF's float Erf
    case UnaryOp::kErfc: return erfcf(x);
    case UnaryOp::kRound: return RoundHalfEven(x);
  }
  return x;
}

template <typename T>
__device__ T ApplyBinary(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::kAdd: return x + y;
    case BinaryOp::kSub: return x - y;
    case BinaryOp::kMul: return x * y;
    case BinaryOp::kDiv: return x / y;
    case BinaryOp::kMax: return x > y ? x : y;
    case BinaryOp::kMin: return x < y ? x : y;
    case BinaryOp::kSquaredDifference: return (x - y) * (x - y);
    case BinaryOp::kDivNoNan: return y == T(0) ? T(0) : x / y;
    case BinaryOp::kMulNoNan: return y == T(0) ? T(0) : x * y;
  }
  return x;
}

template <typename T>
__device__ bool ApplyPredicate(PredicateOp op, T x) {
  switch (op) {
    case PredicateOp::kIsNan: return isnan(x);
    case PredicateOp::kIsInf: return isinf(x);
    case PredicateOp::kIsFinite: return isfinite(x);
  }
  return false;
}

// The op is a template parameter so each kernel body is branch-free.
template <typename T, UnaryOp kOp>
__global__ void UnaryKernel(const T* x, T* y, int64_t n) {
  DFLOW_GRID_LOOP(i, n) y[i] = ApplyUnary<T>(kOp, x[i]);
}

template <typename T>
__global__ void LeakyReluKernel(const T* x, T* y, int64_t n, T alpha) {
  DFLOW_GRID_LOOP(i, n) {
    const T v = x[i];
    y[i] = v > T(0) ? v : v * alpha;  // NaN gives NaN * alpha = NaN, as on the CPU
  }
}

template <typename T, PredicateOp kOp>
__global__ void PredicateKernel(const T* x, bool* y, int64_t n) {
  DFLOW_GRID_LOOP(i, n) y[i] = ApplyPredicate<T>(kOp, x[i]);
}

template <typename T, BinaryOp kOp>
__global__ void BinarySameShapeKernel(const T* x, const T* y, T* z, int64_t n) {
  DFLOW_GRID_LOOP(i, n) z[i] = ApplyBinary<T>(kOp, x[i], y[i]);
}

template <typename T, BinaryOp kOp>
__global__ void BinaryBroadcastKernel(const T* x, const T* y, T* z, int64_t n,
                                      BroadcastIndex b) {
  DFLOW_GRID_LOOP(i, n) {
    int64_t rest = i, xo = 0, yo = 0;
    for (int d = b.rank - 1; d >= 0; --d) {
      const int64_t index = rest % b.dims[d];
      rest /= b.dims[d];
      xo += index * b.x_strides[d];
      yo += index * b.y_strides[d];
    }
    z[i] = ApplyBinary<T>(kOp, x[xo], y[yo]);
  }
}

template <typename T, UnaryOp kOp>
cudaError_t Unary(const T* x, T* y, int64_t n, cudaStream_t stream) {
  UnaryKernel<T, kOp><<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

template <typename T, BinaryOp kOp>
cudaError_t Binary(const T* x, const T* y, T* z, int64_t n, const BroadcastIndex& b,
                   cudaStream_t stream) {
  bool same = true;
  for (int d = 0; d < b.rank; ++d) same = same && b.x_strides[d] == b.y_strides[d];
  if (same && b.rank == 1 && b.x_strides[0] == 1) {
    BinarySameShapeKernel<T, kOp><<<Blocks(n), kThreads, 0, stream>>>(x, y, z, n);
  } else {
    BinaryBroadcastKernel<T, kOp><<<Blocks(n), kThreads, 0, stream>>>(x, y, z, n, b);
  }
  return cudaGetLastError();
}

template <typename T>
__global__ void AddNKernel(PointerArray<T> in, bool accumulate, T* out, int64_t n) {
  DFLOW_GRID_LOOP(i, n) {
    T sum = accumulate ? out[i] : T(0);
    for (int k = 0; k < in.count; ++k) sum += in.ptrs[k][i];
    out[i] = sum;
  }
}

template <typename T>
__global__ void BiasAddKernel(const T* x, const T* bias, T* y, int64_t n, int64_t channels,
                              int64_t inner) {
  DFLOW_GRID_LOOP(i, n) y[i] = x[i] + bias[(i / inner) % channels];
}

template <typename Src, typename Dst>
__global__ void CastKernel(const Src* x, Dst* y, int64_t n) {
  DFLOW_GRID_LOOP(i, n) y[i] = static_cast<Dst>(x[i]);
}

template <typename T>
__global__ void FillKernel(const T* value, T* out, int64_t n) {
  const T v = *value;
  DFLOW_GRID_LOOP(i, n) out[i] = v;
}

template <typename T>
__global__ void FillConstantKernel(T value, T* out, int64_t n) {
  DFLOW_GRID_LOOP(i, n) out[i] = value;
}

}  // namespace

template <typename T>
cudaError_t LaunchUnary(UnaryOp op, const T* x, T* y, int64_t n, cudaStream_t stream) {
  switch (op) {
    case UnaryOp::kNeg: return Unary<T, UnaryOp::kNeg>(x, y, n, stream);
    case UnaryOp::kAbs: return Unary<T, UnaryOp::kAbs>(x, y, n, stream);
    case UnaryOp::kSquare: return Unary<T, UnaryOp::kSquare>(x, y, n, stream);
    case UnaryOp::kSqrt: return Unary<T, UnaryOp::kSqrt>(x, y, n, stream);
    case UnaryOp::kRsqrt: return Unary<T, UnaryOp::kRsqrt>(x, y, n, stream);
    case UnaryOp::kExp: return Unary<T, UnaryOp::kExp>(x, y, n, stream);
    case UnaryOp::kLog: return Unary<T, UnaryOp::kLog>(x, y, n, stream);
    case UnaryOp::kRelu: return Unary<T, UnaryOp::kRelu>(x, y, n, stream);
    case UnaryOp::kRelu6: return Unary<T, UnaryOp::kRelu6>(x, y, n, stream);
    case UnaryOp::kSigmoid: return Unary<T, UnaryOp::kSigmoid>(x, y, n, stream);
    case UnaryOp::kTanh: return Unary<T, UnaryOp::kTanh>(x, y, n, stream);
    case UnaryOp::kElu: return Unary<T, UnaryOp::kElu>(x, y, n, stream);
    case UnaryOp::kSelu: return Unary<T, UnaryOp::kSelu>(x, y, n, stream);
    case UnaryOp::kSoftsign: return Unary<T, UnaryOp::kSoftsign>(x, y, n, stream);
    case UnaryOp::kSoftplus: return Unary<T, UnaryOp::kSoftplus>(x, y, n, stream);
    case UnaryOp::kErf: return Unary<T, UnaryOp::kErf>(x, y, n, stream);
    case UnaryOp::kErfc: return Unary<T, UnaryOp::kErfc>(x, y, n, stream);
    case UnaryOp::kRound: return Unary<T, UnaryOp::kRound>(x, y, n, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t LaunchLeakyRelu(const T* x, T* y, int64_t n, T alpha, cudaStream_t stream) {
  LeakyReluKernel<T><<<Blocks(n), kThreads, 0, stream>>>(x, y, n, alpha);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchPredicate(PredicateOp op, const T* x, bool* y, int64_t n, cudaStream_t stream) {
  switch (op) {
    case PredicateOp::kIsNan:
      PredicateKernel<T, PredicateOp::kIsNan><<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
      break;
    case PredicateOp::kIsInf:
      PredicateKernel<T, PredicateOp::kIsInf><<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
      break;
    case PredicateOp::kIsFinite:
      PredicateKernel<T, PredicateOp::kIsFinite><<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchBinary(BinaryOp op, const T* x, const T* y, T* z, int64_t n,
                         const BroadcastIndex& b, cudaStream_t stream) {
  switch (op) {
    case BinaryOp::kAdd: return Binary<T, BinaryOp::kAdd>(x, y, z, n, b, stream);
    case BinaryOp::kSub: return Binary<T, BinaryOp::kSub>(x, y, z, n, b, stream);
    case BinaryOp::kMul: return Binary<T, BinaryOp::kMul>(x, y, z, n, b, stream);
    case BinaryOp::kDiv: return Binary<T, BinaryOp::kDiv>(x, y, z, n, b, stream);
    case BinaryOp::kMax: return Binary<T, BinaryOp::kMax>(x, y, z, n, b, stream);
    case BinaryOp::kMin: return Binary<T, BinaryOp::kMin>(x, y, z, n, b, stream);
    case BinaryOp::kSquaredDifference:
      return Binary<T, BinaryOp::kSquaredDifference>(x, y, z, n, b, stream);
    case BinaryOp::kDivNoNan: return Binary<T, BinaryOp::kDivNoNan>(x, y, z, n, b, stream);
    case BinaryOp::kMulNoNan: return Binary<T, BinaryOp::kMulNoNan>(x, y, z, n, b, stream);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t LaunchAddN(const PointerArray<T>& inputs, bool accumulate, T* out, int64_t n,
                       cudaStream_t stream) {
  AddNKernel<T><<<Blocks(n), kThreads, 0, stream>>>(inputs, accumulate, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchBiasAdd(const T* x, const T* bias, T* y, int64_t n, int64_t channels,
                          int64_t inner, cudaStream_t stream) {
  BiasAddKernel<T><<<Blocks(n), kThreads, 0, stream>>>(x, bias, y, n, channels, inner);
  return cudaGetLastError();
}

template <typename Src, typename Dst>
cudaError_t LaunchCast(const Src* x, Dst* y, int64_t n, cudaStream_t stream) {
  CastKernel<Src, Dst><<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFill(const T* value, T* out, int64_t n, cudaStream_t stream) {
  FillKernel<T><<<Blocks(n), kThreads, 0, stream>>>(value, out, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchFillConstant(T value, T* out, int64_t n, cudaStream_t stream) {
  FillConstantKernel<T><<<Blocks(n), kThreads, 0, stream>>>(value, out, n);
  return cudaGetLastError();
}

#define DFLOW_INSTANTIATE_CWISE(T)                                                        \
  template cudaError_t LaunchUnary<T>(UnaryOp, const T*, T*, int64_t, cudaStream_t);       \
  template cudaError_t LaunchLeakyRelu<T>(const T*, T*, int64_t, T, cudaStream_t);         \
  template cudaError_t LaunchBinary<T>(BinaryOp, const T*, const T*, T*, int64_t,          \
                                       const BroadcastIndex&, cudaStream_t);               \
  template cudaError_t LaunchAddN<T>(const PointerArray<T>&, bool, T*, int64_t, cudaStream_t); \
  template cudaError_t LaunchBiasAdd<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, \
                                        cudaStream_t);                                     \
  template cudaError_t LaunchFill<T>(const T*, T*, int64_t, cudaStream_t);                 \
  template cudaError_t LaunchFillConstant<T>(T, T*, int64_t, cudaStream_t);                \
  DFLOW_INSTANTIATE_CASTS_FROM(T)

// Cast between every pair of float, double, int32, int64 and bool.
#define DFLOW_INSTANTIATE_CASTS_FROM(T)                                                    \
  template cudaError_t LaunchCast<T, float>(const T*, float*, int64_t, cudaStream_t);      \
  template cudaError_t LaunchCast<T, double>(const T*, double*, int64_t, cudaStream_t);    \
  template cudaError_t LaunchCast<T, int32_t>(const T*, int32_t*, int64_t, cudaStream_t);  \
  template cudaError_t LaunchCast<T, int64_t>(const T*, int64_t*, int64_t, cudaStream_t);  \
  template cudaError_t LaunchCast<T, bool>(const T*, bool*, int64_t, cudaStream_t);

DFLOW_INSTANTIATE_CWISE(float)
DFLOW_INSTANTIATE_CWISE(double)
DFLOW_INSTANTIATE_CWISE(int32_t)
DFLOW_INSTANTIATE_CWISE(int64_t)
DFLOW_INSTANTIATE_CASTS_FROM(bool)
template cudaError_t LaunchPredicate<float>(PredicateOp, const float*, bool*, int64_t, cudaStream_t);
template cudaError_t LaunchPredicate<double>(PredicateOp, const double*, bool*, int64_t,
                                             cudaStream_t);

}  // namespace dflow::cuda
