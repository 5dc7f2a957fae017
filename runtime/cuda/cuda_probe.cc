#include "runtime/cuda/cuda_probe.h"

#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {

absl::StatusOr<int> CountCudaDevices() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  switch (error) {
    case cudaSuccess:
      return count;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:  // 35: no driver installed
    case cudaErrorInitializationError:
      cudaGetLastError();  // clear the sticky error for later calls
      return 0;
    default:
      return CudaErrorToStatus(error, "cudaGetDeviceCount", __FILE__, __LINE__);
  }
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
