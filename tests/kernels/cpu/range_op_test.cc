// Range. Expected values and messages from TF 2.21 (tf.raw_ops.Range on CPU).
#include <catch2/catch.hpp>
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
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterRangeKernels); }

template <typename T>
Tensor Scalar(T v) {
  return Filled<T>({}, {v});
}

absl::StatusOr<Tensor> Range(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  return OpTester("Range", Registry())
      .Attr("Tidx", start.dtype())
      .Input(start)
      .Input(limit)
      .Input(delta)
      .RunOne();
}

template <typename T>
absl::StatusOr<Tensor> Range(T start, T limit, T delta) {
  return Range(Scalar(start), Scalar(limit), Scalar(delta));
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

TEST_CASE("Range counts up and down in integers", "[kernels][range]") {
  auto up = Range<int32_t>(0, 5, 2);
  REQUIRE(up.ok());
  CHECK(Values<int32_t>(*up) == std::vector<int32_t>{0, 2, 4});
  auto down = Range<int64_t>(10, 1, -3);
  REQUIRE(down.ok());
  CHECK(down->dtype() == DT_INT64);
  CHECK(Values<int64_t>(*down) == std::vector<int64_t>{10, 7, 4});
  auto empty = Range<int32_t>(5, 5, 1);
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == Dims{0});
}

TEST_CASE("Range sizes extreme integer ranges exactly and wraps as TF", "[kernels][range]") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto wide = Range<int64_t>(kMin + 1, kMax, int64_t{1} << 62);
  REQUIRE(wide.ok());
  CHECK(Values<int64_t>(*wide) ==
        std::vector<int64_t>{kMin + 1, -4611686018427387903, 1, 4611686018427387905});
  auto down = Range<int64_t>(kMax, kMin, kMin);
  REQUIRE(down.ok());
  CHECK(Values<int64_t>(*down) == std::vector<int64_t>{kMax, -1});
  auto i32 = Range<int32_t>(INT32_MIN, INT32_MAX, INT32_MAX);
  REQUIRE(i32.ok());
  CHECK(Values<int32_t>(*i32) == std::vector<int32_t>{INT32_MIN, -1, 2147483646});
  CHECK(ErrorOf(Range<int64_t>(kMin, kMax, 1)) ==
        "Range: Requires ((limit - start) / delta) <= 9223372036854775807");
}

TEST_CASE("Range computes float elements as start + i * delta", "[kernels][range]") {
  auto f = Range<float>(0, 100, 0.1f);
  REQUIRE(f.ok());
  REQUIRE(DimsOf(*f) == Dims{1000});
  const std::vector<float> v = Values<float>(*f);
  CHECK(v[3] == 0.30000001192092896f);
  CHECK(v[999] == 99.9f);  // a running sum would have drifted
  auto d = Range<double>(0, 1, 0.1);
  REQUIRE(d.ok());
  CHECK(DimsOf(*d) == Dims{10});
  CHECK(Values<double>(*d)[3] == 0.30000000000000004);
  CHECK(Values<double>(*d)[7] == 0.7000000000000001);
  auto down = Range<float>(1, 0, -0.3f);
  REQUIRE(down.ok());
  CHECK(Values<float>(*down) ==
        std::vector<float>{1.0f, 0.699999988079071f, 0.3999999761581421f, 0.09999996423721313f});
}

TEST_CASE("Range rounds half and bfloat16 after every operation", "[kernels][range]") {
  auto h = Range<Half>(Half::FromFloat(0), Half::FromFloat(1), Half::FromFloat(0.1f));
  REQUIRE(h.ok());
  REQUIRE(DimsOf(*h) == Dims{10});
  const std::vector<float> want = {
      0.0f, 0.0999755859375f, 0.199951171875f, 0.2998046875f, 0.39990234375f,
      0.5f, 0.599609375f,     0.69970703125f,  0.7998046875f, 0.89990234375f};
  for (int i = 0; i < 10; ++i) CHECK(h->data<Half>()[i].ToFloat() == want[i]);
  auto b =
      Range<Bfloat16>(Bfloat16::FromFloat(0), Bfloat16::FromFloat(3), Bfloat16::FromFloat(0.3f));
  REQUIRE(b.ok());
  REQUIRE(DimsOf(*b) == Dims{10});
  CHECK(b->data<Bfloat16>()[3].ToFloat() == 0.90234375f);
  CHECK(b->data<Bfloat16>()[9].ToFloat() == 2.703125f);
}

TEST_CASE("Range rejects bad directions, sizes and shapes in TF's words", "[kernels][range]") {
  CHECK(ErrorOf(Range<int32_t>(0, 5, 0)) == "Range: Requires delta != 0: 0");
  CHECK(ErrorOf(Range<int32_t>(5, 0, 1)) == "Range: Requires start <= limit when delta > 0: 5/0");
  CHECK(ErrorOf(Range<int32_t>(0, 5, -1)) == "Range: Requires start >= limit when delta < 0: 0/5");
  CHECK(ErrorOf(Range<float>(0.5f, 0, 1)) ==
        "Range: Requires start <= limit when delta > 0: 0.5/0");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(ErrorOf(Range<float>(0, nan, 1)) == "Range: Requires start <= limit when delta > 0: 0/nan");
  CHECK(ErrorOf(Range<float>(0, 1, nan)) == "Range: Requires start >= limit when delta < 0: 0/1");
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(ErrorOf(Range<float>(0, inf, 1)) ==
        "Range: Requires ((limit - start) / delta) <= 9223372036854775807");
  CHECK(ErrorOf(Range<float>(0, 1e20f, 1)) ==
        "Range: Requires ((limit - start) / delta) <= 9223372036854775807");
  CHECK(ErrorOf(Range<double>(0, 0x1p63, 1)) ==
        "Range: Expected a non-negative size, got -9223372036854775808");
  CHECK(ErrorOf(Range(Filled<int32_t>({2}, {0, 1}), Scalar<int32_t>(3), Scalar<int32_t>(1))) ==
        "Range: start must be a scalar, not shape [2]");
  CHECK(ErrorOf(Range(Scalar<int32_t>(0), Filled<int32_t>({1, 1}, {3}), Scalar<int32_t>(1))) ==
        "Range: limit must be a scalar, not shape [1,1]");
  // Length-1 vectors pass as scalars (TF's legacy rule).
  auto legacy = Range(Filled<int32_t>({1}, {0}), Scalar<int32_t>(3), Filled<int32_t>({1}, {1}));
  REQUIRE(legacy.ok());
  CHECK(Values<int32_t>(*legacy) == std::vector<int32_t>{0, 1, 2});
}

TEST_CASE("Range fails cleanly when the output cannot be allocated", "[kernels][range]") {
  auto huge = Range<int64_t>(0, int64_t{1} << 62, 1);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == absl::StatusCode::kResourceExhausted);
}

TEST_CASE("A Range of 2^61 int64s is RESOURCE_EXHAUSTED, not a wrapped tiny buffer",
          "[kernels][range]") {
  // 8 * (2^61 - 1) = 2^64 - 8 bytes: rounding it up to whole MiB used to wrap to 0, and
  // the allocator handed out a tiny block the kernel then filled (a heap overflow).
  absl::StatusOr<Tensor> huge = Range<int64_t>(0, (int64_t{1} << 61) - 1, 1);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(Range<int64_t>(0, 3, 1).ok());  // and the kernel still works
}

}  // namespace
}  // namespace dflow
