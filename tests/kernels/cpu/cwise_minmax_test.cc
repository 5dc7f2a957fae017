// Maximum and Minimum on the narrow and unsigned integers (TF 2.21 registers them for
// int8, uint8, int16, uint16, uint32 and uint64 besides int32/int64/float/double), and
// their NaN and signed-zero rules on float and double.
// Expected values from TF 2.21 (tf.raw_ops.Maximum/Minimum on CPU).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCwiseKernels); }

template <typename T>
std::vector<T> Run(const char* op, const Tensor& x, const Tensor& y) {
  absl::StatusOr<Tensor> out =
      OpTester(op, Registry()).Attr("T", DataTypeOf<T>()).Input(x).Input(y).RunOne();
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{2, 3});
  return Values<T>(*out);
}

// x = [[lowest, 3, max], [7, 0, 5]] against the row [5, max, 1] and against 4.
TEMPLATE_TEST_CASE("Maximum and Minimum broadcast over the other integer dtypes",
                   "[kernels][cwise]", int8_t, uint8_t, int16_t, uint16_t, uint32_t, uint64_t) {
  using T = TestType;
  const T lo = std::numeric_limits<T>::lowest();
  const T hi = std::numeric_limits<T>::max();
  const Tensor x = Filled<T>({2, 3}, {lo, 3, hi, 7, 0, 5});
  const Tensor row = Filled<T>({3}, {5, hi, 1});
  const Tensor four = Filled<T>({}, {4});
  CHECK(Run<T>("Maximum", x, row) == std::vector<T>{5, hi, hi, 7, hi, 5});
  CHECK(Run<T>("Minimum", x, row) == std::vector<T>{lo, 3, 1, 5, 0, 1});
  CHECK(Run<T>("Maximum", x, four) == std::vector<T>{4, 4, hi, 7, 4, 5});
  CHECK(Run<T>("Minimum", four, x) == std::vector<T>{lo, 3, 4, 4, 0, 4});
}

// TF 2.21 on float and double: a NaN operand gives NaN (either side), and of -0 and +0
// the first operand (TF's element-at-a-time loop; its vectorised loop over whole packets
// returns the second, which dflow does not copy).
TEMPLATE_TEST_CASE("Maximum and Minimum propagate NaN and keep the first of -0 and +0",
                   "[kernels][cwise]", float, double) {
  using T = TestType;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  const Tensor x = Filled<T>({2, 3}, {nan, 1, -0.0, 0.0, nan, -inf});
  const Tensor y = Filled<T>({2, 3}, {1, nan, 0.0, -0.0, nan, inf});
  const std::vector<T> max = Run<T>("Maximum", x, y);
  const std::vector<T> min = Run<T>("Minimum", x, y);
  for (int i : {0, 1, 4}) {
    CHECK(std::isnan(max[i]));
    CHECK(std::isnan(min[i]));
  }
  CHECK(std::signbit(max[2]));   // Maximum(-0, 0) = -0
  CHECK(!std::signbit(max[3]));  // Maximum(0, -0) = 0
  CHECK(std::signbit(min[2]));
  CHECK(!std::signbit(min[3]));
  CHECK(max[5] == inf);
  CHECK(min[5] == -inf);
  // Broadcast a NaN scalar and against one: TF gives NaN everywhere, and NaN only where
  // x is NaN.
  const std::vector<T> all_nan = Run<T>("Maximum", Filled<T>({}, {nan}), y);
  for (T v : all_nan) CHECK(std::isnan(v));
  const std::vector<T> vs_zero = Run<T>("Minimum", x, Filled<T>({}, {0}));
  CHECK(std::isnan(vs_zero[0]));
  CHECK(vs_zero[1] == 0);
  CHECK(std::signbit(vs_zero[2]));
  CHECK(std::isnan(vs_zero[4]));
  CHECK(vs_zero[5] == -inf);
}

}  // namespace
}  // namespace dflow
