// Element folds shared by the segment reductions (segment_ops.cc: SegmentSum, SegmentMean,
// SegmentMax; unsorted_segment_ops.cc: UnsortedSegmentSum, UnsortedSegmentMax).
//
// Each fold works on the element type itself, as TF's kernels do: half and bfloat16 go
// through float and are rounded back after every step (Eigen's half arithmetic), integers
// wrap (computed unsigned, so an overflowing sum is defined behaviour, never a trap).
#ifndef DFLOW_KERNELS_CPU_SEGMENT_UTIL_H_
#define DFLOW_KERNELS_CPU_SEGMENT_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/half.h"
#include "runtime/tensor.h"

namespace dflow::segment {

template <typename T>
constexpr bool kIs16BitFloat = std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>;

// The real number dtypes TF 2.21 registers the segment kernels for on the CPU (its
// complex64/complex128 Sum and Mean kernels are not here: dflow has no complex arithmetic).
inline std::vector<DataType> RealTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_HALF,  DT_BFLOAT16, DT_INT8,   DT_INT16,
          DT_INT32, DT_INT64,  DT_UINT8, DT_UINT16,   DT_UINT32, DT_UINT64};
}

// Calls `fn(T{})` for a dtype of RealTypes() (bool, which they exclude, is skipped so
// callers need not compile for it).
template <typename Fn>
void DispatchReal(DataType dtype, Fn&& fn) {
  DispatchNumericOrHalf(dtype, [&](auto zero) {
    if constexpr (!std::is_same_v<decltype(zero), bool>) fn(zero);
  });
}

template <typename T>
T Zero() {
  if constexpr (kIs16BitFloat<T>) {
    return T{0};
  } else {
    return T(0);
  }
}

// numeric_limits<T>::lowest(): the value of an empty UnsortedSegmentMax segment.
template <typename T>
T Lowest() {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{0xfbff};  // -65504
  } else if constexpr (std::is_same_v<T, Bfloat16>) {
    return Bfloat16{0xff7f};  // -3.38953139e38
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <typename T>
T Add(T a, T b) {
  if constexpr (kIs16BitFloat<T>) {
    return T::FromFloat(a.ToFloat() + b.ToFloat());
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

// TF's max step, std::max(x, acc): x unless x < acc. So a NaN x is taken and a later
// ordinary x replaces a NaN accumulator (TF 2.21: max of [1, nan] is nan, of
// [3, nan, 1] is 1).
template <typename T>
T Max(T acc, T x) {
  if constexpr (kIs16BitFloat<T>) {
    return x.ToFloat() < acc.ToFloat() ? acc : x;
  } else {
    return x < acc ? acc : x;
  }
}

// sum / count, as Eigen's MeanReducer finishes (integer division truncates).
template <typename T>
T DivideByCount(T sum, int64_t count) {
  if constexpr (kIs16BitFloat<T>) {
    return T::FromFloat(sum.ToFloat() / static_cast<float>(count));
  } else if constexpr (std::is_integral_v<T>) {
    // In int64 so a count beyond T's range cannot divide by a wrapped zero.
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>(static_cast<Wide>(sum) / static_cast<Wide>(count));
  } else {
    return sum / static_cast<T>(count);
  }
}

// The values of an int16, int32 or int64 segment_ids tensor, widened.
inline std::vector<int64_t> ReadSegmentIds(const Tensor& ids) {
  std::vector<int64_t> values(ids.NumElements());
  switch (ids.dtype()) {
    case DT_INT16: {
      absl::Span<const int16_t> flat = ids.flat<int16_t>();
      std::copy(flat.begin(), flat.end(), values.begin());
      break;
    }
    case DT_INT64: {
      absl::Span<const int64_t> flat = ids.flat<int64_t>();
      std::copy(flat.begin(), flat.end(), values.begin());
      break;
    }
    default: {
      absl::Span<const int32_t> flat = ids.flat<int32_t>();
      std::copy(flat.begin(), flat.end(), values.begin());
    }
  }
  return values;
}

}  // namespace dflow::segment

#endif  // DFLOW_KERNELS_CPU_SEGMENT_UTIL_H_
