// ReverseV2. Expected values and messages from TF 2.21 (tf.raw_ops.ReverseV2 on
// CPU).
#include <catch2/catch.hpp>
#include <cstdint>
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterReverseKernels); }

absl::StatusOr<Tensor> Reverse(const Tensor& input, const Tensor& axis) {
  return OpTester("ReverseV2", Registry())
      .Attr("T", input.dtype())
      .Attr("Tidx", axis.dtype())
      .Input(input)
      .Input(axis)
      .RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  return std::string(result.status().message());
}

TEST_CASE("ReverseV2 reverses middle, last and several axes", "[kernels][reverse]") {
  const Tensor x = Iota<int64_t>({2, 3, 4});
  auto middle = Reverse(x, Vec<int32_t>({1}));
  REQUIRE(middle.ok());
  CHECK(Values<int64_t>(*middle) == std::vector<int64_t>{8,  9,  10, 11, 4,  5,  6,  7,
                                                         0,  1,  2,  3,  20, 21, 22, 23,
                                                         16, 17, 18, 19, 12, 13, 14, 15});
  auto two = Reverse(x, Vec<int64_t>({-1, 0}));
  REQUIRE(two.ok());
  CHECK(Values<int64_t>(*two) == std::vector<int64_t>{15, 14, 13, 12, 19, 18, 17, 16,
                                                      23, 22, 21, 20, 3,  2,  1,  0,
                                                      7,  6,  5,  4,  11, 10, 9,  8});
  auto none = Reverse(x, Vec<int32_t>({}));
  REQUIRE(none.ok());
  CHECK(Values<int64_t>(*none) == Values<int64_t>(x));
  auto strings = Reverse(Vec<std::string>({"a", "b"}), Vec<int32_t>({0}));
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"b", "a"});
  auto bytes = Reverse(Vec<uint8_t>({1, 2, 3}), Vec<int32_t>({0}));
  REQUIRE(bytes.ok());
  CHECK(Values<uint8_t>(*bytes) == std::vector<uint8_t>{3, 2, 1});
}

TEST_CASE("ReverseV2 passes scalars and empty tensors through unchecked", "[kernels][reverse]") {
  auto scalar = Reverse(Filled<int32_t>({}, {5}), Vec<int32_t>({0}));
  REQUIRE(scalar.ok());
  CHECK(Values<int32_t>(*scalar) == std::vector<int32_t>{5});
  auto empty = Reverse(Filled<float>({0, 3}, {}), Vec<int32_t>({7}));
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 3});
}

TEST_CASE("ReverseV2 rejects bad axes in TF's words", "[kernels][reverse]") {
  const Tensor x = Iota<int32_t>({2, 3, 4});
  CHECK(ErrorOf(Reverse(x, Vec<int32_t>({1, -2}))) ==
        "ReverseV2: axis 1 specified more than once.");
  CHECK(ErrorOf(Reverse(x, Vec<int32_t>({3}))) ==
        "ReverseV2: 'axis'[0] = 3 is out of valid range [0, 2");
  CHECK(ErrorOf(Reverse(x, Vec<int64_t>({0, -4}))) ==
        "ReverseV2: 'axis'[1] = -4 is out of valid range [0, 2");
  CHECK(ErrorOf(Reverse(x, Filled<int32_t>({1, 1}, {1}))) ==
        "ReverseV2: 'dims' must be 1-dimension, not 2");
  auto deep = Reverse(Filled<float>({1, 1, 1, 1, 1, 1, 1, 1, 2}, {}), Vec<int32_t>({0}));
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(deep.status().message()) ==
        "ReverseV2: reverse is not implemented for tensors of rank > 8.");
}

TEST_CASE("ReverseV2 on the pool matches the index rule", "[kernels][reverse]") {
  auto rows = Reverse(Iota<int32_t>({200, 300}), Vec<int32_t>({0}));
  auto cols = Reverse(Iota<int32_t>({200, 300}), Vec<int32_t>({1}));
  REQUIRE(rows.ok());
  REQUIRE(cols.ok());
  const std::vector<int32_t> r = Values<int32_t>(*rows);
  const std::vector<int32_t> c = Values<int32_t>(*cols);
  int bad = 0;
  for (int i = 0; i < 200; ++i) {
    for (int j = 0; j < 300; ++j) {
      bad += r[i * 300 + j] != (199 - i) * 300 + j;
      bad += c[i * 300 + j] != i * 300 + (299 - j);
    }
  }
  CHECK(bad == 0);
}

}  // namespace
}  // namespace dflow
