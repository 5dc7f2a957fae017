#include "kernels/cpu/nd_index.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dflow {

absl::StatusOr<BadIndicesPolicy> ParseBadIndicesPolicy(absl::string_view value) {
  if (value.empty() || value == "DEFAULT") return BadIndicesPolicy::kDefault;
  if (value == "ERROR") return BadIndicesPolicy::kError;
  if (value == "IGNORE") return BadIndicesPolicy::kIgnore;
  return absl::InvalidArgumentError(
      absl::StrCat("Unknown bad indices handling attribute: ", value));
}

std::vector<int64_t> ReadNdIndices(const Tensor& indices) {
  auto widen = [&](auto zero) {
    using Index = decltype(zero);
    absl::Span<const Index> values = indices.flat<Index>();
    return std::vector<int64_t>(values.begin(), values.end());
  };
  switch (indices.dtype()) {
    case DT_INT16: return widen(int16_t{});
    case DT_INT64: return widen(int64_t{});
    default: return widen(int32_t{});
  }
}

SliceIndexer::SliceIndexer(absl::Span<const int64_t> prefix)
    : dims_(prefix.begin(), prefix.end()), strides_(prefix.size()) {
  int64_t stride = 1;
  for (int d = static_cast<int>(prefix.size()) - 1; d >= 0; --d) {
    strides_[d] = stride;
    stride *= prefix[d];
  }
}

int64_t SliceIndexer::SliceOf(const int64_t* row) const {
  int64_t slice = 0;
  for (size_t d = 0; d < dims_.size(); ++d) {
    // One unsigned compare rejects negatives too (TF's FastBoundsCheck).
    if (static_cast<uint64_t>(row[d]) >= static_cast<uint64_t>(dims_[d])) return -1;
    slice += row[d] * strides_[d];
  }
  return slice;
}

std::string BadIndexRowString(const TensorShape& batch_shape, int64_t row,
                              const int64_t* values, int64_t depth) {
  std::vector<int64_t> position(batch_shape.dims());
  for (int d = batch_shape.dims() - 1; d >= 0; --d) {
    position[d] = row % batch_shape.dim_size(d);
    row /= batch_shape.dim_size(d);
  }
  const std::string where =
      position.empty() ? "" : absl::StrCat("[", absl::StrJoin(position, ","), "]");
  return absl::StrCat("indices", where, " = [",
                      absl::StrJoin(absl::MakeConstSpan(values, depth), ", "), "]");
}

int64_t MaxIndexValue(DataType index_dtype) {
  switch (index_dtype) {
    case DT_INT16: return std::numeric_limits<int16_t>::max();
    case DT_INT32: return std::numeric_limits<int32_t>::max();
    default: return std::numeric_limits<int64_t>::max();
  }
}

}  // namespace dflow
