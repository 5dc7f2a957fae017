#include "runtime/tensor_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dflow {

TensorShape::TensorShape(std::initializer_list<int64_t> dims)
    : TensorShape(absl::Span<const int64_t>(dims.begin(), dims.size())) {}

TensorShape::TensorShape(absl::Span<const int64_t> dims) {
  for (int64_t d : dims) AddDim(d);
}

absl::StatusOr<TensorShape> TensorShape::Make(absl::Span<const int64_t> dims) {
  if (dims.size() > 254) {
    return absl::InvalidArgumentError(absl::StrCat("shape rank ", dims.size(), " exceeds 254"));
  }
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape [", absl::StrJoin(dims, ","), "] has a negative dimension"));
    }
    if (__builtin_mul_overflow(n, d, &n)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape [", absl::StrJoin(dims, ","), "] has more elements than fit in int64"));
    }
  }
  return TensorShape(dims);
}

absl::StatusOr<TensorShape> TensorShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    return absl::InvalidArgumentError("a tensor shape must have a known rank");
  }
  absl::InlinedVector<int64_t, 4> dims;
  for (const auto& dim : proto.dim()) dims.push_back(dim.size());
  return Make(dims);
}

void TensorShape::AddDim(int64_t size) {
  dims_.push_back(size);
  num_elements_ *= size;
}

TensorShapeProto TensorShape::ToProto() const {
  TensorShapeProto proto;
  for (int64_t d : dims_) proto.add_dim()->set_size(d);
  return proto;
}

PartialShape TensorShape::ToPartialShape() const {
  return PartialShape(std::vector<int64_t>(dims_.begin(), dims_.end()));
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

}  // namespace dflow
