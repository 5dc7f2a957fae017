// Simulated GPUs that compute on threads of their own (SimGpuOptions::compute_threads,
// DFLOW_SIMULATED_GPU_OPTIONS="compute_threads=N"): kernels on two GPUs give the CPU's
// answers whether a card computes on its stream alone or with helpers of its own, and a
// value out of range is refused naming the entry. The environment is set per test (this
// binary is its own process).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "runtime/sim/sim_device.h"
#include "session/session.h"
#include "tests/testing/scoped_env.h"

namespace dflow {
namespace {

using testing::ScopedEnv;

constexpr int kSize = 192;  // a MatMul large enough for its kernel to shard

Input::Initializer Matrix(float scale) {
  std::vector<float> values(kSize * kSize);
  for (int i = 0; i < kSize * kSize; ++i) values[i] = scale * static_cast<float>(i % 17 - 8);
  return Input::Initializer(values, {kSize, kSize});
}

// x @ y on `device_a`, its Relu @ y on `device_b`; the last product is fetched.
GraphDef TwoDeviceGraph(const std::string& device_a, const std::string& device_b) {
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithOpName("x"), Matrix(0.01f));
  Output y = Const(root.WithOpName("y"), Matrix(-0.02f));
  Output first = MatMul(root.WithOpName("first").WithDevice(device_a), x, y);
  Output act = Relu(root.WithOpName("act").WithDevice(device_a), first);
  MatMul(root.WithOpName("second").WithDevice(device_b), act, y);
  GraphDef graph_def;
  REQUIRE(root.ToGraphDef(&graph_def).ok());
  return graph_def;
}

std::vector<float> RunSecond(const GraphDef& graph_def) {
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession();
  REQUIRE(session.ok());
  absl::Status created = (*session)->Create(graph_def);
  INFO(created.ToString());
  REQUIRE(created.ok());
  std::vector<Tensor> out;
  absl::Status ran = (*session)->Run({}, {"second:0"}, {}, &out);
  INFO(ran.ToString());
  REQUIRE(ran.ok());
  REQUIRE(out.size() == 1);
  const float* p = out[0].data<float>();
  return std::vector<float>(p, p + out[0].NumElements());
}

TEST_CASE("GPUs computing on threads of their own give the CPU's answers",
          "[sim_gpu_compute]") {
  const std::vector<float> expected = RunSecond(TwoDeviceGraph("/cpu:0", "/cpu:0"));
  for (const char* threads : {"0", "1", "3"}) {
    INFO("compute_threads=" << threads);
    ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "2:256");
    ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", std::string("compute_threads=") + threads);
    const std::vector<float> got = RunSecond(TwoDeviceGraph("/gpu:0", "/gpu:1"));
    REQUIRE(got.size() == expected.size());
    double max_err = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      max_err = std::max(max_err, std::abs(static_cast<double>(got[i]) - expected[i]));
    }
    CHECK(max_err <= 1e-4);
  }
}

TEST_CASE("compute_threads beyond the cap is an error naming the entry", "[sim_gpu_compute]") {
  ScopedEnv gpus("DFLOW_SIMULATED_GPUS", "1:64");
  ScopedEnv knobs("DFLOW_SIMULATED_GPU_OPTIONS", "compute_threads=257");
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession();
  REQUIRE_FALSE(session.ok());
  CHECK(session.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(session.status().message(), "'compute_threads=257'"));
  CHECK(absl::StrContains(session.status().message(), "at most 256"));
}

}  // namespace
}  // namespace dflow
