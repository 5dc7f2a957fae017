// Finding CUDA GPUs. No driver, no device or an insufficient driver means zero GPUs, not
// an error: the same binary runs CPU-only on a machine without a GPU.
#ifndef DFLOW_RUNTIME_CUDA_CUDA_PROBE_H_
#define DFLOW_RUNTIME_CUDA_CUDA_PROBE_H_

#include <string>

#include "absl/status/statusor.h"

namespace dflow::cuda {

// Number of CUDA devices visible to this process (after CUDA_VISIBLE_DEVICES); 0 when
// cudaGetDeviceCount fails in a way CudaErrorMeansNoGpu accepts (the error is cleared).
absl::StatusOr<int> CountCudaDevices();

// True for the cudaError_t codes (passed as int: this header has no CUDA types) that mean
// "this machine cannot run CUDA" rather than "CUDA failed": no device, no driver (or the
// toolkit's stub libcuda), a driver older than the runtime, a driver/kernel-module
// mismatch, forward compatibility unsupported, initialization failure.
bool CudaErrorMeansNoGpu(int cuda_error);

// "cuBLAS 13.0.0, CUDA runtime 13000": versions of the libraries linked in (needs no GPU).
std::string LinkedLibraryVersions();

// Fills `n` floats at device pointer `data` with `value` on the default stream and
// waits; used to check that nvcc-compiled kernels run. REQUIRES: a GPU.
absl::Status FillOnDevice(float* data, int n, float value);

}  // namespace dflow::cuda

#endif  // DFLOW_RUNTIME_CUDA_CUDA_PROBE_H_
