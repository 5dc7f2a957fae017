// Slice and StridedSlice: both are a strided gather of a box of the input, described per
// input dimension by (first index, step, extent). StridedSlice's index rules live in
// strided_slice_spec.h; here only the copy and the tensor-level checks.
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/strided_slice_args.h"
#include "kernels/cpu/strided_slice_spec.h"

namespace dflow {
namespace {

// A box of the input: output element (i0, .., in) is input (begin[d] + i_d * step[d]).
struct Box {
  std::vector<int64_t> begin;
  std::vector<int64_t> step;
  std::vector<int64_t> extent;
};

// Copies `box` of `input` into `output` (row-major, extents multiply to its size).
template <typename T>
void CopyBox(OpKernelContext* ctx, const Tensor& input, const Box& box, const Tensor& output) {
  const int rank = input.shape().dims();
  const T* src = input.data<T>();
  T* dst = output.data<T>();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * input.shape().dim_size(d + 1);
  const int64_t row = box.extent[rank - 1];
  const int64_t rows = output.NumElements() / row;
  const int64_t last_begin = box.begin[rank - 1], last_step = box.step[rank - 1];
  ParallelForElements(ctx, rows, row * CopyCost<T>() + rank, [&](int64_t first, int64_t limit) {
    for (int64_t r = first; r < limit; ++r) {
      // Decompose r over the leading extents into the source offset of the row.
      int64_t offset = 0;
      for (int64_t d = rank - 2, rest = r; d >= 0; --d) {
        const int64_t i = rest % box.extent[d];
        rest /= box.extent[d];
        offset += (box.begin[d] + i * box.step[d]) * in_stride[d];
      }
      const T* in = src + offset + last_begin;
      T* out = dst + r * row;
      if (last_step == 1) {
        std::copy(in, in + row, out);
      } else {
        for (int64_t j = 0; j < row; ++j) out[j] = in[j * last_step];
      }
    }
  });
}

void CopyBoxInto(OpKernelContext* ctx, const Tensor& input, const Box& box, const Tensor& output) {
  if (output.NumElements() == 0) return;
  DispatchByElementSize(input.dtype(), [&](auto zero) {
    CopyBox<decltype(zero)>(ctx, input, box, output);
  });
}

// Slice(input, begin, size): size -1 means "to the end of the dimension".
class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& begin_t = ctx->input(1);
    const Tensor& size_t_ = ctx->input(2);
    const int rank = input.shape().dims();
    OP_REQUIRES(ctx,
                begin_t.shape().dims() == 1 && size_t_.shape().dims() == 1 &&
                    begin_t.NumElements() == rank && size_t_.NumElements() == rank,
                KernelError(*ctx, "Expected begin and size arguments to be 1-D tensors of size ",
                            rank, ", but got shapes ", begin_t.shape().DebugString(), " and ",
                            size_t_.shape().DebugString(), " instead."));
    OP_ASSIGN_OR_RETURN(ctx, Box box, ResolveBox(*ctx, input.shape(), ReadIndices(begin_t),
                                                 ReadIndices(size_t_)));
    if (box.begin == std::vector<int64_t>(rank, 0) &&
        box.extent == std::vector<int64_t>(input.shape().dim_sizes().begin(),
                                           input.shape().dim_sizes().end())) {
      ctx->set_output(0, input);  // the whole input: share it
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, box.extent));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    CopyBoxInto(ctx, input, box, *output);
  }

 private:
  // TF's SharedSliceValidation, dimension by dimension.
  static absl::StatusOr<Box> ResolveBox(const OpKernelContext& ctx, const TensorShape& shape,
                                        const std::vector<int64_t>& begin,
                                        std::vector<int64_t> size) {
    for (int i = 0; i < shape.dims(); ++i) {
      const int64_t dim = shape.dim_size(i), b = begin[i];
      if (size[i] == -1) size[i] = dim - b;
      const int64_t s = size[i];
      if (dim == 0) {
        if (b != 0 || s != 0) {
          return KernelError(ctx, "Expected begin[", i, "] == 0 (got ", b, ") and size[", i,
                             "] == 0 (got ", s, ") when input.dim_size(", i, ") == 0");
        }
      } else if (b < 0 || b > dim) {
        return KernelError(ctx, "Expected begin[", i, "] in [0, ", dim, "], but got ", b);
      } else if (s < 0 || b + s > dim) {
        return KernelError(ctx, "Expected size[", i, "] in [0, ", dim - b, "], but got ", s);
      }
    }
    return Box{begin, std::vector<int64_t>(begin.size(), 1), size};
  }
};

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ReadStridedSliceMasks(ctx, &masks_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& begin = ctx->input(1);
    const Tensor& end = ctx->input(2);
    const Tensor& strides = ctx->input(3);
    const absl::Status vectors = CheckStridedSliceVectors(begin, end, strides);
    OP_REQUIRES(ctx, vectors.ok(), KernelError(*ctx, vectors.message()));
    absl::StatusOr<StridedSliceSpec> spec =
        ResolveStridedSlice(input.shape().dim_sizes(), ReadIndices(begin), ReadIndices(end),
                            ReadIndices(strides), masks_);
    OP_REQUIRES(ctx, spec.ok(),
                KernelError(*ctx, spec.status().message(), " (input shape ",
                            input.shape().DebugString(), ")"));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape shape, OutputShape(*ctx, spec->final_shape));
    if (spec->is_identity) {
      ctx->set_output(0, input.Reshaped(shape));
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    CopyBoxInto(ctx, input, Box{spec->begin, spec->strides, spec->processing_shape}, *output);
  }

 private:
  StridedSliceMasks masks_;
};

}  // namespace

absl::Status RegisterSliceKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<SliceOp>(CpuKernel("Slice")
                                                        .TypeConstraint("T", CopyableTypes())
                                                        .TypeConstraint("Index", IndexTypes())));
  return registry->Register<StridedSliceOp>(CpuKernel("StridedSlice")
                                                .TypeConstraint("T", CopyableTypes())
                                                .TypeConstraint("Index", IndexTypes()));
}

}  // namespace dflow
