// AsString: every element formatted through printf, as TF 2.21's as_string_op.cc does.
// The constructor builds TF's format "%[fill][width][.precision]<conv>" (fill is one of
// the printf flags ' ', '+', '-', '0', '#'; conv u/llu/d/lld for integers, f/e/g for the
// floats by scientific/shortest), wrapped as "(%..,%..)" for complex. Half and bfloat16
// print as float; bool is "true"/"false" whatever the attrs; strings pass through unchanged
// unless width > 0, then "%[fill][width][.precision]s". Variant is not supported here.
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"

namespace dflow {
namespace {

template <typename... Args>
std::string Format(const std::string& format, Args... args) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), format.c_str(), args...);
  if (n < 0) return std::string();
  if (n < static_cast<int>(sizeof(buf))) return std::string(buf, n);
  std::string out(n + 1, '\0');
  std::snprintf(out.data(), out.size(), format.c_str(), args...);
  out.resize(n);
  return out;
}

class AsStringOp : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("T", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("precision", &precision));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("scientific", &scientific));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shortest", &shortest));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("width", &width));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("fill", &fill));
    if (dtype_ != DT_STRING && !IsFloatOrComplex(dtype_)) {
      OP_REQUIRES(ctx, !(scientific || shortest),
                  absl::InvalidArgumentError(
                      absl::StrCat("scientific and shortest format not supported for datatype ",
                                   DataTypeString(dtype_))));
      OP_REQUIRES(ctx, precision < 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "precision not supported for datatype ", DataTypeString(dtype_))));
    }
    OP_REQUIRES(ctx, fill.size() <= 1,
                absl::InvalidArgumentError("Fill string must be one or fewer characters"));
    OP_REQUIRES(ctx, !(scientific && shortest),
                absl::InvalidArgumentError("Cannot select both scientific and shortest notation"));
    width_ = width;
    format_ = "%";
    if (!fill.empty()) {
      const char f = fill[0];
      OP_REQUIRES(ctx, f == ' ' || f == '+' || f == '-' || f == '0' || f == '#',
                  absl::InvalidArgumentError(
                      absl::StrCat("Fill argument not supported: \"", fill, "\"")));
      format_ += f;
    }
    if (width > -1) absl::StrAppend(&format_, width);
    if (precision > -1) absl::StrAppend(&format_, ".", precision);
    switch (dtype_) {
      case DT_UINT8:
      case DT_UINT16:
      case DT_UINT32: format_ += "u"; break;
      case DT_UINT64: format_ += "llu"; break;
      case DT_INT8:
      case DT_INT16:
      case DT_INT32: format_ += "d"; break;
      case DT_INT64: format_ += "lld"; break;
      case DT_BOOL: break;
      case DT_STRING: format_ += "s"; break;
      default:
        OP_REQUIRES(ctx, IsFloatOrComplex(dtype_),
                    absl::InvalidArgumentError(
                        absl::StrCat("Type not supported: ", DataTypeString(dtype_))));
        format_ += shortest ? "g" : scientific ? "e" : "f";
    }
    if (dtype_ == DT_COMPLEX64 || dtype_ == DT_COMPLEX128) {
      format_ = absl::StrCat("(", format_, ",", format_, ")");
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (dtype_ == DT_STRING && width_ <= 0) {  // TF forwards strings unless padded
      ctx->set_output(0, input);
      return;
    }
    // Each element is at least `width` characters: count them against the session's
    // limits before making them (a width of 2^31 failed inside std::string).
    if (width_ > 0) {
      OP_REQUIRES_OK(ctx, ctx->CheckStringLimits(input.shape(),
                                                 static_cast<double>(input.NumElements()) *
                                                     static_cast<double>(width_)));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    std::string* out = output->data<std::string>();
    const int64_t n = input.NumElements();
    auto each = [&](auto convert) {
      ParallelForElements(ctx, n, 200, [&](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) out[i] = convert(i);
      });
    };
    const std::string& f = format_;
    switch (dtype_) {
      case DT_UINT8:
        each([&](int64_t i) { return Format(f, unsigned{input.data<uint8_t>()[i]}); });
        break;
      case DT_UINT16:
        each([&](int64_t i) { return Format(f, unsigned{input.data<uint16_t>()[i]}); });
        break;
      case DT_UINT32: each([&](int64_t i) { return Format(f, input.data<uint32_t>()[i]); }); break;
      case DT_UINT64:
        each([&](int64_t i) {
          return Format(f, static_cast<unsigned long long>(input.data<uint64_t>()[i]));  // NOLINT
        });
        break;
      case DT_INT8: each([&](int64_t i) { return Format(f, int{input.data<int8_t>()[i]}); }); break;
      case DT_INT16:
        each([&](int64_t i) { return Format(f, int{input.data<int16_t>()[i]}); });
        break;
      case DT_INT32: each([&](int64_t i) { return Format(f, input.data<int32_t>()[i]); }); break;
      case DT_INT64:
        each([&](int64_t i) {
          return Format(f, static_cast<long long>(input.data<int64_t>()[i]));  // NOLINT
        });
        break;
      case DT_BOOL:
        each([&](int64_t i) { return std::string(input.data<bool>()[i] ? "true" : "false"); });
        break;
      case DT_STRING:
        each([&](int64_t i) { return Format(f, input.data<std::string>()[i].c_str()); });
        break;
      case DT_HALF:
        each([&](int64_t i) { return Format(f, double{input.data<Half>()[i].ToFloat()}); });
        break;
      case DT_BFLOAT16:
        each([&](int64_t i) { return Format(f, double{input.data<Bfloat16>()[i].ToFloat()}); });
        break;
      case DT_FLOAT:
        each([&](int64_t i) { return Format(f, double{input.data<float>()[i]}); });
        break;
      case DT_DOUBLE: each([&](int64_t i) { return Format(f, input.data<double>()[i]); }); break;
      case DT_COMPLEX64: {
        const float* c = static_cast<const float*>(input.raw_data());
        each([&](int64_t i) { return Format(f, double{c[2 * i]}, double{c[2 * i + 1]}); });
        break;
      }
      case DT_COMPLEX128: {
        const double* c = static_cast<const double*>(input.raw_data());
        each([&](int64_t i) { return Format(f, c[2 * i], c[2 * i + 1]); });
        break;
      }
      default:
        ctx->SetStatus(KernelError(*ctx, "Type not supported: ", DataTypeString(dtype_)));
    }
  }

 private:
  DataType dtype_ = DT_INVALID;
  int64_t width_ = -1;
  std::string format_;
};

}  // namespace

absl::Status RegisterAsStringKernels(KernelRegistry* registry) {
  return registry->Register<AsStringOp>(CpuKernel("AsString").TypeConstraint(
      "T", {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64, DT_BFLOAT16,
            DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64, DT_COMPLEX64, DT_COMPLEX128, DT_BOOL,
            DT_STRING}));
}

}  // namespace dflow
