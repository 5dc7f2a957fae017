// StepOutcome: a step's first error and the abort it sets off, shared by the executor's
// plain and control-flow step states.
//
// The first error wins: it is kept, the step's cancellation token is cancelled (so
// blocked kernels and other partitions stop) and its rendezvous aborted (waking every
// blocked _Recv); later errors are dropped. Thread-safe.
#ifndef DFLOW_RUNTIME_STEP_OUTCOME_H_
#define DFLOW_RUNTIME_STEP_OUTCOME_H_

#include <atomic>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "runtime/cancellation.h"
#include "runtime/rendezvous.h"

namespace dflow {

class StepOutcome {
 public:
  // `cancellation` and `rendezvous` may be null; borrowed for the step.
  StepOutcome(CancellationToken* cancellation, Rendezvous* rendezvous)
      : cancellation_(cancellation), rendezvous_(rendezvous) {}

  void Fail(const absl::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      if (!status_.ok()) return;
      status_ = status;
    }
    aborted_.store(true, std::memory_order_release);
    if (cancellation_ != nullptr) cancellation_->Cancel(status);
    if (rendezvous_ != nullptr) rendezvous_->StartAbort(status);
  }

  // True once a node failed: nodes still made ready are skipped.
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

  absl::Status status() const {
    absl::MutexLock lock(&mu_);
    return status_;
  }

 private:
  CancellationToken* const cancellation_;
  Rendezvous* const rendezvous_;
  std::atomic<bool> aborted_{false};
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_STEP_OUTCOME_H_
