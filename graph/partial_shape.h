// PartialShape: a tensor shape that may be partly unknown (TF's PartialTensorShape).
#ifndef DFLOW_GRAPH_PARTIAL_SHAPE_H_
#define DFLOW_GRAPH_PARTIAL_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/tensor_shape.pb.h"

namespace dflow {

class PartialShape {
 public:
  static constexpr int64_t kUnknownDim = -1;

  // Unknown rank.
  PartialShape() = default;
  // Known rank; dims may be kUnknownDim.
  explicit PartialShape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  static PartialShape Scalar() { return PartialShape(std::vector<int64_t>{}); }
  static PartialShape UnknownOfRank(int rank) {
    return PartialShape(std::vector<int64_t>(rank, kUnknownDim));
  }
  // INVALID_ARGUMENT for dims < -1 or a rank above 254.
  static absl::StatusOr<PartialShape> FromProto(const TensorShapeProto& proto);

  bool rank_known() const { return dims_.has_value(); }
  // REQUIRES: rank_known().
  int rank() const { return static_cast<int>(dims_->size()); }
  const std::vector<int64_t>& dims() const { return *dims_; }
  int64_t dim(int i) const { return (*dims_)[i]; }
  bool IsFullyDefined() const;
  // Product of dims when fully defined and it fits in int64, else nullopt.
  std::optional<int64_t> NumElements() const;

  // True when some shape satisfies both.
  bool IsCompatibleWith(const PartialShape& other) const;
  // The most specific shape compatible with both; INVALID_ARGUMENT when incompatible.
  absl::StatusOr<PartialShape> Merge(const PartialShape& other) const;

  TensorShapeProto ToProto() const;
  // "[2,?,3]", "[]" for scalars, "<unknown>" for unknown rank (TF's spelling).
  std::string ToString() const;

  bool operator==(const PartialShape& other) const { return dims_ == other.dims_; }
  bool operator!=(const PartialShape& other) const { return !(*this == other); }

 private:
  std::optional<std::vector<int64_t>> dims_;
};

}  // namespace dflow

#endif  // DFLOW_GRAPH_PARTIAL_SHAPE_H_
