// Reading a resource-variable handle input, shared by the resource-variable kernels
// (resource_variable_ops.cc) and the optimizer apply ops (apply_ops.cc): the handle check
// and TF 2.21's text for a variable that does not exist.
#ifndef DFLOW_KERNELS_IO_RESOURCE_HANDLE_INPUT_H_
#define DFLOW_KERNELS_IO_RESOURCE_HANDLE_INPUT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/resource_handle.pb.h"
#include "runtime/op_kernel.h"
#include "runtime/variable_store.h"

namespace dflow {

// The handle of input `index`, checked to be a scalar resource.
absl::StatusOr<const ResourceHandleProto*> HandleInput(const OpKernelContext& ctx, int index);

// A VarHandleOp's handle from its attrs (container, shared_name — empty means the node's
// name, as in TF — dtype and shape), without the device, which the kernel sets.
absl::Status VarHandleFromAttrs(OpKernelConstruction* ctx, ResourceHandleProto* handle);

// TF 2.21's FAILED_PRECONDITION for a variable that does not exist (never assigned, or
// destroyed).
absl::Status VariableNotFound(const ResourceHandleProto& h);

// The resource variable input `index`'s handle names on this device; VariableNotFound
// when there is none.
absl::StatusOr<std::shared_ptr<VariableStore::ResourceVariable>> FindVariableInput(
    const OpKernelContext& ctx, int index);

// TF's "Trying to <what> variable with wrong dtype. Expected <expected> got <got>".
absl::Status WrongDtype(absl::string_view what, DataType expected, DataType got);

// The variable behind input 0, holding `dtype` (WrongDtype otherwise, `what` naming the
// access: "read", "add to"); VariableNotFound when there is none.
absl::StatusOr<std::shared_ptr<VariableStore::ResourceVariable>> ExistingVariable(
    const OpKernelContext& ctx, DataType dtype, absl::string_view what);

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_RESOURCE_HANDLE_INPUT_H_
