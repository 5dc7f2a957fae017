// StridedSliceGrad (kernels/cpu/strided_slice_grad_op.cc) against TF 2.21's values and
// error texts (testdata/stitch_and_strided_slice_grad_tf.py): dy scattered into zeros of
// `shape` through StridedSlice's index rules (strides, negative strides, every mask),
// other dtypes (int32 with int64 indices, strings), an empty slice, and a tensor large
// enough to shard, checked against the rule itself.
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
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterStridedSliceGradKernels);
}

// The five mask attrs, in the op's order.
struct Masks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

// StridedSliceGrad with `Index`-typed shape/begin/end/strides.
template <typename Index = int32_t>
absl::StatusOr<Tensor> Grad(const std::vector<Index>& shape, const std::vector<Index>& begin,
                            const std::vector<Index>& end, const std::vector<Index>& strides,
                            const Tensor& dy, const Masks& m = {}) {
  return OpTester("StridedSliceGrad", Registry())
      .Attr("T", dy.dtype())
      .Attr("Index", DataTypeOf<Index>())
      .Attr("begin_mask", m.begin)
      .Attr("end_mask", m.end)
      .Attr("ellipsis_mask", m.ellipsis)
      .Attr("new_axis_mask", m.new_axis)
      .Attr("shrink_axis_mask", m.shrink)
      .Input(Vec<Index>(shape))
      .Input(Vec<Index>(begin))
      .Input(Vec<Index>(end))
      .Input(Vec<Index>(strides))
      .Input(dy)
      .RunOne();
}

// 1, 2, 3, ... as floats of `shape`.
Tensor Counting(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
  return Filled<float>(shape, v);
}

void CheckFloats(const absl::StatusOr<Tensor>& got, const Dims& shape,
                 const std::vector<float>& want) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(DimsOf(*got) == shape);
  CHECK(Values<float>(*got) == want);
}

TEST_CASE("StridedSliceGrad scatters dy into zeros as TF does", "[kernels][strided_slice_grad]") {
  SECTION("x[::2, 1::2]") {
    CheckFloats(Grad<int32_t>({3, 4}, {0, 1}, {3, 4}, {2, 2}, Counting({2, 2})), {3, 4},
                {0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  }
  SECTION("x[4:0:-2]") {
    CheckFloats(Grad<int32_t>({5}, {4}, {0}, {-2}, Vec<float>({10, 20})), {5}, {0, 0, 20, 0, 10});
  }
  SECTION("x[..., 1:3] (ellipsis_mask)") {
    Masks m;
    m.ellipsis = 1;
    CheckFloats(Grad<int32_t>({2, 3, 4}, {0, 1}, {0, 3}, {1, 1}, Counting({2, 3, 2}), m), {2, 3, 4},
                {0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6, 0, 0, 7, 8, 0, 0, 9, 10, 0, 0, 11, 12, 0});
  }
  SECTION("x[:, tf.newaxis, 1] (begin/end, new_axis and shrink_axis masks)") {
    Masks m;
    m.begin = 1;
    m.end = 1;
    m.new_axis = 2;
    m.shrink = 4;
    CheckFloats(Grad<int32_t>({2, 3, 4}, {0, 0, 1}, {0, 0, 2}, {1, 1, 1}, Counting({2, 1, 4}), m),
                {2, 3, 4},
                {0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0});
  }
  SECTION("x[1, ::-1] (shrink and a reversed masked dimension)") {
    Masks m;
    m.begin = 2;
    m.end = 2;
    m.shrink = 1;
    CheckFloats(Grad<int32_t>({2, 3, 2}, {1, 0}, {2, 0}, {1, -1}, Counting({3, 2}), m), {2, 3, 2},
                {0, 0, 0, 0, 0, 0, 5, 6, 3, 4, 1, 2});
  }
  SECTION("an empty slice gives zeros") {
    CheckFloats(Grad<int32_t>({3}, {2}, {1}, {1}, Vec<float>({})), {3}, {0, 0, 0});
  }
  SECTION("the whole tensor: dy itself") {
    Masks m;
    m.begin = 3;
    m.end = 3;
    CheckFloats(Grad<int32_t>({2, 3}, {0, 0}, {0, 0}, {1, 1}, Counting({2, 3}), m), {2, 3},
                {1, 2, 3, 4, 5, 6});
  }
  SECTION("an empty shape") {
    CheckFloats(Grad<int32_t>({0, 3}, {0}, {0}, {1}, Filled<float>({0, 3}, {})), {0, 3}, {});
  }
}

TEST_CASE("StridedSliceGrad on int32 with int64 indices, and on strings",
          "[kernels][strided_slice_grad]") {
  auto ints = Grad<int64_t>({4}, {1}, {3}, {1}, Vec<int32_t>({7, 8}));
  REQUIRE(ints.ok());
  CHECK(Values<int32_t>(*ints) == std::vector<int32_t>{0, 7, 8, 0});
  auto strings = Grad<int32_t>({3}, {1}, {2}, {1}, Vec<std::string>({"s"}));
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"", "s", ""});
}

TEST_CASE("StridedSliceGrad on a tensor large enough to shard over the pool",
          "[kernels][strided_slice_grad]") {
  // x[1::3, ::7] of a [64, 300] tensor: rows 1, 4, ..., 61 and columns 0, 7, ..., 294.
  const int64_t rows = 21, cols = 43;
  auto out = Grad<int32_t>({64, 300}, {1, 0}, {64, 300}, {3, 7}, Counting({rows, cols}));
  REQUIRE(out.ok());
  const std::vector<float> got = Values<float>(*out);
  for (int64_t i = 0; i < 64; ++i) {
    for (int64_t j = 0; j < 300; ++j) {
      const bool hit = i % 3 == 1 && j % 7 == 0;
      const float want = hit ? static_cast<float>((i / 3) * cols + j / 7 + 1) : 0.0f;
      if (got[i * 300 + j] != want) FAIL("element " << i << ", " << j << ": " << got[i * 300 + j]);
    }
  }
}

void CheckInvalid(const absl::StatusOr<Tensor>& got, const std::string& text) {
  INFO(got.status().ToString());
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(got.status().message()).find(text) != std::string::npos);
}

TEST_CASE("StridedSliceGrad rejects bad arguments with TF's errors",
          "[kernels][strided_slice_grad]") {
  const Tensor dy = Filled<float>({2, 2}, {1, 1, 1, 1});
  CheckInvalid(Grad<int32_t>({3, 4}, {0, 1}, {3, 4}, {2, 2}, Filled<float>({2, 3}, {})),
               "shape of dy was [2,3] instead of [2,2]");
  auto two_d = OpTester("StridedSliceGrad", Registry())
                   .Attr("T", DT_FLOAT)
                   .Attr("Index", DT_INT32)
                   .Input(Filled<int32_t>({1, 2}, {3, 4}))
                   .Input(Vec<int32_t>({0, 1}))
                   .Input(Vec<int32_t>({3, 4}))
                   .Input(Vec<int32_t>({2, 2}))
                   .Input(dy)
                   .RunOne();
  CheckInvalid(two_d, "shape must be 1-D, got shape.shape = [1,2]");
  CheckInvalid(Grad<int32_t>({3, 4}, {0, 1}, {3, 4}, {0, 2}, dy), "strides[0] must be non-zero");
  Masks shrink;
  shrink.shrink = 1;
  CheckInvalid(Grad<int32_t>({3, 4}, {5}, {6}, {1}, Filled<float>({4}, {}), shrink),
               "slice index 5 of dimension 0 out of bounds.");
  CheckInvalid(Grad<int32_t>({3, -4}, {0}, {1}, {1}, Filled<float>({1, 4}, {})),
               "Dimension -4 must be >= 0");
  CheckInvalid(Grad<int32_t>({3, 4}, {0, 1}, {3, 4, 1}, {2, 2}, dy),
               "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
               "[2], [3], and [2] instead.");
}

}  // namespace
}  // namespace dflow
