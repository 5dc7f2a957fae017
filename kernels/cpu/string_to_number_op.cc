// StringToNumber: parses every string as TF 2.21 does (string_to_number_op.cc through
// tsl::strings::SafeStringToNumeric, which is absl's SimpleAtof/SimpleAtod/SimpleAtoi):
// surrounding ASCII whitespace skipped, one leading '+' allowed, floats accept "inf",
// "infinity", "nan" (any case), hex ("0x1A", "0x1.8p1") and overflow to +-inf; integers
// are base 10 only and fail on overflow. A failure is "StringToNumberOp could not correctly
// convert string: <string>", the string printed up to its first NUL as TF's c_str() does.
#include <cstdint>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

template <typename T>
bool Parse(absl::string_view s, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    return absl::SimpleAtof(s, out);
  } else if constexpr (std::is_same_v<T, double>) {
    return absl::SimpleAtod(s, out);
  } else {
    return absl::SimpleAtoi(s, out);
  }
}

class StringToNumberOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    const std::string* in = input.data<std::string>();
    const int64_t n = input.NumElements();
    auto convert = [&](auto zero) {
      using T = decltype(zero);
      T* out = output->data<T>();
      for (int64_t i = 0; i < n; ++i) {
        OP_REQUIRES(ctx, Parse<T>(in[i], &out[i]),
                    KernelError(*ctx, "StringToNumberOp could not correctly convert string: ",
                                in[i].c_str()));  // TF prints up to the first NUL
      }
    };
    switch (output->dtype()) {
      case DT_FLOAT: convert(float{}); break;
      case DT_DOUBLE: convert(double{}); break;
      case DT_INT32: convert(int32_t{}); break;
      case DT_INT64: convert(int64_t{}); break;
      case DT_UINT32: convert(uint32_t{}); break;
      case DT_UINT64: convert(uint64_t{}); break;
      default: ctx->SetStatus(KernelError(*ctx, "unsupported out_type"));
    }
  }
};

}  // namespace

absl::Status RegisterStringToNumberKernels(KernelRegistry* registry) {
  return registry->Register<StringToNumberOp>(CpuKernel("StringToNumber").TypeConstraint(
      "out_type", {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT32, DT_UINT64}));
}

}  // namespace dflow
