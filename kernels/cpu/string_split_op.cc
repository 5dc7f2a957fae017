// StringSplitV2: splits each string of a vector into a SparseTensor (indices [n, 2],
// values [n], dense shape [batch, max tokens]) with TF 2.21's SplitV2
// (string_split_op.cc), which follows Python's str.split: a non-empty sep splits at
// every occurrence (empty tokens kept, "" -> [""]); an empty sep splits on runs of ASCII
// whitespace (isspace) and drops leading/trailing ones ("" -> []). maxsplit > 0 stops
// after that many splits and keeps the rest as the last token (with whitespace
// splitting, the rest after the skipped whitespace, possibly ""); maxsplit 0 keeps the
// string whole.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

void SkipSpaces(std::string_view* text) {
  size_t i = 0;
  while (i < text->size() && IsSpace((*text)[i])) ++i;
  text->remove_prefix(i);
}

std::vector<std::string_view> SplitV2(std::string_view text, std::string_view sep,
                                      int64_t maxsplit) {
  std::vector<std::string_view> result;
  if (maxsplit == 0) {
    result.push_back(text);
    return result;
  }
  int64_t splits = 0;
  if (sep.empty()) {
    SkipSpaces(&text);
    while (!text.empty()) {
      size_t n = 0;
      while (n < text.size() && !IsSpace(text[n])) ++n;
      result.push_back(text.substr(0, n));
      text.remove_prefix(n);
      SkipSpaces(&text);
      if (maxsplit > 0 && ++splits == maxsplit) {
        result.push_back(text);
        return result;
      }
    }
    return result;
  }
  for (size_t p = text.find(sep); p != std::string_view::npos; p = text.find(sep)) {
    result.push_back(text.substr(0, p));
    text.remove_prefix(p + sep.size());
    if (maxsplit > 0 && ++splits == maxsplit) break;
  }
  result.push_back(text);
  return result;
}

class StringSplitV2Op : public OpKernel {
 public:
  explicit StringSplitV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("maxsplit", &maxsplit_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sep = ctx->input(1);
    OP_REQUIRES(ctx, input.shape().dims() == 1,
                KernelError(*ctx, "input must be a vector, got shape: ",
                            input.shape().DebugString()));
    OP_REQUIRES(ctx, sep.shape().dims() == 0,
                KernelError(*ctx, "sep must be a scalar, got shape: ", sep.shape().DebugString()));
    const int64_t batch = input.NumElements();
    const std::string* in = input.data<std::string>();
    const std::string_view separator = sep.scalar<std::string>();
    std::vector<std::vector<std::string_view>> parts(batch);
    int64_t total = 0, widest = 0;
    for (int64_t i = 0; i < batch; ++i) {
      parts[i] = SplitV2(in[i], separator, maxsplit_);
      total += static_cast<int64_t>(parts[i].size());
      widest = std::max<int64_t>(widest, parts[i].size());
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * indices, ctx->allocate_output(0, TensorShape({total, 2})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * values, ctx->allocate_output(1, TensorShape({total})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * shape, ctx->allocate_output(2, TensorShape({2})));
    int64_t* index = indices->data<int64_t>();
    std::string* value = values->data<std::string>();
    int64_t k = 0;
    for (int64_t i = 0; i < batch; ++i) {
      for (size_t j = 0; j < parts[i].size(); ++j, ++k) {
        index[2 * k] = i;
        index[2 * k + 1] = static_cast<int64_t>(j);
        value[k] = std::string(parts[i][j]);
      }
    }
    shape->data<int64_t>()[0] = batch;
    shape->data<int64_t>()[1] = widest;
  }

 private:
  int64_t maxsplit_ = -1;
};

}  // namespace

absl::Status RegisterStringSplitKernels(KernelRegistry* registry) {
  return registry->Register<StringSplitV2Op>(CpuKernel("StringSplitV2"));
}

}  // namespace dflow
