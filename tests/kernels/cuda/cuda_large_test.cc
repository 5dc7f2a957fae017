// [cuda] Sizes and paths the conformance test does not reach: cuBLAS MatMul 4096^3 against
// double-precision dot products, a 1e8-element Sum against a double sum, 256 MiB through
// _Recv (host -> device) and _Send/_Recv (device -> host) bit for bit, a GPU -> GPU copy
// where two GPUs exist, out-of-memory naming the node, shape and device at once, and
// reductions of every shape class (long rows, short rows, columns with few outputs, more
// than 2^31 rows) against double-precision host loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

// Sum / Mean / Max over the middle dim of [outer, extent, inner] in double.
struct HostReduction {
  std::vector<double> sum, max;
};

HostReduction ReduceOnHost(const std::vector<float>& x, int64_t outer, int64_t extent,
                           int64_t inner) {
  HostReduction r;
  r.sum.assign(outer * inner, 0.0);
  r.max.assign(outer * inner, -std::numeric_limits<double>::infinity());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t e = 0; e < extent; ++e) {
      for (int64_t i = 0; i < inner; ++i) {
        const double v = x[(o * extent + e) * inner + i];
        r.sum[o * inner + i] += v;
        r.max[o * inner + i] = std::max(r.max[o * inner + i], v);
      }
    }
  }
  return r;
}

// Runs Sum, Mean and Max of `x` (shape `dims`) over `axis` on GPU:0 and checks them
// against ReduceOnHost.
void CheckReductionsOnGpu(const std::vector<int64_t>& dims, int axis, uint32_t seed) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t extent = dims[axis];
  const std::vector<float> values = RandomFloats(outer * extent * inner, -1, 1, seed);
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output sum = Sum(gpu.WithOpName("sum"), x, Const(root, axis));
  Output mean = Mean(gpu.WithOpName("mean"), x, Const(root, axis));
  Output max = Max(gpu.WithOpName("max"), x, Const(root, axis));
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({{x, HostTensor(values, dims)}}, {sum, mean, max}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  const HostReduction expected = ReduceOnHost(values, outer, extent, inner);
  REQUIRE(out[0].NumElements() == outer * inner);
  int64_t bad = 0;
  for (int64_t k = 0; k < outer * inner; ++k) {
    const double s = out[0].data<float>()[k], m = out[1].data<float>()[k];
    const bool ok = s == Approx(expected.sum[k]).epsilon(1e-6).margin(1e-6) &&
                    m == Approx(expected.sum[k] / extent).epsilon(1e-6).margin(1e-9) &&
                    out[2].data<float>()[k] == expected.max[k];
    if (!ok && bad++ == 0) {
      UNSCOPED_INFO("first mismatch at output " << k << ": sum " << s << " vs "
                    << expected.sum[k] << ", mean " << m << ", max " << out[2].data<float>()[k]
                    << " vs " << expected.max[k]);
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("Reductions of every shape class match double-precision host loops", "[cuda]") {
  RequireGpu();
  struct Case {
    std::vector<int64_t> dims;
    int axis;
  };
  for (const Case& c : std::vector<Case>{
           {{3, 1000003}, 1},     // long rows, many blocks per row (two passes)
           {{7, 300}, 1},         // rows of one block each
           {{1000, 100}, 1},      // short rows: threads own outputs, extent split
           {{4, 100000, 3}, 1},   // middle axis: few outputs, long extent (two passes)
           {{50000, 30}, 0},      // columns: 30 outputs over 50000 rows
           {{3000000, 2}, 1},     // millions of tiny rows (one pass)
           {{2, 3, 5}, 2}}) {
    // One section per shape: `-d yes` times each, `-c "<name>"` runs one alone.
    DYNAMIC_SECTION("dims[0] " << c.dims[0] << ", rank " << c.dims.size() << ", axis " << c.axis) {
      CheckReductionsOnGpu(c.dims, c.axis, 7);
    }
  }
}

TEST_CASE("Sum/Mean/Max over axis 0 of [1e7, 8] spread the 1e7 rows over the GPU", "[cuda]") {
  RequireGpu();
  // 8 outputs: one thread each would walk 1e7 rows serially.
  CheckReductionsOnGpu({10000000, 8}, 0, 9);
}

TEST_CASE("Sum over more than 2^31 rows reaches every row", "[cuda]") {
  RequireGpu();
  // 2^31 + 3 rows of [1, 1]: beyond gridDim.x's 2^31 - 1 for one block or thread per row.
  constexpr int64_t kRows = (int64_t{1} << 31) + 3;
  Scope root = Scope::NewRootScope();
  Scope gpu = root.WithDevice("/gpu:0");
  Output x = Fill(gpu, Const(root, Input::Initializer(std::vector<int64_t>{kRows, 2}, {2})),
                  Const(gpu, 1.0f));
  Output rows = Sum(gpu.WithOpName("rows"), x, Const(root, 1));  // [kRows], each 2
  // max(-rows) == -2 only if every row was written (fresh device memory reads 0).
  Output neg_min = Max(gpu.WithOpName("neg_min"), Neg(gpu, rows), Const(root, 0));
  Output max = Max(gpu.WithOpName("max"), rows, Const(root, 0));
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({neg_min, max}, &out);
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    WARN("needs ~32 GiB of GPU memory, not checked here: " << status.ToString());
    return;
  }
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(out[0].scalar<float>() == -2.f);
  CHECK(out[1].scalar<float>() == 2.f);
}

TEST_CASE("Softmax rows match a double-precision host softmax", "[cuda]") {
  RequireGpu();
  constexpr int64_t kRows = 100000, kCols = 37;
  const std::vector<float> values = RandomFloats(kRows * kCols, -20, 20, 11);
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = Softmax(root.WithDevice("/gpu:0").WithOpName("y"), x);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({{x, HostTensor(values, {kRows, kCols})}}, {y}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  int64_t bad = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    const float* row = values.data() + r * kCols;
    const double row_max = *std::max_element(row, row + kCols);
    double total = 0;
    for (int64_t c = 0; c < kCols; ++c) total += std::exp(row[c] - row_max);
    for (int64_t c = 0; c < kCols; ++c) {
      const double expected = std::exp(row[c] - row_max) / total;
      if (std::fabs(out[0].data<float>()[r * kCols + c] - expected) > 1e-6 + 1e-5 * expected) {
        ++bad;
      }
    }
  }
  CHECK(bad == 0);
}

}  // namespace
}  // namespace dflow::testing
