// Split and SplitV. Expected values from TF 2.21 (tf.raw_ops).
#include <catch2/catch.hpp>
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
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterSplitKernels); }


const Tensor& X() {  // [[0,1,2],[3,4,5]]
  static const Tensor* x = new Tensor(Filled<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  return *x;
}

absl::StatusOr<std::vector<Tensor>> Split(int32_t axis, const Tensor& value, int num) {
  return OpTester("Split", Registry())
      .Attr("T", value.dtype())
      .Attr("num_split", num)
      .Input(Filled<int32_t>({}, {axis}))
      .Input(value)
      .Run();
}

absl::StatusOr<std::vector<Tensor>> SplitV(const Tensor& value, const std::vector<int64_t>& sizes,
                                           int64_t axis) {
  return OpTester("SplitV", Registry())
      .Attr("T", value.dtype())
      .Attr("Tlen", DT_INT64)
      .Attr("num_split", static_cast<int>(sizes.size()))
      .Input(value)
      .Input(Filled<int64_t>({static_cast<int64_t>(sizes.size())}, sizes))
      .Input(Filled<int32_t>({}, {static_cast<int32_t>(axis)}))
      .Run();
}

std::string ErrorOf(const absl::StatusOr<std::vector<Tensor>>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("Split cuts equal parts along an axis", "[kernels][split]") {
  auto rows = Split(0, X(), 2);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK(DimsOf((*rows)[1]) == Dims{1, 3});
  CHECK(Values<float>((*rows)[0]) == std::vector<float>{0, 1, 2});
  CHECK(Values<float>((*rows)[1]) == std::vector<float>{3, 4, 5});
  auto cols = Split(-1, Filled<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5}), 3);
  REQUIRE(cols.ok());
  CHECK(Values<int32_t>((*cols)[2]) == std::vector<int32_t>{2, 5});
  auto one = Split(1, X(), 1);
  REQUIRE(one.ok());
  CHECK((*one)[0].SharesBufferWith(X()));
}

TEST_CASE("SplitV cuts given sizes, -1 taking the rest", "[kernels][split]") {
  auto parts = SplitV(X(), {2, -1}, -1);
  REQUIRE(parts.ok());
  CHECK(DimsOf((*parts)[0]) == Dims{2, 2});
  CHECK(Values<float>((*parts)[0]) == std::vector<float>{0, 1, 3, 4});
  CHECK(Values<float>((*parts)[1]) == std::vector<float>{2, 5});
  auto bools = SplitV(Filled<bool>({3}, {true, false, true}), {0, 3}, 0);
  REQUIRE(bools.ok());
  CHECK((*bools)[0].NumElements() == 0);
  CHECK(Values<bool>((*bools)[1]) == std::vector<bool>{true, false, true});
}

TEST_CASE("Split and SplitV reject bad splits with TF's messages", "[kernels][split]") {
  CHECK_THAT(ErrorOf(Split(1, X(), 2)),
             Contains("Number of ways to split should evenly divide the split dimension, but "
                      "got split_dim 1 (size = 3) and num_split 2"));
  CHECK_THAT(ErrorOf(Split(2, X(), 2)),
             Contains("-input rank(-2) <= split_dim < input rank (2), but got 2"));
  CHECK_THAT(ErrorOf(SplitV(X(), {1, 1}, 1)),
             Contains("Determined shape must either match input shape along split_dim exactly "
                      "if fully specified, or be less than the size of the input along "
                      "split_dim if not fully specified.  Got: 2"));
  CHECK_THAT(ErrorOf(SplitV(X(), {-1, -1}, 1)), Contains("There can only be one -1 in the input."));
  CHECK_THAT(ErrorOf(SplitV(X(), {4, -1}, 1)), Contains("Got: 4"));
  CHECK_THAT(ErrorOf(SplitV(X(), {1, -2}, 1)), Contains("must be >= 0"));
}

}  // namespace
}  // namespace dflow
