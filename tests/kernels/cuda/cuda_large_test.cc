// [cuda] Sizes and paths the conformance test does not reach: cuBLAS MatMul 4096^3 against
// double-precision dot products, a 1e8-element Sum against a double sum, 256 MiB through
// _Recv (host -> device) and _Send/_Recv (device -> host) bit for bit, a GPU -> GPU copy
// where two GPUs exist, and out-of-memory naming the node, shape and device at once.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "runtime/allocator.h"
#include "tests/kernels/cuda/gpu_session.h"

namespace dflow::testing {
namespace {

Tensor HostTensor(const std::vector<float>& values, std::vector<int64_t> shape) {
  Tensor t = *Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape(absl::MakeConstSpan(shape)));
  std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(float));
  return t;
}

TEST_CASE("cuBLAS MatMul 4096^3 agrees with double-precision dot products", "[cuda]") {
  RequireGpu();
  constexpr int64_t kN = 4096;
  const std::vector<float> a = RandomFloats(kN * kN, -1, 1, 1);
  const std::vector<float> b = RandomFloats(kN * kN, -1, 1, 2);
  Scope root = Scope::NewRootScope();
  Output pa = Placeholder(root.WithOpName("a"), DT_FLOAT);
  Output pb = Placeholder(root.WithOpName("b"), DT_FLOAT);
  Output c = MatMul(root.WithDevice("/gpu:0").WithOpName("c"), pa, pb);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(
      {{pa, HostTensor(a, {kN, kN})}, {pb, HostTensor(b, {kN, kN})}}, {c}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  for (auto [i, j] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 0}, {1, 4095}, {4095, 0}, {2048, 2048}, {4095, 4095}, {123, 3210}}) {
    double expected = 0;
    for (int64_t k = 0; k < kN; ++k) expected += double{a[i * kN + k]} * b[k * kN + j];
    INFO("C[" << i << "," << j << "]");
    // FP32 accumulation over 4096 products of magnitude <= 1 (|C| ~ 37).
    CHECK(out[0].data<float>()[i * kN + j] == Approx(expected).margin(2e-3));
  }
}

TEST_CASE("Sum over 1e8 floats stays accurate", "[cuda]") {
  RequireGpu();
  constexpr int64_t kN = 100000000;
  // 0.1f is not representable; a float accumulator drifts by percent over 1e8 terms.
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Output ones = Fill(gpu, Const(root, Input::Initializer(std::vector<int64_t>{kN}, {1})),
                     Const(gpu, 0.1f));
  Output total = Sum(gpu.WithOpName("total"), ones, Const(root, 0));
  Output mean = Mean(gpu.WithOpName("mean"), ones, Const(root, 0));
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({total, mean}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  const double expected = static_cast<double>(0.1f) * kN;
  CHECK(out[0].scalar<float>() == Approx(expected).epsilon(1e-6));
  CHECK(out[1].scalar<float>() == Approx(0.1f).epsilon(1e-6));
}

TEST_CASE("256 MiB round trip host -> GPU -> host is bit-exact", "[cuda]") {
  RequireGpu();
  constexpr int64_t kN = int64_t{64} << 20;  // floats
  const std::vector<float> values = RandomFloats(kN, -1000, 1000, 3);
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  // Neg twice on the GPU: the bytes must go there and back.
  Output y = Neg(root.WithDevice("/gpu:0").WithOpName("y2"),
                 Neg(root.WithDevice("/gpu:0").WithOpName("y1"), x));
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  for (int run = 0; run < 2; ++run) {  // the second run reuses cached memory
    std::vector<Tensor> out;
    absl::Status status = (*session)->Run({{x, HostTensor(values, {kN})}}, {y}, &out);
    INFO(status.ToString());
    REQUIRE(status.ok());
    CHECK(std::memcmp(out[0].raw_data(), values.data(), kN * sizeof(float)) == 0);
  }
}

TEST_CASE("A GPU -> GPU copy delivers the tensor (needs two GPUs)", "[cuda]") {
  RequireGpu();
  if (*cuda::RealGpuCount() < 2) {
    WARN("one GPU only: the GPU -> GPU copy runs between two virtual devices of GPU 0");
  }
  ConfigProto config;
  if (*cuda::RealGpuCount() < 2) {
    auto* virtual_devices = config.mutable_gpu_options()->mutable_experimental()->add_virtual_devices();
    virtual_devices->add_memory_limit_mb(1024);
    virtual_devices->add_memory_limit_mb(1024);
  }
  const std::vector<float> values = RandomFloats(1 << 20, -1, 1, 4);
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithDevice("/gpu:0"), Input::Initializer(values, {1 << 20}));
  Output y = Neg(root.WithDevice("/gpu:1").WithOpName("y"), Neg(root.WithDevice("/gpu:0"), x));
  auto session = ClientSession::Create(root, config);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({y}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(std::memcmp(out[0].raw_data(), values.data(), values.size() * sizeof(float)) == 0);
}

TEST_CASE("Out of GPU memory names node, shape and device at once; the session keeps working",
          "[cuda]") {
  RequireGpu();
  ConfigProto config;
  config.mutable_gpu_options()->set_per_process_gpu_memory_fraction(0.01);
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  // 64 GiB of floats: beyond 1% of any GPU.
  Output big = Fill(gpu.WithOpName("big"),
                    Const(root, Input::Initializer(std::vector<int64_t>{int64_t{16} << 30}, {1})),
                    Const(gpu, 1.0f));
  Output total = Sum(gpu.WithOpName("total"), big, Const(root, 0));
  Output small = Sum(gpu.WithOpName("small"), Const(gpu, {1.f, 2.f}), Const(root, 0));
  auto session = ClientSession::Create(root, config);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({total}, &out);
  INFO(status.ToString());
  CHECK(status.code() == absl::StatusCode::kResourceExhausted);
  CHECK(absl::StrContains(status.message(), "big"));
  CHECK(absl::StrContains(status.message(), "shape[17179869184]"));
  CHECK(absl::StrContains(status.message(), "GPU:0"));
  REQUIRE((*session)->Run({small}, &out).ok());
  CHECK(out[0].scalar<float>() == 3.f);
}

}  // namespace
}  // namespace dflow::testing
