// ConcatOffset. Expected values and messages from TF 2.21 (tf.raw_ops.ConcatOffset on
// CPU).
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterConcatOffsetKernel);
}

absl::StatusOr<std::vector<Tensor>> ConcatOffset(const Tensor& concat_dim,
                                                 const std::vector<Tensor>& shapes) {
  OpTester tester("ConcatOffset", Registry());
  tester.Attr("N", static_cast<int64_t>(shapes.size()))
      .Attr("shape_type", shapes[0].dtype())
      .Input(concat_dim);
  for (const Tensor& shape : shapes) tester.Input(shape);
  return tester.Run();
}

absl::StatusOr<std::vector<Tensor>> ConcatOffset(int32_t concat_dim,
                                                 const std::vector<Tensor>& shapes) {
  return ConcatOffset(Filled<int32_t>({}, {concat_dim}), shapes);
}

std::string ErrorOf(const absl::StatusOr<std::vector<Tensor>>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("ConcatOffset gives each input's start along concat_dim", "[kernels][concat_offset]") {
  auto out = ConcatOffset(1, {Vec<int32_t>({2, 3, 5}), Vec<int32_t>({2, 7, 5}),
                              Vec<int32_t>({2, 0, 5})});
  REQUIRE(out.ok());
  REQUIRE(out->size() == 3);
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{0, 0, 0});
  CHECK(Values<int32_t>((*out)[1]) == std::vector<int32_t>{0, 3, 0});
  CHECK(Values<int32_t>((*out)[2]) == std::vector<int32_t>{0, 10, 0});
  auto negative = ConcatOffset(-3, {Vec<int32_t>({2, 3, 5}), Vec<int32_t>({4, 3, 5})});
  REQUIRE(negative.ok());
  CHECK(Values<int32_t>((*negative)[1]) == std::vector<int32_t>{2, 0, 0});
  auto rank1 = ConcatOffset(0, {Vec<int32_t>({-3}), Vec<int32_t>({4})});
  REQUIRE(rank1.ok());
  CHECK(Values<int32_t>((*rank1)[1]) == std::vector<int32_t>{-3});
}

TEST_CASE("ConcatOffset in int64, and int32 offsets wrap as TF's", "[kernels][concat_offset]") {
  auto big = ConcatOffset(0, {Vec<int64_t>({int64_t{1} << 40, 3}),
                              Vec<int64_t>({int64_t{1} << 40, 3})});
  REQUIRE(big.ok());
  CHECK((*big)[1].dtype() == DT_INT64);
  CHECK(Values<int64_t>((*big)[1]) == std::vector<int64_t>{int64_t{1} << 40, 0});
  auto wrapped = ConcatOffset(0, {Vec<int32_t>({2147483647}), Vec<int32_t>({2}),
                                  Vec<int32_t>({2})});
  REQUIRE(wrapped.ok());
  CHECK(Values<int32_t>((*wrapped)[2]) == std::vector<int32_t>{-2147483647});
}

TEST_CASE("ConcatOffset rejects bad shapes with TF's messages", "[kernels][concat_offset]") {
  const Tensor s0 = Vec<int32_t>({2, 3, 5});
  const Tensor s1 = Vec<int32_t>({2, 7, 5});
  CHECK_THAT(ErrorOf(ConcatOffset(3, {s0, s1})), Contains("Concat dim is out of range: 3 vs. 3"));
  CHECK_THAT(ErrorOf(ConcatOffset(-4, {s0, s1})),
             Contains("Concat dim is out of range: -4 vs. 3"));
  CHECK_THAT(ErrorOf(ConcatOffset(0, {Vec<int32_t>({}), Vec<int32_t>({})})),
             Contains("Concat dim is out of range: 0 vs. 0"));
  CHECK_THAT(ErrorOf(ConcatOffset(1, {s0, Vec<int32_t>({2, 7})})),
             Contains("input 1 should contain 3 elements, but got 2"));
  CHECK_THAT(ErrorOf(ConcatOffset(1, {s0, Vec<int32_t>({3, 7, 5})})),
             Contains("All dimensions except 1 must match. Input 1 has shape [3 7 5] and doesn't "
                      "match input 0 with shape [2 3 5]."));
  CHECK_THAT(ErrorOf(ConcatOffset(-1, {Vec<int32_t>({2, 3}), Vec<int32_t>({3, 3})})),
             Contains("All dimensions except 1 must match. Input 1 has shape [3 3]"));
  CHECK_THAT(ErrorOf(ConcatOffset(Vec<int32_t>({1}), {s0, s1})),
             Contains("Concat dim tensor should be a scalar integer, but got shape [1]"));
  CHECK_THAT(ErrorOf(ConcatOffset(5, {Filled<int32_t>({1, 1}, {2}), Vec<int32_t>({2})})),
             Contains("input 1 should be a vector, but got shape [1,1]"));
  std::vector<int64_t> twelve(12);
  std::iota(twelve.begin(), twelve.end(), 1);
  std::vector<int64_t> other = twelve;
  other[11] = 99;
  CHECK_THAT(ErrorOf(ConcatOffset(0, {Vec<int64_t>(twelve), Vec<int64_t>(other)})),
             Contains("Input 1 has shape [1 2 3 4 5 6 7 8 9 10...] and doesn't match input 0 "
                      "with shape [1 2 3 4 5 6 7 8 9 10...]."));
}

}  // namespace
}  // namespace dflow
