// ScopedActivateDevice: makes one CUDA device current for the calling thread for a scope.
// Streams, events and allocations belong to the device current when they are created, and
// a kernel must be launched from a thread whose current device owns the stream.
// Only runtime/cuda and kernels/cuda include this header (it includes the CUDA runtime).
#ifndef DFLOW_RUNTIME_CUDA_SCOPED_ACTIVATE_DEVICE_H_
#define DFLOW_RUNTIME_CUDA_SCOPED_ACTIVATE_DEVICE_H_

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {

// Restores the previous device on destruction (best effort: nothing to report it to), but
// only one that dflow made current on this thread: a fresh thread's cudaGetDevice says 0
// without GPU 0 having a context, and since CUDA 12 cudaSetDevice(0) would create one
// (hundreds of MiB) on a GPU the session may exclude.
class ScopedActivateDevice {
 public:
  ScopedActivateDevice() = default;
  ScopedActivateDevice(const ScopedActivateDevice&) = delete;
  ScopedActivateDevice& operator=(const ScopedActivateDevice&) = delete;
  ~ScopedActivateDevice() {
    if (restore_) {
      cudaSetDevice(previous_);
      CurrentOnThread() = previous_;
    }
  }

  absl::Status Activate(int ordinal) {
    previous_ = CurrentOnThread();
    DFLOW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));  // cheap once the context exists
    CurrentOnThread() = ordinal;
    restore_ = previous_ >= 0 && previous_ != ordinal;
    return absl::OkStatus();
  }

  // The device dflow last made current on this thread (-1: none yet). Code that calls
  // cudaSetDevice itself (CudaGpuDevice::Activate) records it here too.
  static int& CurrentOnThread() {
    thread_local int current = -1;
    return current;
  }

 private:
  int previous_ = -1;
  bool restore_ = false;
};

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_SCOPED_ACTIVATE_DEVICE_H_
