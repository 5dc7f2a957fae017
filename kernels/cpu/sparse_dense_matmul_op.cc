// SparseTensorDenseMatMul(a_indices, a_values, a_shape, b, adjoint_a, adjoint_b): the
// product of a 2-D SparseTensor A and a dense matrix B, as TF 2.21's CPU kernel: the
// output zeroed, then each nonzero A[m, k] adds A[m, k] * B[k, :] to row m, in the order
// of the nonzeros (so sums round as TF's do), with TF's texts for bad shapes and for
// indices out of bounds ("k (5) from index[2,1] out of bounds (>=4)").
#include <cstdint>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

template <typename T>
class SparseTensorDenseMatMulOp : public OpKernel {
 public:
  explicit SparseTensorDenseMatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint_a", &adjoint_a_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint_b", &adjoint_b_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& values = ctx->input(1);
    const Tensor& a_shape = ctx->input(2);
    const Tensor& b = ctx->input(3);
    OP_REQUIRES_OK(ctx, CheckShapes(*ctx, indices, values, a_shape, b));
    const int64_t* dims = a_shape.data<int64_t>();
    const int64_t rows = adjoint_a_ ? dims[1] : dims[0];
    const int64_t inner = adjoint_a_ ? dims[0] : dims[1];
    const int64_t b_rows = b.shape().dim_size(0), b_cols = b.shape().dim_size(1);
    const int64_t cols = adjoint_b_ ? b_rows : b_cols;
    const int64_t b_inner = adjoint_b_ ? b_cols : b_rows;
    OP_REQUIRES(ctx, inner == b_inner,
                KernelError(*ctx, "Cannot multiply A and B because inner dimension does not "
                                  "match: ", inner, " vs. ", b_inner,
                            ".  Did you forget a transpose?  Dimensions of A: [", dims[0],
                            ", ", dims[1], ").  Dimensions of B: ", b.shape().DebugString()));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape({rows, cols})));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    if (out->NumElements() == 0) return;
    const std::vector<int64_t> flat = ReadIndices(indices);
    const int64_t nnz = values.NumElements();
    const int m_column = adjoint_a_ ? 1 : 0, k_column = adjoint_a_ ? 0 : 1;
    const T* bv = b.data<T>();
    for (int64_t i = 0; i < nnz; ++i) {
      const int64_t m = flat[2 * i + m_column], k = flat[2 * i + k_column];
      OP_REQUIRES(ctx, k >= 0 && k < inner,
                  KernelError(*ctx, "k (", k, ") from index[", i, ",", k_column,
                              "] out of bounds (>=", inner, ")"));
      OP_REQUIRES(ctx, m >= 0 && m < rows,
                  KernelError(*ctx, "m (", m, ") from index[", i, ",", m_column,
                              "] out of bounds (>=", rows, ")"));
      const T a = values.data<T>()[i];
      T* row = o + m * cols;
      if (adjoint_b_) {
        for (int64_t n = 0; n < cols; ++n) row[n] += a * bv[n * b_cols + k];
      } else {
        const T* b_row = bv + k * b_cols;
        for (int64_t n = 0; n < cols; ++n) row[n] += a * b_row[n];
      }
    }
  }

 private:
  static absl::Status CheckShapes(const OpKernelContext& ctx, const Tensor& indices,
                                  const Tensor& values, const Tensor& a_shape, const Tensor& b) {
    if (b.shape().dims() != 2) return KernelError(ctx, "Tensor 'b' is not a matrix");
    if (a_shape.shape().dims() != 1) return KernelError(ctx, "Tensor 'a_shape' is not a vector");
    if (a_shape.NumElements() != 2) {
      return KernelError(ctx, "Tensor 'a_shape' must have 2 elements");
    }
    if (values.shape().dims() != 1) return KernelError(ctx, "Tensor 'a_values' is not a vector");
    if (indices.shape().dims() != 2) {
      return KernelError(ctx, "Tensor 'a_indices' is not a matrix");
    }
    if (indices.shape().dim_size(0) != values.NumElements()) {
      return KernelError(ctx, "Number of rows of a_indices does not match number of entries "
                              "in a_values");
    }
    if (indices.shape().dim_size(1) != 2) {
      return KernelError(ctx, "Number of columns of a_indices does not match number of "
                              "entries in a_shape");
    }
    return absl::OkStatus();
  }

  bool adjoint_a_ = false;
  bool adjoint_b_ = false;
};

template <typename T>
absl::Status RegisterFor(KernelRegistry* registry) {
  return registry->Register<SparseTensorDenseMatMulOp<T>>(
      CpuKernel("SparseTensorDenseMatMul")
          .TypeConstraint<T>("T")
          .TypeConstraint("Tindices", {DT_INT32, DT_INT64})
          .HostMemory("a_shape"));
}

}  // namespace

absl::Status RegisterSparseDenseMatMulKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterFor<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterFor<double>(registry));
  return RegisterFor<int32_t>(registry);
}

}  // namespace dflow
