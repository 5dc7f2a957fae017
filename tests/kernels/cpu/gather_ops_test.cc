// GatherV2, Gather and OneHot. Expected values from TF 2.21 (tf.raw_ops).
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
using testing::Iota;
using testing::OpTester;
using testing::Values;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterGatherKernels); }


absl::StatusOr<Tensor> GatherV2(const Tensor& params, const Tensor& indices, int64_t axis) {
  return OpTester("GatherV2", Registry())
      .Attr("Tparams", params.dtype())
      .Attr("Tindices", indices.dtype())
      .Attr("Taxis", DT_INT64)
      .Input(params)
      .Input(indices)
      .Input(Filled<int64_t>({}, {axis}))
      .RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("GatherV2 picks slices along any axis", "[kernels][gather]") {
  const Tensor p = Iota<int32_t>({2, 3, 4});
  auto middle = GatherV2(p, Filled<int32_t>({2, 2}, {2, 0, 1, 1}), 1);
  REQUIRE(middle.ok());
  CHECK(DimsOf(*middle) == Dims{2, 2, 2, 4});
  CHECK(Values<int32_t>(*middle) ==
        std::vector<int32_t>{8,  9,  10, 11, 0,  1,  2,  3,  4,  5,  6,  7,  4,  5,  6,  7,
                             20, 21, 22, 23, 12, 13, 14, 15, 16, 17, 18, 19, 16, 17, 18, 19});
  auto last = GatherV2(p, Filled<int64_t>({2}, {3, 0}), -1);
  REQUIRE(last.ok());
  CHECK(DimsOf(*last) == Dims{2, 3, 2});
  CHECK(Values<int32_t>(*last) == std::vector<int32_t>{3, 0, 7, 4, 11, 8, 15, 12, 19, 16, 23, 20});
  auto scalar = GatherV2(Iota<float>({5, 2}), Filled<int32_t>({}, {3}), 0);
  REQUIRE(scalar.ok());
  CHECK(DimsOf(*scalar) == Dims{2});
  CHECK(Values<float>(*scalar) == std::vector<float>{6, 7});
  auto strings = GatherV2(Filled<std::string>({3}, {"a", "b", "c"}), Filled<int32_t>({2}, {2, 2}), 0);
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"c", "c"});
}

TEST_CASE("Gather (v1) gathers rows", "[kernels][gather]") {
  auto out = OpTester("Gather", Registry())
                 .Attr("Tparams", DT_DOUBLE)
                 .Attr("Tindices", DT_INT32)
                 .Input(Iota<double>({5, 2}))
                 .Input(Filled<int32_t>({3}, {4, 0, 4}))
                 .RunOne();
  REQUIRE(out.ok());
  CHECK(Values<double>(*out) == std::vector<double>{8, 9, 0, 1, 8, 9});
}

TEST_CASE("GatherV2 rejects out-of-range indices and axes with TF's messages", "[kernels][gather]") {
  const Tensor p = Iota<float>({5, 2});
  CHECK_THAT(ErrorOf(GatherV2(p, Filled<int32_t>({4}, {0, 1, 2, 7}), 0)),
             Contains("indices[3] = 7 is not in [0, 5)"));
  CHECK_THAT(ErrorOf(GatherV2(p, Filled<int64_t>({2, 2}, {0, 1, 2, -1}), 0)),
             Contains("indices[1,1] = -1 is not in [0, 5)"));
  CHECK_THAT(ErrorOf(GatherV2(p, Filled<int32_t>({1}, {0}), 2)),
             Contains("Expected axis in the range [-2, 2), but got 2"));
  CHECK_THAT(ErrorOf(GatherV2(Filled<float>({}, {1}), Filled<int32_t>({1}, {0}), 0)),
             Contains("params must be at least 1 dimensional"));
}

template <typename TI>
absl::StatusOr<Tensor> OneHot(const Tensor& indices, int32_t depth, float on, float off, int axis) {
  return OpTester("OneHot", Registry())
      .Attr("T", DT_FLOAT)
      .Attr("TI", DataTypeOf<TI>())
      .Attr("axis", axis)
      .Input(indices)
      .Input(Filled<int32_t>({}, {depth}))
      .Input(Filled<float>({}, {on}))
      .Input(Filled<float>({}, {off}))
      .RunOne();
}

TEST_CASE("OneHot expands indices along the requested axis", "[kernels][onehot]") {
  const Tensor indices = Filled<int32_t>({2, 2}, {0, 2, -1, 1});
  SECTION("axis -1; out-of-range indices give all-off rows") {
    auto out = OneHot<int64_t>(Filled<int64_t>({2, 2}, {0, 2, -1, 5}), 3, 5, -1, -1);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 2, 3});
    CHECK(Values<float>(*out) == std::vector<float>{5, -1, -1, -1, -1, 5, -1, -1, -1, -1, -1, -1});
  }
  SECTION("axis 0") {
    auto out = OneHot<int32_t>(indices, 3, 5, -1, 0);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{3, 2, 2});
    CHECK(Values<float>(*out) == std::vector<float>{5, -1, -1, -1, -1, -1, -1, 5, -1, 5, -1, -1});
  }
  SECTION("axis 1") {
    auto out = OneHot<int32_t>(indices, 3, 5, -1, 1);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 3, 2});
    CHECK(Values<float>(*out) == std::vector<float>{5, -1, -1, -1, -1, 5, -1, -1, -1, 5, -1, -1});
  }
  SECTION("uint8 indices") {
    auto out = OneHot<uint8_t>(Filled<uint8_t>({2}, {1, 0}), 2, 1, 0, -1);
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{0, 1, 1, 0});
  }
}

TEST_CASE("OneHot rejects bad arguments with TF's messages", "[kernels][onehot]") {
  const Tensor indices = Filled<int32_t>({2}, {0, 2});
  CHECK_THAT(ErrorOf(OneHot<int32_t>(indices, -1, 5, -1, -1)),
             Contains("depth must be non-negative, got: -1"));
  CHECK_THAT(ErrorOf(OneHot<int32_t>(indices, 3, 5, -1, 2)),
             Contains("Expected axis to be -1 or between [0, 2).  But received: 2"));
  auto vector_on = OpTester("OneHot", Registry())
                       .Attr("T", DT_FLOAT)
                       .Attr("TI", DT_INT32)
                       .Input(indices)
                       .Input(Filled<int32_t>({}, {3}))
                       .Input(Filled<float>({1}, {5}))
                       .Input(Filled<float>({}, {-1}))
                       .RunOne();
  CHECK_THAT(ErrorOf(vector_on), Contains("on_value must be a scalar, but got: [1]"));
}

}  // namespace
}  // namespace dflow
