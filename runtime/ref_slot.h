// RefSlot: the mutable tensor a reference-typed edge points at (a VariableV2's value).
//
// TF 1.x variables are "ref" edges: VariableV2 outputs a reference to a tensor that
// Assign overwrites in place, and readers see whatever value it holds when they run.
// The executor carries a RefSlot* along such edges next to the tensor slot; a consumer
// whose declared input type is not a ref type gets the current value (Read()), a
// consumer with a ref-typed input gets the slot itself (OpKernelContext::input_ref).
//
// Ownership: owned by whoever created it (a variable store); borrowed by the executor
// and kernels, so it must outlive every step that uses it.
// Thread-safety: value() is guarded by mu(); the other methods lock it themselves.
#ifndef DFLOW_RUNTIME_REF_SLOT_H_
#define DFLOW_RUNTIME_REF_SLOT_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/tensor.h"

namespace dflow {

class RefSlot {
 public:
  // `name` names the value in errors ("Attempting to use uninitialized value <name>").
  explicit RefSlot(std::string name) : name_(std::move(name)) {}
  RefSlot(const RefSlot&) = delete;
  RefSlot& operator=(const RefSlot&) = delete;

  const std::string& name() const { return name_; }
  // Guards value().
  absl::Mutex* mu() const ABSL_LOCK_RETURNED(mu_) { return &mu_; }
  // The held tensor, for in-place updates (Assign, AssignAdd). REQUIRES: mu() held.
  Tensor* value() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return &value_; }

  // Whether a value has been stored.
  bool initialized() const;
  // The current value (sharing its buffer); FAILED_PRECONDITION "Attempting to use
  // uninitialized value <name>" when none is stored yet.
  absl::StatusOr<Tensor> Read() const;
  // Replaces the held tensor (takes the lock).
  void Write(Tensor value);

 private:
  const std::string name_;
  mutable absl::Mutex mu_;
  Tensor value_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_REF_SLOT_H_
