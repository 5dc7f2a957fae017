// The variables an update op writes in place of TF's in-place updates, shared by the
// optimizer apply ops (apply_ops.cc, sparse_apply_ops.cc) and the scatter ops
// (scatter_ops.cc): each variable input as a Slot (a VariableV2's ref or a resource
// variable), their locks taken in address order, copy-on-write before writing, and the
// scalar hyperparameters with TF's texts.
#ifndef DFLOW_KERNELS_IO_VARIABLE_SLOTS_H_
#define DFLOW_KERNELS_IO_VARIABLE_SLOTS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "runtime/op_kernel.h"
#include "runtime/variable_store.h"

namespace dflow {

// One variable an op updates: its lock, its value and the name errors give it.
struct Slot {
  absl::Mutex* mu = nullptr;
  Tensor* value = nullptr;  // read and written only under *mu
  std::string name;
  std::shared_ptr<VariableStore::ResourceVariable> resource;  // keeps a resource alive
};

// Input `index` as a slot: a ref input (a VariableV2; INTERNAL when the graph wired a
// value there) or, when `resource`, a resource handle (TF's not-found text when the
// variable does not exist).
absl::StatusOr<Slot> SlotInput(const OpKernelContext& ctx, int index, bool resource);

// Locks each distinct mutex once, in address order (as TF's
// MaybeLockVariableInputMutexesInOrder), so two ops updating the same variables in
// different input orders cannot deadlock; unlocks on destruction. TF skips the locks when
// use_locking is false (Hogwild updates); dflow always takes them, so results do not
// depend on timing.
class SlotLocks {
 public:
  explicit SlotLocks(const std::vector<Slot>& slots);
  ~SlotLocks();
  SlotLocks(const SlotLocks&) = delete;
  SlotLocks& operator=(const SlotLocks&) = delete;

 private:
  std::vector<absl::Mutex*> locked_;
};

// TF's FAILED_PRECONDITION "Attempting to use uninitialized value <name>" when the slot
// holds no value. REQUIRES: the slot's lock held.
absl::Status CheckInitialized(const Slot& slot);

// Makes *value safe to write in place: replaced by a copy when its buffer is shared with
// anyone else (a reader's snapshot) or with one of `inputs` (an update aliasing its
// variable must read the old values). REQUIRES: the owning slot's lock held.
absl::Status MakeWritable(OpKernelContext* ctx, Tensor* value,
                          absl::Span<const Tensor* const> inputs);

// The names of a kernel's inputs (from its op definition), for TF's texts that name an
// input ("lr is not a scalar: [1]").
std::vector<std::string> InputNames(const OpKernelConstruction& ctx);

// Input `index` of dtype `dtype` must be a scalar: TF's "<name> is not a scalar: <shape>".
absl::Status CheckScalarInput(const OpKernelContext& ctx, int index, DataType dtype,
                              const std::string& name);

}  // namespace dflow

#endif  // DFLOW_KERNELS_IO_VARIABLE_SLOTS_H_
