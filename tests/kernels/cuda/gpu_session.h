// Helpers for the [cuda] tests: they need a real GPU and fail (never skip) without one,
// so a GPU run cannot pass silently.
#ifndef DFLOW_TESTS_KERNELS_CUDA_GPU_SESSION_H_
#define DFLOW_TESTS_KERNELS_CUDA_GPU_SESSION_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "graph/ops.h"
#include "graph/scope.h"
#include "runtime/cuda/cuda_gpus.h"
#include "session/client_session.h"

namespace dflow::testing {

// FAILs the calling test loudly unless a CUDA GPU is present.
inline void RequireGpu() {
  absl::StatusOr<int> count = cuda::RealGpuCount();
  INFO("CUDA device count: " << (count.ok() ? std::to_string(*count) : count.status().ToString()));
  if (!count.ok() || *count == 0) {
    FAIL("this [cuda] test needs a CUDA GPU and found none (run it on a GPU machine, "
         "e.g. through tools/gpu_bundle.sh)");
  }
}

// Deterministic values in [lo, hi).
inline std::vector<float> RandomFloats(int64_t n, float lo, float hi, uint32_t seed) {
  std::vector<float> values(n);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = lo + (hi - lo) * static_cast<float>((state >> 40) & 0xFFFFFF) / 16777216.f;
  }
  return values;
}

// Builds a graph with `build` under `device` and fetches its output.
inline absl::StatusOr<Tensor> RunOn(const std::string& device,
                                    const std::function<Output(const Scope&)>& build,
                                    const ConfigProto& config = {}) {
  Scope root = Scope::NewRootScope();
  Output out = build(root.WithDevice(device));
  if (!root.status().ok()) return root.status();
  absl::StatusOr<std::unique_ptr<ClientSession>> session = ClientSession::Create(root, config);
  if (!session.ok()) return session.status();
  std::vector<Tensor> outputs;
  absl::Status status = (*session)->Run({out}, &outputs);
  if (!status.ok()) return status;
  return outputs[0];
}

// |gpu - cpu| <= atol + rtol * |cpu| for every element (NaNs must match).
inline void CheckClose(const Tensor& gpu, const Tensor& cpu, double atol, double rtol) {
  REQUIRE(gpu.dtype() == cpu.dtype());
  REQUIRE(gpu.shape() == cpu.shape());
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < cpu.NumElements(); ++i) {
    double g = 0, c = 0;
    switch (cpu.dtype()) {
      case DT_FLOAT: g = gpu.data<float>()[i]; c = cpu.data<float>()[i]; break;
      case DT_INT32: g = gpu.data<int32_t>()[i]; c = cpu.data<int32_t>()[i]; break;
      case DT_INT64: g = static_cast<double>(gpu.data<int64_t>()[i]);
                     c = static_cast<double>(cpu.data<int64_t>()[i]); break;
      default: FAIL("CheckClose: unsupported dtype");
    }
    const bool ok = (std::isnan(g) && std::isnan(c)) || std::fabs(g - c) <= atol + rtol * std::fabs(c);
    if (!ok && bad++ == 0) first = "element " + std::to_string(i) + ": gpu " + std::to_string(g) +
                                   " vs cpu " + std::to_string(c);
  }
  INFO("mismatches: " << bad << " of " << cpu.NumElements() << "; first " << first);
  CHECK(bad == 0);
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_KERNELS_CUDA_GPU_SESSION_H_
