// The one place CUDA and cuBLAS error codes become absl::Status (docs/STYLE.md #4).
// Only runtime/cuda and kernels/cuda include this header.
#ifndef DFLOW_RUNTIME_CUDA_CUDA_STATUS_H_
#define DFLOW_RUNTIME_CUDA_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dflow::cuda {

// INTERNAL (or RESOURCE_EXHAUSTED for out-of-memory) naming the API call, the error
// name and text, and the source location.
absl::Status CudaErrorToStatus(cudaError_t error, const char* call, const char* file,
                               int line);
absl::Status CublasErrorToStatus(cublasStatus_t error, const char* call, const char* file,
                                 int line);

}  // namespace dflow::cuda

#define DFLOW_CUDA_RETURN_IF_ERROR(call)                                          \
  do {                                                                            \
    cudaError_t dflow_cuda_error_ = (call);                                       \
    if (dflow_cuda_error_ != cudaSuccess) {                                       \
      return ::dflow::cuda::CudaErrorToStatus(dflow_cuda_error_, #call, __FILE__, \
                                              __LINE__);                          \
    }                                                                             \
  } while (0)

#define DFLOW_CUBLAS_RETURN_IF_ERROR(call)                                            \
  do {                                                                                \
    cublasStatus_t dflow_cublas_error_ = (call);                                      \
    if (dflow_cublas_error_ != CUBLAS_STATUS_SUCCESS) {                               \
      return ::dflow::cuda::CublasErrorToStatus(dflow_cublas_error_, #call, __FILE__, \
                                                __LINE__);                            \
    }                                                                                 \
  } while (0)

#endif  // DFLOW_RUNTIME_CUDA_CUDA_STATUS_H_
