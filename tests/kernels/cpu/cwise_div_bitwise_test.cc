// DivNoNan, MulNoNan, TruncateDiv, TruncateMod and the bitwise ops (cwise_ops.cc)
// against TF 2.21 (tf.raw_ops on CPU): every expected value is TF's output.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/kernel_registry.h"
#include "tests/kernels/cpu/float_compare.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckBits;
using testing::CheckUlps;
using testing::DimsOf;
using testing::Filled;
using testing::FromBits;
using testing::kInf;
using testing::kNan;
using testing::OpTester;
using testing::Values;
using testing::Vec;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCwiseKernels); }

absl::StatusOr<Tensor> Binary(const std::string& op, const Tensor& x, const Tensor& y) {
  return OpTester(op, Registry()).Attr("T", x.dtype()).Input(x).Input(y).RunOne();
}

template <typename T>
std::vector<T> BinaryValues(const std::string& op, const Tensor& x, const Tensor& y) {
  absl::StatusOr<Tensor> out = Binary(op, x, y);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return Values<T>(*out);
}

// x / y and x * y pairs covering zero divisors of both signs, NaN and infinity.
const std::vector<float> kX = {1, -1, 0, kNan, kInf, 1, kNan, 0, 3, 7, -7};
const std::vector<float> kY = {0, -0.0f, 0, 0, 0, kNan, 2, kInf, kInf, 3, 0.5f};
const std::vector<uint16_t> kXHalf = {0x3c00, 0xbc00, 0x0000, 0x7e00, 0x7c00, 0x3c00,
                                      0x7e00, 0x0000, 0x4200, 0x4700, 0xc700};
const std::vector<uint16_t> kYHalf = {0x0000, 0x8000, 0x0000, 0x0000, 0x0000, 0x7e00,
                                      0x4000, 0x7c00, 0x7c00, 0x4200, 0x3800};
const std::vector<uint16_t> kXBf16 = {0x3f80, 0xbf80, 0x0000, 0x7fc0, 0x7f80, 0x3f80,
                                      0x7fc0, 0x0000, 0x4040, 0x40e0, 0xc0e0};
const std::vector<uint16_t> kYBf16 = {0x0000, 0x8000, 0x0000, 0x0000, 0x0000, 0x7fc0,
                                      0x4000, 0x7f80, 0x7f80, 0x4040, 0x3f00};

template <typename T>
Tensor Floats(const std::vector<float>& values) {
  return Vec<T>(std::vector<T>(values.begin(), values.end()));
}

TEST_CASE("DivNoNan is 0 wherever y is 0, even for x = NaN", "[kernels][cwise]") {
  CheckUlps(Binary("DivNoNan", Floats<float>(kX), Floats<float>(kY)),
            std::vector<float>{0, 0, 0, 0, 0, kNan, kNan, 0, 0, 2.3333332538604736f, -14}, 0);
  CheckUlps(Binary("DivNoNan", Floats<double>(kX), Floats<double>(kY)),
            std::vector<double>{0, 0, 0, 0, 0, kNan, kNan, 0, 0, 2.3333333333333335, -14}, 0);
  CheckBits(Binary("DivNoNan", FromBits<Half>({11}, kXHalf), FromBits<Half>({11}, kYHalf)),
            {0, 0, 0, 0, 0, 0x7e00, 0x7e00, 0, 0, 0x40ab, 0xcb00});
  CheckBits(Binary("DivNoNan", FromBits<Bfloat16>({11}, kXBf16), FromBits<Bfloat16>({11}, kYBf16)),
            {0, 0, 0, 0, 0, 0x7fc0, 0x7fc0, 0, 0, 0x4015, 0xc160});
  // Broadcast: [[1], [2]] / [0, 4, -0] = [[0, 0.25, 0], [0, 0.5, 0]].
  absl::StatusOr<Tensor> b =
      Binary("DivNoNan", Filled<float>({2, 1}, {1, 2}), Vec<float>({0, 4, -0.0f}));
  REQUIRE(b.ok());
  CHECK(DimsOf(*b) == std::vector<int64_t>{2, 3});
  CHECK(Values<float>(*b) == std::vector<float>{0, 0.25f, 0, 0, 0.5f, 0});
}

TEST_CASE("MulNoNan is 0 wherever y is 0, even for x = NaN or inf", "[kernels][cwise]") {
  CheckUlps(Binary("MulNoNan", Floats<float>(kX), Floats<float>(kY)),
            std::vector<float>{0, 0, 0, 0, 0, kNan, kNan, kNan, kInf, 21, -3.5f}, 0);
  CheckUlps(Binary("MulNoNan", Floats<double>(kX), Floats<double>(kY)),
            std::vector<double>{0, 0, 0, 0, 0, kNan, kNan, kNan, kInf, 21, -3.5}, 0);
  CheckBits(Binary("MulNoNan", FromBits<Half>({11}, kXHalf), FromBits<Half>({11}, kYHalf)),
            {0, 0, 0, 0, 0, 0x7e00, 0x7e00, 0xfe00, 0x7c00, 0x4d40, 0xc300});
  CheckBits(Binary("MulNoNan", FromBits<Bfloat16>({11}, kXBf16), FromBits<Bfloat16>({11}, kYBf16)),
            {0, 0, 0, 0, 0, 0x7fc0, 0x7fc0, 0x7fc0, 0x7f80, 0x41a8, 0xc060});
}

TEST_CASE("TruncateDiv and TruncateMod on floats: trunc(x / y) and fmod", "[kernels][cwise]") {
  CheckUlps(Binary("TruncateDiv", Floats<float>(kX), Floats<float>(kY)),
            std::vector<float>{kInf, kInf, kNan, kNan, kInf, kNan, kNan, 0, 0, 2, -14}, 0);
  CheckUlps(Binary("TruncateDiv", Floats<double>(kX), Floats<double>(kY)),
            std::vector<double>{kInf, kInf, kNan, kNan, kInf, kNan, kNan, 0, 0, 2, -14}, 0);
  CheckBits(Binary("TruncateDiv", FromBits<Half>({11}, kXHalf), FromBits<Half>({11}, kYHalf)),
            {0x7c00, 0x7c00, 0xfe00, 0x7e00, 0x7c00, 0x7e00, 0x7e00, 0, 0, 0x4000, 0xcb00});
  CheckBits(
      Binary("TruncateDiv", FromBits<Bfloat16>({11}, kXBf16), FromBits<Bfloat16>({11}, kYBf16)),
      {0x7f80, 0x7f80, 0x7fc0, 0x7fc0, 0x7f80, 0x7fc0, 0x7fc0, 0, 0, 0x4000, 0xc160});
  // Half rounds x / y before truncating: 2048 / 1.0009765625 = 2045.99 rounds to 2046.
  CheckBits(Binary("TruncateDiv", FromBits<Half>({1}, {0x6800}), FromBits<Half>({1}, {0x3c01})),
            {0x67fe});
  CheckUlps(Binary("TruncateMod", Floats<float>(kX), Floats<float>(kY)),
            std::vector<float>{kNan, kNan, kNan, kNan, kNan, kNan, kNan, 0, 3, 1, -0.0f}, 0);
  CheckUlps(Binary("TruncateMod", Floats<double>(kX), Floats<double>(kY)),
            std::vector<double>{kNan, kNan, kNan, kNan, kNan, kNan, kNan, 0, 3, 1, -0.0}, 0);
}

TEMPLATE_TEST_CASE("TruncateDiv rounds toward zero on every integer dtype", "[kernels][cwise]",
                   int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t) {
  using T = TestType;
  CHECK(BinaryValues<T>("TruncateDiv", Vec<T>({7, 100, 0}), Vec<T>({2, 7, 5})) ==
        std::vector<T>{3, 14, 0});
  if constexpr (std::is_signed_v<T>) {
    const T lo = std::numeric_limits<T>::lowest();
    // lowest() / -1 wraps to lowest(), as in TF.
    CHECK(BinaryValues<T>("TruncateDiv", Vec<T>({-7, 7, -7, lo}), Vec<T>({2, -2, -2, -1})) ==
          std::vector<T>{-3, -3, 3, lo});
  }
}

TEST_CASE("TruncateMod on int32 and int64 takes the dividend's sign", "[kernels][cwise]") {
  CHECK(BinaryValues<int32_t>("TruncateMod", Vec<int32_t>({7, -7, 7, -7, 0, -128}),
                              Vec<int32_t>({2, 2, -2, -2, 5, 3})) ==
        std::vector<int32_t>{1, -1, 1, -1, 0, -2});
  const int64_t lo = std::numeric_limits<int64_t>::lowest();
  CHECK(BinaryValues<int64_t>("TruncateMod", Vec<int64_t>({-7, 7, lo}),
                              Vec<int64_t>({2, -2, -1})) == std::vector<int64_t>{-1, 1, 0});
}

TEST_CASE("Integer TruncateDiv and TruncateMod by zero fail as TF's do", "[kernels][cwise]") {
  for (const char* op : {"TruncateDiv", "TruncateMod"}) {
    INFO(op);
    absl::StatusOr<Tensor> out = Binary(op, Vec<int32_t>({1, 2}), Vec<int32_t>({1, 0}));
    REQUIRE(!out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInternal);
    CHECK(out.status().message() ==
          "Unexpected error in binary operator (only integer div and mod should have errors)");
  }
  absl::StatusOr<Tensor> u8 = Binary("TruncateDiv", Vec<uint8_t>({1}), Vec<uint8_t>({0}));
  CHECK(u8.status().code() == absl::StatusCode::kInternal);
}

TEMPLATE_TEST_CASE("BitwiseAnd, BitwiseOr and BitwiseXor on every integer dtype",
                   "[kernels][cwise]", int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                   int64_t, uint64_t) {
  using T = TestType;
  const T ones = static_cast<T>(~T{0});
  const Tensor x = Vec<T>({ones, 5, 12});
  const Tensor y = Vec<T>({3, 6, 10});
  CHECK(BinaryValues<T>("BitwiseAnd", x, y) == std::vector<T>{3, 4, 8});
  CHECK(BinaryValues<T>("BitwiseOr", x, y) == std::vector<T>{ones, 7, 14});
  CHECK(BinaryValues<T>("BitwiseXor", x, y) == std::vector<T>{static_cast<T>(~T{3}), 3, 6});
  // Broadcast against a scalar.
  CHECK(BinaryValues<T>("BitwiseAnd", x, Filled<T>({}, {1})) == std::vector<T>{1, 1, 0});
}

TEST_CASE("Bitwise ops: TF's int8 values and shape errors", "[kernels][cwise]") {
  const Tensor x = Vec<int8_t>({-1, 5, -128});
  const Tensor y = Vec<int8_t>({3, 6, 127});
  CHECK(BinaryValues<int8_t>("BitwiseAnd", x, y) == std::vector<int8_t>{3, 4, 0});
  CHECK(BinaryValues<int8_t>("BitwiseOr", x, y) == std::vector<int8_t>{-1, 7, -1});
  CHECK(BinaryValues<int8_t>("BitwiseXor", x, y) == std::vector<int8_t>{-4, 3, -1});
  absl::StatusOr<Tensor> bad = Binary("BitwiseAnd", Vec<int32_t>({1, 2}), Vec<int32_t>({1, 2, 3}));
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(bad.status().message() == "Incompatible shapes: [2] vs. [3]");
  absl::StatusOr<Tensor> empty =
      Binary("BitwiseOr", Filled<int32_t>({0, 2}, {}), Vec<int32_t>({1, 2}));
  REQUIRE(empty.ok());
  CHECK(DimsOf(*empty) == std::vector<int64_t>{0, 2});
}

}  // namespace
}  // namespace dflow
