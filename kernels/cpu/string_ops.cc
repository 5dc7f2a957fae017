// StringLength, StringLower and StringUpper with TF 2.21's semantics
// (string_length_op.cc, string_lower_op.cc, string_upper_op.cc).
//  - StringLength counts bytes (unit "BYTE") or UTF-8 characters ("UTF8_CHAR": every
//    byte that is not a continuation byte 10xxxxxx, so broken sequences count as TF's do).
//  - StringLower/Upper with encoding "" change ASCII letters only; with "utf-8" they use
//    ICU's full, context-sensitive case mapping (final sigma, "ß" -> "SS", invalid bytes
//    -> U+FFFD), as TF does through icu::UnicodeString. ICU's root locale stands in for
//    the process default TF uses, so a Turkish LANG cannot change the result.
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "unicode/locid.h"
#include "unicode/unistr.h"

namespace dflow {
namespace {

class StringLengthOp : public OpKernel {
 public:
  explicit StringLengthOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string unit;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("unit", &unit));
    OP_REQUIRES(ctx, unit == "BYTE" || unit == "UTF8_CHAR",
                absl::InvalidArgumentError(absl::StrCat("Invalid char unit type: ", unit)));
    utf8_ = unit == "UTF8_CHAR";
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    const std::string* in = input.data<std::string>();
    int32_t* out = output->data<int32_t>();
    ParallelForElements(ctx, input.NumElements(), 64, [&](int64_t first, int64_t end) {
      for (int64_t i = first; i < end; ++i) {
        if (!utf8_) {
          out[i] = static_cast<int32_t>(in[i].size());
          continue;
        }
        int32_t chars = 0;
        for (unsigned char c : in[i]) chars += (c & 0xC0) != 0x80;
        out[i] = chars;
      }
    });
  }

 private:
  bool utf8_ = false;
};

template <bool kUpper>
class StringCaseOp : public OpKernel {
 public:
  explicit StringCaseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("encoding", &encoding_));
    OP_REQUIRES(ctx, encoding_.empty() || encoding_ == "utf-8",
                absl::InvalidArgumentError(absl::StrCat(
                    "only utf-8 or '' (no encoding) is supported, received ", encoding_)));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    const std::string* in = input.data<std::string>();
    std::string* out = output->data<std::string>();
    ParallelForElements(ctx, input.NumElements(), 256, [&](int64_t first, int64_t end) {
      for (int64_t i = first; i < end; ++i) {
        if (encoding_.empty()) {
          out[i] = kUpper ? absl::AsciiStrToUpper(in[i]) : absl::AsciiStrToLower(in[i]);
          continue;
        }
        icu::UnicodeString us(in[i].data(), static_cast<int32_t>(in[i].size()), "UTF-8");
        if (kUpper) {
          us.toUpper(icu::Locale::getRoot());
        } else {
          us.toLower(icu::Locale::getRoot());
        }
        out[i].clear();
        us.toUTF8String(out[i]);
      }
    });
  }

 private:
  std::string encoding_;
};

}  // namespace

absl::Status RegisterStringCaseLengthKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<StringLengthOp>(CpuKernel("StringLength")));
  DFLOW_RETURN_IF_ERROR(registry->Register<StringCaseOp<false>>(CpuKernel("StringLower")));
  return registry->Register<StringCaseOp<true>>(CpuKernel("StringUpper"));
}

}  // namespace dflow
