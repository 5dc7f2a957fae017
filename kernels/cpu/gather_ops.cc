// GatherV2 (any axis, batch_dims = 0), Gather (axis 0) and OneHot.
//
// Gather views params as [outer, limit, inner] around the axis; the output is
// [outer, N, inner] with output row (o, n) = params row (o, indices[n]). Every index is
// checked before anything is copied, so a bad index fails the whole op as in TF.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/gather.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// "[1,2]": the multi-index of flat element `flat` of `shape` (TF's SliceDebugString).
std::string IndexString(const TensorShape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    index[d] = flat % shape.dim_size(d);
    flat /= shape.dim_size(d);
  }
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

template <typename T>
void GatherRows(OpKernelContext* ctx, const Tensor& params, const std::vector<int64_t>& indices,
                int64_t outer, int64_t limit, int64_t inner, const Tensor& output) {
  const T* src = params.data<T>();
  T* dst = output.data<T>();
  const int64_t n = static_cast<int64_t>(indices.size());
  ParallelForElements(ctx, outer * n, inner * CopyCost<T>() + 1, [&](int64_t first, int64_t end) {
    for (int64_t unit = first; unit < end; ++unit) {
      const int64_t o = unit / n;
      const T* in = src + (o * limit + indices[unit % n]) * inner;
      std::copy(in, in + inner, dst + unit * inner);
    }
  });
}

}  // namespace

absl::Status GatherIntoOutput(OpKernelContext* ctx, const Tensor& params, const Tensor& indices_t,
                              int axis) {
  const int rank = params.shape().dims();
  const int64_t limit = params.shape().dim_size(axis);
  const std::vector<int64_t> indices = ReadIndices(indices_t);
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= limit) {
      return KernelError(*ctx, "indices", IndexString(indices_t.shape(), i), " = ", indices[i],
                         " is not in [0, ", limit, ")");
    }
  }
  std::vector<int64_t> dims(params.shape().dim_sizes().begin(),
                            params.shape().dim_sizes().begin() + axis);
  dims.insert(dims.end(), indices_t.shape().dim_sizes().begin(),
              indices_t.shape().dim_sizes().end());
  dims.insert(dims.end(), params.shape().dim_sizes().begin() + axis + 1,
              params.shape().dim_sizes().end());
  DFLOW_ASSIGN_OR_RETURN(const TensorShape shape, OutputShape(*ctx, dims));
  DFLOW_ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, shape));
  if (output->NumElements() == 0) return absl::OkStatus();
  const bool copyable = DispatchByElementSize(params.dtype(), [&](auto zero) {
    GatherRows<decltype(zero)>(ctx, params, indices, DimProduct(params.shape(), 0, axis), limit,
                               DimProduct(params.shape(), axis + 1, rank), *output);
  });
  if (copyable) return absl::OkStatus();
  return KernelError(*ctx, "cannot gather elements of ", DataTypeString(params.dtype()));
}

namespace {

// GatherV2(params, indices, axis) and Gather(params, indices).
template <bool kHasAxis>
class GatherOp : public OpKernel {
 public:
  explicit GatherOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if (ctx->HasAttr("batch_dims")) OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_dims", &batch_dims_));
    OP_REQUIRES(ctx, batch_dims_ == 0,
                absl::UnimplementedError(absl::StrCat(
                    "GatherV2 with batch_dims = ", batch_dims_, " is not supported (only 0)")));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices_t = ctx->input(1);
    const int rank = params.shape().dims();
    int64_t axis_value = 0;
    if (kHasAxis) {
      const Tensor& axis_t = ctx->input(2);
      OP_REQUIRES(ctx, axis_t.NumElements() == 1,
                  KernelError(*ctx, "axis must be scalar, but got shape ",
                              axis_t.shape().DebugString()));
      axis_value = ReadIndices(axis_t)[0];
    }
    OP_REQUIRES(ctx, rank >= 1, KernelError(*ctx, "params must be at least 1 dimensional"));
    std::optional<int> axis = NormalizeAxis(axis_value, rank);
    OP_REQUIRES(ctx, axis.has_value(),
                KernelError(*ctx, "Expected axis in the range [", -rank, ", ", rank,
                            "), but got ", axis_value));
    OP_REQUIRES_OK(ctx, GatherIntoOutput(ctx, params, indices_t, *axis));
  }

 private:
  int64_t batch_dims_ = 0;
};

// The values of a uint8, int32 or int64 indices tensor, widened.
std::vector<int64_t> ReadOneHotIndices(const Tensor& t) {
  if (t.dtype() != DT_UINT8) return ReadIndices(t);
  absl::Span<const uint8_t> values = t.flat<uint8_t>();
  return std::vector<int64_t>(values.begin(), values.end());
}

// OneHot(indices, depth, on_value, off_value): indices viewed as [prefix, suffix] around
// `axis`; output[p, d, s] = indices[p, s] == d ? on : off (out-of-range rows are all off).
class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices_t = ctx->input(0);
    const Tensor& depth_t = ctx->input(1);
    const Tensor& on = ctx->input(2);
    const Tensor& off = ctx->input(3);
    const int in_rank = indices_t.shape().dims();
    OP_REQUIRES(ctx, axis_ == -1 || (axis_ >= 0 && axis_ <= in_rank),
                KernelError(*ctx, "Expected axis to be -1 or between [0, ", in_rank + 1,
                            ").  But received: ", axis_));
    OP_REQUIRES(ctx, depth_t.shape().dims() == 0,
                KernelError(*ctx, "depth must be a scalar, but got: ", depth_t.shape().DebugString()));
    OP_REQUIRES(ctx, on.shape().dims() == 0,
                KernelError(*ctx, "on_value must be a scalar, but got: ", on.shape().DebugString()));
    OP_REQUIRES(ctx, off.shape().dims() == 0,
                KernelError(*ctx, "off_value must be a scalar, but got: ", off.shape().DebugString()));
    const int64_t depth = depth_t.scalar<int32_t>();
    OP_REQUIRES(ctx, depth >= 0, KernelError(*ctx, "depth must be non-negative, got: ", depth));
    const int axis = axis_ == -1 ? in_rank : static_cast<int>(axis_);
    std::vector<int64_t> dims(indices_t.shape().dim_sizes().begin(),
                              indices_t.shape().dim_sizes().end());
    dims.insert(dims.begin() + axis, depth);
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, OutputShape(*ctx, dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    if (output->NumElements() == 0) return;
    const std::vector<int64_t> indices = ReadOneHotIndices(indices_t);
    const int64_t suffix = DimProduct(indices_t.shape(), axis, in_rank);
    DispatchByElementSize(on.dtype(), [&](auto zero) {
      using T = decltype(zero);
      Fill<T>(ctx, indices, depth, suffix, on.data<T>()[0], off.data<T>()[0], *output);
    });
  }

 private:
  template <typename T>
  static void Fill(OpKernelContext* ctx, const std::vector<int64_t>& indices, int64_t depth,
                   int64_t suffix, const T& on, const T& off, const Tensor& output) {
    T* dst = output.data<T>();
    const int64_t row = depth * suffix;  // output elements per prefix position
    const int64_t prefix = output.NumElements() / row;
    ParallelForElements(ctx, prefix, row * 2, [&](int64_t first, int64_t limit) {
      for (int64_t p = first; p < limit; ++p) {
        T* out = dst + p * row;
        std::fill(out, out + row, off);
        for (int64_t s = 0; s < suffix; ++s) {
          const int64_t d = indices[p * suffix + s];
          if (d >= 0 && d < depth) out[d * suffix + s] = on;
        }
      }
    });
  }

  int64_t axis_ = -1;
};

}  // namespace

absl::Status RegisterGatherKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<GatherOp<true>>(
      CpuKernel("GatherV2")
          .TypeConstraint("Tparams", CopyableTypes())
          .TypeConstraint("Tindices", IndexTypes())
          .TypeConstraint("Taxis", IndexTypes())));
  DFLOW_RETURN_IF_ERROR(registry->Register<GatherOp<false>>(
      CpuKernel("Gather")
          .TypeConstraint("Tparams", CopyableTypes())
          .TypeConstraint("Tindices", IndexTypes())));
  return registry->Register<OneHotOp>(CpuKernel("OneHot")
                                          .TypeConstraint("T", CopyableTypes())
                                          .TypeConstraint("TI", {DT_UINT8, DT_INT32, DT_INT64}));
}

}  // namespace dflow
