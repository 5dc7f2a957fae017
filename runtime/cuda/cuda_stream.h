// CudaStream and CudaEvent: Stream and Event over cudaStream_t and cudaEvent_t.
//
// How each Stream operation maps onto CUDA:
//  - EnqueueHostFunction: cudaLaunchHostFunc. The closure runs on a CUDA runtime thread
//    in stream order, holding the stream; it must not call CUDA APIs (CUDA forbids it).
//  - ThenExecute: cudaStreamAddCallback, which CUDA calls exactly once, also after a
//    device error (whose status the callback then receives). CUDA's thread only posts the
//    callback to this stream's callback thread, which runs callbacks in stream order and
//    may call CUDA (release tensors whose allocator frees memory, launch kernels).
//  - Memcpy*: cudaMemcpyAsync with cudaMemcpyDefault. Stream::MemcpyImpl does not carry
//    the direction, and with unified virtual addressing (every 64-bit CUDA platform) the
//    driver infers the right kind from the pointers, so H2D, D2H and D2D are all correct
//    on any of the four stream kinds. Host memory should be pinned (cudaMallocHost) for
//    the copy to be asynchronous; a copy to or from pageable memory is staged, and a
//    device-to-pageable copy returns only once it is done.
//  - RecordEvent: a new event (cudaEventDisableTiming) recorded with cudaEventRecord.
//  - WaitFor: cudaStreamWaitEvent, a device-side wait; the calling thread returns at once.
//  - BlockHostUntilDone: cudaStreamSynchronize, then waits for the callback thread to
//    have run every callback enqueued before the call.
//
// Sticky errors. The GPU knows nothing about host-function errors, so this class keeps
// them on the host, shared with the in-flight closures: once a host function returns an
// error, later host functions are skipped, ThenExecute callbacks receive the error, and
// later enqueue calls return it. Unlike the simulated backend, copies that were already
// queued on the GPU when the host function failed still run. CUDA errors (from any call,
// or reported asynchronously by cudaStreamSynchronize) are converted once, by
// DFLOW_CUDA_RETURN_IF_ERROR, and an asynchronous one makes the stream fail as well.
// After a CUDA *context* error, CUDA no longer calls host functions (their closures are
// leaked), but it still calls stream callbacks, with the error: a copy waiting on one
// completes with that error instead of hanging its step.
//
// Ownership: CUDA handles live in move-only RAII owners (CudaStreamHandle,
// CudaEventHandle). A CudaEvent shares the host-side error state of the stream that
// recorded it, so events may outlive their stream. The destructor of CudaStream waits for
// all queued work (cudaStreamSynchronize) before destroying the stream.
//
// This header does not include CUDA headers: CUstream_st and CUevent_st are the structs
// behind cudaStream_t and cudaEvent_t, so `handle()` returns exactly those types.
//
// Thread-safety: every method may be called from any thread, and from this stream's
// callbacks (not from its host functions, which may call no CUDA API), except
// BlockHostUntilDone and the destructor, which would wait for themselves.
#ifndef DFLOW_RUNTIME_CUDA_CUDA_STREAM_H_
#define DFLOW_RUNTIME_CUDA_CUDA_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/event.h"
#include "runtime/stream.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*.
struct CUevent_st;   // cudaEvent_t is CUevent_st*.

namespace dflow::cuda {

struct CudaStreamDeleter {
  void operator()(CUstream_st* stream) const;  // cudaStreamDestroy; errors are dropped.
};
struct CudaEventDeleter {
  void operator()(CUevent_st* event) const;  // cudaEventDestroy; errors are dropped.
};
// Move-only owners of a cudaStream_t / cudaEvent_t.
using CudaStreamHandle = std::unique_ptr<CUstream_st, CudaStreamDeleter>;
using CudaEventHandle = std::unique_ptr<CUevent_st, CudaEventDeleter>;

// Host-side sticky-error state of one CudaStream, shared with its queued host functions
// and its events. Defined in cuda_stream.cc.
class CudaStreamState;
// The thread that runs a CudaStream's ThenExecute callbacks. Defined in cuda_stream.cc.
class CallbackWorker;

// A point in a CudaStream's queue. Created only by CudaStream::RecordEvent.
class CudaEvent final : public Event {
 public:
  ~CudaEvent() override;

  // cudaEventQuery: true once the GPU has passed the event (or the query failed, so that
  // pollers do not spin forever; HostWait then reports the error).
  bool IsComplete() const override;
  // cudaEventSynchronize; then the recording stream's error if a host function enqueued
  // before this event failed.
  absl::Status HostWait() override;

  // Borrowed; valid while this event lives.
  CUevent_st* handle() const { return event_.get(); }

 private:
  friend class CudaStream;
  CudaEvent(CudaEventHandle event, std::shared_ptr<CudaStreamState> producer,
            int64_t host_functions_before);

  CudaEventHandle event_;
  std::shared_ptr<CudaStreamState> producer_;
  // How many host functions the producer had enqueued when the event was recorded.
  int64_t host_functions_before_;
};

class CudaStream final : public Stream {
 public:
  // A non-blocking stream (cudaStreamNonBlocking: no implicit sync with the legacy
  // default stream) on GPU `device_ordinal`. Fails (INTERNAL, naming the CUDA error) when
  // there is no such GPU or no usable driver.
  static absl::StatusOr<std::unique_ptr<CudaStream>> Create(int device_ordinal, Kind kind);

  // Waits for queued work (cudaStreamSynchronize), then destroys the stream.
  // REQUIRES: not called from this stream's host functions or callbacks.
  ~CudaStream() override;

  absl::Status status() const override;

  int device_ordinal() const { return device_ordinal_; }
  // Borrowed; valid while this stream lives. For kernels and cuBLAS on this stream.
  CUstream_st* handle() const { return stream_.get(); }

 private:
  CudaStream(int device_ordinal, Kind kind, CudaStreamHandle stream);

  absl::Status EnqueueHostFunctionImpl(std::function<absl::Status()> fn) override;
  absl::Status MemcpyImpl(void* dst, const void* src, size_t bytes) override;
  absl::StatusOr<std::unique_ptr<Event>> RecordEventImpl() override;
  // REQUIRES (else InvalidArgument): `event` is a CudaEvent.
  absl::Status WaitForImpl(Event& event) override;
  absl::Status ThenExecuteImpl(std::function<void(const absl::Status&)> callback) override;
  absl::Status BlockHostUntilDoneImpl() override;

  // Makes the stream fail with `status` when it is an error; returns it.
  absl::Status FailOnError(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(enqueue_mu_);

  const int device_ordinal_;
  const CudaStreamHandle stream_;
  const std::shared_ptr<CudaStreamState> state_;
  // Serialises enqueue calls so that host functions are numbered in stream order (events
  // use the numbers to tell which failures precede them). Never taken by host functions,
  // so a launch blocked on a full CUDA queue cannot deadlock with them.
  absl::Mutex enqueue_mu_;
  int64_t host_functions_enqueued_ ABSL_GUARDED_BY(enqueue_mu_) = 0;
  int64_t callbacks_enqueued_ ABSL_GUARDED_BY(enqueue_mu_) = 0;
  // Destroyed (its thread joined) after the destructor has waited for every callback.
  const std::unique_ptr<CallbackWorker> worker_;
};

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_CUDA_STREAM_H_
