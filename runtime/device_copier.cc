#include "runtime/device_copier.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/device.h"

namespace dflow {

absl::Status DeviceCopier::CheckCopyable(const Tensor& src, const Tensor& dst) {
  if (!src.IsInitialized() || !dst.IsInitialized()) {
    return absl::InvalidArgumentError("Device copy of an uninitialized tensor");
  }
  if (src.dtype() == DT_STRING || dst.dtype() == DT_STRING) {
    return absl::InvalidArgumentError("Device copy of a string tensor (strings stay on the host)");
  }
  if (src.dtype() == DT_RESOURCE || dst.dtype() == DT_RESOURCE || src.dtype() == DT_VARIANT ||
      dst.dtype() == DT_VARIANT) {
    return absl::InvalidArgumentError(
        "Device copy of a resource handle or variant (they stay on the host)");
  }
  if (src.dtype() != dst.dtype() || src.TotalBytes() != dst.TotalBytes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Device copy between mismatched tensors: source ", DataTypeString(src.dtype()),
        src.shape().DebugString(), ", destination ", DataTypeString(dst.dtype()),
        dst.shape().DebugString()));
  }
  return absl::OkStatus();
}

void DeviceCopier::CopyDeviceToHost(const Tensor& src, const Tensor& dst, StatusCallback done) {
  absl::Status status = CheckCopyable(src, dst);
  if (!status.ok() || src.TotalBytes() == 0) return done(status);
  CopyDeviceToHostImpl(src, dst, std::move(done));
}

void DeviceCopier::CopyHostToDevice(const Tensor& src, const Tensor& dst, StatusCallback done) {
  absl::Status status = CheckCopyable(src, dst);
  if (!status.ok() || src.TotalBytes() == 0) return done(status);
  CopyHostToDeviceImpl(src, dst, std::move(done));
}

void DeviceCopier::CopyDeviceToDevice(const Tensor& src, Device* dst_device, const Tensor& dst,
                                      StatusCallback done) {
  absl::Status status = CheckCopyable(src, dst);
  if (status.ok() && (dst_device == nullptr || dst_device->copier() == nullptr)) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "Device-to-device copy to ", dst_device == nullptr ? "no device" : dst_device->name(),
        ", which is not an accelerator"));
  }
  if (!status.ok() || src.TotalBytes() == 0) return done(status);
  CopyDeviceToDeviceImpl(src, dst_device, dst, std::move(done));
}

}  // namespace dflow
