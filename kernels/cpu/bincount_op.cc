// DenseBincount(input, size, weights): counts (or sums weights) per value.
//
// A 0-D or 1-D input gives output[v] for v in [0, size); a 2-D input is counted row by
// row into output[row, v]. Values >= size are ignored; a negative value is an error (TF
// 2.21's CPU check, worded per rank as TF words it). With binary_output a bin holds 1
// when its value occurs at all. weights is empty (each occurrence counts 1) or has the
// input's shape; sums run in input order, integers wrapping as in TF.
#include <algorithm>
#include <type_traits>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

template <typename T>
T WrappingAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// Counts `n` values into `bins` (size bins); `weights` is null for unit weights.
template <typename Tidx, typename T>
void CountInto(const Tidx* values, const T* weights, int64_t n, Tidx size, bool binary,
               T* bins) {
  for (int64_t i = 0; i < n; ++i) {
    const Tidx v = values[i];
    if (v >= size) continue;
    if (binary) {
      bins[v] = T(1);
    } else {
      bins[v] = WrappingAdd(bins[v], weights == nullptr ? T(1) : weights[i]);
    }
  }
}

template <typename Tidx, typename T>
class DenseBincountOp : public OpKernel {
 public:
  explicit DenseBincountOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("binary_output", &binary_output_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& size_in = ctx->input(1);
    const Tensor& weights = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckArguments(*ctx, input, size_in, weights));
    const Tidx size = size_in.scalar<Tidx>();
    OP_REQUIRES(ctx, size >= 0, KernelError(*ctx, "size (", size, ") must be non-negative"));
    const bool matrix = input.shape().dims() == 2;
    const int64_t rows = matrix ? input.shape().dim_size(0) : 1;
    const int64_t cols = matrix ? input.shape().dim_size(1) : input.NumElements();
    const Tidx* values = input.data<Tidx>();
    const Tidx lowest = input.NumElements() == 0
                            ? Tidx{0}
                            : *std::min_element(values, values + input.NumElements());
    OP_REQUIRES(ctx, lowest >= 0,
                matrix ? KernelError(*ctx, "Input 'in' must be non-negative! Negative input "
                                           "value found: ", lowest)
                       : KernelError(*ctx, "Input arr must be non-negative!"));
    // Checked: [2^40 + 1, 0] rows times size 2^24 must not wrap to a small buffer.
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape out_shape,
                        OutputShape(*ctx, matrix ? std::vector<int64_t>{rows, int64_t{size}}
                                                 : std::vector<int64_t>{int64_t{size}}));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, out_shape));
    T* bins = output->data<T>();
    std::fill_n(bins, output->NumElements(), T(0));
    if (input.NumElements() == 0) return;  // nothing to count, however many empty rows
    const T* w = weights.NumElements() == 0 ? nullptr : weights.data<T>();
    ParallelForElements(ctx, rows, cols * 4 + 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        CountInto(values + r * cols, w == nullptr ? nullptr : w + r * cols, cols, size,
                  binary_output_, bins + r * size);
      }
    });
  }

 private:
  // Rank, size and weights checks, in TF's order.
  static absl::Status CheckArguments(const OpKernelContext& ctx, const Tensor& input,
                                     const Tensor& size, const Tensor& weights) {
    if (input.shape().dims() > 2) {
      return KernelError(ctx, "Shape must be at most rank 2 but is rank ", input.shape().dims());
    }
    if (size.shape().dims() != 0) {
      return KernelError(ctx, "Shape must be rank 0 but is rank ", size.shape().dims());
    }
    if (weights.NumElements() != 0 && weights.shape() != input.shape()) {
      return KernelError(ctx, "`weights` must be the same shape as `arr` or a length-0 "
                              "`Tensor`, in which case it acts as all weights equal to 1. "
                              "Received ", weights.shape().DebugString());
    }
    return absl::OkStatus();
  }

  bool binary_output_ = false;
};

template <typename Tidx, typename T>
absl::Status RegisterDenseBincount(KernelRegistry* registry) {
  return registry->Register<DenseBincountOp<Tidx, T>>(
      CpuKernel("DenseBincount")
          .TypeConstraint("Tidx", {DataTypeOf<Tidx>()})
          .TypeConstraint("T", {DataTypeOf<T>()}));
}

template <typename Tidx>
absl::Status RegisterForIndex(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR((RegisterDenseBincount<Tidx, int32_t>(registry)));
  DFLOW_RETURN_IF_ERROR((RegisterDenseBincount<Tidx, int64_t>(registry)));
  DFLOW_RETURN_IF_ERROR((RegisterDenseBincount<Tidx, float>(registry)));
  return RegisterDenseBincount<Tidx, double>(registry);
}

}  // namespace

// The OpDef allows T in {int32, int64, float, double}; TF's other CPU registrations for
// DenseBincount can never be chosen.
absl::Status RegisterBincountKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterForIndex<int32_t>(registry));
  return RegisterForIndex<int64_t>(registry);
}

}  // namespace dflow
