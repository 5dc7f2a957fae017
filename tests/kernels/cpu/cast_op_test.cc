// Cast to and from half and bfloat16. The expected bit patterns and values are TF 2.21's
// (tf.cast / tf.raw_ops.Cast on x86), so the rounding of every path is TF's: through
// float, to nearest even, Truncate where TF applies it. (The other Cast cases are in
// array_ops_test.cc.)
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/cpu/array_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::OpTester;
using testing::Values;
using testing::Vec;

absl::Status RegisterCast(KernelRegistry* registry) { return RegisterCastKernel(registry); }

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCast); }

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor Cast(const Tensor& x, DataType dst, bool truncate = false) {
  absl::StatusOr<Tensor> out = OpTester("Cast", Registry())
                                   .Attr("SrcT", x.dtype())
                                   .Attr("DstT", dst)
                                   .Attr("Truncate", truncate)
                                   .Input(x)
                                   .RunOne();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->dtype() == dst);
  return *out;
}

// The raw bits of a half or bfloat16 tensor.
std::vector<uint16_t> Bits(const Tensor& t) {
  const auto* data = static_cast<const uint16_t*>(t.raw_data());
  return std::vector<uint16_t>(data, data + t.NumElements());
}

template <typename T>
Tensor FromBits(const std::vector<uint16_t>& bits) {
  std::vector<T> values;
  for (uint16_t b : bits) values.push_back(T{b});
  return Vec<T>(values);
}

TEST_CASE("Cast float32 to half and bfloat16 rounds to nearest even", "[kernels][cast][half]") {
  const Tensor x = Vec<float>({65504, 65519, 65520, -70000, 0.7f, -2.5f, 2049,
                               5.960464477539063e-08f, 2.9802322387695312e-08f, 1e-40f, -0.0f,
                               kInf, kNan});
  CHECK(Bits(Cast(x, DT_HALF)) ==
        std::vector<uint16_t>{0x7bff, 0x7bff, 0x7c00, 0xfc00, 0x399a, 0xc100, 0x6800, 0x0001,
                              0x0000, 0x0000, 0x8000, 0x7c00, 0x7e00});
  CHECK(Bits(Cast(x, DT_BFLOAT16)) ==
        std::vector<uint16_t>{0x4780, 0x4780, 0x4780, 0xc789, 0x3f33, 0xc020, 0x4500, 0x3380,
                              0x3300, 0x0001, 0x8000, 0x7f80, 0x7fc0});
}

TEST_CASE("Cast with Truncate rounds float32 toward zero", "[kernels][cast][half]") {
  const Tensor x = Vec<float>({1 + 0x1p-11f + 0x1p-23f, 1 + 3 * 0x1p-11f + 0x1p-20f,
                               0x1p-25f + 0x1p-40f, 65519.99f, 1 + 0x1p-8f + 0x1p-23f, -1.99f,
                               kNan});
  CHECK(Bits(Cast(x, DT_HALF)) ==
        std::vector<uint16_t>{0x3c01, 0x3c02, 0x0001, 0x7bff, 0x3c04, 0xbff6, 0x7e00});
  CHECK(Bits(Cast(x, DT_HALF, /*truncate=*/true)) ==
        std::vector<uint16_t>{0x3c00, 0x3c01, 0x0000, 0x7bff, 0x3c04, 0xbff5, 0x7e00});
  CHECK(Bits(Cast(x, DT_BFLOAT16)) ==
        std::vector<uint16_t>{0x3f80, 0x3f80, 0x3300, 0x4780, 0x3f81, 0xbfff, 0x7fc0});
  CHECK(Bits(Cast(x, DT_BFLOAT16, /*truncate=*/true)) ==
        std::vector<uint16_t>{0x3f80, 0x3f80, 0x3300, 0x477f, 0x3f80, 0xbffe, 0x7fc0});
}

TEST_CASE("Cast float64 to half and bfloat16 rounds twice, through float32",
          "[kernels][cast][half]") {
  // 1 + 2^-11 + 2^-40 is above the half tie, but rounds to the tie 1 + 2^-11 in float32
  // first, and then to even: 1.0. TF's Eigen conversion does the same.
  const Tensor x = Vec<double>({1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-8 + 0x1p-40, 65519.999999,
                                1e300, 0.1});
  CHECK(Bits(Cast(x, DT_HALF)) == std::vector<uint16_t>{0x3c00, 0x3c04, 0x7c00, 0x7c00, 0x2e66});
  CHECK(Bits(Cast(x, DT_HALF, /*truncate=*/true)) ==
        std::vector<uint16_t>{0x3c00, 0x3c04, 0x7bff, 0x7c00, 0x2e66});
  // TF has no truncating double -> bfloat16 cast: Truncate changes nothing.
  for (bool truncate : {false, true}) {
    CHECK(Bits(Cast(x, DT_BFLOAT16, truncate)) ==
          std::vector<uint16_t>{0x3f80, 0x3f80, 0x4780, 0x7f80, 0x3dcd});
  }
}

TEST_CASE("Cast double to float with Truncate rounds toward zero, as TF 2.21",
          "[kernels][cast]") {
  // TF 2.21: 0.1, 1/3, -2.7 -> 0x3dcccccc 0x3eaaaaaa 0xc02ccccc truncated, ...cd/ab/cd not.
  const Tensor x = Vec<double>({0.1, 1.0 / 3, -2.7});
  auto bits = [](const Tensor& t) {
    std::vector<uint32_t> out(t.NumElements());
    std::memcpy(out.data(), t.raw_data(), out.size() * sizeof(uint32_t));
    return out;
  };
  CHECK(bits(Cast(x, DT_FLOAT, /*truncate=*/true)) ==
        std::vector<uint32_t>{0x3dcccccc, 0x3eaaaaaa, 0xc02ccccc});
  CHECK(bits(Cast(x, DT_FLOAT)) == std::vector<uint32_t>{0x3dcccccd, 0x3eaaaaab, 0xc02ccccd});
}

TEST_CASE("Cast integers and bool to half and bfloat16", "[kernels][cast][half]") {
  // 2^24 + 2^16 + 1 rounds to 2^24 + 2^16 in float32, a bfloat16 tie that goes to even.
  const Tensor i32 = Vec<int32_t>(
      {(1 << 24) + (1 << 16) + 1, -((1 << 24) + (1 << 16) + 1), 2049, 65519, 65520, -7, 0});
  CHECK(Bits(Cast(i32, DT_HALF)) ==
        std::vector<uint16_t>{0x7c00, 0xfc00, 0x6800, 0x7bff, 0x7c00, 0xc700, 0x0000});
  CHECK(Bits(Cast(i32, DT_BFLOAT16)) ==
        std::vector<uint16_t>{0x4b80, 0xcb80, 0x4500, 0x4780, 0x4780, 0xc0e0, 0x0000});
  const Tensor i64 = Vec<int64_t>(
      {(int64_t{1} << 62) + (int64_t{1} << 39) + 1, std::numeric_limits<int64_t>::min(), 3});
  CHECK(Bits(Cast(i64, DT_HALF)) == std::vector<uint16_t>{0x7c00, 0xfc00, 0x4200});
  CHECK(Bits(Cast(i64, DT_BFLOAT16)) == std::vector<uint16_t>{0x5e80, 0xdf00, 0x4040});
  const Tensor u8 = Vec<uint8_t>({255, 0, 7});
  CHECK(Bits(Cast(u8, DT_HALF)) == std::vector<uint16_t>{0x5bf8, 0x0000, 0x4700});
  CHECK(Bits(Cast(u8, DT_BFLOAT16)) == std::vector<uint16_t>{0x437f, 0x0000, 0x40e0});
  const Tensor b = Vec<bool>({true, false});
  CHECK(Bits(Cast(b, DT_HALF)) == std::vector<uint16_t>{0x3c00, 0x0000});
  CHECK(Bits(Cast(b, DT_BFLOAT16)) == std::vector<uint16_t>{0x3f80, 0x0000});
}

TEST_CASE("Cast half to every dtype goes through float", "[kernels][cast][half]") {
  // 2.5, -2.5, 0.7 (0.7001953125 in half), -0, 300, 65504, -129, 255.875
  const Tensor h =
      FromBits<Half>({0x4100, 0xc100, 0x399a, 0x8000, 0x5cb0, 0x7bff, 0xd808, 0x5bff});
  CHECK(Values<int32_t>(Cast(h, DT_INT32)) ==
        std::vector<int32_t>{2, -2, 0, 0, 300, 65504, -129, 255});
  CHECK(Values<int64_t>(Cast(h, DT_INT64)) ==
        std::vector<int64_t>{2, -2, 0, 0, 300, 65504, -129, 255});
  CHECK(Values<bool>(Cast(h, DT_BOOL)) ==
        std::vector<bool>{true, true, true, false, true, true, true, true});
  CHECK(Values<float>(Cast(h, DT_FLOAT)) ==
        std::vector<float>{2.5f, -2.5f, 0.7001953125f, -0.0f, 300, 65504, -129, 255.875f});
  CHECK(std::signbit(Values<float>(Cast(h, DT_FLOAT))[3]));
  CHECK(Values<double>(Cast(h, DT_DOUBLE)) ==
        std::vector<double>{2.5, -2.5, 0.7001953125, -0.0, 300, 65504, -129, 255.875});
  CHECK(Bits(Cast(h, DT_BFLOAT16)) ==
        std::vector<uint16_t>{0x4020, 0xc020, 0x3f33, 0x8000, 0x4396, 0x4780, 0xc301, 0x4380});
}

TEST_CASE("Cast bfloat16 to every dtype goes through float", "[kernels][cast][half]") {
  // 2.5, -2.5, 0.69921875, -0, 300, 99840, -129, 3003121664
  const Tensor b =
      FromBits<Bfloat16>({0x4020, 0xc020, 0x3f33, 0x8000, 0x4396, 0x47c3, 0xc301, 0x4f33});
  CHECK(Values<int64_t>(Cast(b, DT_INT64)) ==
        std::vector<int64_t>{2, -2, 0, 0, 300, 99840, -129, 3003121664});
  CHECK(Values<bool>(Cast(b, DT_BOOL)) ==
        std::vector<bool>{true, true, true, false, true, true, true, true});
  CHECK(Values<double>(Cast(b, DT_DOUBLE)) ==
        std::vector<double>{2.5, -2.5, 0.69921875, -0.0, 300, 99840, -129, 3003121664.0});
  CHECK(Bits(Cast(b, DT_HALF)) ==
        std::vector<uint16_t>{0x4100, 0xc100, 0x3998, 0x8000, 0x5cb0, 0x7c00, 0xd808, 0x7c00});
}

TEST_CASE("Cast half and bfloat16 NaN and out-of-range values as float32 does",
          "[kernels][cast][half]") {
  // TF's results here are undefined behaviour in C++ (INT_MIN, or wrapped, depending on
  // the element's position); dflow gives float32's defined ones: NaN -> 0, saturation.
  const Tensor h = FromBits<Half>({0x7e00, 0x7c00, 0xfc00, 0x5cb0, 0xd808, 0xc100});
  CHECK(Values<int32_t>(Cast(h, DT_INT32)) ==
        std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min(), 300, -129, -2});
  CHECK(Values<int8_t>(Cast(h, DT_INT8)) == std::vector<int8_t>{0, 127, -128, 127, -128, -2});
  CHECK(Values<uint8_t>(Cast(h, DT_UINT8)) == std::vector<uint8_t>{0, 255, 0, 255, 0, 0});
  CHECK(Values<bool>(Cast(h, DT_BOOL)) ==
        std::vector<bool>{true, true, true, true, true, true});  // NaN is nonzero
  const Tensor b = FromBits<Bfloat16>({0x7fc0, 0x4f33, 0xcf33});  // NaN, ±3003121664
  CHECK(Values<int32_t>(Cast(b, DT_INT32)) ==
        std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min()});
}

TEST_CASE("Cast half to half forwards the input", "[kernels][cast][half]") {
  const Tensor h = FromBits<Half>({0x3c00});
  absl::StatusOr<Tensor> out =
      OpTester("Cast", Registry()).Attr("SrcT", DT_HALF).Attr("DstT", DT_HALF).Input(h).RunOne();
  REQUIRE(out.ok());
  CHECK(out->SharesBufferWith(h));
}

}  // namespace
}  // namespace dflow
