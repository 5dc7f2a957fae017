// GPU-only: selected with `bazel test --config=gpu //...`. Fails (never skips) when no
// GPU is present, so a GPU run cannot pass silently.
#include <vector>

#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include "runtime/cuda/cuda_probe.h"

namespace dflow::cuda {
namespace {

TEST_CASE("An nvcc-compiled kernel fills device memory", "[cuda]") {
  absl::StatusOr<int> count = CountCudaDevices();
  REQUIRE(count.ok());
  INFO("this test needs a CUDA GPU and found none");
  REQUIRE(*count > 0);
  constexpr int kN = 1 << 20;
  float* device = nullptr;
  REQUIRE(cudaMalloc(&device, kN * sizeof(float)) == cudaSuccess);
  absl::Status status = FillOnDevice(device, kN, 2.5f);
  INFO(status.ToString());
  REQUIRE(status.ok());
  std::vector<float> host(kN);
  REQUIRE(cudaMemcpy(host.data(), device, kN * sizeof(float), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  cudaFree(device);
  CHECK(host.front() == 2.5f);
  CHECK(host.back() == 2.5f);
}

}  // namespace
}  // namespace dflow::cuda
