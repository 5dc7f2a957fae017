// Dense optimizer apply ops, ref and resource forms, float and double: ApplyMomentum,
// ApplyAdam, ApplyAdaMax, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdagradV2,
// ApplyAdadelta, ApplyAdagradDA, ApplyFtrl, ApplyFtrlV2, ApplyProximalGradientDescent,
// ApplyProximalAdagrad,
// ApplyAddSign, ApplyPowerSign and their Resource* twins, plus ResourceApplyKerasMomentum
// (which has no ref form). The update rules: optimizer_functors.h.
//
// An op updates its variable and accumulators ("slots") together under their locks
// (variable_slots.h). Updates are copy-on-write as everywhere in dflow: a slot whose buffer
// is shared with a reader is copied first, so values already fetched never change.
// use_nesterov, update_slots (Adagrad: false leaves accum as it is) and
// multiply_linear_by_lr (Ftrl) follow TF's attrs; use_locking is implied.
#include <memory>
#include <string>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/apply_op_inputs.h"
#include "kernels/io/optimizer_functors.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/variable_slots.h"

namespace dflow {
namespace {

template <typename Fn, typename T, bool kResource>
class ApplyOp : public OpKernel {
 public:
  explicit ApplyOp(OpKernelConstruction* ctx) : OpKernel(ctx), names_(InputNames(*ctx)) {
    OP_REQUIRES_OK(ctx, ReadApplyAttrs(*ctx, &attrs_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<Slot> slots;
    for (int i = 0; i < Fn::kSlots; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Slot slot, SlotInput(*ctx, i, kResource));
      slots.push_back(std::move(slot));
    }
    optimizer::Args<T> args = attrs_;
    OP_REQUIRES_OK(ctx, ReadApplyScalars(*ctx, Fn::kSlots, {Fn::kGrad}, names_, &args));
    const Tensor& grad = ctx->input(Fn::kGrad);
    {
      SlotLocks locks(slots);
      OP_REQUIRES_OK(ctx, CheckApplySlots<T>(*ctx, slots, names_));
      const TensorShape& var = slots[0].value->shape();
      OP_REQUIRES(ctx, grad.shape() == var,
                  absl::InvalidArgumentError(absl::StrCat(
                      "var and grad do not have the same shape", var.DebugString(), " ",
                      grad.shape().DebugString())));
      OP_REQUIRES_OK(ctx, PrepareApplySlots(ctx, slots, grad, &args));
      const T* g = grad.data<T>();
      ParallelForElements(ctx, grad.NumElements(), 12 * Fn::kSlots,
                          [&args, g](int64_t begin, int64_t end) {
                            optimizer::ApplyDense<Fn>(args, g, begin, end);
                          });
    }
    if (!kResource) ctx->set_output_ref(0, ctx->input_ref(0));
  }

 private:
  const std::vector<std::string> names_;
  optimizer::Args<T> attrs_;
};

template <typename Fn>
absl::Status RegisterResource(KernelRegistry* r, const std::string& op) {
  DFLOW_RETURN_IF_ERROR((r->Register<ApplyOp<Fn, float, true>>(
      CpuKernel(op).TypeConstraint<float>("T"))));
  return r->Register<ApplyOp<Fn, double, true>>(CpuKernel(op).TypeConstraint<double>("T"));
}

template <typename Fn>
absl::Status RegisterBoth(KernelRegistry* r, const std::string& op) {
  DFLOW_RETURN_IF_ERROR((r->Register<ApplyOp<Fn, float, false>>(
      CpuKernel(op).TypeConstraint<float>("T"))));
  DFLOW_RETURN_IF_ERROR((r->Register<ApplyOp<Fn, double, false>>(
      CpuKernel(op).TypeConstraint<double>("T"))));
  return RegisterResource<Fn>(r, "Resource" + op);
}

}  // namespace

absl::Status RegisterApplyKernels(KernelRegistry* r) {
  namespace opt = optimizer;
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Momentum>(r, "ApplyMomentum"));
  DFLOW_RETURN_IF_ERROR(RegisterResource<opt::KerasMomentum>(r, "ResourceApplyKerasMomentum"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Adam>(r, "ApplyAdam"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::AdaMax>(r, "ApplyAdaMax"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::RMSProp>(r, "ApplyRMSProp"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::CenteredRMSProp>(r, "ApplyCenteredRMSProp"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Adagrad>(r, "ApplyAdagrad"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::AdagradV2>(r, "ApplyAdagradV2"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Adadelta>(r, "ApplyAdadelta"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Ftrl>(r, "ApplyFtrl"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::FtrlV2>(r, "ApplyFtrlV2"));
  DFLOW_RETURN_IF_ERROR(
      RegisterBoth<opt::ProximalGradientDescent>(r, "ApplyProximalGradientDescent"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::ProximalAdagrad>(r, "ApplyProximalAdagrad"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::AdagradDA>(r, "ApplyAdagradDA"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::AddSign>(r, "ApplyAddSign"));
  return RegisterBoth<opt::PowerSign>(r, "ApplyPowerSign");
}

}  // namespace dflow
