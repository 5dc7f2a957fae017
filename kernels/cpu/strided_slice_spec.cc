#include "kernels/cpu/strided_slice_spec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

// Markers in the dense-to-final gather list for dimensions that are not input dims.
constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;

bool Bit(int64_t mask, int i) { return (mask >> i) & 1; }

// Step 1 and 2 of the header: the spec with one entry per input dimension.
struct DenseSpec {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, shrink_mask = 0;
  // For each output dim: the dense dim it comes from, kNewAxis or kShrinkAxis.
  std::vector<int> final_gather;
};

absl::StatusOr<DenseSpec> BuildDenseSpec(int dims, absl::Span<const int64_t> begin,
                                         absl::Span<const int64_t> end,
                                         absl::Span<const int64_t> strides,
                                         StridedSliceMasks masks) {
  int sparse_dims = static_cast<int>(strides.size());
  // New axes after the ellipsis take no input dimension from it.
  int new_axes_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && Bit(masks.new_axis, i)) ++new_axes_after_ellipsis;
    if (Bit(masks.ellipsis, i)) ellipsis_seen = true;
  }
  if (!ellipsis_seen) masks.ellipsis |= int64_t{1} << sparse_dims++;

  DenseSpec dense;
  dense.begin.assign(dims, 0);
  dense.end.assign(dims, 0);
  dense.strides.assign(dims, 1);
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    const int64_t bit = int64_t{1} << full;
    if (Bit(masks.ellipsis, i)) {
      const int next = std::min(dims - (sparse_dims - i) + 1 + new_axes_after_ellipsis, dims);
      for (; full < next; ++full) {
        dense.begin_mask |= int64_t{1} << full;
        dense.end_mask |= int64_t{1} << full;
        dense.final_gather.push_back(full);
      }
    } else if (Bit(masks.new_axis, i)) {
      dense.final_gather.push_back(kNewAxis);
    } else {
      if (full == dims) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Index out of range using input dim ", full, "; input has only ", dims, " dims"));
      }
      dense.begin[full] = begin[i];
      dense.end[full] = end[i];
      dense.strides[full] = strides[i];
      if (Bit(masks.begin, i)) dense.begin_mask |= bit;
      if (Bit(masks.end, i)) dense.end_mask |= bit;
      if (Bit(masks.shrink_axis, i)) {
        dense.final_gather.push_back(kShrinkAxis);
        dense.shrink_mask |= bit;
      } else {
        dense.final_gather.push_back(full);
      }
      ++full;
    }
  }
  return dense;
}

// Step 3 for dimension i: explicit begin/end and the extent.
absl::Status ResolveDim(const DenseSpec& dense, int i, int64_t dim, StridedSliceSpec* spec) {
  const int64_t stride = dense.strides[i];
  if (stride == 0) return absl::InvalidArgumentError(absl::StrCat("strides[", i, "] must be non-zero"));
  const bool shrink = Bit(dense.shrink_mask, i);
  if (shrink && stride <= 0) {
    return absl::InvalidArgumentError("only stride 1 allowed on non-range indexing.");
  }
  // Valid positions: [0, dim] going forward, [-1, dim - 1] going backward.
  const int64_t lo = stride > 0 ? 0 : -1;
  const int64_t hi = stride > 0 ? dim : dim - 1;
  const auto canonical = [&](int64_t x, bool masked, bool is_end) {
    if (masked) return (stride > 0) == is_end ? hi : lo;
    const int64_t fwd = x < 0 ? dim + x : x;
    return std::clamp(fwd, lo, hi);
  };
  int64_t b, e;
  if (shrink) {
    // foo[-1] arrives as begin -1, end 0: the end is rebuilt as begin + 1.
    b = dense.begin[i] < 0 ? dim + dense.begin[i] : dense.begin[i];
    e = b + 1;
    if (b < 0 || b >= dim) {
      return absl::InvalidArgumentError(
          absl::StrCat("slice index ", b, " of dimension ", i, " out of bounds."));
    }
  } else {
    b = canonical(dense.begin[i], Bit(dense.begin_mask, i), false);
    e = canonical(dense.end[i], Bit(dense.end_mask, i), true);
  }
  const int64_t interval = e - b;
  int64_t extent = 0;
  if (interval != 0 && (interval < 0) == (stride < 0)) {
    extent = interval / stride + (interval % stride != 0 ? 1 : 0);
  }
  spec->is_identity &= stride == 1 && b == 0 && e == dim;
  spec->begin.push_back(b);
  spec->end.push_back(e);
  spec->strides.push_back(stride);
  spec->processing_shape.push_back(extent);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StridedSliceSpec> ResolveStridedSlice(absl::Span<const int64_t> input_shape,
                                                     absl::Span<const int64_t> begin,
                                                     absl::Span<const int64_t> end,
                                                     absl::Span<const int64_t> strides,
                                                     const StridedSliceMasks& masks) {
  if (begin.size() != strides.size() || end.size() != strides.size() || strides.size() >= 32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected begin, end, and strides to be 1D equal size tensors, but got sizes ",
        begin.size(), ", ", end.size(), ", and ", strides.size(), " instead."));
  }
  if (masks.ellipsis & (masks.ellipsis - 1)) {
    return absl::InvalidArgumentError("Multiple ellipses in slice spec not allowed");
  }
  const int dims = static_cast<int>(input_shape.size());
  DFLOW_ASSIGN_OR_RETURN(DenseSpec dense, BuildDenseSpec(dims, begin, end, strides, masks));
  StridedSliceSpec spec;
  spec.is_identity = true;
  for (int i = 0; i < dims; ++i) {
    DFLOW_RETURN_IF_ERROR(ResolveDim(dense, i, input_shape[i], &spec));
  }
  for (int gather : dense.final_gather) {
    if (gather >= 0) {
      spec.final_shape.push_back(spec.processing_shape[gather]);
    } else if (gather == kNewAxis) {
      spec.final_shape.push_back(1);
    }
  }
  return spec;
}

}  // namespace dflow
