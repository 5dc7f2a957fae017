// ReverseV2(tensor, axis): reverses the listed axes (negative ones count from
// the end), with TF 2.21's checks and texts (reverse_op.cc), including its rank
// limit of 8 and the missing "]" in its out-of-range message. Scalars and empty
// tensors pass through unchecked, as in TF.
#include <cstdint>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// Which axes to reverse, from the axis vector; TF's errors for bad or repeated
// axes.
absl::StatusOr<std::vector<bool>> ReversedAxes(const OpKernelContext& ctx, const Tensor& axis_t,
                                               int rank) {
  if (axis_t.shape().dims() != 1) {
    return KernelError(ctx, "'dims' must be 1-dimension, not ", axis_t.shape().dims());
  }
  const std::vector<int64_t> axes = ReadIndices(axis_t);
  std::vector<bool> reversed(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t canonical = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (canonical < 0 || canonical >= rank) {
      return KernelError(ctx, "'axis'[", i, "] = ", axes[i], " is out of valid range [0, ",
                         rank - 1);
    }
    if (reversed[canonical])
      return KernelError(ctx, "axis ", canonical, " specified more than once.");
    reversed[canonical] = true;
  }
  return reversed;
}

// Copies row by row over the last dim: each output row reads the source row
// whose index is mirrored on the reversed axes, forwards or backwards.
template <typename T>
void ReverseRows(OpKernelContext* ctx, const Tensor& input, const std::vector<bool>& reversed,
                 const Tensor& output) {
  const TensorShape& shape = input.shape();
  const int rank = shape.dims();
  const int64_t cols = shape.dim_size(rank - 1);
  const int64_t rows = input.NumElements() / cols;
  const bool reverse_cols = reversed[rank - 1];
  const T* src = input.data<T>();
  T* dst = output.data<T>();
  ParallelForElements(ctx, rows, cols * CopyCost<T>() + 4, [&](int64_t first, int64_t end) {
    for (int64_t row = first; row < end; ++row) {
      int64_t from = 0, scale = 1;
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t dim = shape.dim_size(d);
        const int64_t index = (row / scale) % dim;
        from += (reversed[d] ? dim - 1 - index : index) * scale;
        scale *= dim;
      }
      const T* in = src + from * cols;
      T* out = dst + row * cols;
      if (reverse_cols) {
        std::reverse_copy(in, in + cols, out);
      } else {
        std::copy(in, in + cols, out);
      }
    }
  });
}

class ReverseV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (input.shape().dims() == 0 || input.NumElements() == 0) {
      ctx->set_output(0, input);
      return;
    }
    const int rank = input.shape().dims();
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<bool> reversed,
                        ReversedAxes(*ctx, ctx->input(1), rank));
    OP_REQUIRES(ctx, rank <= 8,
                absl::UnimplementedError(absl::StrCat(
                    type_string(), ": reverse is not implemented for tensors of rank > 8.")));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    DispatchByElementSize(input.dtype(), [&](auto zero) {
      ReverseRows<decltype(zero)>(ctx, input, reversed, *output);
    });
  }
};

}  // namespace

absl::Status RegisterReverseKernels(KernelRegistry* registry) {
  return registry->Register<ReverseV2Op>(CpuKernel("ReverseV2")
                                             .TypeConstraint("T", PodAndStringTypes())
                                             .TypeConstraint("Tidx", IndexTypes()));
}

}  // namespace dflow
