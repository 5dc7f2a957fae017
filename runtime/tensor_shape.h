// TensorShape: the fully known shape of a runtime tensor (all dims >= 0).
#ifndef DFLOW_RUNTIME_TENSOR_SHAPE_H_
#define DFLOW_RUNTIME_TENSOR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/partial_shape.h"
#include "proto/tensor_shape.pb.h"

namespace dflow {

class TensorShape {
 public:
  // A scalar.
  TensorShape() = default;
  // REQUIRES: dims >= 0 and the product fits in int64 (use Make() for untrusted dims).
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(absl::Span<const int64_t> dims);

  // INVALID_ARGUMENT for negative dims, rank > 254 or an element count overflowing int64.
  static absl::StatusOr<TensorShape> Make(absl::Span<const int64_t> dims);
  static absl::StatusOr<TensorShape> FromProto(const TensorShapeProto& proto);

  int dims() const { return static_cast<int>(dims_.size()); }
  int64_t dim_size(int i) const { return dims_[i]; }
  absl::Span<const int64_t> dim_sizes() const { return dims_; }
  int64_t num_elements() const { return num_elements_; }

  // REQUIRES: the new element count fits in int64.
  void AddDim(int64_t size);

  TensorShapeProto ToProto() const;
  PartialShape ToPartialShape() const;
  // "[2,3]", "[]" for a scalar.
  std::string DebugString() const;

  bool operator==(const TensorShape& other) const { return dims_ == other.dims_; }
  bool operator!=(const TensorShape& other) const { return !(*this == other); }

 private:
  absl::InlinedVector<int64_t, 4> dims_;
  int64_t num_elements_ = 1;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_TENSOR_SHAPE_H_
