#include "runtime/variable_store.h"

#include "absl/strings/str_cat.h"

namespace dflow {

absl::StatusOr<RefSlot*> VariableStore::LookupOrCreate(const std::string& container,
                                                       const std::string& name,
                                                       DataType dtype,
                                                       const PartialShape& shape) {
  absl::MutexLock lock(&mu_);
  auto [it, created] = variables_.try_emplace({container, name});
  Variable& variable = it->second;
  if (created) {
    variable.dtype = dtype;
    variable.shape = shape;
    variable.slot = std::make_unique<RefSlot>(name);
    by_slot_[variable.slot.get()] = &variable;
    return variable.slot.get();
  }
  if (variable.dtype != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to share variable ", name, ", but specified dtype ", DataTypeString(dtype),
        " and found dtype ", DataTypeString(variable.dtype), "."));
  }
  if (variable.shape != shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Trying to share variable ", name, ", but specified shape ", shape.ToString(),
        " and found shape ", variable.shape.ToString(), "."));
  }
  return variable.slot.get();
}

const PartialShape* VariableStore::DeclaredShape(const RefSlot* slot) const {
  absl::MutexLock lock(&mu_);
  auto it = by_slot_.find(slot);
  return it == by_slot_.end() ? nullptr : &it->second->shape;
}

size_t VariableStore::size() const {
  absl::MutexLock lock(&mu_);
  return variables_.size();
}

}  // namespace dflow
