// ListDiff. Expected values and messages from TF 2.21 (tf.raw_ops.ListDiff on CPU).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterListDiffKernels);
}

absl::StatusOr<std::vector<Tensor>> ListDiff(const Tensor& x, const Tensor& y,
                                             DataType out_idx = DT_INT32) {
  return OpTester("ListDiff", Registry())
      .Attr("T", x.dtype())
      .Attr("out_idx", out_idx)
      .Input(x)
      .Input(y)
      .Run();
}

TEST_CASE("ListDiff keeps x's elements missing from y, in order, with positions",
          "[kernels][list_diff]") {
  // tf.raw_ops.ListDiff(x=[1,2,3,2,4], y=[2,5], out_idx=tf.int64): [1 3 4], [0 2 4].
  auto out = ListDiff(Vec<int32_t>({1, 2, 3, 2, 4}), Vec<int32_t>({2, 5}), DT_INT64);
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{1, 3, 4});
  CHECK(Values<int64_t>((*out)[1]) == std::vector<int64_t>{0, 2, 4});
  auto strings = ListDiff(Vec<std::string>({"a", "b"}), Vec<std::string>({"b"}));
  REQUIRE(strings.ok());
  CHECK(Values<std::string>((*strings)[0]) == std::vector<std::string>{"a"});
  CHECK(Values<int32_t>((*strings)[1]) == std::vector<int32_t>{0});
  auto none = ListDiff(Vec<float>({1.f, 2.f}), Vec<float>({2.f, 1.f}));
  REQUIRE(none.ok());
  CHECK((*none)[0].NumElements() == 0);
}

TEST_CASE("ListDiff wants vectors (TF's texts)", "[kernels][list_diff]") {
  Tensor matrix = Vec<int32_t>({1, 2}).Reshaped(TensorShape({1, 2}));
  auto bad_x = ListDiff(matrix, Vec<int32_t>({1}));
  REQUIRE(!bad_x.ok());
  CHECK(bad_x.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(bad_x.status().message(), "x should be a 1D vector."));
  auto bad_y = ListDiff(Vec<int32_t>({1}), matrix);
  REQUIRE(!bad_y.ok());
  CHECK(absl::StrContains(bad_y.status().message(), "y should be a 1D vector."));
}

}  // namespace
}  // namespace dflow
