// Optimizer apply ops, ref and resource forms: ApplyMomentum, ApplyAdam, ApplyRMSProp,
// ApplyCenteredRMSProp, ApplyAdagrad, ApplyAdagradV2, ApplyAdadelta and their Resource*
// twins (the update rules: optimizer_functors.h), float and double.
//
// An op updates its variable and accumulators ("slots") together under their locks.
// Updates are copy-on-write as everywhere in dflow (variable_update.h): a slot whose
// buffer is shared with a reader is copied first, so values already fetched never change.
// Nesterov (ApplyMomentum, ApplyAdam) and update_slots (Adagrad: false leaves accum as it
// is) follow TF's attrs;
// use_locking is implied: dflow always locks.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/optimizer_functors.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/resource_handle_input.h"
#include "runtime/variable_store.h"

namespace dflow {
namespace {

using ResourceVariable = VariableStore::ResourceVariable;

// One tensor an apply op updates: its lock, its value and what errors call it.
struct Slot {
  absl::Mutex* mu = nullptr;
  Tensor* value = nullptr;
  std::string name;
  std::shared_ptr<ResourceVariable> resource;  // keeps a resource variable alive
};

absl::StatusOr<Slot> RefSlotInput(const OpKernelContext& ctx, int index) {
  RefSlot* ref = ctx.input_ref(index);
  if (ref == nullptr) {
    return absl::InternalError(absl::StrCat(ctx.kernel().type_string(), ": input ", index,
                                            " is not a reference (variable)"));
  }
  return Slot{ref->mu(), nullptr, ref->name(), nullptr};
}

absl::StatusOr<Slot> ResourceSlotInput(const OpKernelContext& ctx, int index) {
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<ResourceVariable> var, FindVariableInput(ctx, index));
  Slot slot{&var->mu, &var->value, ctx.input(index).scalar<ResourceHandleProto>().name(), nullptr};
  slot.resource = std::move(var);
  return slot;
}

// Locks each distinct mutex once, in address order (as TF's
// MaybeLockVariableInputMutexesInOrder), so two ops updating the same variables in
// different input orders cannot deadlock; unlocks on destruction.
class SlotLocks {
 public:
  explicit SlotLocks(const std::vector<Slot>& slots) {
    for (const Slot& s : slots) locked_.push_back(s.mu);
    std::sort(locked_.begin(), locked_.end());
    locked_.erase(std::unique(locked_.begin(), locked_.end()), locked_.end());
    for (absl::Mutex* mu : locked_) mu->Lock();
  }
  ~SlotLocks() {
    for (auto it = locked_.rbegin(); it != locked_.rend(); ++it) (*it)->Unlock();
  }
  SlotLocks(const SlotLocks&) = delete;
  SlotLocks& operator=(const SlotLocks&) = delete;

 private:
  std::vector<absl::Mutex*> locked_;
};

template <typename Fn, typename T, bool kResource>
class ApplyOp : public OpKernel {
 public:
  explicit ApplyOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    if (ctx->HasAttr("use_nesterov")) OP_REQUIRES_OK(ctx, ctx->GetAttr("use_nesterov", &nesterov_));
    if (ctx->HasAttr("update_slots")) OP_REQUIRES_OK(ctx, ctx->GetAttr("update_slots", &update_slots_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<Slot> slots;
    for (int i = 0; i < Fn::kSlots; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Slot slot, kResource ? ResourceSlotInput(*ctx, i) : RefSlotInput(*ctx, i));
      slots.push_back(std::move(slot));
    }
    optimizer::Args<T> args;
    args.nesterov = nesterov_;
    args.update_slots = update_slots_;
    OP_REQUIRES_OK(ctx, ReadScalars(*ctx, &args));
    const Tensor& grad = ctx->input(Fn::kGrad);
    {
      SlotLocks locks(slots);
      if (!kResource) {
        for (int i = 0; i < Fn::kSlots; ++i) slots[i].value = ctx->input_ref(i)->value();
      }
      OP_REQUIRES_OK(ctx, PrepareSlots(ctx, grad, &slots, &args));
      args.grad = grad.data<T>();
      ParallelForElements(ctx, grad.NumElements(), 12 * Fn::kSlots,
                          [&args](int64_t begin, int64_t end) { Fn::Apply(args, begin, end); });
    }
    if (!kResource) ctx->set_output_ref(0, ctx->input_ref(0));
  }

 private:
  // The scalar inputs: every input after the slots except the gradient.
  absl::Status ReadScalars(const OpKernelContext& ctx, optimizer::Args<T>* args) const {
    int n = 0;
    for (int i = Fn::kSlots; i < ctx.num_inputs(); ++i) {
      if (i == Fn::kGrad) continue;
      const Tensor& t = ctx.input(i);
      if (t.shape().dims() != 0 || t.dtype() != DataTypeOf<T>()) {
        return absl::InvalidArgumentError(absl::StrCat(
            type_string(), ": input ", i, " must be a ", DataTypeString(DataTypeOf<T>()),
            " scalar, not ", DataTypeString(t.dtype()), t.shape().DebugString()));
      }
      args->scalar[n++] = t.scalar<T>();
    }
    return absl::OkStatus();
  }

  // Checks every slot is initialized with the gradient's shape, and makes each writable
  // (copied when its buffer is shared). REQUIRES: the slots' locks held.
  absl::Status PrepareSlots(OpKernelContext* ctx, const Tensor& grad, std::vector<Slot>* slots,
                            optimizer::Args<T>* args) const {
    for (int i = 0; i < Fn::kSlots; ++i) {
      Slot& s = (*slots)[i];
      if (!s.value->IsInitialized()) {
        return absl::FailedPreconditionError(
            absl::StrCat("Attempting to use uninitialized value ", s.name));
      }
      if (s.value->dtype() != DataTypeOf<T>()) {
        return absl::InvalidArgumentError(absl::StrCat(
            type_string(), ": ", s.name, " holds ", DataTypeString(s.value->dtype()),
            ", the op updates ", DataTypeString(DataTypeOf<T>())));
      }
      if (s.value->shape() != grad.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            i == 0 ? "var" : s.name, " and grad do not have the same shape",
            s.value->shape().DebugString(), " ", grad.shape().DebugString()));
      }
    }
    for (int i = 0; i < Fn::kSlots; ++i) {
      Tensor* value = (*slots)[i].value;
      if (!value->IsSoleOwner() || value->SharesBufferWith(grad)) {
        DFLOW_ASSIGN_OR_RETURN(Tensor copy,
                               Tensor::Allocate(ctx->allocator(), value->dtype(), value->shape()));
        if (copy.TotalBytes() > 0) std::memcpy(copy.raw_data(), value->raw_data(), copy.TotalBytes());
        *value = std::move(copy);
      }
      args->slot[i] = value->data<T>();
    }
    return absl::OkStatus();
  }

  bool nesterov_ = false;
  bool update_slots_ = true;
};

template <typename Fn>
absl::Status RegisterBoth(KernelRegistry* r, const std::string& op) {
  DFLOW_RETURN_IF_ERROR((r->Register<ApplyOp<Fn, float, false>>(
      CpuKernel(op).TypeConstraint<float>("T"))));
  DFLOW_RETURN_IF_ERROR((r->Register<ApplyOp<Fn, double, false>>(
      CpuKernel(op).TypeConstraint<double>("T"))));
  DFLOW_RETURN_IF_ERROR((r->Register<ApplyOp<Fn, float, true>>(
      CpuKernel("Resource" + op).TypeConstraint<float>("T"))));
  return r->Register<ApplyOp<Fn, double, true>>(CpuKernel("Resource" + op).TypeConstraint<double>("T"));
}

}  // namespace

absl::Status RegisterApplyKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(RegisterBoth<optimizer::Momentum>(r, "ApplyMomentum"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<optimizer::Adam>(r, "ApplyAdam"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<optimizer::RMSProp>(r, "ApplyRMSProp"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<optimizer::CenteredRMSProp>(r, "ApplyCenteredRMSProp"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<optimizer::Adagrad>(r, "ApplyAdagrad"));
  DFLOW_RETURN_IF_ERROR(RegisterBoth<optimizer::AdagradV2>(r, "ApplyAdagradV2"));
  return RegisterBoth<optimizer::Adadelta>(r, "ApplyAdadelta");
}

}  // namespace dflow
