#include "runtime/cuda/cuda_probe.h"

#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {

bool CudaErrorMeansNoGpu(int cuda_error) {
  switch (static_cast<cudaError_t>(cuda_error)) {
    case cudaErrorInitializationError:         // 3: the driver failed to initialize
    case cudaErrorStubLibrary:                 // 34: the toolkit's stub libcuda, no driver
    case cudaErrorInsufficientDriver:          // 35: no driver, or older than the runtime
    case cudaErrorNoDevice:                    // 100
    case cudaErrorSystemDriverMismatch:        // 803: libcuda and kernel module differ
    case cudaErrorCompatNotSupportedOnDevice:  // 804: forward compatibility unsupported
      return true;
    default:
      return false;
  }
}

absl::StatusOr<int> CountCudaDevices() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaSuccess) return count;
  cudaGetLastError();  // not sticky: keep it out of the next call's result
  if (CudaErrorMeansNoGpu(error)) return 0;
  return CudaErrorToStatus(error, "cudaGetDeviceCount", __FILE__, __LINE__);
}

std::string LinkedLibraryVersions() {
  int major = 0, minor = 0, patch = 0, runtime = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  cudaRuntimeGetVersion(&runtime);
  return absl::StrCat("cuBLAS ", major, ".", minor, ".", patch, ", CUDA runtime ", runtime);
}

}  // namespace dflow::cuda
