// Cast between every pair of numeric dtypes (bool included).
//
// Float to integer truncates toward zero, as in TF. Where TF's result is undefined
// behaviour in C++ (NaN or a value outside the target's range) we give a defined one:
// NaN becomes 0 and out-of-range values saturate at the target's limits. Anything to
// bool is `x != 0`; bool to anything is 0 or 1. The `Truncate` attr only matters for
// half/bfloat16, which this kernel does not cover, and is accepted and ignored.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/array_util.h"

namespace dflow {
namespace {

template <typename To, typename From>
To CastValue(From x) {
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

template <typename From, typename To>
void CastElements(OpKernelContext* ctx, const Tensor& input, const Tensor& output) {
  const From* src = input.data<From>();
  To* dst = output.data<To>();
  ParallelForElements(ctx, input.NumElements(), 2, [src, dst](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = CastValue<To>(src[i]);
  });
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("SrcT", &src_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("DstT", &dst_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (src_ == dst_) {
      ctx->set_output(0, input);
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    DispatchNumeric(src_, [&](auto from) {
      DispatchNumeric(
          dst_, [&](auto to) { CastElements<decltype(from), decltype(to)>(ctx, input, *output); });
    });
  }

 private:
  DataType src_ = DT_INVALID;
  DataType dst_ = DT_INVALID;
};

}  // namespace

absl::Status RegisterCastKernel(KernelRegistry* registry) {
  return registry->Register<CastOp>(CpuKernel("Cast")
                                        .TypeConstraint("SrcT", NumericTypes())
                                        .TypeConstraint("DstT", NumericTypes()));
}

}  // namespace dflow
