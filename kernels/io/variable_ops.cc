// TF 1.x variable kernels: VariableV2, Assign, AssignAdd, AssignSub,
// IsVariableInitialized and ApplyGradientDescent.
//
// A variable is a RefSlot in its device's VariableStore (runtime/variable_store.h), so
// its value persists across steps and is private to the session. Updates are
// copy-on-write: an update writes in place only when the variable holds the sole
// reference to its buffer; otherwise it builds a new tensor and swaps it in. Readers
// that already hold the old value keep a consistent snapshot (TF's in-place races, where
// a fetched value changes after the fact, cannot happen), and Assign stores the
// assigned tensor itself without copying.
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/variable_update.h"
#include "runtime/variable_store.h"

namespace dflow {
namespace {

KernelDefBuilder CpuKernel(std::string op) {
  return KernelDefBuilder(std::move(op)).Device("CPU");
}

class VariableV2Op : public CheapOpKernel {
 public:
  explicit VariableV2Op(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shape", &shape_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("container", &container_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shared_name", &shared_name_));
    if (shared_name_.empty()) shared_name_ = ctx->name();
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(
        ctx, RefSlot * slot,
        ctx->device()->variables()->LookupOrCreate(container_, shared_name_, dtype_, shape_));
    ctx->set_output_ref(0, slot);
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape shape_;
  std::string container_;
  std::string shared_name_;
};

// The variable behind ref input 0 (an internal error if the graph wired a value there).
absl::StatusOr<RefSlot*> RefInput(const OpKernelContext& ctx) {
  RefSlot* slot = ctx.input_ref(0);
  if (slot == nullptr) {
    return absl::InternalError(
        absl::StrCat(ctx.kernel().type_string(), ": input 0 is not a reference (variable)"));
  }
  return slot;
}

class AssignOp : public CheapOpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_shape", &validate_shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, RefSlot * slot, RefInput(*ctx));
    const Tensor& rhs = ctx->input(1);
    {
      absl::MutexLock lock(slot->mu());
      Tensor* value = slot->value();
      if (validate_shape_) OP_REQUIRES_OK(ctx, CheckShape(*ctx, *slot, *value, rhs));
      // The old buffer is released when `old` dies, after the lock.
      Tensor old = std::move(*value);
      *value = rhs;
    }
    ctx->set_output_ref(0, slot);
  }

 private:
  // TF compares with the held value, or, before the first assignment, with the shape
  // the variable was declared with.
  static absl::Status CheckShape(const OpKernelContext& ctx, const RefSlot& slot,
                                 const Tensor& held, const Tensor& rhs) {
    if (held.IsInitialized()) {
      if (held.shape() == rhs.shape()) return absl::OkStatus();
      return ShapeError(held.shape().DebugString(), rhs);
    }
    const PartialShape* declared = ctx.device()->variables()->DeclaredShape(&slot);
    if (declared == nullptr || !declared->IsFullyDefined() ||
        PartialShape(std::vector<int64_t>(rhs.shape().dim_sizes().begin(),
                                          rhs.shape().dim_sizes().end())) == *declared) {
      return absl::OkStatus();
    }
    return ShapeError(declared->ToString(), rhs);
  }
  static absl::Status ShapeError(const std::string& lhs, const Tensor& rhs) {
    return absl::InvalidArgumentError(
        absl::StrCat("Assign requires shapes of both tensors to match. lhs shape= ", lhs,
                     " rhs shape= ", rhs.shape().DebugString()));
  }

  bool validate_shape_ = true;
};

// var += scale * delta (variable_update.h): AssignAdd (scale 1), AssignSub (-1) and
// ApplyGradientDescent (-alpha), on the variable's ref slot.
class UpdateOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, RefSlot * slot, RefInput(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, const double scale, Scale(*ctx));
    const Tensor& delta = ctx->input(DeltaIndex());
    {
      absl::MutexLock lock(slot->mu());
      Tensor* value = slot->value();
      OP_REQUIRES(ctx, value->IsInitialized(),
                  absl::FailedPreconditionError(
                      absl::StrCat("Attempting to use uninitialized value ", slot->name())));
      OP_REQUIRES_OK(ctx, CheckShapes(*ctx, *value, delta));
      OP_REQUIRES_OK(ctx, AddScaled(ctx, scale, delta, value));
    }
    ctx->set_output_ref(0, slot);
  }

 protected:
  virtual int DeltaIndex() const = 0;
  // The factor applied to delta.
  virtual absl::StatusOr<double> Scale(const OpKernelContext& ctx) const = 0;
  virtual absl::Status CheckShapes(const OpKernelContext& ctx, const Tensor& var,
                                   const Tensor& delta) const = 0;
};

template <int kSign>
class AssignUpdateOp : public UpdateOp {
 public:
  using UpdateOp::UpdateOp;
  bool IsExpensive() const override { return false; }

 protected:
  int DeltaIndex() const override { return 1; }
  absl::StatusOr<double> Scale(const OpKernelContext&) const override { return kSign; }
  absl::Status CheckShapes(const OpKernelContext&, const Tensor& var,
                           const Tensor& delta) const override {
    if (var.shape() == delta.shape()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot update variable with shape ", var.shape().DebugString(),
        " using a Tensor with shape ", delta.shape().DebugString(),
        ", shapes must be equal."));
  }
};

// var -= alpha * delta.
class ApplyGradientDescentOp : public UpdateOp {
 public:
  using UpdateOp::UpdateOp;

 protected:
  int DeltaIndex() const override { return 2; }
  absl::StatusOr<double> Scale(const OpKernelContext& ctx) const override {
    DFLOW_ASSIGN_OR_RETURN(const double alpha, ScalarAsDouble(ctx.input(1), "alpha"));
    return -alpha;
  }
  absl::Status CheckShapes(const OpKernelContext& ctx, const Tensor& var,
                           const Tensor& delta) const override {
    if (var.shape() == delta.shape()) return absl::OkStatus();
    return KernelError(ctx, "var and delta do not have the same shape",
                       var.shape().DebugString(), " ", delta.shape().DebugString());
  }
};

class IsVariableInitializedOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, RefSlot * slot, RefInput(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape({})));
    out->scalar<bool>() = slot->initialized();
  }
};

}  // namespace

absl::Status RegisterVariableKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<VariableV2Op>(CpuKernel("VariableV2")));
  DFLOW_RETURN_IF_ERROR(registry->Register<AssignOp>(CpuKernel("Assign")));
  DFLOW_RETURN_IF_ERROR(registry->Register<AssignUpdateOp<1>>(CpuKernel("AssignAdd")));
  DFLOW_RETURN_IF_ERROR(registry->Register<AssignUpdateOp<-1>>(CpuKernel("AssignSub")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<IsVariableInitializedOp>(CpuKernel("IsVariableInitialized")));
  return registry->Register<ApplyGradientDescentOp>(
      CpuKernel("ApplyGradientDescent").TypeConstraint("T", {DT_FLOAT, DT_DOUBLE}));
}

}  // namespace dflow
