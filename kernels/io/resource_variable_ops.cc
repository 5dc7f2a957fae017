// TF 2 resource variable kernels: VarHandleOp, ReadVariableOp, AssignVariableOp,
// AssignAddVariableOp, AssignSubVariableOp, ResourceApplyGradientDescent,
// VarIsInitializedOp, VariableShape, ResourceGather and DestroyResourceOp.
//
// A handle is a scalar DT_RESOURCE tensor holding TF's ResourceHandleProto (device,
// container, name, dtype and shape); the value lives in the device's VariableStore
// (runtime/variable_store.h), so it persists across steps and is private to the session.
// The placer keeps every op that takes a handle on the handle's device (resource edges,
// graph/colocation_graph.cc). Updates are copy-on-write as for VariableV2
// (variable_ops.cc): values already read keep a consistent snapshot.
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/gather.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/io/register_io_kernels.h"
#include "kernels/io/resource_handle_input.h"
#include "kernels/io/variable_update.h"
#include "runtime/variable_store.h"

namespace dflow {
namespace {

using ResourceVariable = VariableStore::ResourceVariable;

class VarHandleOp : public CheapOpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, VarHandleFromAttrs(ctx, &handle_));
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    ResourceHandleProto handle = handle_;
    handle.set_device(ctx->device()->name());
    out->scalar<ResourceHandleProto>() = std::move(handle);
  }

 private:
  ResourceHandleProto handle_;
};

class ReadVariableOp : public CheapOpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<ResourceVariable> var,
                        ExistingVariable(*ctx, dtype_, "read"));
    absl::MutexLock lock(&var->mu);
    OP_REQUIRES(ctx, var->value.IsInitialized(),
                VariableNotFound(ctx->input(0).scalar<ResourceHandleProto>()));
    ctx->set_output(0, var->value);
  }

 private:
  DataType dtype_ = DT_INVALID;
};

class AssignVariableOp : public CheapOpKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    if (ctx->HasAttr("validate_shape")) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_shape", &validate_shape_));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResourceHandleProto* h, HandleInput(*ctx, 0));
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, value.dtype() == dtype_, WrongDtype("assign", dtype_, value.dtype()));
    std::shared_ptr<ResourceVariable> var =
        ctx->device()->variables()->LookupOrCreateResource(h->container(), h->name(), dtype_);
    OP_REQUIRES(ctx, var->dtype == dtype_, WrongDtype("assign", var->dtype, dtype_));
    Tensor old;  // released after the lock
    absl::MutexLock lock(&var->mu);
    if (validate_shape_ && var->value.IsInitialized()) {
      OP_REQUIRES(ctx, var->value.shape() == value.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Trying to assign to variable with tensor with wrong shape. Expected ",
                      var->value.shape().DebugString(), " got ", value.shape().DebugString())));
    }
    old = std::move(var->value);
    var->value = value;
  }

 private:
  DataType dtype_ = DT_INVALID;
  bool validate_shape_ = false;
};

// var += scale * delta (variable_update.h): AssignAddVariableOp (1),
// AssignSubVariableOp (-1) and ResourceApplyGradientDescent (-alpha).
class ResourceUpdateOp : public CheapOpKernel {
 public:
  explicit ResourceUpdateOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    if (ctx->HasAttr("dtype")) OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    if (ctx->HasAttr("T")) OP_REQUIRES_OK(ctx, ctx->GetAttr("T", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const double scale, Scale(*ctx));
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<ResourceVariable> var,
                        ExistingVariable(*ctx, dtype_, "add to"));
    const Tensor& delta = ctx->input(DeltaIndex());
    absl::MutexLock lock(&var->mu);
    OP_REQUIRES(ctx, var->value.IsInitialized(),
                VariableNotFound(ctx->input(0).scalar<ResourceHandleProto>()));
    OP_REQUIRES_OK(ctx, CheckShapes(var->value, delta));
    OP_REQUIRES_OK(ctx, AddScaled(ctx, scale, delta, &var->value));
  }

 protected:
  virtual int DeltaIndex() const { return 1; }
  virtual absl::StatusOr<double> Scale(const OpKernelContext& ctx) const = 0;
  virtual absl::Status CheckShapes(const Tensor& var, const Tensor& delta) const {
    if (var.shape() == delta.shape()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot update variable with shape ", var.shape().DebugString(),
        " using a Tensor with shape ", delta.shape().DebugString(), ", shapes must be equal."));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

template <int kSign>
class AssignUpdateVariableOp : public ResourceUpdateOp {
 public:
  using ResourceUpdateOp::ResourceUpdateOp;

 protected:
  absl::StatusOr<double> Scale(const OpKernelContext&) const override { return kSign; }
};

// ResourceApplyGradientDescent(var, alpha, delta): var -= alpha * delta.
class ResourceApplyGradientDescentOp : public ResourceUpdateOp {
 public:
  using ResourceUpdateOp::ResourceUpdateOp;
  bool IsExpensive() const override { return true; }

 protected:
  int DeltaIndex() const override { return 2; }
  absl::StatusOr<double> Scale(const OpKernelContext& ctx) const override {
    DFLOW_ASSIGN_OR_RETURN(const double alpha, ScalarAsDouble(ctx.input(1), "alpha"));
    return -alpha;
  }
  absl::Status CheckShapes(const Tensor& var, const Tensor& delta) const override {
    if (var.shape() == delta.shape()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("var and delta do not have the same shape",
                                                   var.shape().DebugString(), " ",
                                                   delta.shape().DebugString()));
  }
};

class VarIsInitializedOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResourceHandleProto* h, HandleInput(*ctx, 0));
    std::shared_ptr<ResourceVariable> var =
        ctx->device()->variables()->FindResource(h->container(), h->name());
    bool initialized = false;
    if (var != nullptr) {
      absl::MutexLock lock(&var->mu);
      initialized = var->value.IsInitialized();
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<bool>() = initialized;
  }
};

class VariableShapeOp : public CheapOpKernel {
 public:
  using CheapOpKernel::CheapOpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResourceHandleProto* h, HandleInput(*ctx, 0));
    std::shared_ptr<ResourceVariable> var =
        ctx->device()->variables()->FindResource(h->container(), h->name());
    OP_REQUIRES(ctx, var != nullptr, VariableNotFound(*h));
    TensorShape shape;
    {
      absl::MutexLock lock(&var->mu);
      OP_REQUIRES(ctx, var->value.IsInitialized(), VariableNotFound(*h));
      shape = var->value.shape();
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out,
                        ctx->allocate_output(0, TensorShape({shape.dims()})));
    OP_REQUIRES_OK(ctx, WriteShape(*ctx, shape, *out));
  }
};

// ResourceGather(resource, indices): rows of the variable along axis 0 (batch_dims 0).
class ResourceGatherOp : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
    if (ctx->HasAttr("batch_dims")) OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_dims", &batch_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, batch_dims_ == 0,
                KernelError(*ctx, "batch_dims ", batch_dims_, " is not supported (only 0)"));
    OP_ASSIGN_OR_RETURN(ctx, std::shared_ptr<ResourceVariable> var,
                        ExistingVariable(*ctx, dtype_, "read"));
    Tensor params;
    {
      absl::MutexLock lock(&var->mu);
      params = var->value;
    }
    OP_REQUIRES(ctx, params.IsInitialized(), VariableNotFound(ctx->input(0).scalar<ResourceHandleProto>()));
    OP_REQUIRES(ctx, params.shape().dims() >= 1,
                KernelError(*ctx, "params must be at least 1 dimensional"));
    OP_REQUIRES_OK(ctx, GatherIntoOutput(ctx, params, ctx->input(1), 0));
  }

 private:
  DataType dtype_ = DT_INVALID;
  int64_t batch_dims_ = 0;
};

class DestroyResourceOp : public CheapOpKernel {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* ctx) : CheapOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const ResourceHandleProto* h, HandleInput(*ctx, 0));
    const bool found = ctx->device()->variables()->DestroyResource(h->container(), h->name());
    OP_REQUIRES(ctx, found || ignore_lookup_error_, VariableNotFound(*h));
  }

 private:
  bool ignore_lookup_error_ = true;
};

}  // namespace

absl::Status RegisterResourceVariableKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(registry->Register<VarHandleOp>(CpuKernel("VarHandleOp")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ReadVariableOp>(CpuKernel("ReadVariableOp")));
  DFLOW_RETURN_IF_ERROR(registry->Register<AssignVariableOp>(CpuKernel("AssignVariableOp")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<AssignUpdateVariableOp<1>>(CpuKernel("AssignAddVariableOp")));
  DFLOW_RETURN_IF_ERROR(
      registry->Register<AssignUpdateVariableOp<-1>>(CpuKernel("AssignSubVariableOp")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ResourceApplyGradientDescentOp>(
      CpuKernel("ResourceApplyGradientDescent")));
  DFLOW_RETURN_IF_ERROR(registry->Register<VarIsInitializedOp>(CpuKernel("VarIsInitializedOp")));
  DFLOW_RETURN_IF_ERROR(registry->Register<VariableShapeOp>(CpuKernel("VariableShape")));
  DFLOW_RETURN_IF_ERROR(registry->Register<ResourceGatherOp>(CpuKernel("ResourceGather")));
  return registry->Register<DestroyResourceOp>(CpuKernel("DestroyResourceOp"));
}

}  // namespace dflow
