// Stream: an ordered queue of asynchronous work on one accelerator.
//
// Each accelerator has one compute stream and one host-to-device, one device-to-host
// and one device-to-device stream (TF's layout). Kernels only enqueue on the compute
// stream; copies run on the copy streams. Work on one stream runs in order; ordering
// across streams is always explicit: the consumer stream WaitFor()s an Event recorded on
// the producer stream (on the device, never by blocking the host).
//
// Public methods validate arguments and then call the backend's *Impl (docs/STYLE.md #6).
// Errors are sticky: once a stream has failed, later work is not run and every method
// returns that error (as CUDA does).
//
// Backends: runtime/sim (a worker thread per stream) and runtime/cuda (cudaStream_t).
// Thread-safety: all methods may be called from any thread.
#ifndef DFLOW_RUNTIME_STREAM_H_
#define DFLOW_RUNTIME_STREAM_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/event.h"
#include "runtime/stream_trace.h"

namespace dflow {

class Stream {
 public:
  enum class Kind { kCompute, kHostToDevice, kDeviceToHost, kDeviceToDevice };

  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }

  // Runs `fn` on a host thread once all earlier work on this stream is done; later work
  // waits for it (simulated kernels are host functions on the compute stream). If `fn`
  // returns an error the stream fails with it.
  absl::Status EnqueueHostFunction(std::function<absl::Status()> fn);
  // Copies in stream order. Pointers are device or host memory as the names say;
  // `bytes` may be 0 (a no-op).
  absl::Status MemcpyHostToDevice(void* device_dst, const void* host_src, size_t bytes);
  absl::Status MemcpyDeviceToHost(void* host_dst, const void* device_src, size_t bytes);
  absl::Status MemcpyDeviceToDevice(void* device_dst, const void* device_src, size_t bytes);
  // An event marking the current end of this stream's queue.
  absl::StatusOr<std::unique_ptr<Event>> RecordEvent();
  // Work enqueued after this call starts only once `event` is complete (a device-side
  // wait: the host is not blocked).
  absl::Status WaitFor(Event& event);
  // Calls `callback` on a host thread after all earlier work (with the stream's status).
  // Callbacks run in the order they were enqueued, but later work on the stream need not
  // wait for them (on CUDA they run on a thread of their own, since a callback may free
  // memory or launch work, which CUDA's own callback thread must not): nothing enqueued
  // later may depend on what a callback does.
  absl::Status ThenExecute(std::function<void(const absl::Status&)> callback);
  // With a ScopedStreamTrace open on this thread, an activity of this stream for the
  // traced node to Begin()/End() by hand (a kernel computing inside a ThenExecute
  // callback); otherwise nothing. Host functions and copies are traced by themselves.
  std::optional<PendingActivity> TraceActivity(const char* what, int64_t bytes = 0) const;
  // Calls `enqueue`, which puts work on this stream by other means (CUDA kernels
  // launched on its handle); with a ScopedStreamTrace open, that work is timed on the
  // stream between two host functions (when the stream reaches it, when it has passed).
  absl::Status Traced(const char* what, int64_t bytes,
                      const std::function<absl::Status()>& enqueue);
  // Blocks the host until all enqueued work is done.
  absl::Status BlockHostUntilDone();
  // OK, or the sticky error of failed work.
  virtual absl::Status status() const = 0;

 protected:
  Stream(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}

  virtual absl::Status EnqueueHostFunctionImpl(std::function<absl::Status()> fn) = 0;
  virtual absl::Status MemcpyImpl(void* dst, const void* src, size_t bytes) = 0;
  virtual absl::StatusOr<std::unique_ptr<Event>> RecordEventImpl() = 0;
  virtual absl::Status WaitForImpl(Event& event) = 0;
  virtual absl::Status ThenExecuteImpl(std::function<void(const absl::Status&)> callback) = 0;
  virtual absl::Status BlockHostUntilDoneImpl() = 0;

 private:
  absl::Status CheckCopy(const void* dst, const void* src, size_t bytes) const;
  // A copy, timed on the stream when a ScopedStreamTrace is open (stream_trace.h).
  absl::Status Copy(void* dst, const void* src, size_t bytes);
  // What a traced node's work on this stream is reported as.
  StreamActivity Activity(const ScopedStreamTrace& trace, const char* what,
                          int64_t bytes) const;

  const Kind kind_;
  const std::string name_;
};

// "compute", "host_to_device", "device_to_host", "device_to_device".
const char* StreamKindName(Stream::Kind kind);

}  // namespace dflow

#endif  // DFLOW_RUNTIME_STREAM_H_
