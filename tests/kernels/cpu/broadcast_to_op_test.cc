// BroadcastTo and BroadcastArgs. Expected values and messages from TF 2.21
// (tf.raw_ops.BroadcastTo / BroadcastArgs on CPU).
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

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterBroadcastToKernels); }

absl::StatusOr<Tensor> BroadcastTo(const Tensor& input, const Tensor& shape) {
  return OpTester("BroadcastTo", Registry())
      .Attr("T", input.dtype())
      .Attr("Tidx", shape.dtype())
      .Input(input)
      .Input(shape)
      .RunOne();
}

absl::StatusOr<Tensor> BroadcastArgs(const Tensor& s0, const Tensor& s1) {
  return OpTester("BroadcastArgs", Registry()).Attr("T", s0.dtype()).Input(s0).Input(s1).RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("BroadcastTo repeats rows, columns and scalars", "[kernels][broadcast_to]") {
  auto rows = BroadcastTo(Vec<int32_t>({1, 2, 3}), Vec<int32_t>({2, 3}));
  REQUIRE(rows.ok());
  CHECK(DimsOf(*rows) == Dims{2, 3});
  CHECK(Values<int32_t>(*rows) == std::vector<int32_t>{1, 2, 3, 1, 2, 3});
  auto cols = BroadcastTo(Filled<int32_t>({2, 1}, {1, 2}), Vec<int64_t>({2, 3}));
  REQUIRE(cols.ok());
  CHECK(Values<int32_t>(*cols) == std::vector<int32_t>{1, 1, 1, 2, 2, 2});
  auto middle = BroadcastTo(Filled<float>({2, 1, 2}, {1, 2, 3, 4}), Vec<int32_t>({2, 2, 2}));
  REQUIRE(middle.ok());
  CHECK(Values<float>(*middle) == std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4});
  auto scalar = BroadcastTo(Filled<double>({}, {7}), Vec<int32_t>({3}));
  REQUIRE(scalar.ok());
  CHECK(Values<double>(*scalar) == std::vector<double>{7, 7, 7});
  auto strings = BroadcastTo(Vec<std::string>({"a", "b"}), Vec<int32_t>({2, 2}));
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"a", "b", "a", "b"});
  auto same = BroadcastTo(Iota<int8_t>({2, 2}), Vec<int32_t>({2, 2}));
  REQUIRE(same.ok());
  CHECK(Values<int8_t>(*same) == std::vector<int8_t>{0, 1, 2, 3});
}

TEST_CASE("BroadcastTo produces empty outputs", "[kernels][broadcast_to]") {
  auto a = BroadcastTo(Filled<int32_t>({}, {5}), Vec<int32_t>({2, 0}));
  REQUIRE(a.ok());
  CHECK(DimsOf(*a) == Dims{2, 0});
  auto b = BroadcastTo(Filled<int32_t>({1, 2}, {1, 2}), Vec<int32_t>({0, 2}));
  REQUIRE(b.ok());
  CHECK(DimsOf(*b) == Dims{0, 2});
}

TEST_CASE("BroadcastTo rejects bad shapes in TF's words", "[kernels][broadcast_to]") {
  CHECK(ErrorOf(BroadcastTo(Vec<int32_t>({1, 2, 3}), Vec<int32_t>({2, 2}))) ==
        "BroadcastTo: Incompatible shapes: [3] vs. [2,2]");
  CHECK(ErrorOf(BroadcastTo(Vec<int32_t>({1, 2, 3}), Vec<int32_t>({-1, 3}))) ==
        "BroadcastTo: Dimension -1 must be >= 0");
  CHECK(ErrorOf(BroadcastTo(Filled<int32_t>({1, 3}, {}), Vec<int32_t>({3}))) ==
        "BroadcastTo: Rank of input (2) must be no greater than rank of output "
        "shape (1).");
  CHECK(ErrorOf(BroadcastTo(Vec<int32_t>({1, 2, 3}), Filled<int32_t>({1, 2}, {1, 3}))) ==
        "BroadcastTo: shape must be a vector of {int32,int64}, got shape [1,2]");
  CHECK(ErrorOf(BroadcastTo(Vec<int32_t>({1, 2}), Vec<int64_t>({1LL << 40, 1LL << 40, 2}))) ==
        "BroadcastTo: Shape [1099511627776,1099511627776,2] would have more "
        "than 2**63 - 1 "
        "elements");
  CHECK(ErrorOf(BroadcastTo(Filled<int32_t>({1, 2}, {}), Vec<int64_t>({1LL << 62, 4, -1}))) ==
        "BroadcastTo: Shape [4611686018427387904,4,?] would have more than "
        "2**63 - 1 elements");
  CHECK(ErrorOf(BroadcastTo(Filled<int32_t>({3, 1}, {}), Vec<int32_t>({1, 4}))) ==
        "BroadcastTo: Unable to broadcast tensor of shape [3,1] to tensor of "
        "shape [1,4]");
  CHECK(ErrorOf(BroadcastTo(Filled<float>({0, 2}, {}), Vec<int32_t>({3, 2}))) ==
        "BroadcastTo: Incompatible shapes: [0,2] vs. [3,2]");
  CHECK(ErrorOf(BroadcastTo(Vec<int32_t>({1, 2, 3}), Vec<int32_t>({2, 0}))) ==
        "BroadcastTo: Incompatible shapes: [3] vs. [2,0]");
}

TEST_CASE("BroadcastArgs broadcasts shape vectors as TF's BCast", "[kernels][broadcast_args]") {
  auto a = BroadcastArgs(Vec<int32_t>({2, 1, 3}), Vec<int32_t>({4, 1}));
  REQUIRE(a.ok());
  CHECK(Values<int32_t>(*a) == std::vector<int32_t>{2, 4, 3});
  auto b = BroadcastArgs(Vec<int64_t>({2, 3}), Vec<int64_t>({}));
  REQUIRE(b.ok());
  CHECK(Values<int64_t>(*b) == std::vector<int64_t>{2, 3});
  auto zero = BroadcastArgs(Vec<int32_t>({0, 1}), Vec<int32_t>({1, 5}));
  REQUIRE(zero.ok());
  CHECK(Values<int32_t>(*zero) == std::vector<int32_t>{0, 5});
  auto negative = BroadcastArgs(Vec<int32_t>({2, -3}), Vec<int32_t>({1}));  // unchecked, as TF
  REQUIRE(negative.ok());
  CHECK(Values<int32_t>(*negative) == std::vector<int32_t>{2, -3});
  CHECK(ErrorOf(BroadcastArgs(Vec<int32_t>({2, 3}), Vec<int32_t>({4, 1}))) ==
        "BroadcastArgs: Incompatible shapes: [2,3] vs. [4,1]");
  CHECK(ErrorOf(BroadcastArgs(Filled<int32_t>({1, 2}, {2, 3}), Vec<int32_t>({1}))) ==
        "BroadcastArgs: In[0] must be a vector.[1,2]");
}

TEST_CASE("BroadcastTo on the pool matches the index rule", "[kernels][broadcast_to]") {
  // 15,000 rows of 40: large enough to be sharded over the test device's pool.
  auto out = BroadcastTo(Iota<int32_t>({1, 300, 1}), Vec<int32_t>({50, 300, 40}));
  REQUIRE(out.ok());
  const std::vector<int32_t> v = Values<int32_t>(*out);
  REQUIRE(v.size() == 50 * 300 * 40);
  int bad = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) bad += v[i] != (i / 40) % 300;
  CHECK(bad == 0);
}

}  // namespace
}  // namespace dflow
