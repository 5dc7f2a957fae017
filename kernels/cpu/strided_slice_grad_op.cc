// StridedSliceGrad(shape, begin, end, strides, dy): the gradient of StridedSlice, a tensor
// of `shape` holding zeros except where the slice read the input, which gets dy. The slice
// is resolved against `shape` by strided_slice_spec.h (TF's ValidateStridedSliceOp, the
// same rules StridedSlice uses), so dy is scattered into the box StridedSlice would have
// gathered (slice_ops.cc): output element begin[d] + i_d * step[d] in each dimension d.
// Distinct dy elements land on distinct output elements (no stride is 0), so rows scatter
// in parallel. TF's checks and words (strided_slice_op.cc): shape is a 1-D vector of
// non-negative sizes and dy must have the slice's final shape.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/strided_slice_args.h"
#include "kernels/cpu/strided_slice_spec.h"

namespace dflow {
namespace {

// Writes dy (row-major over `spec.processing_shape`) into the strided box of `out`, whose
// other elements are zero. REQUIRES: out has dy's element count inside the box.
template <typename T>
void ScatterBox(OpKernelContext* ctx, const Tensor& dy, const StridedSliceSpec& spec,
                const Tensor& out) {
  T* dst = out.data<T>();
  std::fill(dst, dst + out.NumElements(), T{});
  const int rank = out.shape().dims();
  const std::vector<int64_t>& extent = spec.processing_shape;
  std::vector<int64_t> out_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d)
    out_stride[d] = out_stride[d + 1] * out.shape().dim_size(d + 1);
  const int64_t row = extent[rank - 1];
  const int64_t rows = dy.NumElements() / row;
  const int64_t last_begin = spec.begin[rank - 1], last_step = spec.strides[rank - 1];
  const T* src = dy.data<T>();
  ParallelForElements(ctx, rows, row * CopyCost<T>() + rank, [&](int64_t first, int64_t limit) {
    for (int64_t r = first; r < limit; ++r) {
      // Decompose r over the leading extents into the destination offset of the row.
      int64_t offset = 0;
      for (int64_t d = rank - 2, rest = r; d >= 0; --d) {
        const int64_t i = rest % extent[d];
        rest /= extent[d];
        offset += (spec.begin[d] + i * spec.strides[d]) * out_stride[d];
      }
      T* to = dst + offset + last_begin;
      const T* from = src + r * row;
      for (int64_t j = 0; j < row; ++j) to[j * last_step] = from[j];
    }
  });
}

class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadStridedSliceMasks(ctx, &masks_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& shape_t = ctx->input(0);
    const Tensor& begin = ctx->input(1);
    const Tensor& end = ctx->input(2);
    const Tensor& strides = ctx->input(3);
    const Tensor& dy = ctx->input(4);
    OP_REQUIRES(
        ctx, shape_t.shape().dims() == 1,
        KernelError(*ctx, "shape must be 1-D, got shape.shape = ", shape_t.shape().DebugString()));
    const std::vector<int64_t> dims = ReadIndices(shape_t);
    for (int64_t d : dims) {
      OP_REQUIRES(ctx, d >= 0, KernelError(*ctx, "Dimension ", d, " must be >= 0"));
    }
    const absl::Status vectors = CheckStridedSliceVectors(begin, end, strides);
    OP_REQUIRES(ctx, vectors.ok(), KernelError(*ctx, vectors.message()));
    absl::StatusOr<StridedSliceSpec> spec = ResolveStridedSlice(
        dims, ReadIndices(begin), ReadIndices(end), ReadIndices(strides), masks_);
    OP_REQUIRES(ctx, spec.ok(), KernelError(*ctx, spec.status().message()));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape dy_shape, OutputShape(*ctx, spec->final_shape));
    OP_REQUIRES(ctx, dy.shape() == dy_shape,
                KernelError(*ctx, "shape of dy was ", dy.shape().DebugString(), " instead of ",
                            dy_shape.DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, dims));
    if (spec->is_identity) {  // the slice read every element in order: dy is the gradient
      ctx->set_output(0, dy.Reshaped(shape));
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return;
    DispatchByElementSize(dy.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (dy.NumElements() == 0) {
        std::fill(out->data<T>(), out->data<T>() + out->NumElements(), T{});
      } else {
        ScatterBox<T>(ctx, dy, *spec, *out);
      }
    });
  }

 private:
  StridedSliceMasks masks_;
};

}  // namespace

absl::Status RegisterStridedSliceGradKernels(KernelRegistry* registry) {
  return registry->Register<StridedSliceGradOp>(CpuKernel("StridedSliceGrad")
                                                    .TypeConstraint("T", CopyableTypes())
                                                    .TypeConstraint("Index", IndexTypes()));
}

}  // namespace dflow
