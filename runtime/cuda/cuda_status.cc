#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {

absl::Status CudaErrorToStatus(cudaError_t error, const char* call, const char* file,
                               int line) {
  std::string message = absl::StrCat(call, " failed: ", cudaGetErrorName(error), " (",
                                     cudaGetErrorString(error), ") at ", file, ":", line);
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

absl::Status CublasErrorToStatus(cublasStatus_t error, const char* call, const char* file,
                                 int line) {
  std::string message = absl::StrCat(call, " failed: ", cublasGetStatusName(error), " (",
                                     cublasGetStatusString(error), ") at ", file, ":", line);
  if (error == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

}  // namespace dflow::cuda
