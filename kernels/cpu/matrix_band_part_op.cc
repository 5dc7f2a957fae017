// MatrixBandPart(input, num_lower, num_upper): keeps, in every innermost [rows,
// cols] matrix, the elements with (row - col) <= num_lower and (col - row) <=
// num_upper (a negative bound keeps that whole triangle) and zeroes the rest;
// TF 2.21's dtypes and texts (matrix_band_part_op.cc).
#include <cstdint>
#include <string>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// A band bound: a scalar in [-inf, limit]; negative means "unbounded" (returned
// as limit).
absl::StatusOr<int64_t> ReadBound(const OpKernelContext& ctx, const Tensor& t, const char* name,
                                  const char* what, int64_t limit) {
  if (t.shape().dims() != 0) {
    return KernelError(ctx, name, " must be scalar, got shape ", t.shape().DebugString());
  }
  const int64_t value = ReadIndices(t)[0];
  if (value > limit) {
    return KernelError(ctx, name, " must be negative or less or equal to number of ", what, " (",
                       limit, ") got: ", value);
  }
  return value < 0 ? limit : value;
}

// Copies the band row by row and zero-fills around it. Zero is the all-zero bit
// pattern for every dtype registered here, so the copy works on element-sized
// words.
template <typename T>
void CopyBand(OpKernelContext* ctx, const Tensor& input, int64_t lower, int64_t upper,
              const Tensor& output) {
  const int rank = input.shape().dims();
  const int64_t rows = input.shape().dim_size(rank - 2);
  const int64_t cols = input.shape().dim_size(rank - 1);
  const int64_t total_rows = input.NumElements() / cols;
  const T* src = input.data<T>();
  T* dst = output.data<T>();
  ParallelForElements(ctx, total_rows, cols + 4, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const int64_t row = r % rows;
      const int64_t begin = std::min(cols, std::max<int64_t>(0, row - lower));
      const int64_t stop = std::max(begin, std::min(cols, row + upper + 1));
      const T* in = src + r * cols;
      T* out = dst + r * cols;
      std::fill(out, out + begin, T{});
      std::copy(in + begin, in + stop, out + begin);
      std::fill(out + stop, out + cols, T{});
    }
  });
}

class MatrixBandPartOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.shape().dims();
    OP_REQUIRES(ctx, rank >= 2,
                KernelError(*ctx, "input must be at least 2-dim, received shape: ",
                            input.shape().DebugString()));
    const int64_t rows = input.shape().dim_size(rank - 2);
    const int64_t cols = input.shape().dim_size(rank - 1);
    OP_ASSIGN_OR_RETURN(ctx, const int64_t lower,
                        ReadBound(*ctx, ctx->input(1), "num_lower", "rows", rows));
    OP_ASSIGN_OR_RETURN(ctx, const int64_t upper,
                        ReadBound(*ctx, ctx->input(2), "num_upper", "columns", cols));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, input.shape()));
    if (input.NumElements() == 0) return;
    DispatchByElementSize(input.dtype(), [&](auto zero) {
      CopyBand<decltype(zero)>(ctx, input, lower, upper, *output);
    });
  }
};

// TF 2.21's CPU list (TF_CALL_POD_TYPES): every number type and bool, no
// strings.
std::vector<DataType> BandPartTypes() {
  std::vector<DataType> types = NumericOrHalfTypes();
  types.insert(types.end(), {DT_COMPLEX64, DT_COMPLEX128});
  return types;
}

}  // namespace

absl::Status RegisterMatrixBandPartKernels(KernelRegistry* registry) {
  return registry->Register<MatrixBandPartOp>(CpuKernel("MatrixBandPart")
                                                  .TypeConstraint("T", BandPartTypes())
                                                  .TypeConstraint("Tindex", IndexTypes()));
}

}  // namespace dflow
