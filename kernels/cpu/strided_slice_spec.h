// StridedSliceSpec: TensorFlow's resolution of a StridedSlice (begin, end, strides and
// the five masks) against a known input shape, kept apart from the kernel so that the
// index rules can be tested on their own.
//
// The rules are TF's ValidateStridedSliceOp (tensorflow/core/util/strided_slice_op.cc):
//   1. The "sparse" spec has one entry per element of begin/end/strides. At most one
//      entry may be an ellipsis; when none is, one is implied after the last entry.
//   2. The sparse spec is expanded to a "dense" spec with one entry per input dimension:
//      the ellipsis covers every dimension not named by other entries (new_axis entries
//      name no input dimension), as if it were `begin_mask | end_mask` with stride 1.
//   3. Each dense dimension is made explicit: masked ends become the full range for the
//      stride's direction, negative indices count from the end, and the rest is clamped
//      to [0, dim] (stride > 0) or [-1, dim - 1] (stride < 0). A shrink_axis entry is
//      a single index that must lie in [-dim, dim).
//   4. The processing shape has one extent per input dimension, ceil((end-begin)/stride)
//      or 0; the final shape drops shrunk dimensions and inserts 1 for each new axis.
#ifndef DFLOW_KERNELS_CPU_STRIDED_SLICE_SPEC_H_
#define DFLOW_KERNELS_CPU_STRIDED_SLICE_SPEC_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace dflow {

// The five bit masks of a StridedSlice node (bit i refers to sparse entry i).
struct StridedSliceMasks {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t ellipsis = 0;
  int64_t new_axis = 0;
  int64_t shrink_axis = 0;
};

// A StridedSlice resolved against one input shape.
struct StridedSliceSpec {
  // One entry per input dimension: the first index read, the exclusive bound, the step.
  // begin is in [0, dim) whenever the dimension's extent is non-zero.
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::vector<int64_t> strides;
  // Extent of the slice in each input dimension (shrunk dimensions count 1).
  std::vector<int64_t> processing_shape;
  // The output's shape.
  std::vector<int64_t> final_shape;
  // The slice takes every element in order (the output is the input, reshaped).
  bool is_identity = false;
};

// Resolves `begin`, `end`, `strides` (equal lengths, below 32) and `masks` against
// `input_shape` (all dims known). INVALID_ARGUMENT in TF's words for a zero stride, a
// second ellipsis, too many indices, a shrink index out of range or a non-positive
// shrink stride.
absl::StatusOr<StridedSliceSpec> ResolveStridedSlice(absl::Span<const int64_t> input_shape,
                                                     absl::Span<const int64_t> begin,
                                                     absl::Span<const int64_t> end,
                                                     absl::Span<const int64_t> strides,
                                                     const StridedSliceMasks& masks);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_STRIDED_SLICE_SPEC_H_
