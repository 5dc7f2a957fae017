// StaticRegexReplace (pattern and rewrite attrs, compiled once) and RegexReplace
// (pattern and rewrite scalar inputs, compiled per step) on RE2, as TF 2.21's
// regex_replace_op.cc: RE2::GlobalReplace when replace_global, else RE2::Replace (first
// match only); rewrites use RE2's syntax (\0..\9, \\), and an invalid rewrite leaves the
// string as it is, as RE2 does. A bad pattern is "Invalid pattern: <p>, error: <RE2's>".
#include <algorithm>
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

// How often, in characters of growth, the output's size is checked while it is counted.
constexpr double kCheckEvery = 64.0 * (1 << 20);

// The length `rewrite` takes for one match: its text with each \N replaced by group N
// (RE2's rewrite syntax; `\\` is one backslash).
double RewriteLength(const std::string& rewrite, const re2::StringPiece* groups, int ngroups) {
  double length = 0;
  for (size_t i = 0; i < rewrite.size(); ++i) {
    if (rewrite[i] == '\\' && i + 1 < rewrite.size()) {
      const char next = rewrite[++i];
      const int group = next - '0';
      length += next >= '0' && next <= '9' && group < ngroups ? groups[group].size() : 1;
    } else {
      length += 1;
    }
  }
  return length;
}

// The length RE2::GlobalReplace (or Replace, the first match only) would give `text`,
// found by matching without building the result: a rewrite can make a string many
// times longer (every 'a' of 10 MB replaced by 4 KB), so the output is sized against the
// session's limits before it is made.
// `over_limit(length so far)` is asked every 64 MiB of growth, so a hostile rewrite stops
// the count early.
template <typename OverLimit>
double ReplacedLength(const std::string& text, const RE2& re, const std::string& rewrite,
                      bool global, OverLimit over_limit) {
  constexpr int kMaxGroups = 10;  // \0..\9
  const int ngroups = std::min(kMaxGroups, re.NumberOfCapturingGroups() + 1);
  re2::StringPiece groups[kMaxGroups];
  double length = static_cast<double>(text.size());
  double checked = length;
  size_t pos = 0;
  while (pos <= text.size() &&
         re.Match(text, pos, text.size(), RE2::UNANCHORED, groups, ngroups)) {
    length += RewriteLength(rewrite, groups, ngroups) - static_cast<double>(groups[0].size());
    if (!global) break;
    if (length - checked > kCheckEvery) {
      if (over_limit(length)) break;
      checked = length;
    }
    const size_t match_end = static_cast<size_t>(groups[0].data() - text.data()) + groups[0].size();
    pos = groups[0].empty() ? match_end + 1 : match_end;  // an empty match: step past it
  }
  return length;
}

void ReplaceAll(OpKernelContext* ctx, const RE2& re, const std::string& rewrite, bool global) {
  const Tensor& input = ctx->input(0);
  const std::string* in = input.data<std::string>();
  double total = 0, checked = 0;
  auto over_limit = [&](double length) {
    return !ctx->CheckStringLimits(input.shape(), total + length).ok();
  };
  for (int64_t i = 0; i < input.NumElements(); ++i) {
    total += ReplacedLength(in[i], re, rewrite, global, over_limit);
    // Between elements too, at the same 64 MiB cadence: not a check per element.
    if (total - checked > kCheckEvery) {
      if (over_limit(0)) break;
      checked = total;
    }
  }
  OP_REQUIRES_OK(ctx, ctx->CheckStringLimits(input.shape(), total));
  OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
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
