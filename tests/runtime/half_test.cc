// Half and Bfloat16: float conversion rounds to nearest even exactly as TF 2.21 does on
// x86 (the bit patterns below are TF's tf.cast results), subnormals, infinities and NaNs
// included; every half survives a trip through float; and float -> half agrees with an
// independent reference rounding on a million random floats.
#include "runtime/half.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include <catch2/catch.hpp>

namespace dflow {
namespace {

float FloatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint16_t HalfBits(float value) { return Half::FromFloat(value).bits; }
uint16_t Bf16Bits(float value) { return Bfloat16::FromFloat(value).bits; }

TEST_CASE("float -> half rounds to nearest even at the top of the range", "[half]") {
  CHECK(HalfBits(65504.0f) == 0x7bff);   // the largest finite half
  CHECK(HalfBits(65519.0f) == 0x7bff);   // below the midpoint to 65536
  CHECK(HalfBits(65520.0f) == 0x7c00);   // the midpoint: 0x7bff is odd, so up to infinity
  CHECK(HalfBits(-65520.0f) == 0xfc00);
  CHECK(HalfBits(70000.0f) == 0x7c00);
  CHECK(HalfBits(std::numeric_limits<float>::max()) == 0x7c00);
  CHECK(HalfBits(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(HalfBits(-std::numeric_limits<float>::infinity()) == 0xfc00);
}

TEST_CASE("float -> half breaks ties to even", "[half]") {
  CHECK(HalfBits(1.0f + 0x1p-11f) == 0x3c00);            // tie, 0x3c00 even: down
  CHECK(HalfBits(1.0f + 3 * 0x1p-11f) == 0x3c02);        // tie, 0x3c01 odd: up
  CHECK(HalfBits(1.0f + 0x1p-11f + 0x1p-23f) == 0x3c01); // just above the tie: up
  CHECK(HalfBits(2049.0f) == 0x6800);                     // 2048
  CHECK(HalfBits(2051.0f) == 0x6802);                     // 2052
  CHECK(HalfBits(0.7f) == 0x399a);
  CHECK(HalfBits(-2.5f) == 0xc100);
}

TEST_CASE("float -> half keeps subnormals and signed zeros", "[half]") {
  CHECK(HalfBits(0x1p-24f) == 0x0001);                // the smallest subnormal
  CHECK(HalfBits(0x1p-25f) == 0x0000);                // tie between 0 and 2^-24: even
  CHECK(HalfBits(0x1p-25f + 0x1p-40f) == 0x0001);     // above the tie
  CHECK(HalfBits(3 * 0x1p-26f) == 0x0001);
  CHECK(HalfBits(0x1p-14f - 0x1p-25f) == 0x0400);     // rounds up into the normals
  CHECK(HalfBits(1023 * 0x1p-24f) == 0x03ff);         // the largest subnormal
  CHECK(HalfBits(1e-40f) == 0x0000);                  // float subnormals vanish
  CHECK(HalfBits(-1e-40f) == 0x8000);
  CHECK(HalfBits(-0.0f) == 0x8000);
  CHECK(HalfBits(0.0f) == 0x0000);
}

TEST_CASE("float -> half keeps NaN quiet with its sign and top payload bits", "[half]") {
  CHECK(HalfBits(std::numeric_limits<float>::quiet_NaN()) == 0x7e00);
  CHECK(HalfBits(FloatFromBits(0xffc00001)) == 0xfe00);
  CHECK(HalfBits(FloatFromBits(0x7f800001)) == 0x7e00);  // signalling, payload below the top
  CHECK(HalfBits(FloatFromBits(0x7fa00000)) == 0x7f00);
}

TEST_CASE("half -> float is exact", "[half]") {
  CHECK(Half{0x3c00}.ToFloat() == 1.0f);
  CHECK(Half{0x7bff}.ToFloat() == 65504.0f);
  CHECK(Half{0x0001}.ToFloat() == 0x1p-24f);
  CHECK(Half{0x03ff}.ToFloat() == 1023 * 0x1p-24f);
  CHECK(Half{0x0400}.ToFloat() == 0x1p-14f);
  CHECK(Half{0x399a}.ToFloat() == 0.7001953125f);
  CHECK(Half{0x7c00}.ToFloat() == std::numeric_limits<float>::infinity());
  CHECK(Half{0xfc00}.ToFloat() == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(Half{0x7e00}.ToFloat()));
  CHECK(std::signbit(Half{0x8000}.ToFloat()));
  CHECK(Half{}.ToFloat() == 0.0f);
}

TEST_CASE("Every half survives half -> float -> half", "[half]") {
  int wrong = 0;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const Half h{static_cast<uint16_t>(bits)};
    const bool nan = (bits & 0x7fff) > 0x7c00;
    // A signalling NaN comes back quiet (0x0200 set), like the hardware conversion.
    const uint16_t want = nan ? static_cast<uint16_t>(bits | 0x0200) : h.bits;
    wrong += Half::FromFloat(h.ToFloat()).bits != want;
  }
  CHECK(wrong == 0);
}

// The nearest half to `x` (ties to even) computed in double, independently of the bit
// tricks in half.h: scale to the half's 11-bit grid, round with nearbyint.
double ReferenceHalf(float x) {
  const double a = std::fabs(static_cast<double>(x));
  const int exponent = a < 0x1p-14 ? -14 : std::ilogb(a);
  const double ulp = std::ldexp(1.0, exponent - 10);
  double rounded = std::nearbyint(a / ulp) * ulp;
  if (rounded > 65504.0) rounded = std::numeric_limits<double>::infinity();
  return std::copysign(rounded, static_cast<double>(x));
}

TEST_CASE("float -> half matches a reference rounding on random floats", "[half]") {
  std::mt19937 rng(7);
  // Random bit patterns with exponents around the half range, where rounding is hard.
  std::uniform_int_distribution<uint32_t> mantissa(0, (1u << 23) - 1);
  std::uniform_int_distribution<uint32_t> exponent(127 - 30, 127 + 17);
  std::uniform_int_distribution<uint32_t> sign(0, 1);
  int wrong = 0;
  for (int i = 0; i < 1000000; ++i) {
    // Every few draws, a float exactly on or next to a rounding midpoint.
    uint32_t m = mantissa(rng);
    if (i % 4 == 0) m = (m & ~0x1fffu) | 0x1000u;
    if (i % 4 == 1) m = (m & ~0x1fffu) | 0x0fffu;
    const float x = FloatFromBits(sign(rng) << 31 | exponent(rng) << 23 | m);
    const double want = ReferenceHalf(x);
    const float got = Half::FromFloat(x).ToFloat();
    if (got != want || std::signbit(got) != std::signbit(want)) ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("float -> bfloat16 rounds to nearest even", "[half][bfloat16]") {
  CHECK(Bf16Bits(1.0f) == 0x3f80);
  CHECK(Bf16Bits(1.0f + 0x1p-8f) == 0x3f80);             // tie, even: down
  CHECK(Bf16Bits(1.0f + 3 * 0x1p-8f) == 0x3f82);         // tie, odd: up
  CHECK(Bf16Bits(1.0f + 0x1p-8f + 0x1p-23f) == 0x3f81);  // above the tie
  CHECK(Bf16Bits(65504.0f) == 0x4780);
  CHECK(Bf16Bits(0.7f) == 0x3f33);
  CHECK(Bf16Bits(-2.5f) == 0xc020);
  CHECK(Bf16Bits(3.3895314e38f) == 0x7f7f);  // the largest finite bfloat16
  CHECK(Bf16Bits(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(Bf16Bits(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(Bf16Bits(1e-40f) == 0x0001);  // float subnormals stay subnormal
  CHECK(Bf16Bits(-1e-40f) == 0x8001);
  CHECK(Bf16Bits(-0.0f) == 0x8000);
}

TEST_CASE("float -> bfloat16 turns NaN into the quiet NaN with its sign", "[half][bfloat16]") {
  CHECK(Bf16Bits(std::numeric_limits<float>::quiet_NaN()) == 0x7fc0);
  CHECK(Bf16Bits(FloatFromBits(0x7fa00000)) == 0x7fc0);
  CHECK(Bf16Bits(FloatFromBits(0xffc00001)) == 0xffc0);
  // Payload only in the dropped bits: still NaN, never infinity.
  CHECK(Bf16Bits(FloatFromBits(0x7f800001)) == 0x7fc0);
  CHECK(Bfloat16::FromFloatTruncated(FloatFromBits(0x7f800001)).bits == 0x7fc0);
}

TEST_CASE("Truncating float -> bfloat16 drops the low 16 bits", "[half][bfloat16]") {
  CHECK(Bfloat16::FromFloatTruncated(1.0f + 0x1p-8f + 0x1p-23f).bits == 0x3f80);
  CHECK(Bfloat16::FromFloatTruncated(-1.99f).bits == 0xbffe);
  CHECK(Bfloat16::FromFloatTruncated(std::numeric_limits<float>::max()).bits == 0x7f7f);
}

TEST_CASE("bfloat16 -> float is exact and round-trips", "[half][bfloat16]") {
  CHECK(Bfloat16{0x3f80}.ToFloat() == 1.0f);
  CHECK(Bfloat16{0x4780}.ToFloat() == 65536.0f);
  CHECK(Bfloat16{0x0001}.ToFloat() == FloatFromBits(0x00010000));
  int wrong = 0;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const Bfloat16 b{static_cast<uint16_t>(bits)};
    if ((bits & 0x7fff) > 0x7f80) continue;  // NaNs: canonicalised, checked above
    wrong += Bfloat16::FromFloat(b.ToFloat()).bits != b.bits;
  }
  CHECK(wrong == 0);
}

}  // namespace
}  // namespace dflow
