// Element-wise comparison of float, double, half and bfloat16 kernel outputs with TF's
// values, for the element-wise kernel tests: ULP distance for finite non-zero values,
// exact equality (sign of zero included) for zeros and infinities, and any NaN for a NaN.
#ifndef DFLOW_TESTS_KERNELS_CPU_FLOAT_COMPARE_H_
#define DFLOW_TESTS_KERNELS_CPU_FLOAT_COMPARE_H_

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/tensor.h"
#include "tests/testing/op_tester.h"

namespace dflow::testing {

inline constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInf = std::numeric_limits<float>::infinity();

// The value's position on a line where adjacent floats (or doubles) are 1 apart.
template <typename T>
int64_t OrderedBits(T value) {
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  Bits bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const int64_t b = bits;
  return b < 0 ? std::numeric_limits<Bits>::min() - b : b;
}

// `got` (a float or double tensor) against `want` within `max_ulps` per element.
template <typename T>
void CheckUlps(const absl::StatusOr<Tensor>& got, const std::vector<T>& want, int max_ulps) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  const std::vector<T> values = Values<T>(*got);
  REQUIRE(values.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << values[i] << ", TF " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(values[i]));
    } else if (want[i] == 0 || std::isinf(want[i]) || max_ulps == 0) {
      CHECK(OrderedBits(values[i]) == OrderedBits(want[i]));
    } else {
      CHECK(std::abs(OrderedBits(values[i]) - OrderedBits(want[i])) <= max_ulps);
    }
  }
}

// A half or bfloat16 tensor of `shape` from bit patterns.
template <typename T>
Tensor FromBits(std::vector<int64_t> shape, const std::vector<uint16_t>& bits) {
  std::vector<T> values;
  for (uint16_t b : bits) values.push_back(T{b});
  return Filled<T>(shape, values);
}

// Every element of a half or bfloat16 tensor equal to TF's bits, or NaN where TF's is.
inline void CheckBits(const absl::StatusOr<Tensor>& got, const std::vector<uint16_t>& want) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  const auto* data = static_cast<const uint16_t*>(got->raw_data());
  REQUIRE(static_cast<size_t>(got->NumElements()) == want.size());
  const uint16_t max_finite = got->dtype() == DT_HALF ? 0x7c00 : 0x7f80;
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got 0x" << std::hex << data[i] << ", TF 0x" << want[i]);
    if ((want[i] & 0x7fff) > max_finite) {
      CHECK((data[i] & 0x7fff) > max_finite);
    } else {
      CHECK(data[i] == want[i]);
    }
  }
}

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_KERNELS_CPU_FLOAT_COMPARE_H_
