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

std::shared_ptr<VariableStore::ResourceVariable> VariableStore::FindResource(
    const std::string& container, const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = resources_.find({container, name});
  return it == resources_.end() ? nullptr : it->second;
}

std::shared_ptr<VariableStore::ResourceVariable> VariableStore::LookupOrCreateResource(
    const std::string& container, const std::string& name, DataType dtype) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<ResourceVariable>& slot = resources_[{container, name}];
  if (slot == nullptr) slot = std::make_shared<ResourceVariable>(dtype);
  return slot;
}

bool VariableStore::DestroyResource(const std::string& container, const std::string& name) {
  absl::MutexLock lock(&mu_);
  return resources_.erase({container, name}) > 0;
}

size_t VariableStore::size() const {
  absl::MutexLock lock(&mu_);
  return variables_.size();
}

void VariableStore::Clear() {
  std::map<std::pair<std::string, std::string>, Variable> variables;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ResourceVariable>> resources;
  {
    absl::MutexLock lock(&mu_);
    variables.swap(variables_);
    resources.swap(resources_);
    by_slot_.clear();
  }
  // The values are released here, outside the store's lock; a resource someone still
  // holds (shared ownership) loses its value too, since the memory under it is going.
  for (auto& [key, resource] : resources) {
    absl::MutexLock lock(&resource->mu);
    resource->value = Tensor();
  }
}

}  // namespace dflow
