// Reduction CPU kernels: Sum, Mean, Max, Min, Prod, All, Any, ArgMax and ArgMin.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/kernel_registry.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::MakeTensor;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterReductionKernels); }

absl::StatusOr<Tensor> Reduce(const std::string& op, const Tensor& input, const Tensor& axes,
                              bool keep_dims = false) {
  OpTester tester(op, Registry());
  if (input.dtype() != DT_BOOL) tester.Attr("T", input.dtype());
  return tester.Attr("Tidx", axes.dtype())
      .Attr("keep_dims", keep_dims)
      .Input(input)
      .Input(axes)
      .RunOne();
}

Tensor Axes(std::vector<int32_t> axes) {
  return MakeTensor<int32_t>({static_cast<int64_t>(axes.size())}, axes);
}

template <typename T>
std::vector<T> ReduceValues(const std::string& op, const Tensor& input, const Tensor& axes,
                            bool keep_dims = false) {
  absl::StatusOr<Tensor> out = Reduce(op, input, axes, keep_dims);
  REQUIRE(out.ok());
  return Values<T>(*out);
}

// --- values -----------------------------------------------------------------------

TEST_CASE("Reductions fold a float matrix over either axis or both", "[kernels][reduction]") {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(ReduceValues<float>("Sum", x, Axes({0})) == std::vector<float>{5, 7, 9});
  CHECK(ReduceValues<float>("Sum", x, Axes({1})) == std::vector<float>{6, 15});
  CHECK(ReduceValues<float>("Sum", x, Axes({0, 1})) == std::vector<float>{21});
  CHECK(ReduceValues<float>("Mean", x, Axes({0})) == std::vector<float>{2.5f, 3.5f, 4.5f});
  CHECK(ReduceValues<float>("Mean", x, Axes({1})) == std::vector<float>{2, 5});
  CHECK(ReduceValues<float>("Max", x, Axes({0})) == std::vector<float>{4, 5, 6});
  CHECK(ReduceValues<float>("Max", x, Axes({1})) == std::vector<float>{3, 6});
  CHECK(ReduceValues<float>("Min", x, Axes({0})) == std::vector<float>{1, 2, 3});
  CHECK(ReduceValues<float>("Min", x, Axes({1})) == std::vector<float>{1, 4});
  CHECK(ReduceValues<float>("Prod", x, Axes({0})) == std::vector<float>{4, 10, 18});
  CHECK(ReduceValues<float>("Prod", x, Axes({1})) == std::vector<float>{6, 120});
}

TEST_CASE("Reductions fold integer tensors in their own type", "[kernels][reduction]") {
  const Tensor x = MakeTensor<int32_t>({2, 3}, {1, -2, 3, 4, 5, -6});
  CHECK(ReduceValues<int32_t>("Sum", x, Axes({1})) == std::vector<int32_t>{2, 3});
  CHECK(ReduceValues<int32_t>("Mean", x, Axes({0})) == std::vector<int32_t>{2, 1, -1});
  CHECK(ReduceValues<int32_t>("Max", x, Axes({1})) == std::vector<int32_t>{3, 5});
  CHECK(ReduceValues<int32_t>("Min", x, Axes({0})) == std::vector<int32_t>{1, -2, -6});
  CHECK(ReduceValues<int32_t>("Prod", x, Axes({0, 1})) == std::vector<int32_t>{720});
  const Tensor y = MakeTensor<int64_t>({3}, {int64_t{1} << 40, 1, 2});
  CHECK(ReduceValues<int64_t>("Sum", y, Axes({0})) == std::vector<int64_t>{(int64_t{1} << 40) + 3});
}

TEST_CASE("Reductions accept negative, duplicate and int64 axes and keep_dims",
          "[kernels][reduction]") {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(ReduceValues<float>("Sum", x, Axes({-1})) == std::vector<float>{6, 15});
  CHECK(ReduceValues<float>("Sum", x, Axes({1, -1, 1})) == std::vector<float>{6, 15});
  CHECK(ReduceValues<float>("Sum", x, MakeTensor<int64_t>({1}, {-2})) ==
        std::vector<float>{5, 7, 9});
  CHECK(ReduceValues<float>("Sum", x, MakeTensor<int32_t>({}, {0})) == std::vector<float>{5, 7, 9});
  absl::StatusOr<Tensor> kept = Reduce("Max", x, Axes({1}), /*keep_dims=*/true);
  REQUIRE(kept.ok());
  CHECK(kept->shape() == TensorShape({2, 1}));
  CHECK(Values<float>(*kept) == std::vector<float>{3, 6});
  absl::StatusOr<Tensor> all = Reduce("Sum", x, Axes({0, 1}), /*keep_dims=*/true);
  REQUIRE(all.ok());
  CHECK(all->shape() == TensorShape({1, 1}));
  absl::StatusOr<Tensor> dropped = Reduce("Sum", x, Axes({0, 1}));
  REQUIRE(dropped.ok());
  CHECK(dropped->shape() == TensorShape());
}

TEST_CASE("An empty axis list returns the input unchanged", "[kernels][reduction]") {
  const Tensor x = MakeTensor<int64_t>({2, 2}, {1, 2, 3, 4});
  for (const char* op : {"Sum", "Mean", "Max", "Prod"}) {
    absl::StatusOr<Tensor> out = Reduce(op, x, Axes({}));
    REQUIRE(out.ok());
    CHECK(out->shape() == TensorShape({2, 2}));
    CHECK(Values<int64_t>(*out) == std::vector<int64_t>{1, 2, 3, 4});
  }
}

TEST_CASE("Reducing an empty dim gives each reducer's identity", "[kernels][reduction]") {
  const Tensor x = MakeTensor<float>({0, 2}, {});
  CHECK(ReduceValues<float>("Sum", x, Axes({0})) == std::vector<float>{0, 0});
  CHECK(ReduceValues<float>("Prod", x, Axes({0})) == std::vector<float>{1, 1});
  CHECK(ReduceValues<float>("Max", x, Axes({0}))[0] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(ReduceValues<float>("Mean", x, Axes({0}))[0]));
  absl::StatusOr<Tensor> none = Reduce("Sum", x, Axes({1}));
  REQUIRE(none.ok());
  CHECK(none->shape() == TensorShape({0}));
}

TEST_CASE("All and Any reduce bool tensors", "[kernels][reduction]") {
  const Tensor x = MakeTensor<bool>({2, 3}, {true, true, false, true, true, true});
  CHECK(ReduceValues<bool>("All", x, Axes({1})) == std::vector<bool>{false, true});
  CHECK(ReduceValues<bool>("All", x, Axes({0})) == std::vector<bool>{true, true, false});
  CHECK(ReduceValues<bool>("Any", MakeTensor<bool>({2, 2}, {false, false, false, true}),
                           Axes({1})) == std::vector<bool>{false, true});
  CHECK(ReduceValues<bool>("Any", x, Axes({0, 1})) == std::vector<bool>{true});
}

// --- against a reference, over many layouts -----------------------------------------

// Sums (in double) of a row-major tensor over the axes flagged in `reduced`.
std::vector<double> NaiveSum(const std::vector<int64_t>& dims, const std::vector<bool>& reduced,
                             const std::vector<float>& x) {
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < dims.size(); ++d) out_dims.push_back(reduced[d] ? 1 : dims[d]);
  int64_t out_n = 1;
  for (int64_t d : out_dims) out_n *= d;
  std::vector<double> out(out_n, 0.0);
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) o = o * out_dims[d] + (reduced[d] ? 0 : index[d]);
    out[o] += x[i];
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

TEST_CASE("Sum matches a reference for every axis subset of several shapes",
          "[kernels][reduction]") {
  const std::vector<std::vector<int64_t>> shapes = {{7, 33, 5}, {4, 1, 6, 3},  {3, 70000},
                                                    {70000, 3}, {5, 30000, 2}, {2, 3, 2, 3, 2}};
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const auto& dims : shapes) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> x(n);
    for (float& v : x) v = dist(rng);
    const Tensor input = Filled<float>(dims, x);
    const int rank = static_cast<int>(dims.size());
    for (int mask = 0; mask < (1 << rank); ++mask) {
      std::vector<int32_t> axes;
      std::vector<bool> reduced(rank);
      for (int d = 0; d < rank; ++d) {
        reduced[d] = (mask >> d) & 1;
        if (reduced[d]) axes.push_back(d);
      }
      INFO("shape " << TensorShape(absl::MakeConstSpan(dims)).DebugString() << " mask " << mask);
      absl::StatusOr<Tensor> out = Reduce("Sum", input, Axes(axes), /*keep_dims=*/true);
      REQUIRE(out.ok());
      const std::vector<double> want = NaiveSum(dims, reduced, x);
      const std::vector<float> got = Values<float>(*out);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got[i] == Approx(want[i]).margin(1e-3));
      }
    }
  }
}

TEST_CASE("Max and Min find extremes along middle and outer axes", "[kernels][reduction]") {
  // [3, 40000, 2]: few outputs and long reductions, so the reduction is split in chunks.
  const int64_t n = 3 * 40000 * 2;
  std::vector<int32_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<int32_t>((i * 7919) % 100003) - 50000;
  x[2 * 40000 * 2 + 12345 * 2 + 1] = 999999;
  x[1 * 40000 * 2 + 3 * 2 + 0] = -999999;
  const Tensor input = Filled<int32_t>({3, 40000, 2}, x);
  const std::vector<int32_t> max = ReduceValues<int32_t>("Max", input, Axes({1}));
  const std::vector<int32_t> min = ReduceValues<int32_t>("Min", input, Axes({0, 1}));
  CHECK(max[5] == 999999);
  CHECK(min[0] == -999999);
  for (int o = 0; o < 6; ++o) {
    int32_t want = std::numeric_limits<int32_t>::lowest();
    for (int64_t r = 0; r < 40000; ++r) want = std::max(want, x[(o / 2) * 80000 + r * 2 + o % 2]);
    CHECK(max[o] == want);
  }
}

TEST_CASE("NHWC global pooling (Mean over H and W) folds row chunks exactly",
          "[kernels][reduction]") {
  // EfficientNet's squeeze: 96 channels kept innermost over 56x56 positions, split into
  // chunks of rows with partial sums; and 1152 channels over 7x7 (one chunk).
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{1, 56, 56, 96}, std::vector<int64_t>{2, 7, 7, 1152}}) {
    const int64_t positions = dims[1] * dims[2], channels = dims[3];
    std::vector<float> x(dims[0] * positions * channels);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1001) / 1000.0f;
    const std::vector<float> got =
        ReduceValues<float>("Mean", Filled<float>(dims, x), Axes({1, 2}), /*keep_dims=*/true);
    REQUIRE(got.size() == static_cast<size_t>(dims[0] * channels));
    for (int64_t b = 0; b < dims[0]; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (int64_t p = 0; p < positions; ++p) sum += x[(b * positions + p) * channels + c];
        CHECK(got[b * channels + c] == Approx(sum / positions).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("A float Sum over 1e8 elements stays accurate", "[kernels][reduction]") {
  const int64_t n = 100000000;
  Tensor x = *Tensor::Allocate(TestCpuDevice()->allocator(), DT_FLOAT, TensorShape({n}));
  std::fill(x.flat<float>().begin(), x.flat<float>().end(), 0.1f);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<float> sum = ReduceValues<float>("Sum", x, Axes({0}));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(std::abs(sum[0] - 1e7) / 1e7 < 1e-6);
  const std::vector<float> mean = ReduceValues<float>("Mean", x, Axes({0}));
  CHECK(std::abs(mean[0] - 0.1) / 0.1 < 1e-6);
  // Split as [1e4, 1e4]: the row sums and the column sums stay accurate too.
  const Tensor square = x.Reshaped(TensorShape({10000, 10000}));
  const std::vector<float> rows = ReduceValues<float>("Sum", square, Axes({1}));
  const std::vector<float> cols = ReduceValues<float>("Sum", square, Axes({0}));
  CHECK(std::abs(rows[9999] - 1000.0) / 1000.0 < 1e-6);
  CHECK(std::abs(cols[9999] - 1000.0) / 1000.0 < 1e-6);
  CHECK(seconds < 1.0);
}

// --- errors -----------------------------------------------------------------------

TEST_CASE("An out-of-range axis is rejected naming the axis and the rank", "[kernels][reduction]") {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  for (int32_t axis : {2, -3}) {
    absl::StatusOr<Tensor> out = Reduce("Sum", x, Axes({axis}));
    REQUIRE(!out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(out.status().message() == "Invalid reduction dimension (" + std::to_string(axis) +
                                        " for input with 2 dimension(s)");
  }
}

// --- ArgMax / ArgMin ----------------------------------------------------------------

absl::StatusOr<Tensor> Arg(const std::string& op, const Tensor& input, int32_t axis,
                           DataType output_type = DT_INT64) {
  return OpTester(op, Registry())
      .Attr("T", input.dtype())
      .Attr("output_type", output_type)
      .Input(input)
      .Input(MakeTensor<int32_t>({}, {axis}))
      .RunOne();
}

TEST_CASE("ArgMax and ArgMin pick the first index on ties", "[kernels][reduction]") {
  const Tensor x = MakeTensor<float>({2, 4}, {1, 3, 3, 0, 2, 2, 1, 1});
  absl::StatusOr<Tensor> out = Arg("ArgMax", x, 1);
  REQUIRE(out.ok());
  CHECK(out->dtype() == DT_INT64);
  CHECK(Values<int64_t>(*out) == std::vector<int64_t>{1, 0});
  out = Arg("ArgMin", x, -1, DT_INT32);
  REQUIRE(out.ok());
  CHECK(out->dtype() == DT_INT32);
  CHECK(Values<int32_t>(*out) == std::vector<int32_t>{3, 2});
  out = Arg("ArgMax", x, 0);
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({4}));
  CHECK(Values<int64_t>(*out) == std::vector<int64_t>{1, 0, 0, 1});
  out = Arg("ArgMin", MakeTensor<int32_t>({3, 2}, {5, 5, 5, 4, 5, 4}), 0);
  REQUIRE(out.ok());
  CHECK(Values<int64_t>(*out) == std::vector<int64_t>{0, 1});
}

TEST_CASE("ArgMax over a large middle axis matches a reference", "[kernels][reduction]") {
  const int64_t outer = 3, len = 5000, inner = 300;
  std::vector<double> x(outer * len * inner);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(0, 1000);
  for (double& v : x) v = dist(rng);
  absl::StatusOr<Tensor> out = Arg("ArgMax", Filled<double>({outer, len, inner}, x), 1);
  REQUIRE(out.ok());
  const std::vector<int64_t> got = Values<int64_t>(*out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      int64_t best = 0;
      for (int64_t l = 1; l < len; ++l) {
        if (x[(o * len + l) * inner + k] > x[(o * len + best) * inner + k]) best = l;
      }
      REQUIRE(got[o * inner + k] == best);
    }
  }
}

TEST_CASE("ArgMax and ArgMin along a long last axis return the first of many ties",
          "[kernels][reduction]") {
  const int64_t rows = 7, len = 1001;
  std::vector<int32_t> x(rows * len);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dist(0, 9);
  for (int32_t& v : x) v = dist(rng);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    const bool is_max = std::string(op) == "ArgMax";
    absl::StatusOr<Tensor> out = Arg(op, Filled<int32_t>({rows, len}, x), 1, DT_INT32);
    REQUIRE(out.ok());
    const std::vector<int32_t> got = Values<int32_t>(*out);
    for (int64_t r = 0; r < rows; ++r) {
      int32_t best = 0;
      for (int32_t l = 1; l < len; ++l) {
        const int32_t v = x[r * len + l], b = x[r * len + best];
        if (is_max ? v > b : v < b) best = l;
      }
      INFO(op << " row " << r);
      CHECK(got[r] == best);
    }
  }
}

TEST_CASE("ArgMax rejects a dimension out of range or of size zero", "[kernels][reduction]") {
  absl::StatusOr<Tensor> out = Arg("ArgMax", MakeTensor<float>({2, 3}, {}), 2);
  REQUIRE(!out.ok());
  CHECK(out.status().message() == "Expected dimension in the range [-2, 2), but got 2");
  out = Arg("ArgMax", MakeTensor<float>({0, 3}, {}), 0);
  REQUIRE(!out.ok());
  CHECK(out.status().message() == "Reduction axis 0 is empty in shape [0,3]");
}

}  // namespace
}  // namespace dflow
