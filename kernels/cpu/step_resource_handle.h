// Handles of per-step resources (runtime/step_resources.h): the scalar DT_RESOURCE tensor a
// TensorArrayV3 or StackV2 outputs, and the lookup every later op of the family does.
//
// A handle names the step's container ("__per_step_<step id>"), so a handle fetched in one
// step and fed into another finds nothing there: NOT_FOUND, in TF's words.
#ifndef DFLOW_KERNELS_CPU_STEP_RESOURCE_HANDLE_H_
#define DFLOW_KERNELS_CPU_STEP_RESOURCE_HANDLE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/op_kernel.h"
#include "runtime/step_resources.h"

namespace dflow {

// The step's resources; FAILED_PRECONDITION outside an executor's step.
inline absl::StatusOr<StepResources*> StepResourcesOf(const OpKernelContext& ctx) {
  if (ctx.step_resources() != nullptr) return ctx.step_resources();
  return absl::FailedPreconditionError(
      absl::StrCat(ctx.kernel().type_string(), " needs a step to hold its resource"));
}

// Writes the handle of the step resource `name` of type `type_name` into `out`.
inline void WriteStepResourceHandle(const OpKernelContext& ctx, const std::string& name,
                                    const std::string& type_name, Tensor* out) {
  ResourceHandleProto& handle = out->scalar<ResourceHandleProto>();
  handle.set_device(ctx.device()->name());
  handle.set_container(StepResources::ContainerName(ctx.step_id()));
  handle.set_name(name);
  handle.set_maybe_type_name(type_name);
}

// The resource of kind T that input `index`'s handle names in this step.
template <typename T>
absl::StatusOr<std::shared_ptr<T>> LookupStepResource(const OpKernelContext& ctx, int index,
                                                      const std::string& type_name) {
  const Tensor& t = ctx.input(index);
  if (t.dtype() != DT_RESOURCE || t.shape().dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx.kernel().type_string(), ": input ", index, " must be a scalar resource handle, not ",
        DataTypeString(t.dtype()), t.shape().DebugString()));
  }
  const ResourceHandleProto& h = t.scalar<ResourceHandleProto>();
  DFLOW_ASSIGN_OR_RETURN(StepResources * resources, StepResourcesOf(ctx));
  std::shared_ptr<T> found;
  // Each device's executor has its own step resources, so the handle must name this
  // device as well as this step.
  if (h.container() == StepResources::ContainerName(ctx.step_id()) &&
      h.device() == ctx.device()->name()) {
    found = std::dynamic_pointer_cast<T>(resources->Find(h.name()));
  }
  if (found != nullptr) return found;
  return absl::NotFoundError(absl::StrCat("Resource ", h.container(), "/", h.name(), "/",
                                          type_name, " does not exist."));
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_STEP_RESOURCE_HANDLE_H_
