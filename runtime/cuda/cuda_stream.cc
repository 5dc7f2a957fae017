#include "runtime/cuda/cuda_stream.h"

#include <cuda_runtime.h>

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
  std::function<void(const absl::Status&)> callback;
};

void CUDART_CB RunHostFunction(void* arg) {
  std::unique_ptr<HostFunctionCall> call(static_cast<HostFunctionCall*>(arg));
  if (!call->state->status().ok()) return;  // Sticky error: skipped.
  absl::Status result = call->fn();
  if (!result.ok()) call->state->Fail(std::move(result), call->number);
}

void CUDART_CB RunCallback(void* arg) {
  std::unique_ptr<CallbackCall> call(static_cast<CallbackCall*>(arg));
  call->callback(call->state->status());
}

// Hands `call` to the stream; ownership passes to the trampoline only if the launch
// succeeded.
template <typename Call>
absl::Status LaunchHostCall(cudaStream_t stream, cudaHostFn_t trampoline,
                            std::unique_ptr<Call> call) {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaLaunchHostFunc(stream, trampoline, call.get()));
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

absl::Status Synchronize(cudaStream_t stream) {
  DFLOW_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
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
  return std::unique_ptr<CudaStream>(new CudaStream(device_ordinal, kind, std::move(stream)));
}

CudaStream::CudaStream(int device_ordinal, Kind kind, CudaStreamHandle stream)
    : Stream(kind, absl::StrCat("GPU:", device_ordinal, "/", StreamKindName(kind))),
      device_ordinal_(device_ordinal),
      stream_(std::move(stream)),
      state_(std::make_shared<CudaStreamState>()) {}

CudaStream::~CudaStream() {
  // Queued host functions point at state_ (shared, so that is safe) and at whatever their
  // closures captured; draining keeps the promise that they run before the owner goes.
  Synchronize(stream_.get()).IgnoreError();
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
      FailOnError(LaunchHostCall(stream_.get(), &RunHostFunction, std::move(call))));
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
  auto call = std::make_unique<CallbackCall>(CallbackCall{state_, std::move(callback)});
  return FailOnError(LaunchHostCall(stream_.get(), &RunCallback, std::move(call)));
}

absl::Status CudaStream::BlockHostUntilDoneImpl() {
  absl::Status synchronized = Synchronize(stream_.get());
  // An asynchronous CUDA error has no known place in the stream; the first error wins.
  if (!synchronized.ok()) state_->Fail(synchronized, CudaStreamState::kUnknownPosition);
  return state_->status();
}

}  // namespace dflow::cuda
