// CancellationToken: a step's "stop" flag with its reason, set by the first error, a
// timeout or Session::Close(). The executor checks it before running each node.
//
// Thread-safety: all methods may be called concurrently; the first Cancel wins.
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
  absl::Status reason() const {
    absl::MutexLock lock(&mu_);
    return reason_;
  }

 private:
  std::atomic<bool> cancelled_{false};
  mutable absl::Mutex mu_;
  absl::Status reason_;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_CANCELLATION_H_
