#include "runtime/stream.h"

#include "absl/strings/str_cat.h"

namespace dflow {

const char* StreamKindName(Stream::Kind kind) {
  switch (kind) {
    case Stream::Kind::kCompute: return "compute";
    case Stream::Kind::kHostToDevice: return "host_to_device";
    case Stream::Kind::kDeviceToHost: return "device_to_host";
    case Stream::Kind::kDeviceToDevice: return "device_to_device";
  }
  return "unknown";
}

absl::Status Stream::CheckCopy(const void* dst, const void* src, size_t bytes) const {
  if (bytes > 0 && (dst == nullptr || src == nullptr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Stream ", name_, ": copy of ", bytes, " bytes with a null pointer"));
  }
  return status();
}

StreamActivity Stream::Activity(const ScopedStreamTrace& trace, const char* what,
                                int64_t bytes) const {
  StreamActivity activity;
  activity.stream = name_;
  activity.kind = StreamKindName(kind_);
  activity.node = trace.node();
  activity.what = what;
  activity.bytes = bytes;
  return activity;
}

absl::Status Stream::EnqueueHostFunction(std::function<absl::Status()> fn) {
  if (!fn) return absl::InvalidArgumentError(absl::StrCat("Stream ", name_, ": empty function"));
  std::optional<PendingActivity> traced =
      TraceActivity(kind_ == Kind::kCompute ? "kernel" : "memcpy");
  if (!traced.has_value()) return EnqueueHostFunctionImpl(std::move(fn));
  // Simulated kernels and copies are host functions: timed exactly where they run.
  return EnqueueHostFunctionImpl([fn = std::move(fn), traced = *std::move(traced)]() mutable {
    traced.Begin();
    absl::Status status = fn();
    traced.End();
    return status;
  });
}

absl::Status Stream::Copy(void* dst, const void* src, size_t bytes) {
  // Untraced copies build no std::function (the capture would not fit its inline buffer).
  if (ScopedStreamTrace::Current() == nullptr) return MemcpyImpl(dst, src, bytes);
  return Traced("memcpy", static_cast<int64_t>(bytes),
                [&] { return MemcpyImpl(dst, src, bytes); });
}

absl::Status Stream::Traced(const char* what, int64_t bytes,
                            const std::function<absl::Status()>& enqueue) {
  std::optional<PendingActivity> traced = TraceActivity(what, bytes);
  if (!traced.has_value()) return enqueue();
  auto pending = std::make_shared<PendingActivity>(*std::move(traced));
  const absl::Status marked = EnqueueHostFunctionImpl([pending] {
    pending->Begin();
    return absl::OkStatus();
  });
  // The work runs whether or not it can be traced: tracing never changes what runs.
  const absl::Status status = enqueue();
  if (!status.ok() || !marked.ok()) return status;
  return EnqueueHostFunctionImpl([pending] {
    pending->End();
    return absl::OkStatus();
  });
}

absl::Status Stream::MemcpyHostToDevice(void* device_dst, const void* host_src, size_t bytes) {
  absl::Status status = CheckCopy(device_dst, host_src, bytes);
  if (!status.ok() || bytes == 0) return status;
  return Copy(device_dst, host_src, bytes);
}

absl::Status Stream::MemcpyDeviceToHost(void* host_dst, const void* device_src, size_t bytes) {
  absl::Status status = CheckCopy(host_dst, device_src, bytes);
  if (!status.ok() || bytes == 0) return status;
  return Copy(host_dst, device_src, bytes);
}

absl::Status Stream::MemcpyDeviceToDevice(void* device_dst, const void* device_src,
                                          size_t bytes) {
  absl::Status status = CheckCopy(device_dst, device_src, bytes);
  if (!status.ok() || bytes == 0) return status;
  return Copy(device_dst, device_src, bytes);
}

absl::StatusOr<std::unique_ptr<Event>> Stream::RecordEvent() { return RecordEventImpl(); }

absl::Status Stream::WaitFor(Event& event) { return WaitForImpl(event); }

absl::Status Stream::ThenExecute(std::function<void(const absl::Status&)> callback) {
  if (!callback) {
    return absl::InvalidArgumentError(absl::StrCat("Stream ", name_, ": empty callback"));
  }
  return ThenExecuteImpl(std::move(callback));
}

std::optional<PendingActivity> Stream::TraceActivity(const char* what, int64_t bytes) const {
  const ScopedStreamTrace* trace = ScopedStreamTrace::Current();
  if (trace == nullptr) return std::nullopt;
  return PendingActivity{trace->sink(), Activity(*trace, what, bytes)};
}

absl::Status Stream::BlockHostUntilDone() { return BlockHostUntilDoneImpl(); }

}  // namespace dflow
