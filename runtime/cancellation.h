// CancellationToken: a step's "stop" flag with its reason, set by the first error, a
// timeout or Session::Close(). The executor checks it before running each node; long
// kernels check it inside when checked_in_kernels() (steps with a deadline).
//
// Thread-safety: all methods may be called concurrently (set_checked_in_kernels only
// before the step starts); the first Cancel wins.
#ifndef DFLOW_RUNTIME_CANCELLATION_H_
#define DFLOW_RUNTIME_CANCELLATION_H_

#include <atomic>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace dflow {

class CancellationToken {
 public:
  void Cancel(const absl::Status& reason) {
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_.load(std::memory_order_relaxed)) return;
      reason_ = reason.ok() ? absl::CancelledError("Step was cancelled") : reason;
    }
    cancelled_.store(true, std::memory_order_release);
  }
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // Whether long kernels check the token inside their work, not only the executor
  // between nodes: set (before the step starts) for steps with a deadline, which must end
  // within ~20 ms of it (issue 15). Checking costs something (a 4096^3 MatMul runs as
  // tiles, ~15% slower), so steps without a deadline do not pay it; like TF, they stop a
  // cancelled step between kernels.
  void set_checked_in_kernels(bool checked) { checked_in_kernels_ = checked; }
  bool checked_in_kernels() const { return checked_in_kernels_; }
  absl::Status reason() const {
    absl::MutexLock lock(&mu_);
    return reason_;
  }

 private:
  std::atomic<bool> cancelled_{false};
  bool checked_in_kernels_ = false;
  mutable absl::Mutex mu_;
  absl::Status reason_;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_CANCELLATION_H_
