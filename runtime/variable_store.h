// VariableStore: the variables living on one device: TF 1.x ref variables (VariableV2)
// and TF 2 resource variables (VarHandleOp), kept apart as TF keeps LegacyVar and Var.
//
// TensorFlow keeps a variable's value in the device's resource manager, keyed by
// (container, shared_name), so it persists across Session::Run calls and is private to
// the session that owns the device. dflow does the same: each Device owns a
// VariableStore, and devices are created per session.
//
// Ownership: the store owns its RefSlots; the pointers it hands out stay valid until the
// store is cleared (Clear, when its device goes) or destroyed. Thread-safety: all methods are.
#ifndef DFLOW_RUNTIME_VARIABLE_STORE_H_
#define DFLOW_RUNTIME_VARIABLE_STORE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "graph/partial_shape.h"
#include "graph/types.h"
#include "runtime/ref_slot.h"
#include "runtime/tensor.h"

namespace dflow {

class VariableStore {
 public:
  VariableStore() = default;
  VariableStore(const VariableStore&) = delete;
  VariableStore& operator=(const VariableStore&) = delete;

  // The variable `name` in `container` ("" is the default container), created
  // uninitialized on first use. INVALID_ARGUMENT in TF's words when it exists with
  // another dtype or shape ("Trying to share variable ...").
  absl::StatusOr<RefSlot*> LookupOrCreate(const std::string& container,
                                          const std::string& name, DataType dtype,
                                          const PartialShape& shape);
  // The shape `slot` was declared with, or nullptr when this store did not create it.
  const PartialShape* DeclaredShape(const RefSlot* slot) const;
  size_t size() const;

  // A resource variable: its value (uninitialized until the first assignment) under its
  // own mutex. Shared ownership: a kernel holding one keeps it alive across a concurrent
  // DestroyResourceOp, as TF's refcounted resources do.
  struct ResourceVariable {
    explicit ResourceVariable(DataType t) : dtype(t) {}
    const DataType dtype;
    absl::Mutex mu;
    Tensor value ABSL_GUARDED_BY(mu);
  };
  // The resource variable (container, name), or nullptr when none exists.
  std::shared_ptr<ResourceVariable> FindResource(const std::string& container,
                                                 const std::string& name) const;
  // The resource variable, created uninitialized with `dtype` when none exists.
  std::shared_ptr<ResourceVariable> LookupOrCreateResource(const std::string& container,
                                                           const std::string& name,
                                                           DataType dtype);
  // Removes it; false when there was none.
  bool DestroyResource(const std::string& container, const std::string& name);
  // Drops every variable: a device whose memory holds their values calls it before its
  // allocator goes (the store itself is destroyed after the device's own members).
  void Clear();

 private:
  struct Variable {
    DataType dtype;
    PartialShape shape;
    std::unique_ptr<RefSlot> slot;
  };

  mutable absl::Mutex mu_;
  // (container, name) -> variable; std::map keeps entries at stable addresses.
  std::map<std::pair<std::string, std::string>, Variable> variables_ ABSL_GUARDED_BY(mu_);
  std::map<const RefSlot*, const Variable*> by_slot_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ResourceVariable>> resources_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_VARIABLE_STORE_H_
