// _FusedMatMul (float): MatMul + BiasAdd [+ Relu | Relu6] as graph/fusion.h makes it,
// on DenseLayer (oneDNN matmul with the weights packed once, bias and activation in the
// same pass). TF's semantics and error words: the MatMul's shape errors, a bias of
// length n.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/dense_layer.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

class FusedMatMulOp : public OpKernel {
 public:
  explicit FusedMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(c, c->GetAttr("transpose_b", &transpose_b_));
    std::vector<std::string> fused_ops;
    int64_t num_args = 0;
    OP_REQUIRES_OK(c, c->GetAttr("fused_ops", &fused_ops));
    OP_REQUIRES_OK(c, c->GetAttr("num_args", &num_args));
    OP_ASSIGN_OR_RETURN(c, onednn::Activation activation, onednn::FusedActivation(fused_ops, num_args));
    OP_ASSIGN_OR_RETURN(c, layer_, DenseLayer::Create(activation));
    weights_constant_ = IsConstantInput(*c, 1);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    OP_ASSIGN_OR_RETURN(ctx, const MatMulDims dims,
                        GetMatMulDims(a.shape(), b.shape(), transpose_a_, transpose_b_));
    DenseArgs args;
    args.trans_a = transpose_a_;
    args.trans_b = transpose_b_;
    args.m = dims.m;
    args.k = dims.k;
    args.n = dims.n;
    OP_REQUIRES(ctx, bias.shape().dims() == 1 && bias.shape().dim_size(0) == args.n,
                absl::InvalidArgumentError(absl::StrCat(
                    "Must provide as many biases as the last dimension of the output: ",
                    bias.shape().DebugString(), " vs. ", args.n)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape({args.m, args.n})));
    args.a = a.data<float>();
    args.weights = &b;
    args.weights_constant = weights_constant_;
    args.bias = bias.data<float>();
    args.c = out->data<float>();
    OP_REQUIRES_OK(ctx, layer_->Run(ctx, args));
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  bool weights_constant_ = false;
  std::unique_ptr<DenseLayer> layer_;
};

}  // namespace

absl::Status RegisterFusedMatMulKernels(KernelRegistry* registry) {
  return registry->Register<FusedMatMulOp>(
      KernelDefBuilder("_FusedMatMul").Device("CPU").TypeConstraint<float>("T"));
}

}  // namespace dflow
