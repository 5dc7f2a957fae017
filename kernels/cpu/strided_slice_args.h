// The arguments the StridedSlice family (StridedSlice, StridedSliceGrad) reads alike: its
// five mask attrs, and its begin/end/strides inputs, checked in TF's words.
#ifndef DFLOW_KERNELS_CPU_STRIDED_SLICE_ARGS_H_
#define DFLOW_KERNELS_CPU_STRIDED_SLICE_ARGS_H_

#include "absl/status/status.h"
#include "kernels/cpu/strided_slice_spec.h"
#include "runtime/op_kernel.h"
#include "runtime/tensor.h"

namespace dflow {

// begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask.
absl::Status ReadStridedSliceMasks(OpKernelConstruction* ctx, StridedSliceMasks* masks);

// INVALID_ARGUMENT (TF's text, without the node prefix) unless begin, end and strides are
// vectors of one length below 32, as ResolveStridedSlice requires.
absl::Status CheckStridedSliceVectors(const Tensor& begin, const Tensor& end,
                                      const Tensor& strides);

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_STRIDED_SLICE_ARGS_H_
