// Split (equal parts) and SplitV (given sizes, one may be -1) along one axis.
//
// With the input viewed as [outer, axis, inner], output i is the rows
// [offset_i, offset_i + size_i) of the middle dimension: outer copies of size_i * inner
// contiguous elements each.
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// TF's split_dim range check; the axis in [0, rank).
absl::StatusOr<int> ReadSplitDim(const OpKernelContext& ctx, const Tensor& split_dim,
                                 const TensorShape& input) {
  if (split_dim.NumElements() != 1) {
    return KernelError(ctx, "split_dim must be a scalar but has shape ",
                       split_dim.shape().DebugString());
  }
  const int64_t value = ReadIndices(split_dim)[0];
  const int rank = input.dims();
  std::optional<int> axis = NormalizeAxis(value, rank);
  if (!axis) {
    return KernelError(ctx, "-input rank(-", rank, ") <= split_dim < input rank (", rank,
                       "), but got ", value);
  }
  return *axis;
}

template <typename T>
void SplitRows(OpKernelContext* ctx, const Tensor& input, int axis,
               const std::vector<int64_t>& sizes, const std::vector<Tensor*>& outputs) {
  const TensorShape& shape = input.shape();
  const int64_t outer = DimProduct(shape, 0, axis);
  const int64_t inner = DimProduct(shape, axis + 1, shape.dims());
  const int64_t in_row = shape.dim_size(axis) * inner;
  const T* src = input.data<T>();
  int64_t offset = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int64_t row = sizes[i] * inner;
    T* dst = outputs[i]->data<T>();
    const T* base = src + offset * inner;
    ParallelForElements(ctx, outer, row * CopyCost<T>(), [&](int64_t first, int64_t limit) {
      for (int64_t r = first; r < limit; ++r) {
        std::copy(base + r * in_row, base + r * in_row + row, dst + r * row);
      }
    });
    offset += sizes[i];
  }
}

// Allocates one output per size along `axis` and copies the parts into them.
void SplitInto(OpKernelContext* ctx, int axis, const std::vector<int64_t>& sizes) {
  const Tensor& input = ctx->input(ctx->kernel().type_string() == "Split" ? 1 : 0);
  if (sizes.size() == 1) {
    ctx->set_output(0, input);  // one part: the input itself
    return;
  }
  std::vector<Tensor*> outputs;
  std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
  for (size_t i = 0; i < sizes.size(); ++i) {
    dims[axis] = sizes[i];
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output,
                        ctx->allocate_output(static_cast<int>(i), TensorShape(dims)));
    outputs.push_back(output);
  }
  if (input.NumElements() == 0) return;
  DispatchByElementSize(input.dtype(), [&](auto zero) {
    SplitRows<decltype(zero)>(ctx, input, axis, sizes, outputs);
  });
}

// Split(split_dim, value): num_split equal parts.
class SplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(1);
    OP_ASSIGN_OR_RETURN(ctx, int axis, ReadSplitDim(*ctx, ctx->input(0), input.shape()));
    const int64_t num = ctx->num_outputs();
    const int64_t dim = input.shape().dim_size(axis);
    OP_REQUIRES(ctx, dim % num == 0,
                KernelError(*ctx, "Number of ways to split should evenly divide the split "
                                  "dimension, but got split_dim ",
                            axis, " (size = ", dim, ") and num_split ", num));
    SplitInto(ctx, axis, std::vector<int64_t>(num, dim / num));
  }
};

// SplitV(value, size_splits, split_dim): given sizes, at most one -1 (the rest).
class SplitVOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes_t = ctx->input(1);
    OP_ASSIGN_OR_RETURN(ctx, int axis, ReadSplitDim(*ctx, ctx->input(2), input.shape()));
    const int num = ctx->num_outputs();
    OP_REQUIRES(ctx, sizes_t.shape().dims() == 1 && sizes_t.NumElements() == num,
                KernelError(*ctx, "size of the split_tensor must be 1-D and have the same "
                                  "elements as outputs got ",
                            sizes_t.shape().dims(), " -D and ", sizes_t.NumElements(),
                            " elements"));
    std::vector<int64_t> sizes = ReadIndices(sizes_t);
    OP_ASSIGN_OR_RETURN(ctx, sizes, ResolveSizes(*ctx, sizes, input.shape().dim_size(axis)));
    SplitInto(ctx, axis, sizes);
  }

 private:
  // Replaces a -1 with the remainder; the sizes must then add up to `dim`.
  static absl::StatusOr<std::vector<int64_t>> ResolveSizes(const OpKernelContext& ctx,
                                                           std::vector<int64_t> sizes,
                                                           int64_t dim) {
    int unknown = -1;
    int64_t determined = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1) {
        if (unknown != -1) return KernelError(ctx, "There can only be one -1 in the input.");
        unknown = static_cast<int>(i);
      } else if (sizes[i] < 0) {
        return KernelError(ctx, "Split size at index ", i, " must be >= 0. Got: ", sizes[i]);
      } else if (__builtin_add_overflow(determined, sizes[i], &determined)) {
        return KernelError(ctx, "split sizes overflow int64 at index ", i);
      }
    }
    if ((unknown == -1 && determined != dim) || (unknown != -1 && determined > dim)) {
      return KernelError(ctx,
                         "Determined shape must either match input shape along split_dim "
                         "exactly if fully specified, or be less than the size of the input "
                         "along split_dim if not fully specified.  Got: ",
                         determined);
    }
    if (unknown != -1) sizes[unknown] = dim - determined;
    return sizes;
  }
};

}  // namespace

absl::Status RegisterSplitKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      registry->Register<SplitOp>(CpuKernel("Split").TypeConstraint("T", CopyableTypes())));
  return registry->Register<SplitVOp>(CpuKernel("SplitV")
                                          .TypeConstraint("T", CopyableTypes())
                                          .TypeConstraint("Tlen", IndexTypes()));
}

}  // namespace dflow
