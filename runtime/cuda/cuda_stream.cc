#include "runtime/cuda/cuda_stream.h"

#include <cuda_runtime.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/cuda/scoped_activate_device.h"

namespace dflow::cuda {

// Host functions are numbered from 1 in stream order; a failure remembers the number of
// the host function that failed, so an event can tell whether the failure precedes it.
class CudaStreamState {
 public:
  // Position of a failure whose place in the stream is unknown (an asynchronous CUDA
  // error): it precedes every event.
  static constexpr int64_t kUnknownPosition = 0;

  absl::Status status() const {
    absl::MutexLock lock(&mu_);
    return status_;
  }

  // Keeps the first error only.
  void Fail(absl::Status error, int64_t position) {
    absl::MutexLock lock(&mu_);
    if (!status_.ok()) return;
    status_ = std::move(error);
    failed_at_ = position;
  }

  // The sticky error if it came from one of the first `host_functions` host functions (or
  // from an unknown position), else OK.
  absl::Status StatusBefore(int64_t host_functions) const {
    absl::MutexLock lock(&mu_);
    if (!status_.ok() && failed_at_ <= host_functions) return status_;
    return absl::OkStatus();
  }

 private:
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  int64_t failed_at_ ABSL_GUARDED_BY(mu_) = kUnknownPosition;
};

// Runs a stream's ThenExecute callbacks, in stream order, on a thread of its own. CUDA
// calls its stream callbacks on an internal thread that must call no CUDA API and must
// not block on anything that waits for the GPU; a dflow callback does both (it releases
// tensors, whose allocator may cudaFree, and may launch kernels). So the CUDA callback
// only posts here, which takes a mutex that nothing holds across a CUDA call.
class CallbackWorker {
 public:
  CallbackWorker() : thread_([this] { Loop(); }) {}
  ~CallbackWorker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    work_ready_.notify_one();
    thread_.join();
  }

  void Post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(fn));
    }
    work_ready_.notify_one();
  }

  // Blocks until `count` callbacks have run (and released their captures).
  void WaitUntilFinished(int64_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    work_done_.wait(lock, [this, count] { return finished_ >= count; });
  }

 private:
  void Loop() {
    while (true) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_ready_.wait(lock, [this] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) return;  // stopping, and drained
        fn = std::move(queue_.front());
        queue_.pop_front();
      }
      fn();
      fn = nullptr;  // captures go before the callback counts as finished
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++finished_;
      }
      work_done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_, as are the two below
  int64_t finished_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

namespace {

// The closures handed to cudaLaunchHostFunc. Each is heap-allocated by the enqueuing
// thread and deleted by the trampoline that runs it.
struct HostFunctionCall {
  std::shared_ptr<CudaStreamState> state;
  int64_t number;
  std::function<absl::Status()> fn;
};

struct CallbackCall {
  std::shared_ptr<CudaStreamState> state;
  CallbackWorker* worker;  // outlives the call: ~CudaStream waits for every callback
  std::function<void(const absl::Status&)> callback;
};

void CUDART_CB RunHostFunction(void* arg) {
  std::unique_ptr<HostFunctionCall> call(static_cast<HostFunctionCall*>(arg));
  if (!call->state->status().ok()) return;  // Sticky error: skipped.
  absl::Status result = call->fn();
  if (!result.ok()) call->state->Fail(std::move(result), call->number);
}

// A stream callback (cudaStreamAddCallback): CUDA calls it exactly once, also after a
// device error, passing that error. It only posts the dflow callback to the worker.
void CUDART_CB RunCallback(cudaStream_t, cudaError_t cuda_status, void* arg) {
  CallbackCall* call = static_cast<CallbackCall*>(arg);
  call->worker->Post([call, cuda_status] {
    std::unique_ptr<CallbackCall> owned(call);
    if (cuda_status != cudaSuccess) {
      // A device error has no known place in the stream; it fails the stream from now on.
      owned->state->Fail(CudaErrorToStatus(cuda_status, "work queued before a stream callback",
                                           __FILE__, __LINE__),
                         CudaStreamState::kUnknownPosition);
    }
    owned->callback(owned->state->status());
  });
}

// Hands `call` to the stream; ownership passes to the trampoline only if the launch
// succeeded.
absl::Status LaunchHostCall(cudaStream_t stream, std::unique_ptr<HostFunctionCall> call) {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaLaunchHostFunc(stream, &RunHostFunction, call.get()));
  call.release();
  return absl::OkStatus();
}

absl::Status LaunchCallback(cudaStream_t stream, std::unique_ptr<CallbackCall> call) {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamAddCallback(stream, &RunCallback, call.get(), 0));
  call.release();
  return absl::OkStatus();
}

absl::StatusOr<CudaStreamHandle> CreateStreamHandle(int device_ordinal) {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(device_ordinal));
  cudaStream_t stream = nullptr;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return CudaStreamHandle(stream);
}

absl::StatusOr<CudaEventHandle> RecordNewEvent(int device_ordinal, cudaStream_t stream) {
  ScopedActivateDevice device;
  DFLOW_RETURN_IF_ERROR(device.Activate(device_ordinal));
  cudaEvent_t event = nullptr;
  DFLOW_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  CudaEventHandle handle(event);
  DFLOW_CUDA_RETURN_IF_ERROR(cudaEventRecord(event, stream));
  return handle;
}

absl::Status LaunchMemcpy(cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
  return absl::OkStatus();
}

absl::Status LaunchWait(cudaStream_t stream, cudaEvent_t event) {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, event, cudaEventWaitDefault));
  return absl::OkStatus();
}

}  // namespace

void CudaStreamDeleter::operator()(CUstream_st* stream) const { cudaStreamDestroy(stream); }

void CudaEventDeleter::operator()(CUevent_st* event) const { cudaEventDestroy(event); }

CudaEvent::CudaEvent(CudaEventHandle event, std::shared_ptr<CudaStreamState> producer,
                     int64_t host_functions_before)
    : event_(std::move(event)),
      producer_(std::move(producer)),
      host_functions_before_(host_functions_before) {}

CudaEvent::~CudaEvent() = default;

bool CudaEvent::IsComplete() const { return cudaEventQuery(event_.get()) != cudaErrorNotReady; }

absl::Status CudaEvent::HostWait() {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(event_.get()));
  return producer_->StatusBefore(host_functions_before_);
}

absl::StatusOr<std::unique_ptr<CudaStream>> CudaStream::Create(int device_ordinal, Kind kind) {
  DFLOW_ASSIGN_OR_RETURN(CudaStreamHandle stream, CreateStreamHandle(device_ordinal));
  try {  // the callback thread: std::thread reports failure only by throwing
    return std::unique_ptr<CudaStream>(new CudaStream(device_ordinal, kind, std::move(stream)));
  } catch (const std::system_error& error) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "GPU:", device_ordinal, " stream: cannot start its callback thread: ", error.what()));
  }
}

CudaStream::CudaStream(int device_ordinal, Kind kind, CudaStreamHandle stream)
    : Stream(kind, absl::StrCat("GPU:", device_ordinal, "/", StreamKindName(kind))),
      device_ordinal_(device_ordinal),
      stream_(std::move(stream)),
      state_(std::make_shared<CudaStreamState>()),
      worker_(std::make_unique<CallbackWorker>()) {}

CudaStream::~CudaStream() {
  // Queued host functions point at state_ (shared, so that is safe) and at whatever their
  // closures captured; draining keeps the promise that they run before the owner goes.
  BlockHostUntilDoneImpl().IgnoreError();
}

absl::Status CudaStream::status() const { return state_->status(); }

absl::Status CudaStream::FailOnError(absl::Status status) {
  // An enqueue that failed leaves a hole in the stream's order, so the stream fails; the
  // failure comes after every host function enqueued so far.
  if (!status.ok()) state_->Fail(status, host_functions_enqueued_ + 1);
  return status;
}

absl::Status CudaStream::EnqueueHostFunctionImpl(std::function<absl::Status()> fn) {
  absl::MutexLock lock(&enqueue_mu_);
  DFLOW_RETURN_IF_ERROR(state_->status());
  const int64_t number = host_functions_enqueued_ + 1;
  auto call = std::make_unique<HostFunctionCall>(HostFunctionCall{state_, number, std::move(fn)});
  DFLOW_RETURN_IF_ERROR(
      FailOnError(LaunchHostCall(stream_.get(), std::move(call))));
  host_functions_enqueued_ = number;
  return absl::OkStatus();
}

absl::Status CudaStream::MemcpyImpl(void* dst, const void* src, size_t bytes) {
  absl::MutexLock lock(&enqueue_mu_);
  DFLOW_RETURN_IF_ERROR(state_->status());
  return FailOnError(LaunchMemcpy(stream_.get(), dst, src, bytes));
}

absl::StatusOr<std::unique_ptr<Event>> CudaStream::RecordEventImpl() {
  absl::MutexLock lock(&enqueue_mu_);
  DFLOW_RETURN_IF_ERROR(state_->status());
  absl::StatusOr<CudaEventHandle> event = RecordNewEvent(device_ordinal_, stream_.get());
  DFLOW_RETURN_IF_ERROR(FailOnError(event.status()));
  return std::unique_ptr<Event>(new CudaEvent(*std::move(event), state_, host_functions_enqueued_));
}

absl::Status CudaStream::WaitForImpl(Event& event) {
  auto* cuda_event = dynamic_cast<CudaEvent*>(&event);
  if (cuda_event == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("CudaStream ", name(), ": WaitFor needs an event recorded on a CudaStream"));
  }
  absl::MutexLock lock(&enqueue_mu_);
  DFLOW_RETURN_IF_ERROR(state_->status());
  return FailOnError(LaunchWait(stream_.get(), cuda_event->handle()));
}

absl::Status CudaStream::ThenExecuteImpl(std::function<void(const absl::Status&)> callback) {
  absl::MutexLock lock(&enqueue_mu_);
  DFLOW_RETURN_IF_ERROR(state_->status());
  auto call = std::make_unique<CallbackCall>(CallbackCall{state_, worker_.get(), std::move(callback)});
  DFLOW_RETURN_IF_ERROR(FailOnError(LaunchCallback(stream_.get(), std::move(call))));
  ++callbacks_enqueued_;
  return absl::OkStatus();
}

absl::Status CudaStream::BlockHostUntilDoneImpl() {
  int64_t callbacks = 0;
  {
    absl::MutexLock lock(&enqueue_mu_);
    callbacks = callbacks_enqueued_;
  }
  const cudaError_t raw = cudaStreamSynchronize(stream_.get());
  // Every callback enqueued so far has been posted (CUDA's part ran); wait for ours. Not
  // when the CUDA runtime is unloading (process exit): it may deliver no more callbacks.
  if (raw != cudaErrorCudartUnloading) worker_->WaitUntilFinished(callbacks);
  absl::Status synchronized = raw == cudaSuccess
                                  ? absl::OkStatus()
                                  : CudaErrorToStatus(raw, "cudaStreamSynchronize", __FILE__,
                                                      __LINE__);
  // An asynchronous CUDA error has no known place in the stream; the first error wins.
  if (!synchronized.ok()) state_->Fail(synchronized, CudaStreamState::kUnknownPosition);
  return state_->status();
}

}  // namespace dflow::cuda
