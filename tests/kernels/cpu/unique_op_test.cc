// Unique. Expected values and messages from TF 2.21 (tf.raw_ops.Unique on CPU).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterUniqueKernels); }

absl::StatusOr<std::vector<Tensor>> Unique(const Tensor& x, DataType out_idx = DT_INT32) {
  return OpTester("Unique", Registry())
      .Attr("T", x.dtype())
      .Attr("out_idx", out_idx)
      .Input(x)
      .Run();
}

TEST_CASE("Unique keeps first occurrences in order", "[kernels][unique]") {
  auto out = Unique(Vec<int32_t>({1, 1, 2, 4, 4, 4, 7, 8, 8}));
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{1, 2, 4, 7, 8});
  CHECK((*out)[1].dtype() == DT_INT32);
  CHECK(Values<int32_t>((*out)[1]) == std::vector<int32_t>{0, 0, 1, 2, 2, 2, 3, 4, 4});
  auto strings = Unique(Vec<std::string>({"b", "a", "b"}), DT_INT64);
  REQUIRE(strings.ok());
  CHECK(Values<std::string>((*strings)[0]) == std::vector<std::string>{"b", "a"});
  CHECK(Values<int64_t>((*strings)[1]) == std::vector<int64_t>{0, 1, 0});
  auto half = Unique(Vec<Half>({Half::FromFloat(2), Half::FromFloat(1), Half::FromFloat(2)}));
  REQUIRE(half.ok());
  REQUIRE(DimsOf((*half)[0]) == Dims{2});
  CHECK((*half)[0].data<Half>()[0].ToFloat() == 2.0f);
  CHECK(Values<int32_t>((*half)[1]) == std::vector<int32_t>{0, 1, 0});
  auto empty = Unique(Vec<int32_t>({}));
  REQUIRE(empty.ok());
  CHECK(DimsOf((*empty)[0]) == Dims{0});
  CHECK(DimsOf((*empty)[1]) == Dims{0});
}

TEST_CASE("Unique treats every NaN as new and -0 as 0", "[kernels][unique]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = Unique(Vec<float>({3, 1, 3, nan, nan, -0.0f, 0.0f}), DT_INT64);
  REQUIRE(out.ok());
  const std::vector<float> y = Values<float>((*out)[0]);
  REQUIRE(y.size() == 5);
  CHECK(y[0] == 3);
  CHECK(y[1] == 1);
  CHECK(std::isnan(y[2]));
  CHECK(std::isnan(y[3]));
  CHECK(std::signbit(y[4]));  // the first of -0 and 0
  CHECK(Values<int64_t>((*out)[1]) == std::vector<int64_t>{0, 1, 0, 2, 3, 4, 4});
}

TEST_CASE("Unique rejects non-vectors", "[kernels][unique]") {
  for (const Tensor& x : {Filled<int32_t>({2, 2}, {1, 2, 1, 2}), Filled<int32_t>({}, {5})}) {
    auto out = Unique(x);
    REQUIRE_FALSE(out.ok());
    CHECK(std::string(out.status().message()) == "Unique: unique expects a 1D vector.");
  }
}

}  // namespace
}  // namespace dflow
