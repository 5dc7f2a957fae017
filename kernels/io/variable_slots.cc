#include "kernels/io/variable_slots.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/io/resource_handle_input.h"

namespace dflow {

absl::StatusOr<Slot> SlotInput(const OpKernelContext& ctx, int index, bool resource) {
  if (resource) {
    DFLOW_ASSIGN_OR_RETURN(std::shared_ptr<VariableStore::ResourceVariable> var,
                           FindVariableInput(ctx, index));
    Slot slot{&var->mu, &var->value, ctx.input(index).scalar<ResourceHandleProto>().name(),
              nullptr};
    slot.resource = std::move(var);
    return slot;
  }
  RefSlot* ref = ctx.input_ref(index);
  if (ref == nullptr) {
    return absl::InternalError(absl::StrCat(ctx.kernel().type_string(), ": input ", index,
                                            " is not a reference (variable)"));
  }
  // The pointer is stable; what it points at is read only under the lock.
  return Slot{ref->mu(), ref->value(), ref->name(), nullptr};
}

SlotLocks::SlotLocks(const std::vector<Slot>& slots) {
  for (const Slot& s : slots) locked_.push_back(s.mu);
  std::sort(locked_.begin(), locked_.end());
  locked_.erase(std::unique(locked_.begin(), locked_.end()), locked_.end());
  for (absl::Mutex* mu : locked_) mu->Lock();
}

SlotLocks::~SlotLocks() {
  for (auto it = locked_.rbegin(); it != locked_.rend(); ++it) (*it)->Unlock();
}

absl::Status CheckInitialized(const Slot& slot) {
  if (slot.value->IsInitialized()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("Attempting to use uninitialized value ", slot.name));
}

absl::Status MakeWritable(OpKernelContext* ctx, Tensor* value,
                          absl::Span<const Tensor* const> inputs) {
  bool shared = !value->IsSoleOwner();
  for (const Tensor* in : inputs) shared = shared || value->SharesBufferWith(*in);
  if (!shared) return absl::OkStatus();
  DFLOW_ASSIGN_OR_RETURN(Tensor copy,
                         Tensor::Allocate(ctx->allocator(), value->dtype(), value->shape()));
  if (value->dtype() == DT_STRING) {
    std::copy(value->flat<std::string>().begin(), value->flat<std::string>().end(),
              copy.flat<std::string>().begin());
  } else if (copy.TotalBytes() > 0) {
    std::memcpy(copy.raw_data(), value->raw_data(), copy.TotalBytes());
  }
  *value = std::move(copy);
  return absl::OkStatus();
}

std::vector<std::string> InputNames(const OpKernelConstruction& ctx) {
  std::vector<std::string> names;
  for (const auto& arg : ctx.op_def().input_arg()) names.push_back(arg.name());
  return names;
}

absl::Status CheckScalarInput(const OpKernelContext& ctx, int index, DataType dtype,
                              const std::string& name) {
  const Tensor& t = ctx.input(index);
  if (t.shape().dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is not a scalar: ", t.shape().DebugString()));
  }
  if (t.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.kernel().type_string(), ": ", name,
                                                   " must be ", DataTypeString(dtype), ", not ",
                                                   DataTypeString(t.dtype())));
  }
  return absl::OkStatus();
}

}  // namespace dflow
