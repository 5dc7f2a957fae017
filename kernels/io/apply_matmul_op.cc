// _DflowResourceApplyGradientDescentMatMul(var, alpha, a, b): var -= alpha * MatMul(a, b),
// the fusion of a ResourceApplyGradientDescent with the MatMul that alone computes its
// delta (graph/gradient_update_fusion.h; a dense layer's weight gradient X^T dY).
//
// When the variable holds the only reference to its buffer, one GEMM accumulates into it
// (alpha -lr, beta 1): the gradient is never written out and read back, and no separate
// pass updates the weights. Otherwise (a reader still holds the value, or a or b is that
// same buffer) the product goes to a temporary and the update is ResourceApplyGradient-
// Descent's own copy-on-write (variable_update.h), so readers keep their snapshot.
// Rounding: the GEMM adds -alpha * (the product's float sum) to var in its own order,
// where the unfused pair rounds the product, then -alpha * delta, then the sum: results
// differ by float rounding only.
#include <memory>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/resource_handle_input.h"
#include "kernels/io/variable_update.h"
#include "runtime/variable_store.h"

namespace dflow {
namespace {

using ResourceVariable = VariableStore::ResourceVariable;

class ApplyGradientDescentMatMulOp : public OpKernel {
 public:
  explicit ApplyGradientDescentMatMulOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const double alpha, ScalarAsDouble(ctx->input(1), "alpha"));
    const Tensor& a = ctx->input(2);
    const Tensor& b = ctx->input(3);
    OP_ASSIGN_OR_RETURN(ctx, const MatMulDims d,
                        GetMatMulDims(a.shape(), b.shape(), transpose_a_, transpose_b_));
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<ResourceVariable> var,
                        ExistingVariable(*ctx, DT_FLOAT, "add to"));
    absl::MutexLock lock(&var->mu);
    OP_REQUIRES(ctx, var->value.IsInitialized(),
                VariableNotFound(ctx->input(0).scalar<ResourceHandleProto>()));
    const TensorShape delta_shape({d.m, d.n});
    OP_REQUIRES(ctx, var->value.shape() == delta_shape,
                absl::InvalidArgumentError(absl::StrCat(
                    "var and delta do not have the same shape", var->value.shape().DebugString(),
                    " ", delta_shape.DebugString())));
    if (var->value.IsSoleOwner()) {
      blas::GemmArgs<float> args = Product(a, b, d, var->value.data<float>());
      args.alpha = static_cast<float>(-alpha);
      args.beta = 1.0f;
      OP_REQUIRES_OK(ctx, blas::ParallelGemm(ctx->pool(), NumThreads(ctx), args,
                                             ctx->cancellation()));
      return;
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor delta, ctx->allocate_temp(DT_FLOAT, delta_shape));
    OP_REQUIRES_OK(ctx, blas::ParallelGemm(ctx->pool(), NumThreads(ctx),
                                           Product(a, b, d, delta.data<float>()),
                                           ctx->cancellation()));
    OP_REQUIRES_OK(ctx, AddScaled(ctx, -alpha, delta, &var->value));
  }

 private:
  // The product a x b (transposed as the attrs say) into `c`.
  blas::GemmArgs<float> Product(const Tensor& a, const Tensor& b, const MatMulDims& d,
                                float* c) const {
    return blas::DenseProduct(d.m, d.n, d.k, transpose_a_, transpose_b_, a.data<float>(),
                              b.data<float>(), c);
  }

  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

}  // namespace

absl::Status RegisterApplyMatMulKernels(KernelRegistry* registry) {
  return registry->Register<ApplyGradientDescentMatMulOp>(
      CpuKernel("_DflowResourceApplyGradientDescentMatMul").TypeConstraint<float>("T"));
}

}  // namespace dflow
