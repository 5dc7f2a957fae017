// StackV2, StackPushV2, StackPopV2 and StackCloseV2: the per-step stacks TF 1's while-loop
// gradients keep forward values on (pushed in the forward loop, popped in the backward
// one). A stack lives in the step's resources (runtime/step_resources.h), so whatever a
// step leaves on it is freed when the step ends.
//
// As in TF 2.21, max_size is not enforced (TF accepts pushes past it) and swap_memory (GPU
// to host swapping) does not apply on the CPU. A push of another dtype than the stack's is
// refused (TF: "Must have type ..."); unlike TF, which lets a closed stack's handle go on
// working, a closed stack is gone (NOT_FOUND), and a pop of the wrong dtype is
// INVALID_ARGUMENT rather than TF's INTERNAL.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "kernels/cpu/step_resource_handle.h"

namespace dflow {
namespace {

const char kTypeName[] = "N10tensorflow5StackE";

class Stack final : public StepResource {
 public:
  Stack(std::string name, DataType dtype) : name_(std::move(name)), dtype_(dtype) {}
  std::string TypeName() const override { return kTypeName; }

  absl::Status Push(const Tensor& value) {
    if (value.dtype() != dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack[", name_, "]: cannot push a ", DataTypeString(value.dtype()),
          " tensor onto a stack of ", DataTypeString(dtype_)));
    }
    absl::MutexLock lock(&mu_);
    values_.push_back(value);
    return absl::OkStatus();
  }

  absl::StatusOr<Tensor> Pop(DataType requested) {
    if (requested != dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack[", name_, "] holds ", DataTypeString(dtype_), " but the op pops ",
          DataTypeString(requested)));
    }
    absl::MutexLock lock(&mu_);
    if (values_.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Stack[", name_, "] is empty when calling Pop()."));
    }
    Tensor value = std::move(values_.back());
    values_.pop_back();
    return value;
  }

 private:
  const std::string name_;
  const DataType dtype_;
  absl::Mutex mu_;
  std::vector<Tensor> values_ ABSL_GUARDED_BY(mu_);
};

class StackOp : public CheapOpKernel {
 public:
  explicit StackOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("elem_type", &dtype_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("stack_name", &name_));
    if (name_.empty()) name_ = ctx->name();
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, StepResources * resources, StepResourcesOf(*ctx));
    const std::string name = resources->UniqueName(name_);
    auto stack = std::make_shared<Stack>(name, dtype_);
    OP_REQUIRES(ctx, resources->AddIfAbsent(name, stack) == stack,
                absl::InvalidArgumentError(
                    absl::StrCat("Stack name ", name, " is already taken in this step")));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * handle, ctx->allocate_output(0, TensorShape()));
    WriteStepResourceHandle(*ctx, name, kTypeName, handle);
  }

 private:
  DataType dtype_ = DT_INVALID;
  std::string name_;
};

class StackPushOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<Stack> stack,
                        LookupStepResource<Stack>(*ctx, 0, kTypeName));
    OP_REQUIRES_OK(ctx, stack->Push(ctx->input(1)));
    ctx->set_output(0, ctx->input(1));
  }
};

class StackPopOp : public CheapOpKernel {
 public:
  explicit StackPopOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("elem_type", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<Stack> stack,
                        LookupStepResource<Stack>(*ctx, 0, kTypeName));
    OP_ASSIGN_OR_RETURN(ctx, Tensor value, stack->Pop(dtype_));
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

// Closing drops the stack and what is left on it; the handle then finds nothing.
class StackCloseOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<Stack> stack,
                        LookupStepResource<Stack>(*ctx, 0, kTypeName));
    OP_ASSIGN_OR_RETURN(ctx, StepResources * resources, StepResourcesOf(*ctx));
    resources->Remove(ctx->input(0).scalar<ResourceHandleProto>().name());
  }
};

}  // namespace

absl::Status RegisterStackKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register<StackOp>(CpuKernel("StackV2")));
  DFLOW_RETURN_IF_ERROR(r->Register<StackPushOp>(CpuKernel("StackPushV2")));
  DFLOW_RETURN_IF_ERROR(r->Register<StackPopOp>(CpuKernel("StackPopV2")));
  return r->Register<StackCloseOp>(CpuKernel("StackCloseV2"));
}

}  // namespace dflow
