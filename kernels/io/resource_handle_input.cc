#include "kernels/io/resource_handle_input.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "graph/partial_shape.h"
#include "graph/status_macros.h"
#include "kernels/cpu/kernel_util.h"

namespace dflow {

absl::StatusOr<const ResourceHandleProto*> HandleInput(const OpKernelContext& ctx, int index) {
  const Tensor& t = ctx.input(index);
  if (t.dtype() != DT_RESOURCE || t.shape().dims() != 0) {
    return KernelError(ctx, "input ", index, " must be a scalar resource handle, not ",
                       DataTypeString(t.dtype()), t.shape().DebugString());
  }
  return &t.scalar<ResourceHandleProto>();
}

absl::Status VariableNotFound(const ResourceHandleProto& h) {
  return absl::FailedPreconditionError(absl::StrCat(
      "Could not find variable ", h.name(), ". This could mean that the variable has been "
      "deleted. In TF1, it can also mean the variable is uninitialized. Debug info: "
      "container=", h.container().empty() ? "localhost" : h.container(),
      ", status error message=Resource localhost/", h.container(), "/", h.name(),
      "/N10tensorflow3VarE does not exist."));
}

absl::StatusOr<std::shared_ptr<VariableStore::ResourceVariable>> FindVariableInput(
    const OpKernelContext& ctx, int index) {
  DFLOW_ASSIGN_OR_RETURN(const ResourceHandleProto* h, HandleInput(ctx, index));
  std::shared_ptr<VariableStore::ResourceVariable> var =
      ctx.device()->variables()->FindResource(h->container(), h->name());
  if (var == nullptr) return VariableNotFound(*h);
  return var;
}

absl::Status VarHandleFromAttrs(OpKernelConstruction* ctx, ResourceHandleProto* handle) {
  std::string container, shared_name;
  DataType dtype = DT_INVALID;
  PartialShape shape;
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("container", &container));
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("shared_name", &shared_name));
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("dtype", &dtype));
  DFLOW_RETURN_IF_ERROR(ctx->GetAttr("shape", &shape));
  handle->set_container(container);
  handle->set_name(shared_name.empty() ? ctx->name() : shared_name);
  handle->set_maybe_type_name("N10tensorflow3VarE");
  auto* dtype_and_shape = handle->add_dtypes_and_shapes();
  dtype_and_shape->set_dtype(dtype);
  *dtype_and_shape->mutable_shape() = shape.ToProto();
  return absl::OkStatus();
}

absl::Status WrongDtype(absl::string_view what, DataType expected, DataType got) {
  return absl::InvalidArgumentError(absl::StrCat("Trying to ", what,
                                                 " variable with wrong dtype. Expected ",
                                                 DataTypeString(expected), " got ",
                                                 DataTypeString(got)));
}

absl::StatusOr<std::shared_ptr<VariableStore::ResourceVariable>> ExistingVariable(
    const OpKernelContext& ctx, DataType dtype, absl::string_view what) {
  DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<VariableStore::ResourceVariable> var,
                         FindVariableInput(ctx, 0));
  if (var->dtype != dtype) return WrongDtype(what, dtype, var->dtype);  // TF's order
  return var;
}

}  // namespace dflow
