// Half (IEEE binary16, TF's DT_HALF, Eigen::half) and Bfloat16 (the top half of a float,
// TF's DT_BFLOAT16): the two 16-bit float element types, as storage plus float conversion.
//
// There is no arithmetic on them: TF's CPU kernels compute half and bfloat16 the way
// Eigen's types do, by converting every operand to float, computing in float and rounding
// each result back (kernels/cpu/cwise_util.h InFloat). Both types are aggregates, so
// `Half{0x3c00}` is the bit pattern 0x3c00 (1.0) and `Half{}` is +0.
//
// Rounding is exactly TF's on x86 (checked against TF 2.21):
//  - float -> half rounds to nearest, ties to even, with subnormals; magnitudes from
//    65520 up become infinity (65504 is the largest finite half). NaN stays NaN: quiet,
//    sign and the top 10 payload bits kept (what the F16C instruction TF uses does).
//  - float -> bfloat16 rounds to nearest, ties to even (subnormals kept, FLT_MAX rounds
//    to infinity); NaN becomes the quiet NaN 0x7fc0 with the sign kept (Eigen's scalar
//    conversion).
//  - half -> float and bfloat16 -> float are exact.
//
// Thread-safe: plain values.
#ifndef DFLOW_RUNTIME_HALF_H_
#define DFLOW_RUNTIME_HALF_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace dflow {
namespace half_internal {

inline uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace half_internal

struct Half {
  uint16_t bits;

  static Half FromFloat(float value) {
    using half_internal::BitsOf;
    using half_internal::FloatOf;
    uint32_t f = BitsOf(value);
    const uint32_t sign = (f >> 16) & 0x8000u;
    f &= 0x7fffffffu;
    uint32_t h;
    if (f >= 0x47800000u) {  // 65536 or more, infinity or NaN
      h = f > 0x7f800000u ? 0x7e00u | ((f >> 13) & 0x3ffu) : 0x7c00u;
    } else if (f < 0x38800000u) {  // below 2^-14: a subnormal half or zero
      // Adding 0.5f puts the half's 10 mantissa bits at the bottom of the float's, and
      // the FPU's own round-to-nearest-even rounds away the rest (Eigen's trick).
      h = BitsOf(FloatOf(f) + 0.5f) - 0x3f000000u;
    } else {
      // Rebias the exponent (127 -> 15) and add just under half an ulp, plus one more
      // when the kept mantissa is odd: round to nearest, ties to even. A carry out of
      // the mantissa bumps the exponent, up to infinity for [65520, 65536).
      const uint32_t odd = (f >> 13) & 1u;
      h = (f + 0xc8000fffu + odd) >> 13;
    }
    return Half{static_cast<uint16_t>(h | sign)};
  }

  float ToFloat() const {
    using half_internal::BitsOf;
    using half_internal::FloatOf;
    constexpr uint32_t kExponentMask = 0x7c00u << 13;  // the half's exponent, shifted
    uint32_t f = (bits & 0x7fffu) << 13;
    const uint32_t exponent = f & kExponentMask;
    f += (127 - 15) << 23;
    if (exponent == kExponentMask) {  // infinity or NaN: all exponent bits set
      f += (128 - 16) << 23;
    } else if (exponent == 0) {  // zero or subnormal: renormalise by an exact subtraction
      f += 1u << 23;
      f = BitsOf(FloatOf(f) - FloatOf(113u << 23));
    }
    return FloatOf(f | (static_cast<uint32_t>(bits & 0x8000u) << 16));
  }
};

struct Bfloat16 {
  uint16_t bits;

  static Bfloat16 FromFloat(float value) {
    const uint32_t f = half_internal::BitsOf(value);
    if ((f & 0x7fffffffu) > 0x7f800000u) return QuietNan(f);
    // Just under half an ulp, plus one when the kept mantissa is odd: ties to even.
    const uint32_t odd = (f >> 16) & 1u;
    return Bfloat16{static_cast<uint16_t>((f + 0x7fffu + odd) >> 16)};
  }

  // The top 16 bits of the float: rounds toward zero. TF's FloatToBFloat16 does this,
  // e.g. for the results of bfloat16 MatMul on the CPU. NaN stays NaN (as FromFloat).
  static Bfloat16 FromFloatTruncated(float value) {
    const uint32_t f = half_internal::BitsOf(value);
    if ((f & 0x7fffffffu) > 0x7f800000u) return QuietNan(f);
    return Bfloat16{static_cast<uint16_t>(f >> 16)};
  }

  float ToFloat() const { return half_internal::FloatOf(static_cast<uint32_t>(bits) << 16); }

 private:
  static Bfloat16 QuietNan(uint32_t f) {
    return Bfloat16{static_cast<uint16_t>(((f >> 16) & 0x8000u) | 0x7fc0u)};
  }
};

// True for Half and Bfloat16: the element types that compute through float.
template <typename T>
inline constexpr bool kIsHalfOrBfloat16 =
    std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>;

}  // namespace dflow

#endif  // DFLOW_RUNTIME_HALF_H_
