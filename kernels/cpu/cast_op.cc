// Cast between every pair of numeric dtypes (bool, half and bfloat16 included).
//
// Float to integer truncates toward zero, as in TF. Where TF's result is undefined
// behaviour in C++ (NaN or a value outside the target's range) we give a defined one:
// NaN becomes 0 and out-of-range values saturate at the target's limits (TF 2.21 on x86
// gives the minimum, or wraps, depending on where the element sits in the vector loop).
// Anything to bool is `x != 0` (NaN is true); bool to anything is 0 or 1.
//
// Half and bfloat16 go through float both ways, as Eigen's conversions do: an int32 or
// a double is first rounded to float, then to the 16-bit type (so 2^24 + 2^16 + 1 casts
// to bfloat16 2^24, not 2^24 + 2^17). `Truncate` (TF's LSBZeroSetter) zeroes the input's
// low mantissa bits before float -> half, double -> half, float -> bfloat16 and
// double -> float, so those round toward zero; TF ignores it for every other real pair,
// and so do we.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/array_util.h"

namespace dflow {
namespace {

// Between C++ arithmetic types (bool included).
template <typename To, typename From>
To CastNumber(From x) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> &&
                !std::is_same_v<To, bool>) {
    // The limits of To are powers of two (or 2^k - 1, which rounds up to 2^k), so these
    // comparisons are exact at the boundary.
    if (std::isnan(x)) return To{0};
    if (x <= static_cast<From>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    if (x >= static_cast<From>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
  }
  return static_cast<To>(x);
}

// Between any two element types: half and bfloat16 through float.
template <typename To, typename From>
To CastValue(From x) {
  if constexpr (kIsHalfOrBfloat16<From>) {
    return CastValue<To>(x.ToFloat());
  } else if constexpr (kIsHalfOrBfloat16<To>) {
    return To::FromFloat(static_cast<float>(x));
  } else {
    return CastNumber<To>(x);
  }
}

// How many low mantissa bits `Truncate` zeroes for From -> To: the bits From has and To
// lacks, for the real casts TF applies it to (its LSBZeroSetter; checked with TF 2.21:
// double 0.1 -> float with Truncate is 0x3dcccccc, without 0x3dcccccd); 0 otherwise.
template <typename To, typename From>
constexpr int TruncatedBits() {
  if constexpr (std::is_same_v<To, Half> && std::is_same_v<From, float>) return 24 - 11;
  if constexpr (std::is_same_v<To, Half> && std::is_same_v<From, double>) return 53 - 11;
  if constexpr (std::is_same_v<To, Bfloat16> && std::is_same_v<From, float>) return 24 - 8;
  if constexpr (std::is_same_v<To, float> && std::is_same_v<From, double>) return 53 - 24;
  return 0;
}

// `x` with its low `bits` bits zeroed; NaN unchanged (TF leaves NaN to the rounding cast).
// The NaN case picks the mask rather than returning early: GCC 12.2 at -O1 (the ASan
// build) drops the masking when a float PHI joins an early `return x` with the masked
// value (reproduced outside dflow; -O0, -O2 and -O3 are right), and float -> bfloat16
// then rounded instead of truncating.
template <typename From>
From ZeroLowBits(From x, int bits) {
  using Bits = std::conditional_t<sizeof(From) == 4, uint32_t, uint64_t>;
  Bits raw;
  std::memcpy(&raw, &x, sizeof(raw));
  raw &= std::isnan(x) ? ~Bits{0} : ~((Bits{1} << bits) - 1);
  From out;
  std::memcpy(&out, &raw, sizeof(out));
  return out;
}

template <typename From, typename To>
void CastElements(OpKernelContext* ctx, const Tensor& input, const Tensor& output,
                  bool truncate) {
  const From* src = input.data<From>();
  To* dst = output.data<To>();
  constexpr int kTruncatedBits = TruncatedBits<To, From>();
  if constexpr (kTruncatedBits > 0) {
    if (truncate) {
      ParallelForElements(ctx, input.NumElements(), 3, [src, dst](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          dst[i] = CastValue<To>(ZeroLowBits(src[i], kTruncatedBits));
        }
      });
      return;
    }
  }
  ParallelForElements(ctx, input.NumElements(), 2, [src, dst](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = CastValue<To>(src[i]);
  });
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("SrcT", &src_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("DstT", &dst_));
    if (ctx->HasAttr("Truncate")) OP_REQUIRES_OK(ctx, ctx->GetAttr("Truncate", &truncate_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (src_ == dst_) {
      ctx->set_output(0, input);
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    DispatchNumericOrHalf(src_, [&](auto from) {
      DispatchNumericOrHalf(dst_, [&](auto to) {
        CastElements<decltype(from), decltype(to)>(ctx, input, *output, truncate_);
      });
    });
  }

 private:
  DataType src_ = DT_INVALID;
  DataType dst_ = DT_INVALID;
  bool truncate_ = false;
};

}  // namespace

absl::Status RegisterCastKernel(KernelRegistry* registry) {
  return registry->Register<CastOp>(CpuKernel("Cast")
                                        .TypeConstraint("SrcT", NumericOrHalfTypes())
                                        .TypeConstraint("DstT", NumericOrHalfTypes()));
}

}  // namespace dflow
