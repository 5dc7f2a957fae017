// Slice and StridedSlice kernels. Expected values come from TF 2.21 (tf.raw_ops on
// x = arange(24).reshape(2,3,4)).
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
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterSliceKernels); }



template <typename Index>
absl::StatusOr<Tensor> StridedSlice(const Tensor& input, const std::vector<Index>& begin,
                                    const std::vector<Index>& end,
                                    const std::vector<Index>& strides,
                                    const std::vector<int>& masks = {0, 0, 0, 0, 0}) {
  return OpTester("StridedSlice", Registry())
      .Attr("T", input.dtype())
      .Attr("Index", DataTypeOf<Index>())
      .Attr("begin_mask", masks[0])
      .Attr("end_mask", masks[1])
      .Attr("ellipsis_mask", masks[2])
      .Attr("new_axis_mask", masks[3])
      .Attr("shrink_axis_mask", masks[4])
      .Input(input)
      .Input(Vec<Index>(begin))
      .Input(Vec<Index>(end))
      .Input(Vec<Index>(strides))
      .RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("StridedSlice matches TF for every mask kind", "[kernels][slice]") {
  struct Case {
    std::vector<int32_t> begin, end, strides;
    std::vector<int> masks;
    Dims shape;
    std::vector<int32_t> values;
  };
  const std::vector<Case> cases = {
      {{0, 1, 1}, {2, 3, 3}, {1, 1, 1}, {0, 0, 0, 0, 0}, {2, 2, 2}, {5, 6, 9, 10, 17, 18, 21, 22}},
      {{-1}, {0}, {1}, {0, 0, 0, 0, 1}, {3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
      {{0, -1}, {0, 0}, {1, 1}, {1, 1, 0, 0, 2}, {2, 4}, {8, 9, 10, 11, 20, 21, 22, 23}},
      {{0, 1}, {0, 2}, {1, 1}, {0, 0, 1, 0, 0}, {2, 3, 1}, {1, 5, 9, 13, 17, 21}},
      {{-100, 1, -3}, {100, -1, 100}, {1, 2, 2}, {0, 0, 0, 0, 0}, {2, 1, 2}, {5, 7, 17, 19}},
      {{1, 2, 0}, {0, 0, 0}, {1, 1, 1}, {0, 4, 0, 0, 3}, {4}, {20, 21, 22, 23}},
      {{2, 1}, {0, 0}, {-1, -1}, {1, 1, 0, 0, 0}, {2, 1, 4}, {16, 17, 18, 19, 4, 5, 6, 7}},
      {{0, 0, 3}, {0, 0, -5}, {1, 1, -1}, {0, 0, 0, 0, 0}, {0, 0, 4}, {}},
      {{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 1, 8, 4}, {2, 0, 1}, {}},
      {{5}, {7}, {1}, {0, 0, 0, 0, 0}, {0, 3, 4}, {}},
  };
  const Tensor x = Iota<int32_t>({2, 3, 4});
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const Case& c = cases[i];
    absl::StatusOr<Tensor> out = StridedSlice<int32_t>(x, c.begin, c.end, c.strides, c.masks);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == c.shape);
    CHECK(Values<int32_t>(*out) == c.values);
  }
}

TEST_CASE("StridedSlice reverses with negative strides on every dtype", "[kernels][slice]") {
  // x[..., ::-2] on [2,3]: TF gives [[2,0],[5,3]].
  SECTION("float, int64 indices") {
    auto out = StridedSlice<int64_t>(Iota<float>({2, 3}), {0, 0}, {0, 0}, {1, -2}, {2, 2, 1, 0, 0});
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 2});
    CHECK(Values<float>(*out) == std::vector<float>{2, 0, 5, 3});
  }
  SECTION("double") {
    auto out = StridedSlice<int32_t>(Iota<double>({2, 3}), {0, 0}, {0, 0}, {1, -2}, {2, 2, 1, 0, 0});
    REQUIRE(out.ok());
    CHECK(Values<double>(*out) == std::vector<double>{2, 0, 5, 3});
  }
  SECTION("bool") {
    auto out = StridedSlice<int32_t>(Filled<bool>({4}, {true, false, false, true}), {3}, {0}, {-1},
                                     {0, 1, 0, 0, 0});
    REQUIRE(out.ok());
    CHECK(Values<bool>(*out) == std::vector<bool>{true, false, false, true});
  }
  SECTION("string") {
    auto out = StridedSlice<int32_t>(Filled<std::string>({3}, {"a", "b", "c"}), {-1}, {0}, {-1},
                                     {0, 1, 0, 0, 0});
    REQUIRE(out.ok());
    CHECK(Values<std::string>(*out) == std::vector<std::string>{"c", "b", "a"});
  }
}

TEST_CASE("StridedSlice of a whole tensor shares its buffer", "[kernels][slice]") {
  const Tensor x = Iota<float>({2, 3});
  auto out = StridedSlice<int32_t>(x, {0}, {0}, {1}, {1, 1, 0, 1, 0});  // x[newaxis]
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{1, 2, 3});
  CHECK(out->SharesBufferWith(x));
}

TEST_CASE("StridedSlice does Keras Flatten's int32 shape arithmetic", "[kernels][slice]") {
  // Shape(x) = [7, 5, 3] -> shape[0] (shrink) -> 7, shape[1:] -> [5, 3].
  const Tensor shape = Vec<int32_t>({7, 5, 3});
  auto batch = StridedSlice<int32_t>(shape, {0}, {1}, {1}, {0, 0, 0, 0, 1});
  REQUIRE(batch.ok());
  CHECK(batch->shape().dims() == 0);
  CHECK(batch->scalar<int32_t>() == 7);
  auto rest = StridedSlice<int32_t>(shape, {1}, {0}, {1}, {0, 1, 0, 0, 0});
  REQUIRE(rest.ok());
  CHECK(Values<int32_t>(*rest) == std::vector<int32_t>{5, 3});
}

TEST_CASE("StridedSlice rejects bad input with TF's messages", "[kernels][slice]") {
  const Tensor x = Iota<int32_t>({2, 3, 4});
  CHECK_THAT(ErrorOf(StridedSlice<int32_t>(x, {3}, {0}, {1}, {0, 0, 0, 0, 1})),
             Contains("slice index 3 of dimension 0 out of bounds.") && Contains("[2,3,4]"));
  CHECK_THAT(ErrorOf(StridedSlice<int32_t>(x, {0}, {1}, {0})),
             Contains("strides[0] must be non-zero"));
  CHECK_THAT(ErrorOf(StridedSlice<int32_t>(x, {0, 0}, {1}, {1, 1})),
             Contains("Expected begin, end, and strides to be 1D equal size tensors, but got "
                      "shapes [2], [1], and [2] instead."));
  auto matrix = OpTester("StridedSlice", Registry())
                    .Attr("T", DT_INT32)
                    .Attr("Index", DT_INT32)
                    .Input(x)
                    .Input(Filled<int32_t>({1, 1}, {0}))
                    .Input(Filled<int32_t>({1, 1}, {1}))
                    .Input(Filled<int32_t>({1, 1}, {1}))
                    .RunOne();
  CHECK_THAT(ErrorOf(matrix), Contains("[1,1], [1,1], and [1,1]"));
}

absl::StatusOr<Tensor> Slice(const Tensor& input, const std::vector<int64_t>& begin,
                             const std::vector<int64_t>& size) {
  return OpTester("Slice", Registry())
      .Attr("T", input.dtype())
      .Attr("Index", DT_INT64)
      .Input(input)
      .Input(Vec<int64_t>(begin))
      .Input(Vec<int64_t>(size))
      .RunOne();
}

TEST_CASE("Slice takes a box, with -1 meaning to the end", "[kernels][slice]") {
  auto out = Slice(Iota<int32_t>({2, 3, 4}), {1, 0, 1}, {1, -1, 2});
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{1, 3, 2});
  CHECK(Values<int32_t>(*out) == std::vector<int32_t>{13, 14, 17, 18, 21, 22});

  auto floats = Slice(Iota<float>({4}), {2}, {2});
  REQUIRE(floats.ok());
  CHECK(Values<float>(*floats) == std::vector<float>{2, 3});

  auto empty = Slice(Iota<double>({0, 3}), {0, 1}, {0, 2});
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0, 2});
}

TEST_CASE("Slice rejects boxes outside the input with TF's messages", "[kernels][slice]") {
  const Tensor x = Iota<int32_t>({2, 3, 4});
  CHECK_THAT(ErrorOf(Slice(x, {0, 0, 5}, {1, 1, 1})), Contains("Expected begin[2] in [0, 4], but got 5"));
  CHECK_THAT(ErrorOf(Slice(x, {0, 0, 1}, {1, 1, 4})), Contains("Expected size[2] in [0, 3], but got 4"));
  CHECK_THAT(ErrorOf(Slice(x, {0, 0}, {1, 1})),
             Contains("Expected begin and size arguments to be 1-D tensors of size 3, but got "
                      "shapes [2] and [2] instead."));
  CHECK_THAT(ErrorOf(Slice(Iota<int32_t>({0}), {1}, {0})),
             Contains("Expected begin[0] == 0 (got 1) and size[0] == 0 (got 0)"));
}

}  // namespace
}  // namespace dflow
