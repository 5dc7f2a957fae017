#include "runtime/sim/sim_copier.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/allocator.h"
#include "runtime/sim/sim_device.h"

namespace dflow::sim {
namespace {

// The copy itself, as the stream's worker runs it: optionally slow, optionally failing
// half-way (the bytes already copied stay copied, as on a real bus).
struct CopyWork {
  void* dst;
  const void* src;
  size_t bytes;
  int64_t delay_micros;
  bool fail;
  absl::Status fault;  // the error to report when `fail`

  absl::Status Run() const {
    if (delay_micros > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_micros));
    std::memcpy(dst, src, fail ? bytes / 2 : bytes);
    return fail ? fault : absl::OkStatus();
  }
};

}  // namespace

bool SimGpuCopier::CanAccessPeer(const SimGpuDevice& other) const {
  if (other.options().physical_index == device_->options().physical_index &&
      other.card_memory() == device_->card_memory()) {
    return true;
  }
  return device_->options().peer_access && other.options().peer_access;
}

void SimGpuCopier::CopyDeviceToHostImpl(const Tensor& src, const Tensor& dst,
                                        StatusCallback done) {
  Enqueue(device_->device_to_host_stream(), {device_->compute_stream()}, src, dst,
          std::move(done));
}

void SimGpuCopier::CopyHostToDeviceImpl(const Tensor& src, const Tensor& dst,
                                        StatusCallback done) {
  Enqueue(device_->host_to_device_stream(), {device_->compute_stream()}, src, dst,
          std::move(done));
}

void SimGpuCopier::CopyDeviceToDeviceImpl(const Tensor& src, Device* dst_device,
                                          const Tensor& dst, StatusCallback done) {
  auto* receiver = dynamic_cast<SimGpuDevice*>(dst_device);
  if (receiver == nullptr) {
    return done(absl::InvalidArgumentError(absl::StrCat(
        "Simulated GPU ", device_->name(), " cannot copy to ", dst_device->name(),
        ", which is not a simulated GPU")));
  }
  if (CanAccessPeer(*receiver)) {
    return Enqueue(device_->device_to_device_stream(),
                   {device_->compute_stream(), receiver->compute_stream()}, src, dst,
                   std::move(done));
  }
  // Staged through host memory: the staging buffer lives until the second copy is done.
  absl::StatusOr<Tensor> staging =
      Tensor::Allocate(device_->host_allocator(), src.dtype(), src.shape());
  if (!staging.ok()) return done(staging.status());
  Tensor host = *std::move(staging);
  CopyDeviceToHost(src, host,
                   [receiver, host, dst, done = std::move(done)](const absl::Status& status) {
                     if (!status.ok()) return done(status);
                     receiver->copier()->CopyHostToDevice(host, dst, done);
                   });
}

void SimGpuCopier::Enqueue(SimStream* stream, const std::vector<SimStream*>& producers,
                           const Tensor& src, const Tensor& dst, StatusCallback done) {
  const SimGpuOptions& options = device_->options();
  const int64_t number = copies_.fetch_add(1, std::memory_order_relaxed) + 1;
  CopyWork work{dst.raw_data(), src.raw_data(), src.TotalBytes(), options.copy_delay_micros,
                number == options.fail_copy_number, absl::OkStatus()};
  if (work.fail) {
    work.fault = absl::Status(options.injected_copy_fault.code(),
                              absl::StrCat(options.injected_copy_fault.message(), " (",
                                           stream->name(), " copy of ", work.bytes,
                                           " bytes, failed half-way)"));
  }
  // The copy's own error travels to `done` through `result`, not through the stream: a
  // failed copy must not fail every later step (sticky stream errors are for device
  // faults, SimStreamOptions).
  auto result = std::make_shared<absl::Status>();
  absl::Status enqueued = [&]() -> absl::Status {
    for (SimStream* producer : producers) {
      DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Event> produced, producer->RecordEvent());
      DFLOW_RETURN_IF_ERROR(stream->WaitFor(*produced));
    }
    DFLOW_RETURN_IF_ERROR(stream->EnqueueHostFunction([work, result] {
      *result = work.Run();
      return absl::OkStatus();
    }));
    // `src` and `dst` are captured: their buffers stay allocated until the stream has
    // passed the copy. They are let go before `done` runs, so that the caller may reuse
    // the memory as soon as it hears the copy is done; `done` (and what it holds) goes
    // when it returns, not when the stream drops the closure.
    return stream->ThenExecute(
        [src = src, dst = dst, result, done](const absl::Status& stream_status) mutable {
          src = Tensor();
          dst = Tensor();
          StatusCallback finish = std::move(done);
          finish(stream_status.ok() ? *result : stream_status);
        });
  }();
  if (!enqueued.ok()) {
    // Nothing will call `done` from the stream; wait until no enqueued work can still
    // touch the buffers before the caller may free them.
    stream->BlockHostUntilDone().IgnoreError();
    done(enqueued);
  }
}

}  // namespace dflow::sim
