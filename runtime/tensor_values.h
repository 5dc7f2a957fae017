// Tensors from and to plain C++ values, for programs that use dflow as a library:
//
//   absl::StatusOr<Tensor> x = TensorFromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6});
//   absl::StatusOr<std::vector<float>> y = TensorValues<float>(outputs[0]);
//
// Rules:
//  1. The element type picks the dtype (DataTypeOf<T>: float -> DT_FLOAT, int64_t ->
//     DT_INT64, std::string -> DT_STRING, Half, Bfloat16, bool, ...).
//  2. TensorFromValues copies `values` into a new tensor of `shape` from the process's
//     CPU allocator (what Session::Run feeds and returns); INVALID_ARGUMENT when the
//     shape is invalid or the counts differ, naming both. A scalar is shape {}.
//  3. TensorValues copies a tensor's elements out in row-major order; INVALID_ARGUMENT
//     naming both dtypes when T is not the tensor's element type (no silent conversion).
//
// Thread-safe: pure functions (the allocator is thread-safe).
#ifndef DFLOW_RUNTIME_TENSOR_VALUES_H_
#define DFLOW_RUNTIME_TENSOR_VALUES_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/types.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace dflow {

template <typename T>
absl::StatusOr<Tensor> TensorFromValues(absl::Span<const int64_t> shape,
                                        absl::Span<const T> values) {
  absl::StatusOr<TensorShape> checked =
      TensorShape::Make(std::vector<int64_t>(shape.begin(), shape.end()));
  if (!checked.ok()) return checked.status();
  if (checked->num_elements() != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("TensorFromValues: shape ", checked->DebugString(), " holds ",
                     checked->num_elements(), " elements, but ", values.size(),
                     " values were given"));
  }
  absl::StatusOr<Tensor> tensor =
      Tensor::Allocate(ProcessCpuAllocator(), DataTypeOf<T>(), *checked);
  if (!tensor.ok()) return tensor.status();
  std::copy(values.begin(), values.end(), tensor->template data<T>());
  return tensor;
}

// Overload for braced lists: TensorFromValues<float>({2}, {1, 2}).
template <typename T>
absl::StatusOr<Tensor> TensorFromValues(std::initializer_list<int64_t> shape,
                                        std::initializer_list<T> values) {
  return TensorFromValues<T>(absl::Span<const int64_t>(shape.begin(), shape.size()),
                             absl::Span<const T>(values.begin(), values.size()));
}

template <typename T>
absl::StatusOr<std::vector<T>> TensorValues(const Tensor& tensor) {
  if (tensor.dtype() != DataTypeOf<T>()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TensorValues: the tensor holds ", DataTypeString(tensor.dtype()),
                     ", not ", DataTypeString(DataTypeOf<T>())));
  }
  const T* data = tensor.template data<T>();
  return std::vector<T>(data, data + tensor.NumElements());
}

}  // namespace dflow

#endif  // DFLOW_RUNTIME_TENSOR_VALUES_H_
