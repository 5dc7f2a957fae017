#include "runtime/ref_slot.h"

#include "absl/strings/str_cat.h"

namespace dflow {

bool RefSlot::initialized() const {
  absl::MutexLock lock(&mu_);
  return value_.IsInitialized();
}

absl::StatusOr<Tensor> RefSlot::Read() const {
  absl::MutexLock lock(&mu_);
  if (!value_.IsInitialized()) {
    return absl::FailedPreconditionError(
        absl::StrCat("Attempting to use uninitialized value ", name_));
  }
  return value_;
}

void RefSlot::Write(Tensor value) {
  Tensor old;
  {
    absl::MutexLock lock(&mu_);
    old = std::move(value_);
    value_ = std::move(value);
  }
  // `old` releases its buffer here, outside the lock.
}

}  // namespace dflow
