#include "graph/partial_shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dflow {

namespace {
constexpr int kMaxRank = 254;
}

absl::StatusOr<PartialShape> PartialShape::FromProto(const TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) {
      return absl::InvalidArgumentError("shape has unknown_rank set and also lists dims");
    }
    return PartialShape();
  }
  if (proto.dim_size() > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape has rank ", proto.dim_size(), ", above the maximum ", kMaxRank));
  }
  std::vector<int64_t> dims;
  dims.reserve(proto.dim_size());
  for (const auto& dim : proto.dim()) {
    if (dim.size() < kUnknownDim) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape has a negative dimension ", dim.size()));
    }
    dims.push_back(dim.size());
  }
  return PartialShape(std::move(dims));
}

bool PartialShape::IsFullyDefined() const {
  if (!rank_known()) return false;
  for (int64_t d : *dims_) {
    if (d == kUnknownDim) return false;
  }
  return true;
}

std::optional<int64_t> PartialShape::NumElements() const {
  if (!IsFullyDefined()) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : *dims_) {
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

bool PartialShape::IsCompatibleWith(const PartialShape& other) const {
  return Merge(other).ok();
}

absl::StatusOr<PartialShape> PartialShape::Merge(const PartialShape& other) const {
  if (!rank_known()) return other;
  if (!other.rank_known()) return *this;
  if (rank() != other.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("Shapes ", ToString(), " and ",
                                                   other.ToString(), " have different ranks"));
  }
  std::vector<int64_t> dims(rank());
  for (int i = 0; i < rank(); ++i) {
    const int64_t a = dim(i), b = other.dim(i);
    if (a != kUnknownDim && b != kUnknownDim && a != b) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shapes ", ToString(), " and ", other.ToString(), " differ in dimension ", i));
    }
    dims[i] = a == kUnknownDim ? b : a;
  }
  return PartialShape(std::move(dims));
}

TensorShapeProto PartialShape::ToProto() const {
  TensorShapeProto proto;
  if (!rank_known()) {
    proto.set_unknown_rank(true);
    return proto;
  }
  for (int64_t d : *dims_) proto.add_dim()->set_size(d);
  return proto;
}

std::string PartialShape::ToString() const {
  if (!rank_known()) return "<unknown>";
  return absl::StrCat(
      "[",
      absl::StrJoin(*dims_, ",",
                    [](std::string* out, int64_t d) {
                      absl::StrAppend(out, d == kUnknownDim ? "?" : absl::StrCat(d));
                    }),
      "]");
}

}  // namespace dflow
