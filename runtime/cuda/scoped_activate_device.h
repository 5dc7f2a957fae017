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

// Restores the previous device on destruction (best effort: nothing to report it to).
class ScopedActivateDevice {
 public:
  ScopedActivateDevice() = default;
  ScopedActivateDevice(const ScopedActivateDevice&) = delete;
  ScopedActivateDevice& operator=(const ScopedActivateDevice&) = delete;
  ~ScopedActivateDevice() {
    if (restore_) cudaSetDevice(previous_);
  }

  absl::Status Activate(int ordinal) {
    DFLOW_CUDA_RETURN_IF_ERROR(cudaGetDevice(&previous_));
    if (previous_ == ordinal) return absl::OkStatus();
    DFLOW_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    restore_ = true;
    return absl::OkStatus();
  }

 private:
  int previous_ = 0;
  bool restore_ = false;
};

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_SCOPED_ACTIVATE_DEVICE_H_
