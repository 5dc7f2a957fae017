// SimStream and SimEvent: the simulated accelerator's Stream and Event (docs/STYLE.md
// #5). The whole asynchronous path (stream order, cross-stream waits, callbacks, sticky
// errors) runs on a machine without a GPU, with the same observable contract as
// runtime/cuda's CudaStream.
//
// Model:
//  - Each SimStream owns one worker thread draining a FIFO of closures. Everything the
//    public Stream methods enqueue (host functions, copies, event records, waits,
//    callbacks) becomes one closure; closures run one at a time, in enqueue order.
//  - "Device memory" is host memory: copies are std::memcpy on the worker thread.
//  - A SimEvent completes when the worker reaches it, carrying the stream's status at that
//    point. WaitFor enqueues a closure that blocks *the worker* until the event completes;
//    the thread calling WaitFor returns at once (a device-side wait).
//  - Sticky errors: once a host function returns an error (or an injected fault fires), the
//    stream's status() becomes that error for good. Later host functions and copies are
//    skipped, events still complete (with the error), waits are still honoured (so a
//    callback that frees memory never runs before a producer stream is done with it), and
//    ThenExecute callbacks run with the error. Enqueue calls made after the failure return
//    the error and enqueue nothing.
//  - SimStreamOptions adds a chaos mode (random delays that vary cross-stream completion
//    order) and fault injection; see sim_options.h.
//
// Errors do not cross streams: a stream waiting on a failed stream's event continues; the
// producer's error is visible through its own status() and the event's HostWait().
//
// Thread-safety: every method may be called from any thread, including from host functions
// and callbacks running on a stream's worker, except as noted under REQUIRES. The locks are
// std::mutex rather than absl::Mutex so that ThreadSanitizer, which cannot see inside the
// system's uninstrumented Abseil, can check code running on simulated streams.
#ifndef DFLOW_RUNTIME_SIM_SIM_STREAM_H_
#define DFLOW_RUNTIME_SIM_SIM_STREAM_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/event.h"
#include "runtime/sim/sim_options.h"
#include "runtime/stream.h"

namespace dflow::sim {

// Completion state shared by a SimEvent and the worker closure that completes it, so an
// event may outlive its stream and vice versa. Defined in sim_stream.cc.
class SimEventState;

// A point in a SimStream's queue. Created only by SimStream::RecordEvent.
class SimEvent final : public Event {
 public:
  ~SimEvent() override;

  bool IsComplete() const override;
  // Blocks until the recording stream's worker reaches the event; returns that stream's
  // status as it was at that point (OK, or the error that made it skip the earlier work).
  absl::Status HostWait() override;

 private:
  friend class SimStream;
  explicit SimEvent(std::shared_ptr<SimEventState> state);

  std::shared_ptr<SimEventState> state_;
};

class SimStream final : public Stream {
 public:
  // Starts the worker thread. `name` is used in error messages and mixed into the chaos
  // seed.
  SimStream(Kind kind, std::string name, SimStreamOptions options = {});
  // Runs every queued closure to completion (skipping work after a sticky error, as
  // always), then joins the worker. Events recorded on this stream stay valid.
  // REQUIRES: not called from this stream's own host functions or callbacks.
  ~SimStream() override;

  absl::Status status() const override;

 private:
  absl::Status EnqueueHostFunctionImpl(std::function<absl::Status()> fn) override;
  absl::Status MemcpyImpl(void* dst, const void* src, size_t bytes) override;
  absl::StatusOr<std::unique_ptr<Event>> RecordEventImpl() override;
  // REQUIRES (else InvalidArgument): `event` is a SimEvent.
  absl::Status WaitForImpl(Event& event) override;
  absl::Status ThenExecuteImpl(std::function<void(const absl::Status&)> callback) override;
  // FailedPrecondition when called from this stream's worker (it would wait for itself).
  absl::Status BlockHostUntilDoneImpl() override;

  // Enqueues an operation (host function or copy): counted for fault injection, skipped
  // after a sticky error, and its error makes the stream fail.
  absl::Status EnqueueOperation(std::function<absl::Status()> op);
  // Appends `closure` to the queue unless the stream has already failed.
  // REQUIRES: `lock` holds mu_.
  absl::Status Enqueue(const std::unique_lock<std::mutex>& lock, std::function<void()> closure);
  // Records the first error; later ones are dropped.
  void Fail(const absl::Status& error);
  void WorkerLoop();
  void ChaosDelay();
  bool OnWorkerThread() const { return std::this_thread::get_id() == worker_.get_id(); }

  const SimStreamOptions options_;

  // mu_ guards every member below up to worker_.
  mutable std::mutex mu_;
  std::condition_variable work_ready_;  // Signalled on enqueue and on stopping.
  std::condition_variable work_done_;   // Signalled when a closure finishes.
  std::deque<std::function<void()>> queue_;
  absl::Status status_;
  // Closures ever enqueued and ever finished; BlockHostUntilDone waits for the second to
  // catch up with the first as it was when called.
  int64_t enqueued_ = 0;
  int64_t finished_ = 0;
  // Operations (host functions and copies) ever enqueued, for fault injection.
  int64_t operations_ = 0;
  bool stopping_ = false;

  // Used only by the worker thread.
  std::mt19937_64 chaos_rng_;

  // Last member: started after everything above is initialised.
  std::thread worker_;
};

}  // namespace dflow::sim

#endif  // DFLOW_RUNTIME_SIM_SIM_STREAM_H_
