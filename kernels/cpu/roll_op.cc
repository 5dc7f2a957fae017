// Roll(input, shift, axis): rotates elements along the given axes, with
// TF 2.21's checks, texts and shift arithmetic (roll_op.cc). Shifts on the same
// axis add up; like TF, each shift is first narrowed to int32 and the running
// sum kept modulo the dim, so the result matches TF even for int64 shifts
// beyond int32.
#include <cstdint>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// The net shift of every axis, in [0, dim), or TF's error for bad shapes and
// axes.
absl::StatusOr<std::vector<int64_t>> NetShifts(const OpKernelContext& ctx, const Tensor& input,
                                               const Tensor& shift_t, const Tensor& axis_t) {
  if (shift_t.shape().dims() > 1) {
    return KernelError(
        ctx, "shift must be a scalar or a 1-D vector. Found: ", shift_t.shape().DebugString());
  }
  if (axis_t.shape().dims() > 1) {
    return KernelError(
        ctx, "axis must be a scalar or a 1-D vector. Found: ", axis_t.shape().DebugString());
  }
  if (!(shift_t.shape() == axis_t.shape())) {
    return KernelError(ctx, "shift and axis must have the same size");
  }
  const int rank = input.shape().dims();
  const std::vector<int64_t> shifts = ReadIndices(shift_t);
  const std::vector<int64_t> axes = ReadIndices(axis_t);
  std::vector<int64_t> net(rank, 0);
  for (size_t i = 0; i < shifts.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return KernelError(ctx, "axis ", axis, " is out of range");
    const int64_t dim = std::max<int64_t>(input.shape().dim_size(axis), 1);
    const int64_t sum = net[axis] + static_cast<int32_t>(shifts[i]);  // TF narrows to int
    net[axis] = (sum % dim + dim) % dim;
  }
  return net;
}

// Output row r (all dims but the last) comes from the input row shifted back on
// every axis; within a row the last axis's shift splits the copy in two.
template <typename T>
void RollRows(OpKernelContext* ctx, const Tensor& input, const std::vector<int64_t>& net,
              const Tensor& output) {
  const TensorShape& shape = input.shape();
  const int rank = shape.dims();
  const int64_t cols = shape.dim_size(rank - 1);
  const int64_t rows = input.NumElements() / cols;
  const int64_t col_shift = net[rank - 1];
  const T* src = input.data<T>();
  T* dst = output.data<T>();
  ParallelForElements(ctx, rows, cols * CopyCost<T>() + 4, [&](int64_t first, int64_t end) {
    for (int64_t row = first; row < end; ++row) {
      int64_t from = 0, scale = 1;
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t dim = shape.dim_size(d);
        const int64_t index = (row / scale) % dim;
        from += ((index - net[d] + dim) % dim) * scale;
        scale *= dim;
      }
      const T* in = src + from * cols;
      T* out = dst + row * cols;
      // out[c] = in[(c - shift) mod cols]
      std::copy(in + cols - col_shift, in + cols, out);
      std::copy(in, in + cols - col_shift, out + col_shift);
    }
  });
}

class RollOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.shape().dims() >= 1, KernelError(*ctx, "input must be 1-D or higher"));
    OP_ASSIGN_OR_RETURN(ctx, const std::vector<int64_t> net,
                        NetShifts(*ctx, input, ctx->input(1), ctx->input(2)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    if (input.NumElements() == 0) return;
    DispatchByElementSize(input.dtype(),
                          [&](auto zero) { RollRows<decltype(zero)>(ctx, input, net, *output); });
  }
};

}  // namespace

absl::Status RegisterRollKernels(KernelRegistry* registry) {
  return registry->Register<RollOp>(CpuKernel("Roll")
                                        .TypeConstraint("T", PodAndStringTypes())
                                        .TypeConstraint("Tshift", IndexTypes())
                                        .TypeConstraint("Taxis", IndexTypes()));
}

}  // namespace dflow
