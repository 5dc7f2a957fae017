// Cumsum and Cumprod (x, axis; attrs exclusive, reverse), with TF 2.21's dtypes
// and texts (scan_ops.cc). The input is viewed as [outer, length, inner] around
// the axis; each outer slab keeps a running row of `inner` accumulators, so
// memory is read in order.
//
// Accumulation is sequential, as Eigen's CPU scan is, so float sums round
// exactly like TF's. Integers wrap on overflow (int32 max + 1 is int32 min in
// TF); half and bfloat16 round back after every step, as Eigen's types do.
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// Integer arithmetic in an unsigned type at least as wide as int, so it wraps,
// never UB.
template <typename T>
using Wide = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

struct SumReducer {
  template <typename T>
  static T Identity() {
    if constexpr (kIsHalfOrBfloat16<T>) {
      return T::FromFloat(0.0f);
    } else {
      return T(0);
    }
  }
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (kIsHalfOrBfloat16<T>) {
      return T::FromFloat(a.ToFloat() + b.ToFloat());
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(Wide<T>(a) + Wide<T>(b));
    } else {
      return a + b;
    }
  }
};

struct ProdReducer {
  template <typename T>
  static T Identity() {
    if constexpr (kIsHalfOrBfloat16<T>) {
      return T::FromFloat(1.0f);
    } else {
      return T(1);
    }
  }
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (kIsHalfOrBfloat16<T>) {
      return T::FromFloat(a.ToFloat() * b.ToFloat());
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(Wide<T>(a) * Wide<T>(b));
    } else {
      return a * b;
    }
  }
};

struct ScanGeometry {
  int64_t outer, length, inner;
  bool exclusive, reverse;
};

template <typename Reducer, typename T>
void Scan(OpKernelContext* ctx, const T* in, T* out, const ScanGeometry& g) {
  const int64_t slab = g.length * g.inner;
  ParallelForElements(ctx, g.outer, slab * 2 + 1, [&](int64_t first, int64_t end) {
    std::vector<T> acc(g.inner);
    for (int64_t o = first; o < end; ++o) {
      std::fill(acc.begin(), acc.end(), Reducer::template Identity<T>());
      for (int64_t step = 0; step < g.length; ++step) {
        const int64_t k = g.reverse ? g.length - 1 - step : step;
        const T* x = in + o * slab + k * g.inner;
        T* y = out + o * slab + k * g.inner;
        for (int64_t i = 0; i < g.inner; ++i) {
          if (g.exclusive) y[i] = acc[i];
          acc[i] = Reducer::Apply(acc[i], x[i]);
          if (!g.exclusive) y[i] = acc[i];
        }
      }
    }
  });
}

template <typename Reducer, typename T>
class ScanOp : public OpKernel {
 public:
  explicit ScanOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("exclusive", &exclusive_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    OP_REQUIRES(
        ctx, axis_t.shape().dims() == 0,
        KernelError(*ctx, "ScanOp: axis must be a scalar, not ", axis_t.shape().DebugString()));
    const int rank = input.shape().dims();
    const int64_t axis_arg = ReadIndices(axis_t)[0];
    const int64_t axis = axis_arg < 0 ? axis_arg + rank : axis_arg;
    // TF prints the axis after adding the rank to a negative one.
    OP_REQUIRES(ctx, axis >= 0 && axis < rank,
                KernelError(*ctx, "ScanOp: Expected scan axis in the range [", -rank, ", ", rank,
                            "), but got ", axis));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    if (input.NumElements() == 0) return;
    const int a = static_cast<int>(axis);
    const ScanGeometry geometry{DimProduct(input.shape(), 0, a), input.shape().dim_size(a),
                                DimProduct(input.shape(), a + 1, rank), exclusive_, reverse_};
    Scan<Reducer, T>(ctx, input.data<T>(), output->data<T>(), geometry);
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

template <typename T>
absl::Status RegisterScans(KernelRegistry* registry, DataType dtype) {
  using Cumsum = ScanOp<SumReducer, T>;
  using Cumprod = ScanOp<ProdReducer, T>;
  DFLOW_RETURN_IF_ERROR(registry->Register<Cumsum>(
      CpuKernel("Cumsum").TypeConstraint("T", {dtype}).TypeConstraint("Tidx", IndexTypes())));
  return registry->Register<Cumprod>(
      CpuKernel("Cumprod").TypeConstraint("T", {dtype}).TypeConstraint("Tidx", IndexTypes()));
}

}  // namespace

absl::Status RegisterScanKernels(KernelRegistry* registry) {
  // TF 2.21's CPU list (TF_CALL_NUMBER_TYPES): every real and complex type, no
  // bool.
  DFLOW_RETURN_IF_ERROR(RegisterScans<float>(registry, DT_FLOAT));
  DFLOW_RETURN_IF_ERROR(RegisterScans<double>(registry, DT_DOUBLE));
  DFLOW_RETURN_IF_ERROR(RegisterScans<int32_t>(registry, DT_INT32));
  DFLOW_RETURN_IF_ERROR(RegisterScans<int64_t>(registry, DT_INT64));
  DFLOW_RETURN_IF_ERROR(RegisterScans<int16_t>(registry, DT_INT16));
  DFLOW_RETURN_IF_ERROR(RegisterScans<int8_t>(registry, DT_INT8));
  DFLOW_RETURN_IF_ERROR(RegisterScans<uint8_t>(registry, DT_UINT8));
  DFLOW_RETURN_IF_ERROR(RegisterScans<uint16_t>(registry, DT_UINT16));
  DFLOW_RETURN_IF_ERROR(RegisterScans<uint32_t>(registry, DT_UINT32));
  DFLOW_RETURN_IF_ERROR(RegisterScans<uint64_t>(registry, DT_UINT64));
  DFLOW_RETURN_IF_ERROR(RegisterScans<Half>(registry, DT_HALF));
  DFLOW_RETURN_IF_ERROR(RegisterScans<Bfloat16>(registry, DT_BFLOAT16));
  DFLOW_RETURN_IF_ERROR(RegisterScans<std::complex<float>>(registry, DT_COMPLEX64));
  return RegisterScans<std::complex<double>>(registry, DT_COMPLEX128);
}

}  // namespace dflow
