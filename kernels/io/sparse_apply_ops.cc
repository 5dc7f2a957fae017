// Sparse optimizer apply ops, the updates of embedding tables from IndexedSlices gradients,
// ref and resource forms, float and double, int32 and int64 indices: SparseApplyMomentum,
// SparseApplyAdagrad, SparseApplyAdagradV2, SparseApplyRMSProp, SparseApplyCenteredRMSProp,
// SparseApplyAdadelta, SparseApplyAdagradDA, SparseApplyFtrl, SparseApplyFtrlV2,
// SparseApplyProximalAdagrad,
// SparseApplyProximalGradientDescent and their ResourceSparseApply* twins, plus
// ResourceSparseApplyKerasMomentum. Gradient row i updates variable row indices[i] with
// the dense op's rule (optimizer_functors.h, in TF's sparse operation order).
//
// Differences from TF, all where TF's result depends on timing or is partial:
// - Every index is checked before anything is written; TF's Momentum, RMSProp, Adadelta
//   and one-element-row loops stop at a bad index with the rows before it updated.
// - A repeated index updates its row once per occurrence, in order (TF does so too when
//   it runs the rows serially; its sharded loops race on repeats). The work is sharded by
//   columns, so every element still sees its updates in index order.
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/apply_op_inputs.h"
#include "kernels/io/optimizer_functors.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/variable_slots.h"

namespace dflow {
namespace {

template <typename Fn>
constexpr bool kIsFtrl =
    std::is_same_v<Fn, optimizer::Ftrl> || std::is_same_v<Fn, optimizer::FtrlV2>;

// The sparse Ftrl kernels check their hyperparameters' signs (TF's texts, which also
// stand for a non-scalar): lr > 0 (or >= 0 with multiply_linear_by_lr), l1, l2 and
// l2_shrinkage >= 0, lr_power <= 0.
template <typename T>
absl::Status CheckFtrlScalars(const OpKernelContext& ctx, const std::vector<std::string>& names,
                              bool multiply_linear_by_lr) {
  for (int i = 5; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    const bool scalar = t.shape().dims() == 0 && t.dtype() == DataTypeOf<T>();
    const T v = scalar ? t.scalar<T>() : T(0);
    const std::string& name = names[i];
    std::string what;
    if (name == "lr" && !(scalar && (v > T(0) || (multiply_linear_by_lr && v >= T(0))))) {
      what = "lr is not a positive scalar (or zero if multiply_linear_by_lr is set)";
    } else if (name == "lr_power" && !(scalar && v <= T(0))) {
      what = "lr_power is not a non-positive scalar";
    } else if ((name == "l1" || name == "l2" || name == "l2_shrinkage") &&
               !(scalar && v >= T(0))) {
      what = absl::StrCat(name == "l2_shrinkage" ? "l2 shrinkage" : name,
                          " regularization strength is not a non-negative scalar");
    }
    if (!what.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", t.shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

// The gradient's and indices' shapes against the variable's, in TF's words; the number of
// elements per row.
absl::StatusOr<int64_t> CheckSparseShapes(const TensorShape& var, const Tensor& grad,
                                          const Tensor& indices) {
  if (var.dims() < 1) {
    return absl::InvalidArgumentError("var must be at least 1 dimensional");
  }
  if (indices.shape().dims() != 1) {
    return absl::InvalidArgumentError("indices must be one-dimensional");
  }
  if (grad.shape().dims() != var.dims()) {
    return absl::InvalidArgumentError("grad must have the same number of dimensions as var");
  }
  int64_t inner = 1;
  for (int d = 1; d < var.dims(); ++d) {
    if (var.dim_size(d) != grad.shape().dim_size(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("var and grad must match in dimension ", d));
    }
    inner *= var.dim_size(d);
  }
  if (grad.shape().dim_size(0) != indices.shape().dim_size(0)) {
    return absl::InvalidArgumentError(
        "grad must be the same size as indices in the first dimension.");
  }
  if (inner <= 0) {
    return absl::InvalidArgumentError("Inner dimension should be greater than zero.");
  }
  return inner;
}

template <typename Tindex>
absl::Status CheckIndices(const Tensor& indices, int64_t rows) {
  const Tindex* idx = indices.data<Tindex>();
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      return absl::InvalidArgumentError(absl::StrCat("Index ", idx[i], " at offset ", i,
                                                     " in indices is out of range"));
    }
  }
  return absl::OkStatus();
}

template <typename Fn, typename T, typename Tindex, bool kResource>
class SparseApplyOp : public OpKernel {
 public:
  static constexpr int kIndices = Fn::kGrad + 1;

  explicit SparseApplyOp(OpKernelConstruction* ctx) : OpKernel(ctx), names_(InputNames(*ctx)) {
    OP_REQUIRES_OK(ctx, ReadApplyAttrs(*ctx, &attrs_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<Slot> slots;
    for (int i = 0; i < Fn::kSlots; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Slot slot, SlotInput(*ctx, i, kResource));
      slots.push_back(std::move(slot));
    }
    optimizer::Args<T> args = attrs_;
    if constexpr (kIsFtrl<Fn>) {
      OP_REQUIRES_OK(ctx, CheckFtrlScalars<T>(*ctx, names_, args.multiply_linear_by_lr));
    }
    OP_REQUIRES_OK(ctx,
                   ReadApplyScalars(*ctx, Fn::kSlots, {Fn::kGrad, kIndices}, names_, &args));
    const Tensor& grad = ctx->input(Fn::kGrad);
    const Tensor& indices = ctx->input(kIndices);
    {
      SlotLocks locks(slots);
      OP_REQUIRES_OK(ctx, CheckApplySlots<T>(*ctx, slots, names_));
      const TensorShape& var = slots[0].value->shape();
      OP_ASSIGN_OR_RETURN(ctx, const int64_t inner, CheckSparseShapes(var, grad, indices));
      OP_REQUIRES_OK(ctx, CheckIndices<Tindex>(indices, var.dim_size(0)));
      const int64_t n = indices.NumElements();
      if (n > 0) {
        OP_REQUIRES_OK(ctx, PrepareApplySlots(ctx, slots, grad, &args));
        const T* g = grad.data<T>();
        const Tindex* idx = indices.data<Tindex>();
        // Sharded by columns: each shard runs every row in order over its columns.
        ParallelForElements(ctx, inner, 12 * Fn::kSlots * n,
                            [&args, g, idx, n, inner](int64_t begin, int64_t end) {
                              using optimizer::Form;
                              if (inner == 1) {
                                optimizer::ApplySparse<Fn, Form::kSparseScalar>(
                                    args, g, idx, n, inner, begin, end);
                              } else {
                                optimizer::ApplySparse<Fn, Form::kSparseRows>(
                                    args, g, idx, n, inner, begin, end);
                              }
                            });
      }
    }
    if (!kResource) ctx->set_output_ref(0, ctx->input_ref(0));
  }

 private:
  const std::vector<std::string> names_;
  optimizer::Args<T> attrs_;
};

template <typename Fn, bool kResource>
absl::Status RegisterForm(KernelRegistry* r, const std::string& op) {
  DFLOW_RETURN_IF_ERROR((r->Register<SparseApplyOp<Fn, float, int32_t, kResource>>(
      CpuKernel(op).TypeConstraint<float>("T").TypeConstraint<int32_t>("Tindices"))));
  DFLOW_RETURN_IF_ERROR((r->Register<SparseApplyOp<Fn, float, int64_t, kResource>>(
      CpuKernel(op).TypeConstraint<float>("T").TypeConstraint<int64_t>("Tindices"))));
  DFLOW_RETURN_IF_ERROR((r->Register<SparseApplyOp<Fn, double, int32_t, kResource>>(
      CpuKernel(op).TypeConstraint<double>("T").TypeConstraint<int32_t>("Tindices"))));
  return r->Register<SparseApplyOp<Fn, double, int64_t, kResource>>(
      CpuKernel(op).TypeConstraint<double>("T").TypeConstraint<int64_t>("Tindices"));
}

// SparseApply<name> and ResourceSparseApply<name>.
template <typename Fn>
absl::Status RegisterBoth(KernelRegistry* r, const std::string& name) {
  DFLOW_RETURN_IF_ERROR((RegisterForm<Fn, false>(r, "SparseApply" + name)));
  return RegisterForm<Fn, true>(r, "ResourceSparseApply" + name);
}

}  // namespace

absl::Status RegisterSparseApplyKernels(KernelRegistry* r) {
  namespace opt = optimizer;
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Momentum>(r, "Momentum"));
  DFLOW_RETURN_IF_ERROR(
      (RegisterForm<opt::KerasMomentum, true>(r, "ResourceSparseApplyKerasMomentum")));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Adagrad>(r, "Adagrad"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::AdagradV2>(r, "AdagradV2"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::RMSProp>(r, "RMSProp"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::CenteredRMSProp>(r, "CenteredRMSProp"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Adadelta>(r, "Adadelta"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::Ftrl>(r, "Ftrl"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::FtrlV2>(r, "FtrlV2"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::ProximalAdagrad>(r, "ProximalAdagrad"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<opt::AdagradDA>(r, "AdagradDA"));
  return RegisterBoth<opt::ProximalGradientDescent>(r, "ProximalGradientDescent");
}

}  // namespace dflow
