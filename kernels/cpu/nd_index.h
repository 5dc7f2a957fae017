// Index tuples of GatherNd and ScatterNd: an indices tensor of shape [..., depth] names
// one slice of a dense tensor per row, indices[n, :] = (i0, ..., i{depth-1}) selecting
// the slice that starts at element (i0, ..., i{depth-1}, 0, ..., 0).
//
// Shared here: reading the rows, turning a row into a slice number (or "out of range"),
// TF's bad_indices_policy attr, and TF's wording for a bad row.
#ifndef DFLOW_KERNELS_CPU_ND_INDEX_H_
#define DFLOW_KERNELS_CPU_ND_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"

namespace dflow {

// What to do with a row that points outside the tensor. TF's CPU kernels treat "" and
// "DEFAULT" as ERROR; IGNORE zero-fills the slice (GatherNd) or skips the update
// (ScatterNd).
enum class BadIndicesPolicy { kDefault, kError, kIgnore };

// "", "DEFAULT", "ERROR" or "IGNORE"; anything else is TF's INVALID_ARGUMENT
// "Unknown bad indices handling attribute: <value>".
absl::StatusOr<BadIndicesPolicy> ParseBadIndicesPolicy(absl::string_view value);

// The values of an int16, int32 or int64 indices tensor, widened (row-major).
std::vector<int64_t> ReadNdIndices(const Tensor& indices);

// Maps index rows onto slice numbers of a tensor whose leading dims are `prefix` (one
// per index column): the slice number is the row-major position of the row in `prefix`.
class SliceIndexer {
 public:
  explicit SliceIndexer(absl::Span<const int64_t> prefix);

  // The slice number of `row` (prefix.size() values), or -1 when some value is negative
  // or not below its dim.
  int64_t SliceOf(const int64_t* row) const;

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;  // slices per step of each index column
};

// TF's "indices[1,0] = [3, 9]": the position of row `row` in `batch_shape` (the indices
// shape without its last dim; nothing for a scalar batch, as TF's SliceDebugString) and
// the row's values.
std::string BadIndexRowString(const TensorShape& batch_shape, int64_t row,
                              const int64_t* values, int64_t depth);

// The largest value of the index dtype (int16, int32 or int64), for TF's
// "too large for <dtype> indexing" checks.
int64_t MaxIndexValue(DataType index_dtype);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_ND_INDEX_H_
