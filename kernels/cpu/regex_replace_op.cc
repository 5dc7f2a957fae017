// StaticRegexReplace (pattern and rewrite attrs, compiled once) and RegexReplace
// (pattern and rewrite scalar inputs, compiled per step) on RE2, as TF 2.21's
// regex_replace_op.cc: RE2::GlobalReplace when replace_global, else RE2::Replace (first
// match only); rewrites use RE2's syntax (\0..\9, \\), and an invalid rewrite leaves the
// string as it is, as RE2 does. A bad pattern is "Invalid pattern: <p>, error: <RE2's>".
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "re2/re2.h"

namespace dflow {
namespace {

// RE2's default options, minus its stderr logging of bad patterns.
std::unique_ptr<RE2> Compile(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  return std::make_unique<RE2>(pattern, options);
}

std::string InvalidPattern(const std::string& pattern, const RE2& re) {
  return absl::StrCat("Invalid pattern: ", pattern, ", error: ", re.error());
}

void ReplaceAll(OpKernelContext* ctx, const RE2& re, const std::string& rewrite, bool global) {
  const Tensor& input = ctx->input(0);
  OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
  const std::string* in = input.data<std::string>();
  std::string* out = output->data<std::string>();
  ParallelForElements(ctx, input.NumElements(), 1000, [&](int64_t first, int64_t end) {
    for (int64_t i = first; i < end; ++i) {
      out[i] = in[i];
      if (global) {
        RE2::GlobalReplace(&out[i], re, rewrite);
      } else {
        RE2::Replace(&out[i], re, rewrite);
      }
    }
  });
}

class StaticRegexReplaceOp : public OpKernel {
 public:
  explicit StaticRegexReplaceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string pattern;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("pattern", &pattern));
    re_ = Compile(pattern);
    OP_REQUIRES(ctx, re_->ok(), absl::InvalidArgumentError(InvalidPattern(pattern, *re_)));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("rewrite", &rewrite_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("replace_global", &global_));
  }

  void Compute(OpKernelContext* ctx) override { ReplaceAll(ctx, *re_, rewrite_, global_); }

 private:
  std::unique_ptr<RE2> re_;
  std::string rewrite_;
  bool global_ = true;
};

class RegexReplaceOp : public OpKernel {
 public:
  explicit RegexReplaceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("replace_global", &global_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& pattern = ctx->input(1);
    OP_REQUIRES(ctx, pattern.shape().dims() == 0,
                KernelError(*ctx, "Pattern must be scalar, but received ",
                            pattern.shape().DebugString()));
    const std::string& p = pattern.scalar<std::string>();
    const std::unique_ptr<RE2> re = Compile(p);
    OP_REQUIRES(ctx, re->ok(), KernelError(*ctx, InvalidPattern(p, *re)));
    const Tensor& rewrite = ctx->input(2);
    OP_REQUIRES(ctx, rewrite.shape().dims() == 0,
                KernelError(*ctx, "Rewrite must be scalar, but received ",
                            rewrite.shape().DebugString()));
    ReplaceAll(ctx, *re, rewrite.scalar<std::string>(), global_);
  }

 private:
  bool global_ = true;
};

}  // namespace

absl::Status RegisterRegexReplaceKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<StaticRegexReplaceOp>(CpuKernel("StaticRegexReplace")));
  return registry->Register<RegexReplaceOp>(CpuKernel("RegexReplace"));
}

}  // namespace dflow
