// Assert(condition, data...): nothing when condition is true; otherwise INVALID_ARGUMENT
// "assertion failed: [d0] [d1] ..." with each data tensor printed as TF 2.21's
// Tensor::SummarizeValue(summarize) does (logging_ops.cc): at most `summarize` elements
// (all when negative), nested "[..]" per dimension without separators, "..." where
// elements were left out, floats with TF's shortest round-trip %g, bools as 1/0, strings
// C-escaped.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

// TF's FloatToBuffer/DoubleToBuffer: %g with FLT_DIG (DBL_DIG) digits, or 3 (2) more
// when that does not read back as the same value; "nan" keeps its sign.
template <typename F>
std::string FormatFloat(F value) {
  constexpr bool kIsFloat = std::is_same_v<F, float>;
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.*g", kIsFloat ? FLT_DIG : DBL_DIG, value);
  const F parsed = kIsFloat ? std::strtof(buffer, nullptr) : std::strtod(buffer, nullptr);
  if (parsed != value) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", kIsFloat ? FLT_DIG + 3 : DBL_DIG + 2, value);
  }
  return buffer;
}

template <typename T>
std::string FormatElement(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return absl::CEscape(value);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>) {
    return FormatFloat(value.ToFloat());
  } else if constexpr (std::is_floating_point_v<T>) {
    return FormatFloat(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "1" : "0";
  } else {
    return absl::StrCat(value);  // int8 and uint8 print as numbers, as in TF
  }
}

// TF's PrintOneDim: the dimensions from `dim` inward, until `limit` elements are printed.
template <typename T>
void PrintDim(int dim, const TensorShape& shape, int64_t limit, const T* data, int64_t* index,
              std::string* out) {
  if (*index >= limit) return;
  const int64_t count = shape.dim_size(dim);
  if (dim == shape.dims() - 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (*index >= limit) {
        if (dim != 0) absl::StrAppend(out, "...");
        return;
      }
      if (i > 0) absl::StrAppend(out, " ");
      absl::StrAppend(out, FormatElement(data[(*index)++]));
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    const bool opened = *index < limit;
    if (opened) absl::StrAppend(out, "[");
    PrintDim(dim + 1, shape, limit, data, index, out);
    if (*index < limit || opened) absl::StrAppend(out, "]");
  }
}

template <typename T>
std::string SummarizeArray(const Tensor& t, int64_t limit) {
  const T* data = t.data<T>();
  std::string out;
  if (t.shape().dims() == 0) {
    if (limit > 0) out = FormatElement(data[0]);
  } else {
    int64_t index = 0;
    PrintDim(0, t.shape(), limit, data, &index, &out);
  }
  if (t.NumElements() > limit) absl::StrAppend(&out, "...");
  return out;
}

// TF's Tensor::SummarizeValue(max_entries, print_v2 = false).
std::string SummarizeValue(const Tensor& t, int64_t max_entries) {
  const int64_t n = t.NumElements();
  const int64_t limit = max_entries < 0 ? n : std::min(n, max_entries);
  std::string out = "<unprintable>";
  if (t.dtype() == DT_STRING) return SummarizeArray<std::string>(t, limit);
  DispatchNumericOrHalf(t.dtype(),
                        [&](auto zero) { out = SummarizeArray<decltype(zero)>(t, limit); });
  return out;
}

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("summarize", &summarize_));
  }
  // Only compares a scalar unless it fails.
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& condition = ctx->input(0);
    OP_REQUIRES(ctx, condition.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat("In[0] should be a scalar: ",
                                                        condition.shape().DebugString())));
    if (condition.scalar<bool>()) return;
    std::string message = "assertion failed: ";
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&message, "[", SummarizeValue(ctx->input(i), summarize_), "]",
                      i < ctx->num_inputs() - 1 ? " " : "");
    }
    ctx->SetStatus(absl::InvalidArgumentError(message));
  }

 private:
  int64_t summarize_ = 3;
};

}  // namespace

absl::Status RegisterAssertKernels(KernelRegistry* registry) {
  return registry->Register<AssertOp>(CpuKernel("Assert"));
}

}  // namespace dflow
