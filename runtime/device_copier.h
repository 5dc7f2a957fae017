// DeviceCopier: moves tensor bytes into, out of and between an accelerator's memory on its
// copy streams (TF's GPUUtil::CopyGPUTensorToCPU / CopyCPUTensorToGPU / DeviceToDeviceCopy,
// tf_runtime_facts.md §6). Every accelerator backend implements one (runtime/sim today,
// runtime/cuda next); host-memory devices (the CPU) have none: Device::copier() is null
// there, which is how callers know a tensor's bytes are already host memory.
//
// Ordering contract (docs/STYLE.md #7), which every backend keeps:
//  - device -> host: the copier's device_to_host stream first waits (on the device, via an
//    Event) for the copier's compute stream as it is at the call, so the producer's
//    kernels have finished writing `src`; then the copy; `done` runs once it has finished.
//  - host -> device: the host_to_device stream first waits for the compute stream (the
//    fresh `dst` buffer may have been freed by compute work still queued), then copies.
//  - device -> device: on the SENDER's device_to_device stream, after waiting for the
//    sender's and the receiver's compute streams, as a peer copy when the two devices
//    can reach each other's memory; otherwise staged through a host buffer (a
//    device -> host copy on the sender, then a host -> device copy on the receiver).
//  - `done` is called exactly once, on some host thread (a copy stream's), with OK or the
//    copy's error; it may also be called before the Copy* call returns (validation or
//    enqueue errors).
//
// Buffer lifetime: the copier holds a Tensor reference to `src` and `dst` until `done` has
// been called, so neither buffer returns to its allocator while a stream may still touch
// it, whatever the caller does with its own references in the meantime.
//
// Public methods validate (docs/STYLE.md #6) and then call the backend's *Impl.
// Thread-safety: all methods may be called concurrently from any thread.
#ifndef DFLOW_RUNTIME_DEVICE_COPIER_H_
#define DFLOW_RUNTIME_DEVICE_COPIER_H_

#include <functional>

#include "absl/status/status.h"
#include "runtime/tensor.h"

namespace dflow {

class Device;

class DeviceCopier {
 public:
  using StatusCallback = std::function<void(const absl::Status&)>;

  virtual ~DeviceCopier() = default;

  // `src` lives in this copier's device memory, `dst` in host memory.
  void CopyDeviceToHost(const Tensor& src, const Tensor& dst, StatusCallback done);
  // `src` lives in host memory, `dst` in this copier's device memory.
  void CopyHostToDevice(const Tensor& src, const Tensor& dst, StatusCallback done);
  // `src` lives in this copier's device memory, `dst` in `dst_device`'s (borrowed; must be
  // an accelerator of the same backend, else INVALID_ARGUMENT through `done`).
  void CopyDeviceToDevice(const Tensor& src, Device* dst_device, const Tensor& dst,
                          StatusCallback done);

  // Validation shared by all backends: both tensors initialised, same dtype and byte size,
  // and a fixed-size dtype (strings never live in device memory). INVALID_ARGUMENT naming
  // the dtypes and shapes otherwise.
  static absl::Status CheckCopyable(const Tensor& src, const Tensor& dst);

 protected:
  DeviceCopier() = default;

  // Called only with validated, non-empty tensors. Must call `done` exactly once.
  virtual void CopyDeviceToHostImpl(const Tensor& src, const Tensor& dst,
                                    StatusCallback done) = 0;
  virtual void CopyHostToDeviceImpl(const Tensor& src, const Tensor& dst,
                                    StatusCallback done) = 0;
  virtual void CopyDeviceToDeviceImpl(const Tensor& src, Device* dst_device, const Tensor& dst,
                                      StatusCallback done) = 0;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_DEVICE_COPIER_H_
