// Runs wherever the CUDA toolkit is installed, with or without a GPU (naming an error
// needs no device): CUDA and cuBLAS errors become absl::Status in one place
// (runtime/cuda/cuda_status.h), out-of-memory as RESOURCE_EXHAUSTED and anything else as
// INTERNAL naming the call and the error; the CUDA kernels' launch errors
// (kernels/cuda/cuda_kernel_util.h LaunchStatus) go through it and add op and device.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "kernels/cuda/cuda_kernel_util.h"
#include "runtime/cuda/cuda_status.h"

namespace dflow::cuda {
namespace {

cudaError_t FailingCall(cudaError_t error) { return error; }

absl::Status ThroughMacro(cudaError_t error) {
  DFLOW_CUDA_RETURN_IF_ERROR(FailingCall(error));
  return absl::OkStatus();
}

TEST_CASE("CUDA out-of-memory is RESOURCE_EXHAUSTED naming the call and error",
          "[cuda_status]") {
  absl::Status s = CudaErrorToStatus(cudaErrorMemoryAllocation, "cudaMalloc(&p, 64)", "x.cc", 7);
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(s.message(), "cudaMalloc(&p, 64)"));
  CHECK(absl::StrContains(s.message(), "cudaErrorMemoryAllocation"));
  CHECK(absl::StrContains(s.message(), "x.cc:7"));
}

TEST_CASE("Other CUDA errors are INTERNAL naming the call and error", "[cuda_status]") {
  absl::Status s = CudaErrorToStatus(cudaErrorInvalidValue, "cudaMemcpyAsync(d, h, n)", "y.cc", 9);
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInternal);
  CHECK(absl::StrContains(s.message(), "cudaMemcpyAsync(d, h, n)"));
  CHECK(absl::StrContains(s.message(), "cudaErrorInvalidValue"));

  absl::Status macro = ThroughMacro(cudaErrorInvalidDevice);
  INFO(macro.ToString());
  CHECK(macro.code() == absl::StatusCode::kInternal);
  CHECK(absl::StrContains(macro.message(), "FailingCall(error)"));
  CHECK(absl::StrContains(macro.message(), "cudaErrorInvalidDevice"));
  CHECK(ThroughMacro(cudaSuccess).ok());
}

TEST_CASE("cuBLAS allocation failure is RESOURCE_EXHAUSTED, other failures INTERNAL",
          "[cuda_status]") {
  absl::Status oom = CublasErrorToStatus(CUBLAS_STATUS_ALLOC_FAILED, "cublasCreate(&h)", "z.cc", 3);
  INFO(oom.ToString());
  CHECK(oom.code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(oom.message(), "cublasCreate(&h)"));
  CHECK(absl::StrContains(oom.message(), "CUBLAS_STATUS_ALLOC_FAILED"));

  absl::Status failed =
      CublasErrorToStatus(CUBLAS_STATUS_EXECUTION_FAILED, "cublasSgemm(h, ...)", "z.cc", 4);
  INFO(failed.ToString());
  CHECK(failed.code() == absl::StatusCode::kInternal);
  CHECK(absl::StrContains(failed.message(), "cublasSgemm(h, ...)"));
  CHECK(absl::StrContains(failed.message(), "CUBLAS_STATUS_EXECUTION_FAILED"));
}

TEST_CASE("A kernel launch error goes through CudaErrorToStatus and names op and device",
          "[cuda_status]") {
  CHECK(LaunchStatus("Relu", "/device:GPU:0", cudaSuccess).ok());
  absl::Status failed = LaunchStatus("Relu", "/device:GPU:0", cudaErrorLaunchFailure);
  INFO(failed.ToString());
  CHECK(failed.code() == absl::StatusCode::kInternal);
  CHECK(absl::StartsWith(failed.message(), "Relu on /device:GPU:0: "));
  CHECK(absl::StrContains(failed.message(), "cudaErrorLaunchFailure"));
  CHECK(absl::StrContains(failed.message(), "CUDA kernel launch"));

  absl::Status oom = LaunchStatus("Conv2D", "/device:GPU:1", cudaErrorMemoryAllocation);
  INFO(oom.ToString());
  CHECK(oom.code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(oom.message(), "Conv2D on /device:GPU:1"));
}

}  // namespace
}  // namespace dflow::cuda
