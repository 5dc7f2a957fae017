// Gradients of unary activations, as TF's cwise grad ops compute them from the forward
// output y and the incoming gradient dy (both the same shape, no broadcasting, as TF's
// SimpleBinaryOp): SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad/InvGrad.
// Half and bfloat16 compute in float and round once.
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/cwise_util.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {
namespace cwise {
namespace {

struct SigmoidGradFn {
  static constexpr int kCost = 3;
  template <typename T>
  static T Apply(T y, T dy) {
    return dy * y * (T(1) - y);
  }
};
struct TanhGradFn {
  static constexpr int kCost = 3;
  template <typename T>
  static T Apply(T y, T dy) {
    return dy * (T(1) - y * y);
  }
};
struct SqrtGradFn {
  static constexpr int kCost = 10;
  template <typename T>
  static T Apply(T y, T dy) {
    return T(0.5) * dy / y;
  }
};
struct RsqrtGradFn {
  static constexpr int kCost = 4;
  template <typename T>
  static T Apply(T y, T dy) {
    return T(-0.5) * (dy * y) * (y * y);
  }
};
struct ReciprocalGradFn {
  static constexpr int kCost = 3;
  template <typename T>
  static T Apply(T y, T dy) {
    return -dy * y * y;
  }
};

// z = Fn::Apply(y, dy) over two same-shape inputs; writes into y's buffer when it may.
template <typename T, typename Fn>
class GradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    OP_REQUIRES(ctx, y.shape() == dy.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Inputs to operation ", name(), " of type ", type_string(),
                    " must have the same size and shape.  Input 0: ", y.shape().DebugString(),
                    " != input 1: ", dy.shape().DebugString())));
    const T* a = y.data<T>();
    const T* b = dy.data<T>();
    const TensorShape shape = y.shape();
    Tensor* out = ctx->ForwardInputToOutput(0, 0, shape);
    if (out == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, out, ctx->allocate_output(0, shape));
    }
    T* z = out->data<T>();
    ParallelForElements(ctx, shape.num_elements(), Fn::kCost, [a, b, z](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = Fn::Apply(a[i], b[i]);
    });
  }
};

template <typename Fn>
absl::Status RegisterGrad(KernelRegistry* r, const std::string& op) {
  DFLOW_RETURN_IF_ERROR((RegisterForTypes<GradOp, Fn>(r, op, RealTypes{})));
  return RegisterForTypes<GradOp, InFloat<Fn>>(r, op, HalfTypes{});
}

}  // namespace

absl::Status RegisterCwiseGradKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(RegisterGrad<SigmoidGradFn>(r, "SigmoidGrad"));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<TanhGradFn>(r, "TanhGrad"));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<SqrtGradFn>(r, "SqrtGrad"));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<RsqrtGradFn>(r, "RsqrtGrad"));
  DFLOW_RETURN_IF_ERROR(RegisterGrad<ReciprocalGradFn>(r, "ReciprocalGrad"));
  return RegisterGrad<ReciprocalGradFn>(r, "InvGrad");
}

}  // namespace cwise
}  // namespace dflow
