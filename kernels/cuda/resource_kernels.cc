// CUDA kernels for resource variables and the dense optimizer updates, so that a training
// step keeps its variables on the GPU as TF does (VarHandleOp on the GPU, the value in
// device memory, the handle in host memory).
//
// - VarHandleOp and VarIsInitializedOp: as on the CPU, their outputs in pinned host memory
//   (HostMemory args of the table).
// - ReadVariableOp and AssignVariableOp only move references to tensors: the CPU kernels
//   (kernels/io/resource_variable_ops.cc) are device-agnostic and are registered as is.
// - AssignAdd/SubVariableOp, ResourceApplyGradientDescent and the ResourceApply* rules of
//   optimizer_launchers.h update in place on the compute stream, under the variables'
//   locks, copy-on-write as on the CPU: a value a reader still holds (or one aliasing the
//   gradient) is first copied on the device, so fetched values never change.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "kernels/cuda/optimizer_launchers.h"
#include "kernels/cuda/register_cuda_kernels.h"
#include "kernels/io/apply_op_inputs.h"
#include "kernels/io/resource_handle_input.h"
#include "kernels/io/variable_slots.h"
#include "proto/resource_handle.pb.h"
#include "runtime/variable_store.h"

namespace dflow::cuda {
namespace {

// MakeWritable (kernels/io/variable_slots.h) with the copy made on the GPU, on the compute
// stream, so it follows every kernel already enqueued there that reads the old value.
absl::Status MakeWritableOnGpu(OpKernelContext* ctx, cudaStream_t stream, Tensor* value,
                               absl::Span<const Tensor* const> inputs) {
  bool shared = !value->IsSoleOwner();
  for (const Tensor* in : inputs) shared = shared || value->SharesBufferWith(*in);
  if (!shared) return absl::OkStatus();
  DFLOW_ASSIGN_OR_RETURN(Tensor copy,
                         Tensor::Allocate(ctx->allocator(), value->dtype(), value->shape()));
  if (copy.TotalBytes() > 0) {
    DFLOW_RETURN_IF_ERROR(LaunchStatus(
        *ctx, cudaMemcpyAsync(copy.raw_data(), value->raw_data(), copy.TotalBytes(),
                              cudaMemcpyDeviceToDevice, stream)));
  }
  *value = std::move(copy);
  return absl::OkStatus();
}

class VarHandleOp : public CudaOpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* ctx) : CudaOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, VarHandleFromAttrs(ctx, &handle_));
    handle_.set_device(ctx->device()->name());
  }

 protected:
  void ComputeOnGpu(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor out,
                        Tensor::Allocate(gpu()->host_allocator(), DT_RESOURCE, TensorShape()));
    out.scalar<ResourceHandleProto>() = handle_;
    ctx->set_output(0, std::move(out));
  }

 private:
  ResourceHandleProto handle_;
};

class VarIsInitializedOp : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;

 protected:
  void ComputeOnGpu(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResourceHandleProto* h, HandleInput(*ctx, 0));
    std::shared_ptr<VariableStore::ResourceVariable> var =
        ctx->device()->variables()->FindResource(h->container(), h->name());
    bool initialized = false;
    if (var != nullptr) {
      absl::MutexLock lock(&var->mu);
      initialized = var->value.IsInitialized();
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor out,
                        Tensor::Allocate(gpu()->host_allocator(), DT_BOOL, TensorShape()));
    out.scalar<bool>() = initialized;
    ctx->set_output(0, std::move(out));
  }
};

// var += scale * delta: AssignAddVariableOp (kSign 1, no alpha), AssignSubVariableOp
// (-1), ResourceApplyGradientDescent(var, alpha, delta) (-1 times alpha, read on the GPU).
template <typename T, int kSign, bool kAlpha>
class AddToVariableOp : public CudaOpKernel {
 public:
  using CudaOpKernel::CudaOpKernel;

 protected:
  void ComputeOnGpu(OpKernelContext* ctx) override {
    const int delta_index = kAlpha ? 2 : 1;
    if (kAlpha) OP_REQUIRES_OK(ctx, CheckScalarInput(*ctx, 1, DataTypeOf<T>(), "alpha"));
    OP_ASSIGN_OR_RETURN(ctx, Slot var, SlotInput(*ctx, 0, /*resource=*/true));
    const Tensor& delta = ctx->input(delta_index);
    SlotLocks lock({var});
    OP_REQUIRES(ctx, var.value->IsInitialized(),
                VariableNotFound(ctx->input(0).scalar<ResourceHandleProto>()));
    OP_REQUIRES(ctx, var.value->dtype() == DataTypeOf<T>(),
                OpError(*ctx, "the variable holds ", DataTypeString(var.value->dtype()),
                        ", the op adds ", DataTypeString(DataTypeOf<T>())));
    OP_REQUIRES(ctx, var.value->shape() == delta.shape(), ShapeError(*var.value, delta));
    const Tensor* inputs[] = {&delta};
    OP_REQUIRES_OK(ctx, MakeWritableOnGpu(ctx, stream(), var.value, inputs));
    const T* alpha = kAlpha ? ctx->input(1).data<T>() : nullptr;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchAddScaled<T>(var.value->data<T>(),
                                                              delta.data<T>(), alpha, kSign,
                                                              delta.NumElements(), stream())));
  }

 private:
  // The CPU kernels' texts (resource_variable_ops.cc).
  static absl::Status ShapeError(const Tensor& var, const Tensor& delta) {
    if (kAlpha) {
      return absl::InvalidArgumentError(absl::StrCat("var and delta do not have the same shape",
                                                     var.shape().DebugString(), " ",
                                                     delta.shape().DebugString()));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot update variable with shape ", var.shape().DebugString(),
        " using a Tensor with shape ", delta.shape().DebugString(), ", shapes must be equal."));
  }
};

struct ApplyRule {
  const char* op;
  OptimizerRule rule;
  int num_slots, grad_index;
  int num_scalars;  // what the device rule reads (optimizer_kernels.cu)
};

// TF's input orders (optimizer_functors.h names each rule's slots and gradient).
constexpr ApplyRule kApplyRules[] = {
    {"ResourceApplyMomentum", OptimizerRule::kMomentum, 2, 3, 2},
    {"ResourceApplyKerasMomentum", OptimizerRule::kKerasMomentum, 2, 3, 2},
    {"ResourceApplyAdam", OptimizerRule::kAdam, 3, 9, 6},
    {"ResourceApplyRMSProp", OptimizerRule::kRMSProp, 3, 7, 4},
    {"ResourceApplyCenteredRMSProp", OptimizerRule::kCenteredRMSProp, 4, 8, 4},
    {"ResourceApplyAdagrad", OptimizerRule::kAdagrad, 2, 3, 1},
    {"ResourceApplyAdagradV2", OptimizerRule::kAdagradV2, 2, 4, 2},
};

// A dense ResourceApply* op: `num_slots` resource inputs (the variable first), the
// gradient at `grad_index`, every other input a scalar hyperparameter.
template <typename T>
class ApplyOp : public CudaOpKernel {
 public:
  ApplyOp(OpKernelConstruction* ctx, const ApplyRule& rule)
      : CudaOpKernel(ctx), rule_(rule.rule), num_slots_(rule.num_slots),
        grad_index_(rule.grad_index), names_(InputNames(*ctx)) {
    // The device rule reads exactly this many scalar pointers.
    const int inputs = ctx->op_def().input_arg_size();
    OP_REQUIRES(ctx, inputs - num_slots_ - 1 == rule.num_scalars,
                absl::InternalError(absl::StrCat(rule.op, " '", ctx->name(), "': ", inputs,
                                                 " inputs, the GPU rule expects ",
                                                 rule.num_scalars, " scalars")));
    optimizer::Args<T> attrs;
    OP_REQUIRES_OK(ctx, ReadApplyAttrs(*ctx, &attrs));
    nesterov_ = attrs.nesterov;
    update_slots_ = attrs.update_slots;
  }

 protected:
  void ComputeOnGpu(OpKernelContext* ctx) override {
    DenseUpdate<T> update;
    int num_scalars = 0;
    for (int i = num_slots_; i < ctx->num_inputs(); ++i) {
      if (i == grad_index_) continue;
      OP_REQUIRES_OK(ctx, CheckScalarInput(*ctx, i, DataTypeOf<T>(), names_[i]));
      update.scalar[num_scalars++] = ctx->input(i).data<T>();
    }
    std::vector<Slot> slots;
    for (int i = 0; i < num_slots_; ++i) {
      OP_ASSIGN_OR_RETURN(ctx, Slot slot, SlotInput(*ctx, i, /*resource=*/true));
      slots.push_back(std::move(slot));
    }
    const Tensor& grad = ctx->input(grad_index_);
    SlotLocks locks(slots);
    OP_REQUIRES_OK(ctx, CheckApplySlots<T>(*ctx, slots, names_));
    const TensorShape& var = slots[0].value->shape();
    OP_REQUIRES(ctx, grad.shape() == var,
                absl::InvalidArgumentError(absl::StrCat("var and grad do not have the same shape",
                                                        var.DebugString(), " ",
                                                        grad.shape().DebugString())));
    for (int i = 0; i < num_slots_; ++i) {
      const Tensor* inputs[] = {&grad};
      OP_REQUIRES_OK(ctx, MakeWritableOnGpu(ctx, stream(), slots[i].value, inputs));
      update.slot[i] = slots[i].value->data<T>();
    }
    update.grad = grad.data<T>();
    update.n = grad.NumElements();
    update.nesterov = nesterov_;
    update.update_slots = update_slots_;
    OP_REQUIRES_OK(ctx, LaunchStatus(*ctx, LaunchDenseUpdate<T>(rule_, update, stream())));
  }

 private:
  const OptimizerRule rule_;
  const int num_slots_, grad_index_;
  const std::vector<std::string> names_;
  bool nesterov_ = false;
  bool update_slots_ = true;
};

// The kernel `op` has on the CPU, which the GPU reuses (ReadVariableOp, AssignVariableOp).
absl::Status ReuseCpuKernel(KernelRegistry* registry, const char* op) {
  const auto cpu = registry->Entries(op, "CPU");
  if (cpu.size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "RegisterCudaResourceKernels: expected one CPU kernel of ", op,
        " (register the io kernels first), found ", cpu.size()));
  }
  return registry->Register(GpuKernel(op), cpu[0].second);
}

template <typename Kernel>
KernelFactory Factory() {
  return [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
    return std::make_unique<Kernel>(c);
  };
}

template <typename T>
using AssignAdd = AddToVariableOp<T, 1, false>;
template <typename T>
using AssignSub = AddToVariableOp<T, -1, false>;
template <typename T>
using GradientDescent = AddToVariableOp<T, -1, true>;

// The kernel for the dtype in `attr`: one registration per op, exactly the table's def
// (the registry then offers the GPU kernel for the table's dtypes, as on simulated GPUs).
template <template <typename> class Kernel>
KernelFactory TypedFactory(const char* attr) {
  return [attr](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
    DataType t = DT_INVALID;
    if (!c->GetAttr(attr, &t).ok()) t = DT_INVALID;
    switch (t) {
      case DT_FLOAT: return std::make_unique<Kernel<float>>(c);
      case DT_DOUBLE: return std::make_unique<Kernel<double>>(c);
      case DT_INT32: return std::make_unique<Kernel<int32_t>>(c);
      case DT_INT64: return std::make_unique<Kernel<int64_t>>(c);
      default: break;
    }
    c->SetStatus(absl::InternalError(absl::StrCat(c->def().op(), ": no CUDA kernel for ",
                                                  DataTypeString(t))));
    return nullptr;
  };
}

KernelFactory ApplyFactory(const ApplyRule& r) {
  return [r](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
    DataType t = DT_INVALID;
    if (!c->GetAttr("T", &t).ok()) t = DT_INVALID;
    if (t == DT_FLOAT) return std::make_unique<ApplyOp<float>>(c, r);
    if (t == DT_DOUBLE) return std::make_unique<ApplyOp<double>>(c, r);
    c->SetStatus(absl::InternalError(absl::StrCat(r.op, " '", c->name(),
                                                  "': no CUDA kernel for ",
                                                  DataTypeString(t))));
    return nullptr;
  };
}

}  // namespace

absl::Status RegisterCudaResourceKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel("VarHandleOp"), Factory<VarHandleOp>()));
  DFLOW_RETURN_IF_ERROR(
      registry->Register(GpuKernel("VarIsInitializedOp"), Factory<VarIsInitializedOp>()));
  DFLOW_RETURN_IF_ERROR(ReuseCpuKernel(registry, "ReadVariableOp"));
  DFLOW_RETURN_IF_ERROR(ReuseCpuKernel(registry, "AssignVariableOp"));
  DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel("AssignAddVariableOp"),
                                           TypedFactory<AssignAdd>("dtype")));
  DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel("AssignSubVariableOp"),
                                           TypedFactory<AssignSub>("dtype")));
  DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel("ResourceApplyGradientDescent"),
                                           TypedFactory<GradientDescent>("T")));
  for (const ApplyRule& r : kApplyRules) {
    DFLOW_RETURN_IF_ERROR(registry->Register(GpuKernel(r.op), ApplyFactory(r)));
  }
  return absl::OkStatus();
}

}  // namespace dflow::cuda
