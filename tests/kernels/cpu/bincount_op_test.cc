// DenseBincount. Expected values and messages from TF 2.21 (tf.raw_ops.DenseBincount on
// CPU).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterBincountKernels); }

template <typename Tidx>
absl::StatusOr<Tensor> Bincount(const Tensor& input, Tidx size, const Tensor& weights,
                                bool binary = false) {
  return OpTester("DenseBincount", Registry())
      .Attr("Tidx", DataTypeOf<Tidx>())
      .Attr("T", weights.dtype())
      .Attr("binary_output", binary)
      .Input(input)
      .Input(Filled<Tidx>({}, {size}))
      .Input(weights)
      .RunOne();
}

Tensor NoWeights() { return Vec<float>({}); }

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("DenseBincount counts a vector, ignoring values >= size", "[kernels][bincount]") {
  const Tensor x = Vec<int32_t>({1, 2, 2, 5, 0, 7});
  auto counts = Bincount<int32_t>(x, 6, NoWeights());
  REQUIRE(counts.ok());
  CHECK(Values<float>(*counts) == std::vector<float>{1, 1, 2, 0, 0, 1});
  auto binary = Bincount<int32_t>(x, 6, NoWeights(), true);
  REQUIRE(binary.ok());
  CHECK(Values<float>(*binary) == std::vector<float>{1, 1, 1, 0, 0, 1});
  auto weighted = Bincount<int32_t>(x, 6, Vec<float>({1, 2, 3, 4, 5, 6}));
  REQUIRE(weighted.ok());
  CHECK(Values<float>(*weighted) == std::vector<float>{5, 1, 5, 0, 0, 4});
  auto binary_weighted = Bincount<int32_t>(x, 6, Vec<float>({1, 2, 3, 4, 5, 6}), true);
  REQUIRE(binary_weighted.ok());
  CHECK(Values<float>(*binary_weighted) == std::vector<float>{1, 1, 1, 0, 0, 1});
  auto int_counts = Bincount<int32_t>(x, 6, Vec<int32_t>({}));
  REQUIRE(int_counts.ok());
  CHECK(Values<int32_t>(*int_counts) == std::vector<int32_t>{1, 1, 2, 0, 0, 1});
  auto i64 = Bincount<int32_t>(x, 6, Vec<int64_t>({1, 2, 3, 4, 5, 6}));
  REQUIRE(i64.ok());
  CHECK(Values<int64_t>(*i64) == std::vector<int64_t>{5, 1, 5, 0, 0, 4});
  auto f64 = Bincount<int64_t>(Vec<int64_t>({1, 2, 2, 5, 0, 7}), 6,
                               Vec<double>({1, 2, 3, 4, 5, 6}));
  REQUIRE(f64.ok());
  CHECK(Values<double>(*f64) == std::vector<double>{5, 1, 5, 0, 0, 4});
}

TEST_CASE("DenseBincount sums in input order and wraps integers", "[kernels][bincount]") {
  auto sums = Bincount<int32_t>(Vec<int32_t>({3, 4, 2, 3, 3, 1}), 4,
                                Vec<float>({.1f, .2f, .3f, .4f, .5f, .6f}));
  REQUIRE(sums.ok());
  CHECK(Values<float>(*sums) == std::vector<float>{0, .6f, .3f, .1f + .4f + .5f});
  auto wrapped = Bincount<int32_t>(Vec<int32_t>({1, 2, 1}), 3,
                                   Vec<int32_t>({1 << 30, 1 << 30, 1 << 30}));
  REQUIRE(wrapped.ok());
  CHECK(Values<int32_t>(*wrapped) == std::vector<int32_t>{0, INT32_MIN, 1 << 30});
}

TEST_CASE("DenseBincount counts a matrix row by row", "[kernels][bincount]") {
  const Tensor x = Filled<int32_t>({2, 2}, {1, 2, 0, 0});
  auto counts = Bincount<int32_t>(x, 3, NoWeights());
  REQUIRE(counts.ok());
  CHECK(DimsOf(*counts) == Dims{2, 3});
  CHECK(Values<float>(*counts) == std::vector<float>{0, 1, 1, 2, 0, 0});
  auto binary = Bincount<int32_t>(x, 3, NoWeights(), true);
  REQUIRE(binary.ok());
  CHECK(Values<float>(*binary) == std::vector<float>{0, 1, 1, 1, 0, 0});
  auto weighted = Bincount<int32_t>(x, 3, Filled<double>({2, 2}, {1, 2, 3, 4}));
  REQUIRE(weighted.ok());
  CHECK(Values<double>(*weighted) == std::vector<double>{0, 1, 2, 7, 0, 0});
  auto ignored = Bincount<int64_t>(Filled<int64_t>({2, 2}, {1, 2, 0, 9}), 3,
                                   Filled<int32_t>({2, 2}, {1, 2, 3, 4}));
  REQUIRE(ignored.ok());
  CHECK(Values<int32_t>(*ignored) == std::vector<int32_t>{0, 1, 2, 3, 0, 0});
  // An empty weights tensor of any shape means unit weights.
  auto any_empty = Bincount<int32_t>(Filled<int32_t>({1, 2}, {1, 2}), 3, Filled<float>({0, 2}, {}));
  REQUIRE(any_empty.ok());
  CHECK(Values<float>(*any_empty) == std::vector<float>{0, 1, 1});
}

TEST_CASE("DenseBincount handles scalars and empty inputs as TF does", "[kernels][bincount]") {
  auto scalar = Bincount<int32_t>(Filled<int32_t>({}, {1}), 3, NoWeights());
  REQUIRE(scalar.ok());
  CHECK(Values<float>(*scalar) == std::vector<float>{0, 1, 0});
  auto scalar_weight = Bincount<int32_t>(Filled<int32_t>({}, {2}), 3, Filled<float>({}, {5}));
  REQUIRE(scalar_weight.ok());
  CHECK(Values<float>(*scalar_weight) == std::vector<float>{0, 0, 5});
  auto no_bins = Bincount<int32_t>(Vec<int32_t>({1, 2}), 0, NoWeights());
  REQUIRE(no_bins.ok());
  CHECK(DimsOf(*no_bins) == Dims{0});
  auto empty = Bincount<int32_t>(Vec<int32_t>({}), 3, NoWeights());
  REQUIRE(empty.ok());
  CHECK(Values<float>(*empty) == std::vector<float>{0, 0, 0});
  auto no_rows = Bincount<int32_t>(Filled<int32_t>({0, 3}, {}), 3, NoWeights());
  REQUIRE(no_rows.ok());
  CHECK(DimsOf(*no_rows) == Dims{0, 3});
  auto empty_rows = Bincount<int32_t>(Filled<int32_t>({2, 0}, {}), 3, NoWeights());
  REQUIRE(empty_rows.ok());
  CHECK(Values<float>(*empty_rows) == std::vector<float>(6, 0));
}

TEST_CASE("DenseBincount rejects negative values and bad shapes with TF's messages",
          "[kernels][bincount]") {
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Vec<int32_t>({1, -1, 2}), 3, NoWeights())),
             Contains("Input arr must be non-negative!"));
  CHECK_THAT(ErrorOf(Bincount<int64_t>(Vec<int64_t>({1, -2}), 0, NoWeights())),
             Contains("Input arr must be non-negative!"));
  // 2-D names the smallest value.
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Filled<int32_t>({2, 2}, {1, -2, -3, 0}), 3, NoWeights())),
             Contains("Input 'in' must be non-negative! Negative input value found: -3"));
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Filled<int32_t>({1, 2}, {1, -2}), 0, NoWeights())),
             Contains("Negative input value found: -2"));
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Vec<int32_t>({1, 2}), -1, NoWeights())),
             Contains("size (-1) must be non-negative"));
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Filled<int32_t>({1, 1, 1}, {0}), -3, NoWeights())),
             Contains("Shape must be at most rank 2 but is rank 3"));
  auto vector_size = OpTester("DenseBincount", Registry())
                         .Attr("Tidx", DT_INT32)
                         .Attr("T", DT_FLOAT)
                         .Input(Vec<int32_t>({1, 2}))
                         .Input(Vec<int32_t>({3}))
                         .Input(Vec<float>({1, 2, 3}))
                         .RunOne();
  CHECK_THAT(ErrorOf(vector_size), Contains("Shape must be rank 0 but is rank 1"));
  const std::string weights_error =
      "`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which case it acts "
      "as all weights equal to 1. Received ";
  // Checked before size and before the values.
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Vec<int32_t>({1, -2}), -3, Vec<float>({1, 2, 3}))),
             Contains(weights_error + "[3]"));
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Filled<int32_t>({2, 2}, {1, 2, 0, 0}), 3,
                                       Vec<double>({1, 2, 3, 4}))),
             Contains(weights_error + "[4]"));
  CHECK_THAT(ErrorOf(Bincount<int32_t>(Vec<int32_t>({2}), 3, Filled<float>({}, {5}))),
             Contains(weights_error + "[]"));
}

TEST_CASE("DenseBincount refuses an output shape that overflows, whatever the empty input",
          "[kernels][bincount]") {
  // 2^40 + 1 empty rows times 2^24 bins wraps int64's element count to 2^24: the kernel
  // must refuse the shape, not allocate 2^24 bins for it.
  const Tensor empty_rows = Filled<int64_t>({(int64_t{1} << 40) + 1, 0}, {});
  CHECK_THAT(ErrorOf(Bincount<int64_t>(empty_rows, int64_t{1} << 24, Vec<int32_t>({}))),
             Contains("output shape [1099511627777,16777216] is invalid"));
  // Many empty rows with a small size are fine: zeros, counted in no time.
  auto zeros = Bincount<int64_t>(Filled<int64_t>({100000, 0}, {}), 3, Vec<int32_t>({}));
  REQUIRE(zeros.ok());
  CHECK(DimsOf(*zeros) == Dims{100000, 3});
}

}  // namespace
}  // namespace dflow
