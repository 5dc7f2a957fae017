// ElementKey: what an element hashes and compares by in the set-like kernels (Unique,
// ListDiff): itself, or its float value for 16-bit floats (which have no std::hash), so
// values compare with == as TF's hash maps do: -0 equals 0 and every NaN is distinct.
#ifndef DFLOW_KERNELS_CPU_ELEMENT_KEY_H_
#define DFLOW_KERNELS_CPU_ELEMENT_KEY_H_

#include "runtime/half.h"

namespace dflow {

template <typename T>
auto ElementKey(const T& v) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return v.ToFloat();
  } else {
    return v;
  }
}

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_ELEMENT_KEY_H_
