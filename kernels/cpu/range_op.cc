// Range(start, limit, delta): the sequence start, start + delta, ... up to (not
// including) limit, with TF 2.21's size formula, element formula and error
// texts (sequence_ops.cc):
//  - integers: size = ceil(|limit - start| / |delta|), computed in unsigned
//  arithmetic so
//    extreme ranges (int64 min to max) get their true size, and element i is
//    start + i * delta wrapping like TF's two's-complement arithmetic;
//  - floats: size = ceil(|(limit - start) / delta|) in T, element i is start +
//  T(i) * delta
//    (not a running sum, which drifts); half and bfloat16 round after every
//    operation as Eigen's types do.
// A size beyond int64 fails cleanly before anything is allocated.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// Element arithmetic: native for float/double/integers, through float for
// 16-bit floats.
template <typename T>
float ToFloat(T v) {
  return v.ToFloat();
}
template <typename T>
T Round(float v) {
  return T::FromFloat(v);
}

template <typename T>
bool IsZero(T v) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return ToFloat(v) == 0.0f;
  } else {
    return v == T(0);
  }
}

// The value as TF's error messages print it.
template <typename T>
auto Printable(T v) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return ToFloat(v);
  } else {
    return v;
  }
}

// TF accepts scalars and, for legacy graphs, length-1 vectors.
absl::Status CheckScalarLike(const OpKernelContext& ctx, const Tensor& t, const char* name) {
  const TensorShape& s = t.shape();
  if (s.dims() == 0 || (s.dims() == 1 && s.dim_size(0) == 1)) return absl::OkStatus();
  return KernelError(ctx, name, " must be a scalar, not shape ", s.DebugString());
}

// "Requires start <= limit when delta > 0" and its mirror; NaNs fail them as in
// TF.
template <typename T>
absl::Status CheckDirection(const OpKernelContext& ctx, T start, T limit, T delta) {
  if (IsZero(delta)) return KernelError(ctx, "Requires delta != 0: ", Printable(delta));
  const auto s = Printable(start), l = Printable(limit), d = Printable(delta);
  if (d > 0) {
    if (!(s <= l)) return KernelError(ctx, "Requires start <= limit when delta > 0: ", s, "/", l);
  } else if (!(s >= l)) {
    return KernelError(ctx, "Requires start >= limit when delta < 0: ", s, "/", l);
  }
  return absl::OkStatus();
}

absl::Status SizeTooLarge(const OpKernelContext& ctx) {
  return KernelError(ctx,
                     "Requires ((limit - start) / delta) <= ", std::numeric_limits<int64_t>::max());
}

template <typename T>
absl::StatusOr<int64_t> IntegerSize(const OpKernelContext& ctx, T start, T limit, T delta) {
  using U = std::make_unsigned_t<T>;
  // The distance and |delta| both fit U even for the extreme values of T.
  const U distance = start <= limit ? U(U(limit) - U(start)) : U(U(start) - U(limit));
  const U step = delta > 0 ? U(delta) : U(U(0) - U(delta));
  const uint64_t size = distance / step + (distance % step != 0 ? 1 : 0);
  if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return SizeTooLarge(ctx);
  return static_cast<int64_t>(size);
}

template <typename T>
absl::StatusOr<int64_t> FloatSize(const OpKernelContext& ctx, T start, T limit, T delta) {
  double size;
  if constexpr (kIsHalfOrBfloat16<T>) {
    const T span = Round<T>(ToFloat(limit) - ToFloat(start));
    size = std::ceil(std::fabs(ToFloat(Round<T>(ToFloat(span) / ToFloat(delta)))));
  } else {
    size = std::ceil(std::fabs((limit - start) / delta));  // in T, as TF does
  }
  // TF compares against int64 max converted to T, i.e. 2^63, and then casts:
  // exactly 2^63 passes the check and becomes int64 min (x86), which the shape
  // check rejects.
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(size <= kTwo63)) return SizeTooLarge(ctx);
  if (size == kTwo63) {
    return KernelError(ctx, "Expected a non-negative size, got ",
                       std::numeric_limits<int64_t>::min());
  }
  return static_cast<int64_t>(size);
}

template <typename T>
void FillRange(OpKernelContext* ctx, T start, T delta, int64_t size, T* out) {
  ParallelForElements(ctx, size, 2, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        out[i] = static_cast<T>(U(start) + U(i) * U(delta));  // wraps like TF
      } else if constexpr (kIsHalfOrBfloat16<T>) {
        const T scaled = Round<T>(ToFloat(Round<T>(static_cast<float>(i))) * ToFloat(delta));
        out[i] = Round<T>(ToFloat(start) + ToFloat(scaled));
      } else {
        out[i] = start + static_cast<T>(i) * delta;
      }
    }
  });
}

template <typename T>
class RangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckScalarLike(*ctx, ctx->input(0), "start"));
    OP_REQUIRES_OK(ctx, CheckScalarLike(*ctx, ctx->input(1), "limit"));
    OP_REQUIRES_OK(ctx, CheckScalarLike(*ctx, ctx->input(2), "delta"));
    const T start = ctx->input(0).data<T>()[0];
    const T limit = ctx->input(1).data<T>()[0];
    const T delta = ctx->input(2).data<T>()[0];
    OP_REQUIRES_OK(ctx, CheckDirection(*ctx, start, limit, delta));
    absl::StatusOr<int64_t> size;
    if constexpr (std::is_integral_v<T>) {
      size = IntegerSize(*ctx, start, limit, delta);
    } else {
      size = FloatSize(*ctx, start, limit, delta);
    }
    OP_REQUIRES_OK(ctx, size.status());
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, {*size}));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    FillRange<T>(ctx, start, delta, *size, output->data<T>());
  }
};

template <typename T>
absl::Status RegisterRange(KernelRegistry* registry) {
  // start, limit and delta are read on the host (TF's HostMemory on every
  // device).
  return registry->Register<RangeOp<T>>(CpuKernel("Range").TypeConstraint<T>("Tidx"));
}

}  // namespace

absl::Status RegisterRangeKernels(KernelRegistry* registry) {
  // TF 2.21's CPU list: float, double, int32, int64, half, bfloat16 (not
  // int8/int16).
  DFLOW_RETURN_IF_ERROR(RegisterRange<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRange<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRange<int32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRange<int64_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRange<Half>(registry));
  return RegisterRange<Bfloat16>(registry);
}

}  // namespace dflow
