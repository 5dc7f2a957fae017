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

absl::Status Stream::EnqueueHostFunction(std::function<absl::Status()> fn) {
  if (!fn) return absl::InvalidArgumentError(absl::StrCat("Stream ", name_, ": empty function"));
  return EnqueueHostFunctionImpl(std::move(fn));
}

absl::Status Stream::MemcpyHostToDevice(void* device_dst, const void* host_src, size_t bytes) {
  absl::Status status = CheckCopy(device_dst, host_src, bytes);
  if (!status.ok() || bytes == 0) return status;
  return MemcpyImpl(device_dst, host_src, bytes);
}

absl::Status Stream::MemcpyDeviceToHost(void* host_dst, const void* device_src, size_t bytes) {
  absl::Status status = CheckCopy(host_dst, device_src, bytes);
  if (!status.ok() || bytes == 0) return status;
  return MemcpyImpl(host_dst, device_src, bytes);
}

absl::Status Stream::MemcpyDeviceToDevice(void* device_dst, const void* device_src,
                                          size_t bytes) {
  absl::Status status = CheckCopy(device_dst, device_src, bytes);
  if (!status.ok() || bytes == 0) return status;
  return MemcpyImpl(device_dst, device_src, bytes);
}

absl::StatusOr<std::unique_ptr<Event>> Stream::RecordEvent() { return RecordEventImpl(); }

absl::Status Stream::WaitFor(Event& event) { return WaitForImpl(event); }

absl::Status Stream::ThenExecute(std::function<void(const absl::Status&)> callback) {
  if (!callback) {
    return absl::InvalidArgumentError(absl::StrCat("Stream ", name_, ": empty callback"));
  }
  return ThenExecuteImpl(std::move(callback));
}

absl::Status Stream::BlockHostUntilDone() { return BlockHostUntilDoneImpl(); }

}  // namespace dflow
