#include <cstdlib>

#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "runtime/cuda/cuda_probe.h"

namespace dflow::cuda {
namespace {

TEST_CASE("Counting CUDA devices never fails, whatever the machine has", "[runtime][cuda_probe]") {
  absl::StatusOr<int> count = CountCudaDevices();
  INFO(count.status().ToString());
  REQUIRE(count.ok());
  CHECK(*count >= 0);
  // Asking twice gives the same answer (the no-driver error is not sticky).
  CHECK(*CountCudaDevices() == *count);
}

TEST_CASE("No driver, a stub libcuda or a driver mismatch mean zero GPUs",
          "[runtime][cuda_probe]") {
  for (cudaError_t error : {cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary,
                            cudaErrorInitializationError, cudaErrorSystemDriverMismatch,
                            cudaErrorCompatNotSupportedOnDevice}) {
    INFO(cudaGetErrorName(error));
    CHECK(CudaErrorMeansNoGpu(error));
  }
  // Real failures stay errors.
  for (cudaError_t error : {cudaSuccess, cudaErrorMemoryAllocation, cudaErrorInvalidValue,
                            cudaErrorIllegalAddress, cudaErrorTooManyPeers, cudaErrorUnknown}) {
    INFO(cudaGetErrorName(error));
    CHECK_FALSE(CudaErrorMeansNoGpu(error));
  }
}

TEST_CASE("cuBLAS and the CUDA runtime are linked in", "[runtime][cuda_probe]") {
  const std::string versions = LinkedLibraryVersions();
  INFO(versions);
  CHECK(absl::StartsWith(versions, "cuBLAS "));
  CHECK_FALSE(absl::StartsWith(versions, "cuBLAS 0.0.0"));
}

}  // namespace
}  // namespace dflow::cuda
