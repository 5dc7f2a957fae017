// The sum of a row of half or bfloat16 values exactly as TF computes it on x86 CPUs:
// Eigen's tensor reduction (InnerMostDimReducer) on the 8-lane AVX packets TF is built
// with. TF's Softmax and LogSoftmax sum their exponentials this way, and since every
// addition rounds to the 16-bit type, the order decides the result (a float sum rounded
// once differs from TF in most elements of a softmax).
//
// Eigen's order, for `n` values that start at flat index `first` of the tensor:
//  1. Above 8 * leaf values (leaf 200 for half, 128 for bfloat16) the range splits in
//     two at a multiple of 8 of the flat index just past its middle; each part is summed
//     recursively and the two added.
//  2. Otherwise 8-lane packets, each lane add rounded: four packet accumulators over the
//     largest multiple of 32 values (then folded into the first), then single packets.
//  3. The leftover (< 8) values are added one by one to 0.
//  4. The packet accumulator's lanes are added in float as ((l0+l4)+(l2+l6)) +
//     ((l1+l5)+(l3+l7)), rounded, and added to the leftover sum.
// Checked bit for bit against TF 2.21's tf.nn.softmax on rows of 5 to 2051 values.
#ifndef DFLOW_KERNELS_CPU_ROUNDED_ROW_SUM_H_
#define DFLOW_KERNELS_CPU_ROUNDED_ROW_SUM_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/half.h"

namespace dflow {
namespace rounded_row_sum_internal {

constexpr int64_t kLanes = 8;

template <typename T>
constexpr int64_t LeafSize() {
  return std::is_same_v<T, Half> ? 200 : 128;
}

template <typename T>
T Add(T a, T b) {
  return T::FromFloat(a.ToFloat() + b.ToFloat());
}

template <typename T>
void AddPacket(const T* values, T* acc) {
  for (int64_t l = 0; l < kLanes; ++l) acc[l] = Add(acc[l], values[l]);
}

// Step 4's horizontal add (Eigen's predux: upper half onto lower, then pairs).
template <typename T>
T ReducePacket(const T* acc) {
  float s[4];
  for (int l = 0; l < 4; ++l) s[l] = acc[l].ToFloat() + acc[l + 4].ToFloat();
  return T::FromFloat((s[0] + s[2]) + (s[1] + s[3]));
}

// Steps 2-4.
template <typename T>
T PacketSum(const T* values, int64_t n) {
  T acc[4][kLanes] = {};
  int64_t start = 0;
  if (n >= 4 * kLanes) {
    start = n / (4 * kLanes) * (4 * kLanes);
    for (int64_t j = 0; j < start; j += 4 * kLanes) {
      for (int64_t a = 0; a < 4; ++a) AddPacket(values + j + a * kLanes, acc[a]);
    }
    for (int64_t a = 1; a < 4; ++a) AddPacket(acc[a], acc[0]);
  }
  for (; start + kLanes <= n; start += kLanes) AddPacket(values + start, acc[0]);
  T leftover{};
  for (int64_t j = start; j < n; ++j) leftover = Add(leftover, values[j]);
  return Add(leftover, ReducePacket(acc[0]));
}

}  // namespace rounded_row_sum_internal

// The sum of values[0, n), which sit at flat indices [first, first + n) of their tensor.
// T is Half or Bfloat16.
template <typename T>
T RoundedRowSum(const T* values, int64_t n, int64_t first) {
  namespace internal = rounded_row_sum_internal;
  constexpr int64_t kLanes = internal::kLanes;
  if (n <= kLanes * internal::LeafSize<T>()) return internal::PacketSum(values, n);
  const int64_t split = (first + (n + 1) / 2 + kLanes - 1) / kLanes * kLanes;
  const int64_t left = std::min(split - first, n);
  T sum = internal::Add(T{}, RoundedRowSum(values, left, first));
  if (left < n) sum = internal::Add(sum, RoundedRowSum(values + left, n - left, split));
  return sum;
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_ROUNDED_ROW_SUM_H_
