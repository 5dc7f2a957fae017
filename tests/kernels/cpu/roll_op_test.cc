// Roll. Expected values and messages from TF 2.21 (tf.raw_ops.Roll on CPU).
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::Iota;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterRollKernels); }

absl::StatusOr<Tensor> Roll(const Tensor& input, const Tensor& shift, const Tensor& axis) {
  return OpTester("Roll", Registry())
      .Attr("T", input.dtype())
      .Attr("Tshift", shift.dtype())
      .Attr("Taxis", axis.dtype())
      .Input(input)
      .Input(shift)
      .Input(axis)
      .RunOne();
}

template <typename T>
Tensor Scalar(T v) {
  return Filled<T>({}, {v});
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("Roll rotates one or several axes", "[kernels][roll]") {
  const Tensor x = Iota<int64_t>({3, 4});
  auto cols = Roll(x, Scalar<int32_t>(1), Scalar<int32_t>(1));
  REQUIRE(cols.ok());
  CHECK(Values<int64_t>(*cols) == std::vector<int64_t>{3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10});
  auto both = Roll(x, Vec<int32_t>({1, -1}), Vec<int32_t>({0, 1}));
  REQUIRE(both.ok());
  CHECK(Values<int64_t>(*both) == std::vector<int64_t>{9, 10, 11, 8, 1, 2, 3, 0, 5, 6, 7, 4});
  auto summed = Roll(x, Vec<int32_t>({1, 2}), Vec<int32_t>({1, 1}));  // shifts add up
  REQUIRE(summed.ok());
  CHECK(Values<int64_t>(*summed) == std::vector<int64_t>{1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8});
  auto wide = Roll(x, Vec<int64_t>({5}), Vec<int32_t>({-1}));
  REQUIRE(wide.ok());
  CHECK(Values<int64_t>(*wide) == Values<int64_t>(*cols));
  auto min = Roll(x, Vec<int64_t>({std::numeric_limits<int64_t>::min()}), Vec<int32_t>({1}));
  REQUIRE(min.ok());
  CHECK(Values<int64_t>(*min) == Values<int64_t>(x));
  auto strings = Roll(Vec<std::string>({"a", "b"}), Scalar<int32_t>(1), Scalar<int32_t>(0));
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"b", "a"});
  auto empty = Roll(Filled<double>({0, 3}, {}), Scalar<int32_t>(1), Scalar<int32_t>(0));
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 3});
}

TEST_CASE("Roll rejects bad shapes and axes in TF's words", "[kernels][roll]") {
  const Tensor x = Iota<int32_t>({3, 4});
  CHECK(ErrorOf(Roll(x, Vec<int32_t>({1}), Vec<int32_t>({2}))) == "Roll: axis 2 is out of range");
  CHECK(ErrorOf(Roll(x, Scalar<int32_t>(1), Scalar<int32_t>(-3))) ==
        "Roll: axis -1 is out of range");
  CHECK(ErrorOf(Roll(x, Vec<int32_t>({1, 2}), Vec<int32_t>({0}))) ==
        "Roll: shift and axis must have the same size");
  CHECK(ErrorOf(Roll(x, Vec<int32_t>({1}), Scalar<int32_t>(0))) ==
        "Roll: shift and axis must have the same size");
  CHECK(ErrorOf(Roll(x, Filled<int32_t>({1, 1}, {1}), Filled<int32_t>({1, 1}, {0}))) ==
        "Roll: shift must be a scalar or a 1-D vector. Found: [1,1]");
  CHECK(ErrorOf(Roll(Scalar<int32_t>(5), Scalar<int32_t>(1), Scalar<int32_t>(0))) ==
        "Roll: input must be 1-D or higher");
}

TEST_CASE("Roll on the pool matches the index rule", "[kernels][roll]") {
  auto out = Roll(Iota<int32_t>({200, 300}), Vec<int32_t>({7, -5}), Vec<int64_t>({0, 1}));
  REQUIRE(out.ok());
  const std::vector<int32_t> v = Values<int32_t>(*out);
  int bad = 0;
  for (int i = 0; i < 200; ++i) {
    for (int j = 0; j < 300; ++j) bad += v[i * 300 + j] != ((i + 193) % 200) * 300 + (j + 5) % 300;
  }
  CHECK(bad == 0);
}

}  // namespace
}  // namespace dflow
